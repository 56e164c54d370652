import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let keySizeOutOfRange = FindingCode(
        "SEC-17", layer: .security, severity: .error,
        title: "Maximum Encryption Key Size out of range",
        explain: .init(
            meaning:
                "A Pairing Request or Response offered a Maximum Encryption Key Size outside 7–16: a malformed feature exchange, the shape of SweynTooth's Key Size Overflow, which crashed or misled some stacks.",
            advice:
                "The side that sent it is a fuzzer or buggy; the other side should fail the pairing (Pairing Failed: Invalid Parameters)."),
        fold: .device, traits: .weakness)
}

/// SEC-17: a Pairing Request or Response offered a Maximum Encryption Key Size outside 7–16 (Core Spec Vol 3, Part H,
/// 3.5.1): a malformed offer (SweynTooth's Key Size Overflow), and whether the other side went on with it.
struct SEC17KeySizeOutOfRange: DiagnosisRule {
    static let code = FindingCode.keySizeOutOfRange
    static let group = RuleGroup.security
    static let evidence = "SMP Pairing Request/Response Maximum Encryption Key Size outside 7–16, and what followed"
    static let anchor = "SweynTooth (Key Size Overflow, CVE-2019-19196)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.compactMap { c, record in
            guard let p = record.pairings.first(where: { $0.offeredKeySizes.contains { !(7...16).contains($0) } }) else { return nil }
            let bad = p.offeredKeySizes.first { !(7...16).contains($0) }!
            let device = e.deviceName(c)
            let went: String
            switch p.outcome {
            case .failed(let f, let by, let reason):
                went = "the pairing failed at frame \(f) (\(by.map { $0 == .peer ? "the peer" : "this side" } ?? "a side"): \(reason))"
            case .completed(let f): went = "the other side went on and the pairing completed at frame \(f)"
            case .unfinished:
                went =
                    record.sessions.first { $0.onFrame != nil }.map { "the other side went on: the link encrypted at frame \($0.onFrame!)" }
                    ?? "the other side went on (no failure in the log)"
            }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: p.frame,
                message:
                    "\(e.linkName(c).capitalizedFirst): a pairing offered a Maximum Encryption Key Size of \(bad) (the specification allows 7–16); \(went). This is the shape of SweynTooth's Key Size Overflow.",
                headline: "key size \(bad) offered in pairing with \(device)",
                causes: ["a fuzzer or attack tool", "a stack bug in the pairing feature exchange"],
                device: c.peerAddress, connection: c.number, fold: "\(device)")
        }
    }
}
