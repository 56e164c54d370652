import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let radioInterference = FindingCode(
        "LP-06", layer: .link, severity: .warning,
        title: "Heavy interference (air capture)",
        explain: .init(
            meaning:
                "More than a tenth of the link-layer packets the sniffer saw failed their CRC: the radio environment is noisy (or the sniffer is far away).",
            advice: "Move the sniffer closer; look for Wi-Fi or other 2.4 GHz sources near the devices."),
        fold: .never)
}

/// LP-06: on an air capture, the radio was poor: a large share of packets failed their CRC.
struct LP06RadioInterference: DiagnosisRule {
    static let code = FindingCode.radioInterference
    static let group = RuleGroup.linkParameters
    static let evidence = "Link-layer packets with a bad CRC: more than 10 % of at least 100 packets"
    static let anchor = "Frontline (PER views); W (CRC flags)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.connections.compactMap { c in
            guard let s = c.linkLayer, s.packets >= 100, s.crcErrors * 10 > s.packets else { return nil }
            let device = e.deviceName(c)
            let share = Double(s.crcErrors) * 100 / Double(s.packets)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: c.startFrame,
                message:
                    "The radio link with \(device) was poor: \(s.crcErrors) of \(s.packets) packets (\(Int(share.rounded())) %) failed their CRC.",
                headline: "heavy interference with \(device)",
                causes: ["Wi-Fi coexistence, a crowded 2.4 GHz band", "antenna or enclosure"],
                device: c.peerAddress, connection: c.number)
        }
    }
}
