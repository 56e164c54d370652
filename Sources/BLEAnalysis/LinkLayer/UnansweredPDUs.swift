import BLECapture
import BLECore
import BLEProtocols

/// Data PDUs at access addresses no CONNECT_IND announced, held until the other side answers.
///
/// A link the sniffer joined after its CONNECT_IND shows itself by traffic both sides send: packets the sniffer says
/// went each way, or, when it does not say, a packet answered T_IFS (150 µs) after it ends, as the peripheral answers
/// the central in every connection event (Core Spec Vol 6, Part B, 4.5.1), or, where the capture's clock cannot tell
/// (crackle's PPI files have fraction fields above 10^6 and run backwards), three packets whose SN and NESN chain as
/// the acknowledgement scheme has each side's packets chain (4.5.9). A single PDU at an unknown access address (a
/// fuzzer's packet, noise that passed the CRC, another link's packet the sniffer caught on its way) is answered by
/// nobody: it opens no connection, and the PDUs that opened nothing are counted and said once (``finding``).
///
/// Only PDUs at unknown access addresses come here: a followed link's packets never do, so holding a copy of one costs
/// nothing on the per-record path. Every PDU held before the answer is replayed into the link it opens (a Pairing
/// Request whose response the sniffer missed is the link's, not noise).
struct UnansweredPDUs {
    struct Held {
        var record: OwnedRecord
        var direction: Direction
        /// When the answer may come at the latest: the end of the held packet, T_IFS, and slack for the sniffer's clock.
        var answerBy: Int64
        var sn: Bool
        var nesn: Bool
    }

    /// The unanswered PDUs per access address, oldest first (at most ``maxHeld`` addresses, ``maxPerAddress`` each).
    private var held: [UInt32: [Held]] = [:]
    static let maxHeld = 16
    static let maxPerAddress = 8
    /// Slack after T_IFS for sniffers that stamp a packet's end, round to tens of µs, or stamp on USB arrival
    /// (Ubertooth: answers 0.8–1.0 ms after an empty PDU in crackle's captures); far below the shortest connection
    /// interval (7.5 ms), so a packet of the next event is not taken for an answer.
    static let clockSlack: Int64 = 2_000
    /// PDUs at unknown access addresses that opened nothing, and the first of them.
    private(set) var count = 0
    private(set) var firstFrame: Int?

    /// The PDUs `air` answers, oldest first (their records, to replay into the connection it opens), or nil: then `air`
    /// is held in its turn.
    mutating func answer(_ air: LLAirPacket, _ record: CaptureRecord) -> [OwnedRecord]? {
        let aa = air.packet.accessAddress.rawValue
        let now = record.timestamp.microseconds
        let sn = air.packet.header0 & 0x08 != 0
        let nesn = air.packet.header0 & 0x04 != 0
        if var queue = held[aa], let last = queue.last {
            // A sniffer that says each packet's direction shows the other side at once, even when it caught one packet
            // of each event (SweynTooth Telink enc-loop, frames 1–2); without directions, the answer is the packet
            // T_IFS after this one, or the third link of an acknowledgement chain.
            let directions = air.direction != .unknown && last.direction != .unknown
            let timely = now >= last.record.timestamp.microseconds && now <= last.answerBy
            let chained =
                queue.count >= 2 && Self.acknowledges(sn: sn, nesn: nesn, last)
                && Self.acknowledges(sn: last.sn, nesn: last.nesn, queue[queue.count - 2])
            if directions ? air.direction != last.direction : (timely || chained) {
                held[aa] = nil
                return queue.map(\.record)
            }
            if queue.count >= Self.maxPerAddress { unanswered(queue.removeFirst().record.frame) }
            queue.append(Self.hold(air, record, sn: sn, nesn: nesn))
            held[aa] = queue
            return nil
        }
        if held.count >= Self.maxHeld {
            for queue in held.values { for h in queue { unanswered(h.record.frame) } }
            held.removeAll(keepingCapacity: true)
        }
        held[aa] = [Self.hold(air, record, sn: sn, nesn: nesn)]
        return nil
    }

    private static func hold(_ air: LLAirPacket, _ record: CaptureRecord, sn: Bool, nesn: Bool) -> Held {
        let answerBy = record.timestamp.microseconds + Int64(air.phy.airTime(pduBytes: air.packet.pdu.count) + 150) + clockSlack
        return Held(record: OwnedRecord(record), direction: air.direction, answerBy: answerBy, sn: sn, nesn: nesn)
    }

    /// The packet (sn, nesn) is the other side's next one after `x`: it carries the sequence number `x` expects and
    /// acknowledges `x` (Core Spec Vol 6, Part B, 4.5.9).
    private static func acknowledges(sn: Bool, nesn: Bool, _ x: Held) -> Bool { sn == x.nesn && nesn != x.sn }

    /// At the end of the capture: what is still held was never answered.
    mutating func finish() {
        for queue in held.values { for h in queue { unanswered(h.record.frame) } }
        held.removeAll()
    }

    private mutating func unanswered(_ frame: Int) {
        count += 1
        firstFrame = min(firstFrame ?? frame, frame)
    }

    /// Said once: how many PDUs opened nothing, and the first.
    var finding: Finding? {
        guard count > 0, let first = firstFrame else { return nil }
        return Finding(
            .info,
            FindingKind(
                .llUnansweredPDUs,
                message:
                    "\(count) data PDU\(count == 1 ? "" : "s") at access addresses no CONNECT_IND announced (first at frame \(first)) "
                    + "never answered from the other side: not taken as connections (noise that passed the CRC, a fuzzer's packets, "
                    + "or another link's packets the sniffer caught)"),
            frame: first)
    }
}
