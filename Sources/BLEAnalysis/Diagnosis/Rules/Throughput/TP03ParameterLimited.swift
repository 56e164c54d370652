import BLECore
import BLEProtocols

/// TP-03: a bulk transfer ran far below what the link could carry and the throughput verdict blames the link
/// parameters (20-byte payloads at MTU 23, 27-octet data length, 1M PHY, a long interval): with the ceiling and
/// where each parameter came from.
struct TP03ParameterLimited: DiagnosisRule {
    static let id = "TP-03"
    static let group = RuleGroup.throughput
    static let severity = DiagnosisSeverity.warning
    static let title = "Throughput limited by the link parameters"
    static let evidence =
        "A stream of at least 100 values and 10 kB whose verdict is limited by the link parameters; MTU, data length, PHY and interval with their provenance"
    static let anchor = "none (btmon -a gives speed only)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        guard let streams = e.throughput else { return [] }
        return streams.compactMap { s in
            guard s.packets >= 100, s.valueBytes >= 10_000,
                [ThroughputLimit.phy, .dataLength, .mtu, .packetsPerEvent].contains(s.verdict.limit)
            else { return nil }
            let c = e.connection(s.key.connectionNumber)
            let device = e.deviceName(c)
            var facts: [UsedFact] = []
            if let c {
                facts.append(UsedFact("ATT_MTU", "\(c.link.mtu.value ?? 23)", c.link.mtu.source))
                facts.append(UsedFact("data length", "\(c.link.dataLength.value?.maxTxOctets ?? 27)", c.link.dataLength.source))
                facts.append(UsedFact("PHY", c.link.phy.value?.description ?? "1M", c.link.phy.source))
                if let p = c.link.parameters.value {
                    facts.append(
                        UsedFact(
                            "connection interval", "\(ConnectionTiming.intervalMilliseconds(p.interval).formatted2) ms",
                            c.link.parameters.source))
                }
            }
            let assumed = facts.filter { $0.source.kind == "assumed" }.map(\.name)
            return Diagnosis(
                rule: id, severity: severity, frame: s.firstFrame,
                message:
                    "\(s.key.kind.name.capitalized) to/from \(device) on \(hex(s.key.handle, width: 4)): \(s.verdict.text)"
                    + (assumed.isEmpty
                        ? "." : " (the ceiling rests on assumed \(assumed.joined(separator: ", ")): the capture does not show them)."),
                headline: "throughput with \(device) limited by the link parameters",
                causes: [
                    "default parameters never raised (MTU, data length, PHY, interval)", "Write Request where Write Command would do",
                ],
                device: c?.peerAddress, connection: c?.number, facts: facts)
        }
    }
}
