import BLECapture
import BLECore
import BLEProtocols

extension LinkLayerTracker {
    /// Counts the connection event a packet belongs to and its place in it; returns the packet's direction (from the
    /// sniffer, or from its place in the event: the central speaks first, Core Spec Vol 6, Part B, 4.5.1). A new event
    /// applies the changes whose instant it reaches.
    static func countEvent(
        _ c: inout Conn, _ air: LLAirPacket, _ record: CaptureRecord, _ emit: (LinkLayerOutput) -> Void
    ) -> Direction {
        if let ec = air.eventCounter {
            // A counter of 0 in the middle of a link is a writer's blank, not the counter going back and on again: the
            // LESC debug-key capture (bsniffhub writing LINKTYPE 272) has 0 on 361 of its packets from frame 248 (502:
            // the peripheral's packet of event 247), which made event 248 at 503 look 247 events on.
            if c.haveEvent, ec == 0, c.lastNordicEvent != 0, c.lastNordicEvent != 0xFFFF {
                c.positionInEvent &+= 1
                return air.direction
            }
            if !c.haveEvent || ec != c.lastNordicEvent {
                // Events the counter skipped are events the sniffer missed (a count past half the range is the counter
                // going back: a new link on the access address, not a miss).
                let skipped = Int(ec &- c.lastNordicEvent &- 1)
                if c.haveEvent, skipped > 0, skipped < 0x8000 {
                    c.stats.missed.note(after: c.lastGood?.frame ?? c.info.startFrame, at: record.frame, events: skipped)
                }
                LinkLayerTracker.closeEvent(&c.stats, c.packetsThisEvent)
                c.stats.events &+= 1
                c.packetsThisEvent = 0
                c.positionInEvent = 0
                c.haveEvent = true
                c.lastNordicEvent = ec
                c.eventCounter = ec
                if !c.pending.isEmpty { applyInstants(&c, record, emit) }
            } else {
                c.positionInEvent &+= 1
            }
            return air.direction
        }
        let now = eventTime(&c, air, record)
        let air0 = c.info.parameters.centralToPeripheralPHY.airTime(pduBytes: air.packet.pdu.count)
        let gap = now &- c.lastTime
        let newEvent = !c.haveEvent || gap > Int64(max(air0, c.lastAirTime) &+ 650) || gap < 0
        if newEvent {
            LinkLayerTracker.closeEvent(&c.stats, c.packetsThisEvent)
            c.stats.events &+= 1
            if c.haveEvent {
                if let interval = c.info.parameters.interval, interval > 0 {
                    let n = (gap + Int64(interval) * 625) / (Int64(interval) * 1250)
                    c.eventCounter &+= UInt16(truncatingIfNeeded: max(1, n))
                    if n > 1 { c.stats.missed.note(after: c.lastGood?.frame ?? c.info.startFrame, at: record.frame, events: Int(n - 1)) }
                } else {
                    c.eventCounter &+= 1
                }
            }
            c.haveEvent = true
            c.packetsThisEvent = 0
            c.positionInEvent = 0
            if !c.pending.isEmpty { applyInstants(&c, record, emit) }
        } else {
            c.positionInEvent &+= 1
        }
        let followsDirectly = !newEvent && gap <= Int64(150 &+ max(air0, c.lastAirTime) &+ 40)
        c.lastTime = now
        c.lastAirTime = air0
        return c.directions.direction(
            said: air.direction, newEvent: newEvent, followsDirectly: followsDirectly, header: air.packet.header0, stats: &c.stats)
    }
}
