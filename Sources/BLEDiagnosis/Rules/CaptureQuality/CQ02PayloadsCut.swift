import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let payloadsCut = FindingCode(
        "CQ-02", layer: .capture, severity: .warning,
        title: "Payloads cut by the capturer",
        explain: .init(
            meaning:
                "The capturer kept only the first bytes of some packets (Android's filtered snoop log, btsnooz): values and long PDUs cannot be decoded whole.",
            advice: "Take an unfiltered log (Android: Developer options ▸ Enable Bluetooth HCI snoop log ▸ Enabled, not Filtered)."),
        fold: .never, traits: [.describesCapture])
}

/// CQ-02: the capturer cut the payloads (Android filtered snoop mode keeps 14 bytes of each ACL packet; btsnooz in a
/// bug report 150 bytes and no SCO/ISO): opcodes and error codes stay valid, values and sizes do not.
struct CQ02PayloadsCut: DiagnosisRule {
    static let code = FindingCode.payloadsCut
    static let group = RuleGroup.captureQuality
    static let evidence = "ACL records whose included length is shorter than the original (filtered snoop log, btsnooz)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        guard let completeness = e.completeness, let item = completeness.items.first(where: { $0.code == .aclPayloadCut }) else {
            return []
        }
        // Records the file marks whole, their headers whole: the logger left the payloads out (RecordShortfall).
        let byLogger = completeness.payloadsCutByLogger
        return [
            Diagnosis(
                rule: Self.code, severity: severity, frame: item.frame ?? 1,
                message:
                    "\(item.message): ATT values, MTU-size and throughput checks are unreliable; opcodes, handles and error codes are still valid.",
                headline: byLogger ? "payloads left out by the logger" : "payloads cut by the capturer",
                causes: byLogger
                    ? [
                        "a logger that leaves payloads out (Windows' BTVS logs HID input reports without their values and LE Start Encryption without its key)"
                    ]
                    : ["Android's \"filtered\" snoop mode", "a bug report's btsnooz"])
        ]
    }
}
