import BLECore

/// ATT_MTU over the whole of a connection the capture joined late.
///
/// When a connection was up before the capture started, its ATT_MTU is not known: each period starts with the
/// default 23 `assumed`, and the first PDU larger than that proves the MTU is at least its size, `inferred` from there
/// on (``LinkState``). But the client sends Exchange MTU once per connection (Core Spec Vol 3, Part F, 3.4.2.2), and an
/// exchange the capture did not show happened before it: the MTU was the same from the capture's first record. So the
/// lower bound the largest PDU proves holds for every period of the connection, and a stream that ended before that
/// PDU (peripage log, notifications on 0x000f) is judged against it too, not against 23. A connection where an
/// exchange was seen (or that started in the capture) keeps its history as it is.
enum MTUBackdating {
    /// Rewrites the periods of every stream of a connection that qualifies, then joins the neighbouring periods that
    /// became the same link.
    static func apply(to states: inout [StreamState], idleThreshold: Int64) {
        var largest: [Int: Int] = [:]
        var known: Set<Int> = []
        for s in states {
            for p in s.closedPeriods + [s.period] {
                if p.link.unseen.contains(.mtuAtLeast) {
                    largest[s.key.connectionNumber] = max(largest[s.key.connectionNumber] ?? 0, p.link.mtu)
                } else if !p.link.unseen.contains(.mtuAssumed) {
                    known.insert(s.key.connectionNumber)
                }
            }
        }
        for i in states.indices {
            let c = states[i].key.connectionNumber
            guard let mtu = largest[c], !known.contains(c) else { continue }
            states[i].backdateMTU(mtu, idleThreshold: idleThreshold)
        }
    }
}

extension StreamState {
    /// Every period's ATT_MTU becomes the lower bound `mtu` (inferred); neighbours with the same link become one.
    mutating func backdateMTU(_ mtu: Int, idleThreshold: Int64) {
        var merged: [PeriodState] = []
        for var p in closedPeriods + [period] {
            p.link.mtu = mtu
            p.link.unseen.remove(.mtuAssumed)
            p.link.unseen.insert(.mtuAtLeast)
            if let last = merged.last, PeriodState.sameLink(last.link, p.link) {
                merged[merged.count - 1] = last.joined(with: p, idleThreshold: idleThreshold)
            } else {
                merged.append(p)
            }
        }
        period = merged.removeLast()
        closedPeriods = merged
    }
}

extension PeriodState {
    /// This period and the one after it as one: counts added, the gap between them idle when it is long, the bursts
    /// of both (the later one's open burst stays open).
    func joined(with later: PeriodState, idleThreshold: Int64) -> PeriodState {
        var p = self
        p.closeBurst()
        let gap = later.firstTime.microseconds(since: lastTime)
        p.idle += later.idle + (gap > idleThreshold ? gap : 0)
        p.packets += later.packets
        p.valueBytes += later.valueBytes
        p.l2capBytes += later.l2capBytes
        p.lastFrame = later.lastFrame
        p.lastTime = later.lastTime
        if !later.bursts.isEmpty {
            if p.bursts.isEmpty { p.bursts = later.bursts } else { for i in p.bursts.indices { p.bursts[i] += later.bursts[i] } }
        }
        p.burstStart = later.burstStart
        p.burstCount = later.burstCount
        return p
    }
}
