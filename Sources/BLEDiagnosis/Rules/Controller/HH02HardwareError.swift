import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let controllerHardwareError = FindingCode(
        "HH-02", layer: .hci, severity: .critical,
        title: "Controller hardware error",
        explain: .init(
            meaning: "The controller reported a hardware error: it is in trouble and is usually reset next.",
            advice: "Report the error code to the chip vendor; check power supply and firmware version."),
        fold: .value)
}

/// HH-02: the controller reported a Hardware Error (event 0x10): the stack resets it and every link drops.
struct HH02HardwareError: DiagnosisRule {
    static let code = FindingCode.controllerHardwareError
    static let group = RuleGroup.controller
    static let evidence = "Hardware Error event (0x10) with its code"
    static let anchor = "hcidoc (HardwareError)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .hardwareError(let code) = ev.kind else { return nil }
            let open = e.connections.filter { $0.startFrame < ev.frame && ($0.endFrame ?? Int.max) >= ev.frame }.count
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "The controller reported Hardware Error \(hex(code)) (frame \(ev.frame)); the stack resets it and all links drop\(open > 0 ? " (\(open) open)" : "").",
                headline: "controller hardware error", causes: ["a controller firmware crash", "a coexistence engine fault"],
                fold: "\(code)")
        }
    }
}
