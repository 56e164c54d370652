import BLECore
import BLEProtocols

extension ThroughputVerdict {
    /// Kinds the notification ceiling applies to: values sent without waiting for a response
    /// (notifications, write commands, signed write commands).
    public static func hasCeiling(_ kind: ValueKind) -> Bool {
        kind == .notification || kind == .writeCommand || kind == .signedWriteCommand
    }

    /// `2M/251/247 at 30 ms`: PHY, data length (octets) and MTU for `direction`, and the connection interval.
    public static func linkLabel(_ link: LinkSnapshot, direction: Direction) -> String {
        let tx = direction != .rx
        let phy = ThroughputCeiling.PHY(link.phy[direction])?.rawValue ?? link.phy[direction].description
        let dl = tx ? link.dataLength.maxTxOctets : link.dataLength.maxRxOctets
        var s = "\(phy)/\(dl)/\(link.unseen.contains(.mtuAtLeast) ? "≥" : "")\(link.mtu)"
        if let p = link.parameters { s += " at " + millisecondsText(p.intervalMicroseconds) + " ms" }
        let caveat = link.unseen.caveat(mtu: link.mtu)
        return caveat.isEmpty ? s : s + " " + caveat
    }

    /// The verdict on a run of packets sent with one link setting.
    ///
    /// Rules, in order (each names one limit):
    /// 1. fewer than 2 packets or no duration → ``ThroughputLimit/unknown``;
    /// 2. requests, indications, reads → ``ThroughputLimit/roundTrip`` (no ceiling: each waits for the peer); SDUs of
    ///    an LE credit-based channel → ``ThroughputLimit/unknown`` (no round trip, no ceiling modelled);
    /// 3. gaps above the idle threshold take ≥ 50 % of the time → ``ThroughputLimit/idleGaps``;
    /// 4. the rate outside idle gaps is ≥ 75 % of the ceiling → the link: ``ThroughputLimit/phy``,
    ///    ``ThroughputLimit/dataLength`` or ``ThroughputLimit/mtu``, whichever change (2M, 251, 247) raises the
    ///    ceiling most, or ``ThroughputLimit/ceiling`` when none raises it by 5 %;
    /// 5. values average under half of MTU − 3 → ``ThroughputLimit/valueSize``, unless the application sets the pace
    ///    and larger values would not help (``ThroughputLimit/app``): fewer than ``fewValues`` values (a few button
    ///    presses), values in under 80 % of the connection events (the sender offers little: a sender in every event
    ///    is held back by each event's packet cap, which larger values beat), or values all of one size
    ///    (`uniformValueSize`: input reports) at most one per connection event;
    /// 6. with packets per event known: packets in ≥ 80 % of the connection events and fewer per event than fit
    ///    → ``ThroughputLimit/packetsPerEvent``; packets in fewer events → ``ThroughputLimit/app``;
    /// 7. otherwise ``ThroughputLimit/app`` (or ``ThroughputLimit/unknown`` without a connection interval).
    public static func judge(
        kind: ValueKind, direction: Direction, link: LinkSnapshot, packets: Int,
        durationMicroseconds: Int64, idleMicroseconds: Int64, valueBytes: Int,
        averageValueSize: Double, uniformValueSize: Bool = false, packetsPerEvent: PacketsPerEvent?,
        idleThreshold: Int64
    ) -> ThroughputVerdict {
        guard packets >= 2, durationMicroseconds > 0 else {
            return ThroughputVerdict(
                limit: .unknown, text: "\(packets) packet\(packets == 1 ? "" : "s") at one instant: too few to measure a rate")
        }
        let rate = Double(valueBytes) * 8 * 1_000_000 / Double(durationMicroseconds)
        let label = linkLabel(link, direction: direction)
        let ceiling = hasCeiling(kind) ? ThroughputCeiling.ceiling(for: link, direction: direction) : nil
        var head = rateText(rate)
        if let c = ceiling {
            head += " = \(percentText(rate / c)) % of the \(rateText(c)) ceiling for \(label)"
        } else {
            head += " (\(label))"
        }
        func verdict(_ limit: ThroughputLimit, _ why: String) -> ThroughputVerdict {
            ThroughputVerdict(limit: limit, text: head + "; " + why)
        }

        if kind == .creditSDU {
            // K-frames on an LE credit-based channel: nothing waits for an ATT response; the receiver's credits pace the
            // sender (stalls are counted per connection). The notification ceiling does not apply to K-frames.
            return verdict(
                .unknown,
                "an L2CAP credit-based channel: no ATT round trip; paced by the receiver's credits and the sender (no ceiling computed for K-frames)"
            )
        }
        guard hasCeiling(kind) else {
            let what: String =
                switch kind {
                case .indication: "each indication waits for its confirmation"
                case .readResponse, .readBlobResponse, .longRead: "each read waits for its response"
                default: "each write request waits for its response"
                }
            return verdict(.roundTrip, "limited by the ATT round trip: \(what) (notifications or write without response would not wait)")
        }
        let idleFraction = Double(idleMicroseconds) / Double(durationMicroseconds)
        if idleFraction >= 0.5 {
            return verdict(
                .idleGaps,
                "limited by idle gaps: \(percentText(idleFraction)) % of the time in pauses over "
                    + millisecondsText(Int(idleThreshold)) + " ms (the sender paused)")
        }
        guard let c = ceiling else { return verdict(.unknown, "PHY unknown: no ceiling") }
        let active = durationMicroseconds - idleMicroseconds
        let activeRate = Double(valueBytes) * 8 * 1_000_000 / Double(max(1, active))
        if activeRate >= 0.75 * c {
            let (limit, why) = linkLimit(link, direction: direction, ceiling: c)
            return verdict(limit, why)
        }
        let usable = Double(max(1, link.mtu - 3))
        if averageValueSize < 0.5 * usable {
            let coverage = link.parameters.flatMap { p -> Double? in
                guard let ppe = packetsPerEvent, p.intervalMicroseconds > 0 else { return nil }
                return min(1, Double(ppe.events) * Double(p.intervalMicroseconds) / Double(max(1, active)))
            }
            if let paced = paceOfApplication(
                packets: packets, valueSize: averageValueSize, uniform: uniformValueSize, packetsPerEvent: packetsPerEvent,
                eventCoverage: coverage)
            {
                return verdict(.app, paced)
            }
            return verdict(
                .valueSize,
                "limited by the value size: \(Int(averageValueSize.rounded()))-byte values where the MTU allows \(Int(usable)) (send fewer, larger values)"
            )
        }
        let (limit, why) = eventLimit(link, direction: direction, activeMicroseconds: active, packetsPerEvent: packetsPerEvent)
        return verdict(limit, why)
    }

