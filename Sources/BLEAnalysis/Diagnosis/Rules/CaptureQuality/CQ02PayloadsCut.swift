import BLECore
import BLEProtocols

/// CQ-02: the capturer cut the payloads (Android filtered snoop mode keeps 14 bytes of each ACL packet; btsnooz in a
/// bug report 150 bytes and no SCO/ISO): opcodes and error codes stay valid, values and sizes do not.
struct CQ02PayloadsCut: DiagnosisRule {
    static let id = "CQ-02"
    static let group = RuleGroup.captureQuality
    static let severity = DiagnosisSeverity.warning
    static let title = "Payloads cut by the capturer"
    static let evidence = "ACL records whose included length is shorter than the original (filtered snoop log, btsnooz)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        guard let item = e.completeness?.items.first(where: { $0.code == "acl-payload-cut" }) else { return [] }
        return [
            Diagnosis(
                rule: id, severity: severity, frame: item.frame ?? 1,
                message:
                    "\(item.message): ATT values, MTU-size and throughput checks are unreliable; opcodes, handles and error codes are still valid.",
                headline: "payloads cut by the capturer", causes: ["Android's \"filtered\" snoop mode", "a bug report's btsnooz"])
        ]
    }
}
