import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let hfpCodecFallback = FindingCode(
        "BR-11", layer: .classic, severity: .warning,
        title: "A call fell back to narrowband audio (CVSD)",
        explain: .init(
            meaning:
                "The headset offered wideband speech (mSBC or LC3-SWB), but the call used CVSD, narrowband: voices sound muffled.",
            advice: "Look for a failed wideband eSCO setup before the fallback (BR-09), and at the gateway's codec support."),
        fold: .device)
}

/// BR-11: a call fell back to narrowband: both sides negotiate codecs and the hands-free unit offered mSBC or LC3-SWB
/// (AT+BAC), yet the gateway selected CVSD (+BCS: 1); or mSBC was selected and the eSCO link came up in CVSD air mode
/// (HFP 1.9, 4.11.3, 5.7).
///
/// A fallback is a warning when the log shows the wideband attempt it fell back from: an earlier mSBC or LC3-SWB
/// selection, or a voice-link setup that failed, before the CVSD selection. Without one, the gateway chose CVSD though
/// wideband was offered (its configuration, a test run): context (info), with the call's voice link when it came up.
struct BR11HFPCodecFallback: DiagnosisRule {
    static let code = FindingCode.hfpCodecFallback
    static let group = RuleGroup.classic
    static let evidence =
        "AT+BAC listing mSBC (2) or LC3-SWB (3) and +BCS selecting CVSD (1): a warning after a wideband selection or a failed voice-link setup, info without one; or +BCS selecting mSBC then a Synchronous Connection Complete with air mode CVSD on the same link"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for c in e.connections where c.isBREDR {
            guard let h = c.profiles?.hfp else { continue }
            let name = e.deviceName(c)
            let wideband = h.availableCodecs.filter { $0 >= HFPCodec.mSBC }
            if let best = wideband.max(), let fallback = h.codecSelections.first(where: { $0.codec == HFPCodec.cvsd }) {
                // AT+BAC is the hands-free unit's, +BCS the gateway's (HFP 1.9, 4.34.1): which is this side decides the words.
                let offerer = h.thisSideIsGateway ? name : "This side (the hands-free unit)"
                let gateway = h.thisSideIsGateway ? "this side (the gateway)" : "the gateway \(name)"
                let attempt = Self.widebandAttempt(before: fallback.frame, h, c, e)
                let call = e.classic.synchronousLinks.first { l in
                    l.established && l.aclConnection == c.number && (l.startFrame ?? 0) > fallback.frame
                }
                // "call" only where the HFP exchange shows one (HFPCallShown.swift).
                let (audio, voice) =
                    h.showsACall ? ("the call's audio", "the call's voice link") : ("the audio connection", "the voice link")
                let what =
                    attempt.map { " It fell back from a wideband attempt: \($0.text) at frame \($0.frame)." }
                    ?? (" Nothing in the log shows a wideband attempt that failed (no earlier wideband selection, no failed voice-link setup): \(h.thisSideIsGateway ? "this side" : "the gateway") chose CVSD though \(HFPCodec.name(best)) was offered"
                        + (call.flatMap(\.startFrame).map { "; \(voice) came up at frame \($0)." } ?? "."))
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: attempt == nil ? .info : severity, frame: fallback.frame,
                        message:
                            "\(offerer) offered \(HFPCodec.name(best)) (AT+BAC) but \(gateway) selected CVSD at frame \(fallback.frame): \(audio) is narrowband."
                            + what,
                        headline: "\(HFPCodec.name(best)) offered, CVSD used with \(name)",
                        supporting: (h.availableCodecsFrame.map { [CitedFrame($0, "AT+BAC")] } ?? []) + (attempt.map { [$0] } ?? []),
                        causes: attempt == nil
                            ? ["the gateway's choice (its configuration or codec policy), not a failure the log shows"]
                            : [
                                "the gateway's wideband setup failed before and it fell back",
                                "the gateway does not support \(HFPCodec.name(best))",
                            ],
                        device: c.peerAddress, connection: c.number, fold: "\(name)"))
                continue
            }
            guard let selected = h.codecSelections.last(where: { $0.codec == HFPCodec.mSBC }) else { continue }
            let cvsd = e.classic.synchronousLinks.first { l in
                l.established && l.aclConnection == c.number && (l.startFrame ?? 0) > selected.frame && l.airMode == .cvsd
            }
            guard let link = cvsd, let frame = link.startFrame else { continue }
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: frame,
                    message:
                        "mSBC was selected with \(name) at frame \(selected.frame), but the eSCO link came up in CVSD air mode at frame \(frame): narrowband audio.",
                    headline: "mSBC selected, CVSD link with \(name)", supporting: [CitedFrame(selected.frame, "+BCS: 2")],
                    causes: ["the gateway's controller set up the link without transparent data (its wideband path failed)"],
                    device: c.peerAddress, connection: c.number, fold: "\(name)"))
        }
        return out
    }

    /// The wideband attempt a CVSD selection at `frame` fell back from, when the log shows one on this link: an earlier
    /// mSBC or LC3-SWB selection (+BCS), or a voice-link setup that failed.
    static func widebandAttempt(before frame: Int, _ h: HFPSession, _ c: Connection, _ e: Evidence) -> CitedFrame? {
        if let wide = h.codecSelections.first(where: { $0.codec >= HFPCodec.mSBC && $0.frame < frame }) {
            return CitedFrame(wide.frame, "\(HFPCodec.name(wide.codec)) selected (+BCS: \(wide.codec))")
        }
        let failed = e.classic.synchronousLinks.first { l in
            !l.established && l.aclConnection == c.number && (l.resultFrame ?? l.requestFrame ?? frame) < frame
        }
        return failed.flatMap { l in
            (l.resultFrame ?? l.requestFrame).map { CitedFrame($0, "a voice-link setup failed (\(codeName(l.status)))") }
        }
    }
}