    /// Below this many values, a stream is a few events (button presses, a status now and then), not a transfer
    /// that larger values would speed up.
    public static let fewValues = 20

    /// Rule 5's exception: why small values are the application's pace, not a waste of the link; nil when they are
    /// a waste (a sender that fills the connection events with small values: it has more to say than it puts in each).
    /// `eventCoverage`: the share of the connection events (while not idle) that carried the stream, when the interval
    /// and packets per event are known.
    static func paceOfApplication(
        packets: Int, valueSize: Double, uniform: Bool, packetsPerEvent: PacketsPerEvent?, eventCoverage: Double?
    ) -> String? {
        let size = Int(valueSize.rounded())
        if packets < fewValues {
            return "paced by the application: \(packets) values are a few events, not a transfer (larger values would not raise it)"
        }
        if let coverage = eventCoverage, coverage < 0.8 {
            return "paced by the application: values in only \(percentText(coverage)) % of the connection events "
                + "(the sender offers little; larger values would not raise it)"
        }
        if uniform, (packetsPerEvent?.median ?? 1) <= 1 {
            return "paced by the application: every value is \(size) byte\(size == 1 ? "" : "s") (a fixed report format), "
                + "at most one per connection event (larger values would not raise it)"
        }
        return nil
    }

    /// Rule 4: at 75 % of the ceiling `c` or more, the link setting whose fastest value raises the ceiling most (by 5 %
    /// at least), or the ceiling itself.
    static func linkLimit(_ link: LinkSnapshot, direction: Direction, ceiling c: Double) -> (ThroughputLimit, String) {
        let tx = direction != .rx
        let phy = link.phy[direction]
        let dl = Int(tx ? link.dataLength.maxTxOctets : link.dataLength.maxRxOctets)
        var best: (ThroughputLimit, String, Double)? = nil
        func consider(_ limit: ThroughputLimit, _ what: String, _ changed: LinkSnapshot) {
            guard let v = ThroughputCeiling.ceiling(for: changed, direction: direction), v > (best?.2 ?? c) else { return }
            best = (limit, what, v)
        }
        if phy != .le2M {
            var l = link
            l.phy = PHYPair(tx: .le2M, rx: .le2M)
            consider(.phy, "PHY \(phy) (2M", l)
        }
        if dl < 251 {
            var l = link
            l.dataLength = DataLength(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120)
            consider(.dataLength, "data length \(dl) (251", l)
        }
        if link.mtu < 247 {
            var l = link
            l.mtu = 247
            consider(.mtu, "MTU \(link.mtu) (247", l)
        }
        if let best, best.2 >= 1.05 * c {
            return (best.0, "limited by the link's \(best.1) would allow \(rateText(best.2)))")
        }
        return (.ceiling, "at the link's ceiling: PHY, data length and MTU are already the fastest")
    }

