import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let invalidPublicKey = FindingCode(
        "SEC-19", layer: .security, severity: .error,
        title: "Pairing public key off the curve or out of place",
        explain: .init(
            meaning:
                "A Pairing Public Key was not a point on the P-256 curve, or came in a pairing that is LE legacy. A device must check the peer's key; one that uses an off-curve key can leak its private key (Invalid Curve attack), and stacks that do not expect a key have crashed on one (SweynTooth).",
            advice: "The sender is a fuzzer or buggy; the receiver must fail the pairing (DHKey Check Failed) and not crash."),
        fold: .device, traits: .weakness)
}

/// SEC-19: a Pairing Public Key that is not a point on P-256 (Core Spec Vol 3, Part H, 2.3.5.6.1: each device checks
/// the peer's key is on the curve, and fails the pairing with DHKey Check Failed when it is not — the Invalid Curve
/// attack, CVE-2018-5383), or a public key in a pairing whose feature exchange made it legacy (3.5.6 belongs to LE
/// Secure Connections only); and whether the other side went on. The shapes of SweynTooth's public key crashes.
struct SEC19InvalidPublicKey: DiagnosisRule {
    static let code = FindingCode.invalidPublicKey
    static let group = RuleGroup.security
    static let evidence = "SMP Pairing Public Key: its point checked on P-256; the pairing's procedure; what followed"
    static let anchor = "Invalid Curve (CVE-2018-5383); SweynTooth (Public Key Crash, CVE-2019-17520)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.compactMap { c, record in
            guard let p = record.pairings.first(where: { $0.invalidPublicKeyFrame != nil || $0.misplacedPublicKeyFrame != nil }),
                let frame = p.invalidPublicKeyFrame ?? p.misplacedPublicKeyFrame
            else { return nil }
            let device = e.deviceName(c)
            let what =
                p.invalidPublicKeyFrame != nil
                ? "a Pairing Public Key that is not a point on P-256 (frame \(frame)): a peer must refuse it (Invalid Curve attack)"
                : "a Pairing Public Key (frame \(frame)) in a pairing whose feature exchange made it LE legacy: no public key belongs there"
            let went: String
            switch p.outcome {
            case .failed(let f, let by, let reason):
                went = "the pairing failed at frame \(f) (\(by.map { $0 == .peer ? "the peer" : "this side" } ?? "a side"): \(reason))"
            case .completed(let f): went = "the pairing went on and completed at frame \(f)"
            case .unfinished: went = "the pairing went no further in the capture"
            }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: frame,
                message: "\(e.linkName(c).capitalizedFirst): \(what); \(went). This is the shape of SweynTooth's public key crashes.",
                headline: "bad Pairing Public Key with \(device)", supporting: [CitedFrame(p.frame, "pairing started")],
                causes: ["a fuzzer or attack tool", "a stack that sends its key before checking the procedure"],
                device: c.peerAddress, connection: c.number, fold: "\(device)")
        }
    }
}
