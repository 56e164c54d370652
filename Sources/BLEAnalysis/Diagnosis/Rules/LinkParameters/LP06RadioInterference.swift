import BLECore
import BLEProtocols

/// LP-06: on an air capture, the radio was poor: a large share of packets failed their CRC.
struct LP06RadioInterference: DiagnosisRule {
    static let id = "LP-06"
    static let group = RuleGroup.linkParameters
    static let severity = DiagnosisSeverity.warning
    static let title = "Heavy interference (air capture)"
    static let evidence = "Link-layer packets with a bad CRC: more than 10 % of at least 100 packets"
    static let anchor = "Frontline (PER views); W (CRC flags)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.connections.compactMap { c in
            guard let s = c.linkLayer, s.packets >= 100, s.crcErrors * 10 > s.packets else { return nil }
            let device = e.deviceName(c)
            let share = Double(s.crcErrors) * 100 / Double(s.packets)
            return Diagnosis(
                rule: id, severity: severity, frame: c.startFrame,
                message:
                    "The radio link with \(device) was poor: \(s.crcErrors) of \(s.packets) packets (\(Int(share.rounded())) %) failed their CRC.",
                headline: "heavy interference with \(device)",
                causes: ["Wi-Fi coexistence, a crowded 2.4 GHz band", "antenna or enclosure"],
                device: c.peerAddress, connection: c.number)
        }
    }
}
