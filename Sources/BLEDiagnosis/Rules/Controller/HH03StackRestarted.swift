import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let stackRestarted = FindingCode(
        "HH-03", layer: .hci, severity: .error,
        title: "Stack restarted with links up",
        explain: .init(
            meaning: "The host reset the controller while connections were up, so every link was dropped without a disconnection.",
            advice: "Find why the stack restarted (a crash, a timeout before it)."),
        fold: .never)
}

/// HH-03: the Bluetooth stack restarted with links up: an HCI Reset while connections were open, which then vanished
/// without Disconnection Complete.
struct HH03StackRestarted: DiagnosisRule {
    static let code = FindingCode.stackRestarted
    static let group = RuleGroup.controller
    static let evidence = "HCI Reset (0x0C03) while connections are open; links gone without Disconnection Complete"
    static let anchor = "hcidoc (handles Reset internally, no signal)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .reset = ev.kind else { return nil }
            let dropped = e.connections.filter { c in
                c.startFrame < ev.frame && (c.endFrame == nil || c.endFrame! >= ev.frame)
                    && !e.events.contains { d in
                        guard d.connection == c.number, d.frame < ev.frame, case .disconnectionComplete = d.kind else { return false }
                        return true
                    }
            }
            guard !dropped.isEmpty else { return nil }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "The Bluetooth stack restarted at frame \(ev.frame) (HCI Reset) with \(dropped.count) link\(dropped.count == 1 ? "" : "s") up; they dropped without disconnection events.",
                headline: "stack restarted with links up",
                supporting: dropped.prefix(10).map { CitedFrame($0.startFrame, "link to \(e.deviceName($0)) up since") },
                causes: ["crash recovery after a command time-out or hardware error", "the user switched Bluetooth off and on"])
        }
    }
}