    /// Rules 6 and 7: below the ceiling with values of a fair size, how the packets fill the connection events.
    static func eventLimit(
        _ link: LinkSnapshot, direction: Direction, activeMicroseconds active: Int64, packetsPerEvent: PacketsPerEvent?
    ) -> (ThroughputLimit, String) {
        guard let ci = link.parameters?.intervalMicroseconds, ci > 0, let ppe = packetsPerEvent else {
            return (.unknown, "below the ceiling; connection interval not seen, so packets per event cannot be estimated")
        }
        let coverage = min(1, Double(ppe.events) * Double(ci) / Double(max(1, active)))
        let fit = ThroughputCeiling.packetsPerEvent(link: link, direction: direction)
        let perEvent = "\(ppe.median) packet\(ppe.median == 1 ? "" : "s") per event"
        if coverage >= 0.8 {
            if ppe.median < fit {
                return (
                    .packetsPerEvent,
                    "limited by \(perEvent) at \(millisecondsText(ci)) ms (\(fit) would fit: "
                        + "more packets per event or a shorter interval would raise it)"
                )
            }
            return (.app, "events carry \(perEvent) (full) yet the rate stays below the ceiling: other traffic shares the link")
        }
        return (
            .app,
            "limited by the app: packets in only \(percentText(coverage)) % of the connection events, "
                + "\(perEvent) (the sender offers less than the link carries)"
        )
    }
}

extension ThroughputCeiling {
    /// How many MTU-sized PDUs fit in one connection event of `link` going `direction` (at least 1; 1 without an interval).
    public static func packetsPerEvent(link: LinkSnapshot, direction: Direction) -> Int {
        let tx = direction != .rx
        guard let phy = PHY(link.phy[direction]), let ci = link.parameters?.intervalMicroseconds else { return 1 }
        let dl = Int(tx ? link.dataLength.maxTxOctets : link.dataLength.maxRxOctets)
        return max(1, packetsPerEvent(mtu: link.mtu, dataLength: dl, phy: phy, intervalMicroseconds: ci, encrypted: link.encrypted))
    }
}

/// `512.0 kbps`: in the run's one unit, as the reports print rates (``RateUnit/display``).
package func rateText(_ bps: Double) -> String { formatRate(bps) }

/// `37` for 0.37; one decimal under 10 %; `< 0.1` for a sliver.
func percentText(_ fraction: Double) -> String {
    let p = fraction * 100
    if p > 0 && p < 0.1 { return "< 0.1" }
    return p < 10 ? String(fractionDigits: 1, p) : String(fractionDigits: 0, p)
}

/// `30`, `7.5`, `11.25` for µs given.
func millisecondsText(_ us: Int) -> String {
    var s = String(fractionDigits: 2, Double(us) / 1000)
    while s.hasSuffix("0") { s.removeLast() }
    if s.hasSuffix(".") { s.removeLast() }
    return s
}
