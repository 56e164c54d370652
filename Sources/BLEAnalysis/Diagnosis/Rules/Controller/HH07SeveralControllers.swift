import BLECore
import BLEProtocols

/// HH-07: the capture holds more than one controller (a USB dongle beside the built-in one): results may mix adapters.
struct HH07SeveralControllers: DiagnosisRule {
    static let id = "HH-07"
    static let group = RuleGroup.controller
    static let severity = DiagnosisSeverity.info
    static let title = "More than one controller"
    static let evidence = "Records from more than one controller index (Linux monitor, PacketLogger)"
    static let anchor = "hcidoc (LikelyExternalController)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        // Index 0xFFFF is the Linux monitor's "no controller" (HCI_DEV_NONE): its system notes and control channel
        // records belong to no adapter.
        let seen = e.events.filter { if case .controllerSeen(let index) = $0.kind { index != 0xFFFF } else { false } }
        guard seen.count > 1 else { return [] }
        let names = seen.map { ev -> String in
            let maker = e.controllers[ev.controller].map { " (\($0.manufacturer))" } ?? ""
            return "hci\(ev.controller)\(maker)"
        }
        return [
            Diagnosis(
                rule: id, severity: severity, frame: seen[1].frame,
                message:
                    "The capture holds \(seen.count) controllers (\(names.joined(separator: ", "))): connections are kept apart by controller.",
                headline: "\(seen.count) controllers in the capture", supporting: [CitedFrame(seen[0].frame, "first controller")],
                causes: ["an external dongle beside the built-in controller"])
        ]
    }
}
