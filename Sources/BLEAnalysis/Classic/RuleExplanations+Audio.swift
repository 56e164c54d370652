/// The BR/EDR audio rules' explanations (BR-07 to BR-12), merged into ``DiagnosisRules/explanations``.
extension DiagnosisRules {
    static let audioExplanations: [String: RuleExplanation] = [
        "BR-07": .init(
            meaning:
                "While an A2DP stream was playing, the phone stopped sending media packets for more than 200 ms: the listener heard a dropout. On a phone's HCI log this is the host side (the audio path or the controller's buffers), not the radio.",
            advice:
                "Look at what the phone did at that moment (CPU load, Wi-Fi, another profile's traffic) and at the controller's buffer and quality reports."
        ),
        "BR-08": .init(
            meaning:
                "One side refused an AVDTP command with an error code. A refused configuration, open or start with no stream started after it means no A2DP audio.",
            advice:
                "Read the error code: a codec the headset does not support (0xC1–0xE3), an end point already in use (0x13), or a command in the wrong state (0x31)."
        ),
        "BR-09": .init(
            meaning:
                "The SCO/eSCO link that carries a call's audio did not come up. Without a retry that succeeds, the call has no audio on the headset.",
            advice:
                "Read the status: an unsupported feature (0x1A) asks for a fallback (mSBC → CVSD, eSCO → SCO); no resources (0x0D) means another synchronous link holds the controller."
        ),
        "BR-10": .init(
            meaning:
                "The hands-free service level connection (the AT-command setup between phone and headset) failed, so the headset cannot take or make calls.",
            advice:
                "Read the command that failed and its answer; check the features both sides announced (AT+BRSF / +BRSF) and the indicators."
        ),
        "BR-11": .init(
            meaning:
                "The headset offered wideband speech (mSBC or LC3-SWB), but the call used CVSD, narrowband: voices sound muffled.",
            advice: "Look for a failed wideband eSCO setup before the fallback (BR-09), and at the gateway's codec support."),
        "BR-12": .init(
            meaning:
                "The two sides negotiated the codec again and again without the audio coming up between: they disagree, and the user hears nothing or delays.",
            advice: "Compare what each side offers and selects at each round; one of them retries a configuration the other rejects."),
    ]
}
