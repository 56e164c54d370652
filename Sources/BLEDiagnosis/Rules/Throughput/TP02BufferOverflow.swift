import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let bufferOverflow = FindingCode(
        "TP-02", layer: .hci, severity: .error,
        title: "Controller buffer overflow",
        explain: .init(
            meaning: "The host sent more data than the controller had buffers for: data was lost.",
            advice: "The host stack must respect the controller's buffer count (Number Of Completed Packets flow control)."),
        fold: .capture, traits: [.readsPayloads])
}

/// TP-02: the host overran the controller's buffers (Data Buffer Overflow event, 0x1A): packets were dropped.
struct TP02BufferOverflow: DiagnosisRule {
    static let code = FindingCode.bufferOverflow
    static let group = RuleGroup.throughput
    static let evidence = "Data Buffer Overflow event (0x1A)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .dataBufferOverflow(let type) = ev.kind else { return nil }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "The host overran the controller's \(type == 1 ? "ACL" : type == 0 ? "SCO" : "data") buffers (frame \(ev.frame)): packets were dropped.",
                headline: "controller buffers overrun", causes: ["a host flow-control bug (sending beyond the buffer count)"],
                fold: "")
        }
    }
}
