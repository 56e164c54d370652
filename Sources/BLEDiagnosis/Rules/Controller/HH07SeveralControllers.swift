import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let severalControllers = FindingCode(
        "HH-07", layer: .hci, severity: .info,
        title: "More than one controller",
        explain: .init(
            meaning: "The capture holds records from more than one controller (for example a built-in and a USB adapter).",
            advice: "Make sure you read the controller the device used; filter by controller index."),
        fold: .never)
}

/// HH-07: the capture holds more than one controller (a USB dongle beside the built-in one): results may mix adapters.
struct HH07SeveralControllers: DiagnosisRule {
    static let code = FindingCode.severalControllers
    static let group = RuleGroup.controller
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
                rule: Self.code, severity: severity, frame: seen[1].frame,
                message:
                    "The capture holds \(seen.count) controllers (\(names.joined(separator: ", "))): connections are kept apart by controller.",
                headline: "\(seen.count) controllers in the capture", supporting: [CitedFrame(seen[0].frame, "first controller")],
                causes: ["an external dongle beside the built-in controller"])
        ]
    }
}
