import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let handleDisagreement = FindingCode(
        "HH-06", layer: .hci, severity: .warning,
        title: "Traffic on a closed or unknown handle",
        explain: .init(
            meaning:
                "Data used a connection handle that had been closed or never opened: host and controller disagree about which links exist.",
            advice: "A host stack bug, or records missing from the capture: check for gaps near it."),
        fold: .never)
}

/// HH-06: host and controller disagree about a connection: traffic on a handle after its Disconnection Complete, for
/// which the analysis had to infer a new connection.
struct HH06HandleDisagreement: DiagnosisRule {
    static let code = FindingCode.handleDisagreement
    static let group = RuleGroup.controller
    static let evidence = "ACL data on a handle whose connection had ended, with no new Connection Complete"
    static let anchor = "hcidoc (partial: unknown-handle NOCP is tolerated)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        inferredAfterEnd(e) + (e.completeness?.staleACL ?? []).compactMap(staleAfterEnd)
    }

    /// ACL after this side's HCI Reset on a handle whose link had ended (at the reset, or by its Disconnection Complete
    /// since): no link is made of it (``CaptureCompleteness/StaleACL``), and host and controller disagree all the same.
    static func staleAfterEnd(_ s: CaptureCompleteness.StaleACL) -> Diagnosis? {
        guard let closed = s.closedFrame else { return nil }
        return Diagnosis(
            rule: Self.code, severity: severity, frame: s.firstFrame,
            message:
                "Data came on handle \(hex(s.handle, width: 4)) at frame \(s.firstFrame), after its connection ended at frame \(closed) and with no new connection: host and controller disagree.",
            headline: "traffic on closed handle \(hex(s.handle, width: 4))", supporting: [CitedFrame(closed, "connection ended")],
            causes: ["lost events or a cut capture", "a stack bug"])
    }

    static func inferredAfterEnd(_ e: Evidence) -> [Diagnosis] {
        e.connections.compactMap { c in
            guard c.inferred,
                let ended = e.connections.last(where: {
                    $0.handle == c.handle && $0.number < c.number && ($0.endFrame ?? .max) < c.startFrame
                })
            else { return nil }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: c.startFrame,
                message:
                    "Data came on handle \(hex(c.handle, width: 4)) at frame \(c.startFrame), after its connection ended at frame \(ended.endFrame!) and with no new connection: host and controller disagree.",
                headline: "traffic on closed handle \(hex(c.handle, width: 4))",
                supporting: [CitedFrame(ended.endFrame!, "connection ended")],
                causes: ["lost events or a cut capture", "a stack bug"], connection: c.number)
        }
    }
}
