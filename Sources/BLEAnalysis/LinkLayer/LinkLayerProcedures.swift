import BLECapture
import BLECore
import BLEProtocols

/// The LL procedures whose end settles a link fact a controller would report over HCI: the data length update
/// (Core Spec Vol 6, Part B, 5.1.9) and the encryption start and pause (5.1.3). What they settle leaves as an
/// ``LLLinkChange``, which the analyzer hands to the link as the ``LinkInput`` the HCI event would have become.
extension LinkLayerTracker {
    /// LL_LENGTH_REQ is kept until its LL_LENGTH_RSP; a request rejected (a procedure collision, 5.3: LL_REJECT_EXT_IND,
    /// or LL_UNKNOWN_RSP) is dropped, so the procedure redone after it is the one that counts. A refused LL_ENC_REQ is
    /// the key refused.
    static func applyProcedureAnswer(
        _ c: inout Conn, _ pdu: LLControlPDU, direction: Direction, _ record: CaptureRecord, _ emit: (LinkLayerOutput) -> Void
    ) {
        let fromPeripheral = direction == .rx
        switch pdu {
        case .lengthReq(let p):
            if fromPeripheral { c.lengthRequests.peripheral = p } else { c.lengthRequests.central = p }
        case .lengthRsp(let p):
            // The response answers the other side's request.
            guard let request = fromPeripheral ? c.lengthRequests.central : c.lengthRequests.peripheral else { return }
            if fromPeripheral { c.lengthRequests.central = nil } else { c.lengthRequests.peripheral = nil }
            let length = effectiveDataLength(
                central: fromPeripheral ? request : p, peripheral: fromPeripheral ? p : request, phys: c.info.parameters)
            emit(
                .linkChanged(
                    LLLinkChange(handle: c.info.handle, change: .dataLength(length), frame: record.frame, timestamp: record.timestamp)))
        case .rejectExtInd(let opcode, _) where opcode == .lengthReq, .unknownRsp(let opcode) where opcode == .lengthReq:
            // The other side's request is refused.
            if fromPeripheral { c.lengthRequests.central = nil } else { c.lengthRequests.peripheral = nil }
        case .rejectInd where c.encryption.phase == .requested, .rejectExtInd(.encReq, _) where c.encryption.phase == .requested:
            // The start is refused: the link stays in the clear, and what follows is plaintext (Vol 6, Part B, 5.1.3.1).
            c.encryption.phase = .clear
            emit(.linkChanged(LLLinkChange(handle: c.info.handle, change: .keyRefused, frame: record.frame, timestamp: record.timestamp)))
        default:
            break
        }
    }

    /// The effective maximum octets and times each way once both sides stated theirs (Core Spec Vol 6, Part B, 4.5.10):
    /// a side sends no more than it can send and the other can receive; on the Coded PHY the time is at least 2704 µs.
    /// `maxTx…` is central → peripheral, `maxRx…` peripheral → central.
    static func effectiveDataLength(central: LLLengthParameters, peripheral: LLLengthParameters, phys: LLLinkParameters) -> DataLength {
        func time(_ sender: UInt16, _ receiver: UInt16, _ phy: LEPHY) -> UInt16 {
            let uncoded = max(328, min(sender, receiver))
            return phy == .leCoded ? max(2704, uncoded) : uncoded
        }
        return DataLength(
            maxTxOctets: max(27, min(central.maxTxOctets, peripheral.maxRxOctets)),
            maxTxTime: time(central.maxTxTime, peripheral.maxRxTime, phys.centralToPeripheralPHY),
            maxRxOctets: max(27, min(peripheral.maxTxOctets, central.maxRxOctets)),
            maxRxTime: time(peripheral.maxTxTime, central.maxRxTime, phys.peripheralToCentralPHY))
    }

    /// The link's encryption, said once per start (or pause).
    static func sayEncryption(_ c: inout Conn, on: Bool, inferred: Bool, _ record: CaptureRecord, _ emit: (LinkLayerOutput) -> Void) {
        guard c.encryptionSaid != on else { return }
        c.encryptionSaid = on
        emit(
            .linkChanged(
                LLLinkChange(
                    handle: c.info.handle, change: .encryption(on: on, inferred: inferred), frame: record.frame,
                    timestamp: record.timestamp)))
    }

