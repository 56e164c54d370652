import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let parameterLimited = FindingCode(
        "TP-03", layer: .link, severity: .warning,
        title: "Throughput limited by the link parameters",
        explain: .init(
            meaning:
                "A data stream ran near the ceiling its link parameters allow (MTU, data length, PHY, interval): better parameters would at least double it.",
            advice: "Negotiate a larger MTU and data length, 2M PHY and a shorter connection interval where both devices support them."),
        fold: .device, traits: [.readsPayloads])
}

/// TP-03: a bulk transfer ran far below what BLE offers because the link kept default parameters: ATT_MTU 23 (20-byte
/// values), a 27-octet data length, the 1M PHY, a connection interval of 30 ms or more. It names each default the link
/// kept and where that fact came from, with the ceiling as set and the one the fastest parameters would give.
struct TP03ParameterLimited: DiagnosisRule {
    static let code = FindingCode.parameterLimited
    static let group = RuleGroup.throughput
    static let evidence =
        "A stream of at least 100 notifications or write commands and 2 kB whose verdict names the link (a setting, the ceiling, packets per event); ATT_MTU 23, data length 27, 1M PHY or an interval of 30 ms or more, with their provenance; the ceiling at least doubled by 2M/251/247"
    static let anchor = "none (btmon -a gives speed only)"

    /// Verdicts that name the link (a setting, its ceiling, the packets per event): a stream paced by its sender (idle
    /// gaps, the app, small values) or one the capture cannot judge is not held back by the parameters.
    static let linkLimits: Set<ThroughputLimit> = [.phy, .dataLength, .mtu, .ceiling, .packetsPerEvent]

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.judgedStreams.compactMap { s in
            // A bulk transfer: mostly sending (a sparse sensor stream is paced by its sender, TP-04's).
            guard s.packets >= 100, s.valueBytes >= 2_000, s.kind == .notification || s.kind == .writeCommand, let c = s.connection,
                Self.linkLimits.contains(s.verdict.limit)
            else { return nil }
            let direction: Direction = s.kind == .notification ? .rx : .tx
            let link = c.link.snapshot
            guard let ceiling = ThroughputCeiling.ceiling(for: link, direction: direction) else { return nil }
            var best = link
            best.mtu = 247
            best.dataLength = DataLength(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120)
            best.phy = PHYPair(tx: .le2M, rx: .le2M)
            guard let bestCeiling = ThroughputCeiling.ceiling(for: best, direction: direction), bestCeiling >= 2 * ceiling else {
                return nil
            }
            var kept: [String] = []
            var facts: [UsedFact] = []
            let dl = Int(direction == .rx ? link.dataLength.maxRxOctets : link.dataLength.maxTxOctets)
            if link.mtu <= 23 {
                kept.append("ATT_MTU 23 (20-byte values)")
                facts.append(UsedFact("ATT_MTU", "\(link.mtu)", c.link.mtu.source))
            }
            if dl <= 27 {
                kept.append("data length 27")
                facts.append(UsedFact("data length", "\(dl)", c.link.dataLength.source))
            }
            if link.phy[direction] == .le1M {
                kept.append("the 1M PHY")
                facts.append(UsedFact("PHY", "1M", c.link.phy.source))
            }
            if let p = link.parameters, p.intervalMicroseconds >= 30_000 {
                kept.append("a \(ConnectionTiming.intervalMilliseconds(p.interval).formatted2) ms interval")
                facts.append(
                    UsedFact(
                        "connection interval", "\(ConnectionTiming.intervalMilliseconds(p.interval).formatted2) ms",
                        c.link.parameters.source))
            }
            guard !kept.isEmpty else { return nil }
            let device = e.deviceName(c)
            let what = s.kind == .notification ? "Notifications from \(device)" : "Write commands to \(device)"
            let on = s.handle.map { " on \(hex($0, width: 4))" } ?? ""
            let assumed = facts.filter { $0.source == .assumed }.map(\.name)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: s.firstFrame,
                message:
                    "\(what)\(on) (\(s.packets) values, \(s.valueBytes) bytes) ran at \(s.verdict.head)\(s.periods > 1 ? " in the busiest of its \(s.periods) link periods" : ""). The link kept \(kept.joined(separator: ", ")); with 2M/251/247 the ceiling is \(rateText(bestCeiling))."
                    + (assumed.isEmpty ? "" : " (Assumed, the capture does not show them: \(assumed.joined(separator: ", ")).)"),
                headline: "throughput with \(device) limited by default link parameters",
                // The stream is notifications or write commands already: no advice about the write type.
                causes: ["the app never asked for a larger MTU, data length or 2M PHY"]
                    + (facts.contains { $0.name == "connection interval" } ? ["the peripheral's preferred interval is long"] : []),
                device: c.peerAddress, connection: c.number, facts: facts, fold: "\(device) \(s.kind.rawValue)")
        }
    }
}
