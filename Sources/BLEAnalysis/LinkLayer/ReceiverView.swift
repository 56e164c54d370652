import BLECore
import BLEProtocols

extension LinkLayerTracker {
    /// The last data PDU one side sent, as its receiver's sequence numbering sees it (``noteReceiverView``).
    struct SentPDU {
        var frame: Int
        var sn: Int8
        var nesn: Int8
        /// The first payload octet of a control PDU (its opcode in the clear), -1 for any other PDU.
        var opcode: Int16
    }

    /// Whether this PDU's receiver takes it as resent rather than new, by the SN and NESN the capture shows (Core Spec
    /// Vol 6, Part B, 4.5.9): when the receiver spoke since the sender's previous PDU, the PDU is new only if its SN is
    /// the NESN the receiver asked for; when it did not, a PDU with the SN and opcode of the sender's previous one is that
    /// PDU again. Unlike ``trackSequence``'s retransmission (same SN and same bytes), this holds when a fuzzer changes the
    /// bytes and keeps the SN: the SweynTooth Telink capture's central sends LL_VERSION_IND at 849 and, with other
    /// parameters and the same SN 0, at 850; its receiver drops the second. Once-only procedures count new PDUs alone.
    static func noteReceiverView(_ c: inout Conn, _ pkt: LLPacketView, llid: UInt8, d: Int, frame: Int) -> Bool {
        let sn: Int8 = pkt.header0 & 0x08 != 0 ? 1 : 0
        let nesn: Int8 = pkt.header0 & 0x04 != 0 ? 1 : 0
        let opcode: Int16 = llid == 3 && !pkt.payload.isEmpty ? Int16(pkt.payload[0]) : -1
        let previous = d == 0 ? c.lastSent.0 : c.lastSent.1
        let other = d == 0 ? c.lastSent.1 : c.lastSent.0
        let resent: Bool
        if let other, other.frame > previous?.frame ?? Int.min {
            resent = sn != other.nesn
        } else if let previous {
            resent = previous.sn == sn && previous.opcode == opcode
        } else {
            resent = false
        }
        // The sender acknowledged a packet the capture does not hold: its NESN moved on since its previous packet, and
        // the receiver has none in the capture between them (the Ubertooth shaver capture: the central's 22497 has NESN 1,
        // its 22498 NESN 0, no peripheral packet between; the answer to the request at 22495 went there).
        if let previous, nesn != previous.nesn, (other?.frame ?? Int.min) < previous.frame, !c.stats.missed.noted(since: previous.frame) {
            c.stats.missed.note(after: previous.frame, at: frame, events: 0, unheard: d == 0 ? .peer : .local)
        }
        let this = SentPDU(frame: frame, sn: sn, nesn: nesn, opcode: opcode)
        if d == 0 { c.lastSent.0 = this } else { c.lastSent.1 = this }
        return resent
    }
}
