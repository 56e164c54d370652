import BLECore
import BLEProtocols

/// TP-02: the host overran the controller's buffers (Data Buffer Overflow event, 0x1A): packets were dropped.
struct TP02BufferOverflow: DiagnosisRule {
    static let id = "TP-02"
    static let group = RuleGroup.throughput
    static let severity = DiagnosisSeverity.error
    static let title = "Controller buffer overflow"
    static let evidence = "Data Buffer Overflow event (0x1A)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .dataBufferOverflow(let type) = ev.kind else { return nil }
            return Diagnosis(
                rule: id, severity: severity, frame: ev.frame,
                message:
                    "The host overran the controller's \(type == 1 ? "ACL" : type == 0 ? "SCO" : "data") buffers (frame \(ev.frame)): packets were dropped.",
                headline: "controller buffers overrun", causes: ["a host flow-control bug (sending beyond the buffer count)"],
                foldKey: "TP-02")
        }
    }
}
