import BLECapture
import BLECore
import BLEProtocols

/// Data PDUs at access addresses no CONNECT_IND announced, held until the other side answers.
///
/// A link the sniffer joined after its CONNECT_IND shows itself by traffic both sides send: packets the sniffer says
/// went each way, or, when it does not say, a packet answered T_IFS (150 µs) after it ends, as the peripheral answers
/// the central in every connection event (Core Spec Vol 6, Part B, 4.5.1). A single PDU at an unknown access address (a fuzzer's packet, noise that passed the CRC, another
/// link's packet the sniffer caught on its way) is answered by nobody: it opens no connection, and the PDUs that opened
/// nothing are counted and said once (``finding``).
///
/// Only PDUs at unknown access addresses come here: a followed link's packets never do, so holding a copy of one costs
/// nothing on the per-record path.
struct UnansweredPDUs {
    struct Held {
        var record: OwnedRecord
        var direction: Direction
        /// When the answer may come at the latest: the end of the held packet, T_IFS, and slack for the sniffer's clock.
        var answerBy: Int64
    }

    /// The latest unanswered PDU per access address (at most ``maxHeld``).
    private var held: [UInt32: Held] = [:]
    static let maxHeld = 16
    /// PDUs at unknown access addresses that opened nothing, and the first of them.
    private(set) var count = 0
    private(set) var firstFrame: Int?

    /// The PDU `air` answers (its record, to replay into the connection it opens), or nil: then `air` is held in its turn.
    mutating func answer(_ air: LLAirPacket, _ record: CaptureRecord) -> OwnedRecord? {
        let aa = air.packet.accessAddress.rawValue
        let now = record.timestamp.microseconds
        if let h = held[aa] {
            // A sniffer that says each packet's direction shows the other side at once, even when it caught one packet
            // of each event (SweynTooth Telink enc-loop, frames 1–2); without directions, the answer is the packet
            // T_IFS after this one.
            let directions = air.direction != .unknown && h.direction != .unknown
            let answered =
                directions ? air.direction != h.direction : now >= h.record.timestamp.microseconds && now <= h.answerBy
            if answered {
                held[aa] = nil
                return h.record
            }
            unanswered(h.record.frame)
        } else if held.count >= Self.maxHeld {
            for h in held.values { unanswered(h.record.frame) }
            held.removeAll(keepingCapacity: true)
        }
        // The slack covers sniffers that stamp a packet's end, or round to tens of µs.
        let answerBy = now + Int64(air.phy.airTime(pduBytes: air.packet.pdu.count) + 150 + 500)
        held[aa] = Held(record: OwnedRecord(record), direction: air.direction, answerBy: answerBy)
        return nil
    }

    /// At the end of the capture: what is still held was never answered.
    mutating func finish() {
        for h in held.values { unanswered(h.record.frame) }
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
                code: "ll.unanswered-pdus",
                message:
                    "\(count) data PDU\(count == 1 ? "" : "s") at access addresses no CONNECT_IND announced (first at frame \(first)) "
                    + "never answered from the other side: not taken as connections (noise that passed the CRC, a fuzzer's packets, "
                    + "or another link's packets the sniffer caught)"),
            frame: first)
    }
}
