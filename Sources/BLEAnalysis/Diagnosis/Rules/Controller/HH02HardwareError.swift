import BLECore
import BLEProtocols

/// HH-02: the controller reported a Hardware Error (event 0x10): the stack resets it and every link drops.
struct HH02HardwareError: DiagnosisRule {
    static let id = "HH-02"
    static let group = RuleGroup.controller
    static let severity = DiagnosisSeverity.critical
    static let title = "Controller hardware error"
    static let evidence = "Hardware Error event (0x10) with its code"
    static let anchor = "hcidoc (HardwareError)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .hardwareError(let code) = ev.kind else { return nil }
            let open = e.connections.filter { $0.startFrame < ev.frame && ($0.endFrame ?? Int.max) >= ev.frame }.count
            return Diagnosis(
                rule: id, severity: severity, frame: ev.frame,
                message:
                    "The controller reported Hardware Error \(hex(code)) (frame \(ev.frame)); the stack resets it and all links drop\(open > 0 ? " (\(open) open)" : "").",
                headline: "controller hardware error", causes: ["a controller firmware crash", "a coexistence engine fault"],
                foldKey: "HH-02 \(code)")
        }
    }
}