    /// An encrypted PDU before the procedure's end was seen: one that no key opened, or a decrypted data PDU (the
    /// LL_START_ENC_RSPs were missed), says the link is encrypted from here, inferred.
    static func noteEncryptedPDU(_ c: inout Conn, readable: Bool, llid: UInt8, _ record: CaptureRecord, _ emit: (LinkLayerOutput) -> Void) {
        guard !c.encryptionSaid, !readable || llid != 3 else { return }
        sayEncryption(&c, on: true, inferred: true, record, emit)
    }
}

extension LinkLayerTracker {
    /// Keeps the sequence number and a hash of the last PDU sent in direction `d` (0 central → peripheral, 1 back);
    /// returns whether this PDU is a retransmission (same SN, same bytes: an encrypted retransmission keeps its packet
    /// counter, so its ciphertext is the same too), nil for an empty PDU (counted here, nothing more to do).
    ///
    /// After the other side acknowledged the last PDU (and did not show it was received), one with the same SN and bytes
    /// is still a retransmission when its NESN is the acknowledging PDU's SN: the sender never received that
    /// acknowledgement (it still expects that PDU), so it sent the same PDU again, with the same counter (the WHAD
    /// pairing capture, frames 1525–1527: the peripheral's empty PDU at 1526 acknowledges 1525, the central's NESN at
    /// 1527 shows it missed 1526; tshark shows 1527's bytes equal to 1525's).
    static func trackSequence(_ c: inout Conn, _ pkt: LLPacketView, llid: UInt8, d: Int, frame: Int) -> Bool? {
        noteAcknowledgement(&c, pkt, d: d, frame: frame)
        let sn: Int8 = pkt.header0 & 0x08 != 0 ? 1 : 0
        let nesn: Int8 = pkt.header0 & 0x04 != 0 ? 1 : 0
        let acknowledgedBy = d == 0 ? c.acknowledgedBy.0 : c.acknowledgedBy.1
        let last = acknowledgedBy < 0 || nesn == acknowledgedBy ? (d == 0 ? c.lastSN.0 : c.lastSN.1) : -1
        let lastH = d == 0 ? c.lastHash.0 : c.lastHash.1
        if d == 0 { c.acknowledgedBy.0 = -1 } else { c.acknowledgedBy.1 = -1 }
        if pkt.payload.isEmpty {
            c.stats.emptyPDUs &+= 1
            if last == sn, lastH == 0 { c.stats.emptyRetransmissions &+= 1 }
            if d == 0 { c.lastSN.0 = sn; c.lastHash.0 = 0 } else { c.lastSN.1 = sn; c.lastHash.1 = 0 }
            return nil
        }
        var h: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(llid)
        for byte in pkt.payload { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        if h == 0 { h = 1 }
        if d == 0 { c.lastSN.0 = sn; c.lastHash.0 = h } else { c.lastSN.1 = sn; c.lastHash.1 = h }
        // A link whose first packets hold no empty PDU: the file kept only packets with payload, so the packets between
        // two in it are missing and a repeated SN and payload is as likely a new PDU (the same ATT request sent again,
        // its same answer) as a resent one. The H-Band capture's watch answered 29 and 31 with the same Error Response,
        // SN 0 both times: 31 was dropped as a retransmission and the request 30 left unanswered (a false GATT-02).
        if c.stats.emptyPDUs == 0, c.stats.packets > Self.packetsBeforeJudgingEmpties { return false }
        return last == sn && lastH == h
    }

    /// Packets of a link after which none empty means the capture kept only packets with payload: every connection
    /// event opens with the central's packet and its answer, empty unless either has data, so a link's first events
    /// show empty PDUs when a sniffer keeps them.
    static let packetsBeforeJudgingEmpties = 16
}

extension LLDecryptOutcome {
    var isPlaintext: Bool {
        switch self {
        case .plaintext, .plaintextOtherDirection: true
        case .noKey, .micFailed: false
        }
    }
}
