/// What each per-link security rule (SEC-08…SEC-18) and link-layer compliance rule (LL-01…LL-03) means and what to do
/// (``DiagnosisRules/explanation(_:)``); docs/security.md says the same with each rule's spec clause.
extension DiagnosisRules {
    static let securityExplanations: [String: RuleExplanation] = [
        "SEC-08": .init(
            meaning:
                "The link ran encrypted with a key shorter than 16 bytes. Each byte less divides an attacker's search by 256; below 7 bytes (the smallest the specification allows since the KNOB attack) the key is found by brute force in real time.",
            advice:
                "Set the maximum key size to 16 on both sides (SMP Maximum Encryption Key Size; on BR/EDR the controller's minimum), and refuse links under 16 where the data matters (Android and BlueZ check Read Encryption Key Size)."
        ),
        "SEC-09": .init(
            meaning:
                "A later session with the same device ran with a shorter key than an earlier one. Nothing legitimate lowers a bond's key size between sessions; the KNOB and BLUFFS attacks do exactly this by negotiating it down.",
            advice:
                "Treat as an attack or a broken controller: compare controller firmware between the sessions, enforce a 16-byte minimum on the host, update the controller (KNOB and BLUFFS fixes)."
        ),
        "SEC-10": .init(
            meaning:
                "The devices paired with LE legacy pairing (Just Works or a 6-digit passkey) or a BR/EDR PIN: whoever captured the pairing over the air computes its keys offline (crackle does it in a second), then decrypts every session that uses them.",
            advice: "Enable LE Secure Connections on both sides (the SC flag) and, for BR/EDR, Secure Simple Pairing; then pair again."),
        "SEC-11": .init(
            meaning:
                "A side paired with the specification's debug key (the published LE Secure Connections debug key pair, or a BR/EDR debug combination key): its private key is public, so the pairing's keys are known to anyone who captured it.",
            advice: "Turn off Secure Connections debug mode or Simple Pairing debug mode in the firmware or the controller, and pair again."),
        "SEC-12": .init(
            meaning:
                "Encryption started with a key that the specification names by EDIV and Rand zero (an LE Secure Connections LTK, or the STK of a legacy pairing), with non-zero values. A peripheral that accepts it does not check what key it is asked for.",
            advice: "Fix the central's key storage (Secure Connections keys have no EDIV/Rand); a peripheral should reject the request."),
        "SEC-13": .init(
            meaning:
                "A side asked for protection against a man in the middle, but the IO capabilities left Just Works, so the keys are unauthenticated: nothing proved who was at the other end.",
            advice:
                "Give the device a way to confirm (a display and a button, or a keyboard), or use OOB; a responder that requires MITM should refuse Just Works (Pairing Failed: Authentication Requirements)."
        ),
        "SEC-14": .init(
            meaning:
                "The same long-term or link key was used with different devices. Keys are made per pairing, so this is a fixed or derived key: one compromised device gives it away for all.",
            advice: "Remove factory or address-derived keys; let every pairing generate its own."),
        "SEC-15": .init(
            meaning: "The device is bonded (an earlier pairing kept its keys), yet this link carried data without ever starting encryption.",
            advice:
                "Have the central encrypt bonded links on connection, and give the attributes that matter an encryption or authentication permission."
        ),
        "SEC-16": .init(
            meaning: "The same device paired again on every connection although bonding was asked: one side does not keep the bond.",
            advice: "Check that the peripheral stores its bonds across resets and that the phone is not removing the bond after an error."),
        "SEC-17": .init(
            meaning:
                "A Pairing Request or Response offered a Maximum Encryption Key Size outside 7–16: a malformed feature exchange, the shape of SweynTooth's Key Size Overflow, which crashed or misled some stacks.",
            advice: "The side that sent it is a fuzzer or buggy; the other side should fail the pairing (Pairing Failed: Invalid Parameters)."),
        "SEC-18": .init(
            meaning:
                "In an LE Secure Connections pairing, encryption started before both DHKey Checks were exchanged: a side that never proved it knows the DHKey got an encrypted link (SweynTooth's DHCheck Skip).",
            advice: "The peripheral must not accept LL_ENC_REQ before it has checked the central's DHKey Check; update its stack."),
        "SEC-19": .init(
            meaning:
                "A Pairing Public Key was not a point on the P-256 curve, or came in a pairing that is LE legacy. A device must check the peer's key; one that uses an off-curve key can leak its private key (Invalid Curve attack), and stacks that do not expect a key have crashed on one (SweynTooth).",
            advice: "The sender is a fuzzer or buggy; the receiver must fail the pairing (DHKey Check Failed) and not crash."),
        "LL-01": .init(
            meaning:
                "A link-layer procedure the specification allows once per link and direction ran again: LL_VERSION_IND sent more than once. Answered in kind every time, it becomes a loop that keeps both controllers busy.",
            advice: "A fuzzer or test tool is the usual sender; a controller that answers every LL_VERSION_IND needs a fix."),
        "LL-02": .init(
            meaning:
                "A connect request or channel map update used fewer than 2 data channels: no connection can hop on it. A peripheral must ignore it; one that accepts may hang or crash (SweynTooth).",
            advice: "The central is a fuzzer or has a channel-classification bug; the peripheral should drop such a request."),
        "LL-03": .init(
            meaning:
                "A connect request or connection update carried a timing parameter outside the specification's range (interval, latency, supervision timeout, transmit window, hop).",
            advice: "The central is a fuzzer or buggy; the peripheral should ignore the request rather than act on it."),
    ]
}
