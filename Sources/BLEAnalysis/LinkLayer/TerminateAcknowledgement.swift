import BLECore
import BLEProtocols

/// Whether the other side acknowledged a link's LL_TERMINATE_IND in the capture. The side that sends it ends the link
/// once the peer acknowledges it, or when the terminate procedure times out (Core Spec Vol 6, Part B, 5.1.1); an
/// acknowledgement is the peer's next packet with its NESN moved past the terminate's SN (Vol 6, Part B, 4.5.9).
struct TerminateAcknowledgement: Hashable, Sendable {
    var frame: Int
    var centralSent: Bool
    /// The other side's packet that acknowledged it.
    var acknowledgedAt: Int?

    /// Said once per link whose terminate no packet acknowledged: the sender may have waited out the procedure
    /// time-out, or the sniffer missed the answer.
    var unacknowledgedFinding: Finding? {
        guard acknowledgedAt == nil else { return nil }
        let (sender, peer) = centralSent ? ("central", "peripheral") : ("peripheral", "central")
        return Finding(
            .info,
            FindingKind(
                .llTerminateUnacknowledged,
                message:
                    "the \(sender)'s LL_TERMINATE_IND at frame \(frame) was not acknowledged: no packet of the \(peer) after it moves its NESN past the terminate's SN"
            ),
            frame: frame)
    }
}

extension LinkLayerTracker {
    /// Acknowledgements (Vol 6, Part B, 4.5.9): a packet whose NESN differs from the SN of the last PDU the other side
    /// sent acknowledges that PDU. The other side's next PDU with the same SN is then a new one if that side received
    /// the acknowledgement (the events between were not captured: six SMP Pairing Requests a second apart are six, not
    /// one and five retransmissions), a retransmission if it did not (``trackSequence``); and an LL_TERMINATE_IND
    /// waiting for its acknowledgement has it.
    ///
    /// This side moving its own SN past its acknowledging PDU shows the other side received that PDU (this side sends
    /// a new PDU only once its last one is acknowledged): the Samsung TV capture's peripheral at 127, after 126.
    static func noteAcknowledgement(_ c: inout Conn, _ pkt: LLPacketView, d: Int, frame: Int) {
        let nesn: Int8 = pkt.header0 & 0x04 != 0 ? 1 : 0
        let sn: Int8 = pkt.header0 & 0x08 != 0 ? 1 : 0
        let acknowledging = d == 0 ? c.acknowledgedBy.1 : c.acknowledgedBy.0
        if acknowledging >= 0, sn != acknowledging {
            if d == 0 { c.lastSN.1 = -1; c.acknowledgedBy.1 = -1 } else { c.lastSN.0 = -1; c.acknowledgedBy.0 = -1 }
        }
        let other = d == 0 ? c.lastSN.1 : c.lastSN.0
        guard other >= 0, nesn != other, (d == 0 ? c.acknowledgedBy.1 : c.acknowledgedBy.0) < 0 else { return }
        if d == 0 { c.acknowledgedBy.1 = sn } else { c.acknowledgedBy.0 = sn }
        if let t = c.terminate, t.acknowledgedAt == nil, t.centralSent != (d == 0) { c.terminate?.acknowledgedAt = frame }
        if let t = c.encryptedTerminate, t.acknowledgedAt == nil, t.centralSent != (d == 0) {
            c.encryptedTerminate?.acknowledgedAt = frame
        }
    }

    /// An encrypted control PDU no key opened, 6 octets on air: 2 in the clear and the 4-octet MIC (Core Spec Vol 6,
    /// Part E, 1), the size of LL_TERMINATE_IND (opcode, error code), and of LL_REJECT_IND, LL_UNKNOWN_RSP and
    /// LL_CLOCK_ACCURACY_REQ/RSP too. Kept as the link's candidate end: only a terminate is followed by its
    /// acknowledgement and then silence (``LinkSilence/EncryptedTerminate``).
    static func noteEncryptedControl(_ c: inout Conn, llid: UInt8, payloadCount: Int, direction: Direction, frame: Int) {
        guard llid == 3 else { return }
        c.encryptedTerminate =
            payloadCount == 2 + LLEncryptionState.micLength ? TerminateAcknowledgement(frame: frame, centralSent: direction != .rx) : nil
    }
}

extension LLEncryptionState {
    /// The MIC after every encrypted payload, octets (Core Spec Vol 6, Part E, 1).
    static let micLength = 4
}
