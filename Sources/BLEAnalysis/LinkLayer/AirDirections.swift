import BLECapture
import BLECore
import BLEProtocols

/// Which side sent each data PDU of an air connection when the pseudo-header does not say it (LT 251, PPI, LT 256 with
/// PDU type 0), or says it wrongly, from the connection event's structure (Core Spec Vol 6, Part B, 4.5.1): an event
/// opens with the central's packet at its anchor point, and the two sides alternate T_IFS (150 µs) apart, so no side
/// sends twice in a row within an event.
///
/// - A packet that opens an event and whose header says nothing is the central's.
/// - Within an event a packet whose header says nothing is the other side's than the one before it.
/// - A header that says the same side as the packet it directly follows is wrong, and corrected, when the packet is
///   that packet's answer: T_IFS after it (no more than 150 µs, the longer of the two air times and 40 µs of slack from
///   either packet's start or end), and its SN the other's NESN and its NESN the other's SN + 1 (Vol 6, Part B, 4.5.9:
///   received and acknowledged). WHAD marks the third packet of an event as the peripheral's (the corpus's WHAD pairing
///   capture, frame 13). A longer gap may hide a packet the sniffer missed, and a host that logs its own packets with
///   its own times can put two of them 179 µs apart (blue2th's capture, frames 30–31: SN/NESN 0/0 twice): there the
///   header is kept.
///
/// An event whose central packet the sniffer missed opens with the peripheral's answer. Telling it from the anchor
/// points' period needs the sniffer's packet times to within tens of µs; crackle's PPI clock stamps packets by their end
/// (its periods vary by 95 µs with the packets' lengths), so that is not attempted. Its SN and NESN tell it instead when
/// the packet before it was the peripheral's: the central's next packet carries that packet's NESN as its SN and its SN
/// + 1 as its NESN (it received it); the peripheral's next one, after a central packet that acknowledged it and was
/// itself new, carries both bits flipped (Vol 6, Part B, 4.5.9). The two never agree, so a packet that is the second and
/// not the first is the peripheral's (crackle's numeric-PIN capture, decrypted: the Error Response at 254, after the
/// peripheral's empty PDU at 253, SN/NESN 0/0 then 1/1).
struct AirDirections: Sendable {
    /// The direction of the connection's previous packet, and its header's first byte (NESN bit 2, SN bit 3).
    private var last: Direction = .unknown
    private var lastHeader: UInt8 = 0

    /// The side that sent a packet: `said` is the pseudo-header's, `newEvent` whether the packet opens an event,
    /// `followsDirectly` whether it came T_IFS after the previous one, `header` its header's first byte. Counts what it
    /// inferred or corrected in `stats`.
    mutating func direction(
        said: Direction, newEvent: Bool, followsDirectly: Bool, header: UInt8, stats: inout LinkLayerStats
    ) -> Direction {
        defer { lastHeader = header }
        var direction = said
        if newEvent || last == .unknown {
            if said == .unknown {
                direction = last == .rx && !answers(header) && followsMissedCentralPacket(header) ? .rx : .tx
                stats.directionsInferred &+= 1
            }
        } else {
            let other: Direction = last == .tx ? .rx : .tx
            if said == .unknown {
                stats.directionsInferred &+= 1
                direction = other
            } else if said != other, followsDirectly, answers(header) {
                stats.directionsCorrected &+= 1
                direction = other
            }
        }
        last = direction
        return direction
    }

    /// The previous packet's side, when something surer than the events (``ATTSides``) gave it.
    mutating func override(_ side: Direction) { last = side }

    /// Whether a header's SN and NESN are the previous packet's flipped: its sender's next packet once a packet of the
    /// other side, not captured, acknowledged it and was itself new.
    private func followsMissedCentralPacket(_ header: UInt8) -> Bool {
        header >> 3 & 1 == (lastHeader >> 3 & 1) ^ 1 && header >> 2 & 1 == (lastHeader >> 2 & 1) ^ 1
    }

    /// Whether a header's SN is the previous packet's NESN and its NESN the previous packet's SN + 1: the other side's
    /// answer to it, received and acknowledged.
    private func answers(_ header: UInt8) -> Bool {
        let sn = header >> 3 & 1, nesn = header >> 2 & 1
        return sn == lastHeader >> 2 & 1 && nesn == (lastHeader >> 3 & 1) ^ 1
    }
}

extension LinkLayerTracker {
    /// A plaintext packet's direction: learned from where the sniffer gave it, else the side ATT says sent it
    /// (``ATTSides``), the connection events' inference kept where ATT says nothing.
    static func attSide(_ c: inout Conn, _ air: LLAirPacket, llid: UInt8, _ inferred: Direction) -> Direction {
        guard air.direction == .unknown else {
            c.attSides.learn(air.packet.payload, llid: llid, from: inferred)
            return inferred
        }
        guard let side = c.attSides.sender(air.packet.payload, llid: llid) else { return inferred }
        c.stats.directionsFromATT &+= 1
        c.directions.override(side)
        return side
    }

    /// The packet's time for event timing (µs): the sniffer's own clock when the pseudo-header gives one (unwrapped from
    /// its 32 bits), else the record's.
    static func eventTime(_ c: inout Conn, _ air: LLAirPacket, _ record: CaptureRecord) -> Int64 {
        guard let clock = air.snifferClock100ns else { return record.timestamp.microseconds }
        if let last = c.lastSnifferClock { c.snifferTime &+= Int64(clock &- last) }
        c.lastSnifferClock = clock
        return c.snifferTime / 10
    }
}
