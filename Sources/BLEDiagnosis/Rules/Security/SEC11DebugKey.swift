import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let debugKey = FindingCode(
        "SEC-11", layer: .security, severity: .error,
        title: "Pairing with the specification's debug key",
        explain: .init(
            meaning:
                "A side paired with the specification's debug key (the published LE Secure Connections debug key pair, or a BR/EDR debug combination key): its private key is public, so the pairing's keys are known to anyone who captured it.",
            advice: "Turn off Secure Connections debug mode or Simple Pairing debug mode in the firmware or the controller, and pair again."
        ),
        fold: .device, traits: .weakness)
}

/// SEC-11: a pairing used the specification's debug keys: the LE Secure Connections debug P-256 public key (Core Spec
/// Vol 3, Part H, 2.3.5.6.1), or a BR/EDR debug combination key (Vol 4, Part E, 7.7.24; Simple Pairing debug mode,
/// Vol 2, Part H, 7.6). Its private key is published: anyone who captured the pairing has every key it made.
struct SEC11DebugKey: DiagnosisRule {
    static let code = FindingCode.debugKey
    static let group = RuleGroup.security
    static let evidence = "SMP Pairing Public Key equal to the debug public key; Link Key Notification with key type 0x03"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.compactMap { c, record in
            guard let p = record.pairings.first(where: { $0.debugKeyFrame != nil }), let frame = p.debugKeyFrame else { return nil }
            let device = e.deviceName(c)
            let what =
                p.procedure?.isLE == false || p.linkKeyType == .debugCombination
                ? "a debug combination link key (Simple Pairing debug mode)"
                : "the specification's debug P-256 public key"
            return Diagnosis(
                rule: Self.code, severity: severity, frame: frame,
                message:
                    "\(e.linkName(c).capitalizedFirst) paired with \(what) at frame \(frame): its private key is published, so whoever captured the pairing can compute every key it made and decrypt the link.",
                headline: "debug key in pairing with \(device)", supporting: [CitedFrame(p.frame, "pairing started")],
                causes: ["a development build or test mode left on (Secure Connections debug mode, SSP debug mode)"],
                device: c.peerAddress, connection: c.number, fold: "\(device)")
        }
    }
}
