import BLECapture
import BLECore
import BLEProtocols

// MARK: - Tracker

/// Follows air captures (pcap LT 272 / 256 / 251) at the link layer: advertising, connections, LL control,
/// and L2CAP fragments for the reassembler (Core Spec Vol 6, Part B).
///
/// - Connections are keyed by access address: from CONNECT_IND, or inferred from data-channel traffic when the
///   capture starts mid-connection.
/// - Direction: the nRF Sniffer header says it; for LT 256/251 it is inferred: a connection event opens with the
///   central's packet and the two sides alternate (T_IFS = 150 µs), so the first packet after a gap longer than
///   the previous packet's air time + 150 µs + 500 µs of slack is the central's, the next the peripheral's, and so on.
/// - SN/NESN: a PDU with the SN and bytes of the previous PDU in its direction is a retransmission: counted,
///   reported on control PDUs, and never handed to L2CAP again (Vol 6, Part B, 4.5.9).
/// - CRC-bad packets are counted and not decoded (for LT 256/251 without a CRC verdict, the CRC is checked here
///   when the CRC init is known). Encrypted PDUs the sniffer did not decrypt (nRF flags encrypted and MIC not
///   ok; LT 256/251 after LL_START_ENC_REQ) are counted and not decoded.
/// - Connection events: the nRF event counter, otherwise time gaps; instants of LL_CONNECTION_UPDATE_IND,
///   LL_CHANNEL_MAP_IND and LL_PHY_UPDATE_IND are applied when the event counter reaches them.
public struct LinkLayerTracker {
    struct Pending {
        var instant: UInt16
        var opcode: LLControlOpcode
        var update: LLConnectionUpdate?
        var channelMap: UInt64?
        var phys: (UInt8, UInt8)?
    }

    private var conns: [Conn] = []
    private var byAccessAddress: [UInt32: Int] = [:]
    /// The latest connection to each peripheral address (from its CONNECT_IND): its advertising again says it left.
    private var byPeripheral: [UInt64: Int] = [:]
    private var lastAA: UInt32 = 0
    private var lastIndex = -1
    private var nextHandle: UInt16
    private var reportedLinkTypes: Set<UInt32> = []
    private var unanswered = UnansweredPDUs()
    /// Keys for links that start encryption (nil: decrypt nothing; packets the capturer decrypted are still read).
    var keyStore: LinkKeyStore?
    /// Where decrypted payloads live until the next packet (shared by copies of the tracker: scratch only).
    private let plaintext = LLPlaintextBuffer()

    /// Called with every record blescope decrypts, rewritten in the clear (frame, record bytes).
    var onDecryptedRecord: ((Int, [UInt8]) -> Void)? {
        get { plaintext.rewritten }
        nonmutating set { plaintext.rewritten = newValue }
    }

    /// Link-layer records seen.
    public private(set) var packets = 0
    public private(set) var advertisingPackets = 0
    /// CRC-bad packets in total (advertising, unknown access addresses, connections).
    public private(set) var crcErrors = 0
    /// Advertising-channel packets whose CRC failed (not decoded), and the first of them.
    public private(set) var advertisingCRCErrors = 0
    public private(set) var firstAdvertisingCRCErrorFrame: Int?
    /// Records that could not be read (findings say why).
    public private(set) var malformed = 0

    /// - Parameter firstHandle: the synthetic handle given to the first connection; the next get the following numbers.
    public init(firstHandle: UInt16 = 1) {
        nextHandle = firstHandle
    }

    /// Every connection seen so far, with its statistics.
    public var connections: [(info: LLConnectionInfo, stats: LinkLayerStats)] {
        conns.map { c in
            var s = c.stats
            LinkLayerTracker.closeEvent(&s, c.packetsThisEvent)
            return (c.info, s)
        }
    }

    /// Statistics of the connection with `handle`.
    public func stats(for handle: UInt16) -> LinkLayerStats? {
        connections.first { $0.info.handle == handle }?.stats
    }

    @inline(__always)
    static func closeEvent(_ s: inout LinkLayerStats, _ n: Int) {
        if n > s.maxPacketsPerEvent { s.maxPacketsPerEvent = n }
    }

    /// Processes one record; ignores records that are not `.linkLayer`.
    package mutating func process(_ record: CaptureRecord, findings: inout [Finding], emit: (LinkLayerOutput) -> Void) {
        guard record.kind == .linkLayer else { return }
        packets &+= 1
        let air: LLAirPacket
        do {
            air = try LLAirPacket(linkType: record.linkType, bytes: record.bytes)
        } catch {
            if case .unsupported = error {
                if reportedLinkTypes.insert(record.linkType).inserted {
                    findings.append(Finding(.warning, .llNotLinkLayer(record.linkType), frame: record.frame))
                }
                return
            }
            malformed &+= 1
            findings.append(Finding(.warning, .llMalformed(error), frame: record.frame))
            if case .truncated = error { lengthOverflow(record, emit) }
            return
        }
        if air.isDataChannel {
            processData(air, record, &findings, emit)
        } else {
            processAdvertising(air, record, &findings, emit)
        }
    }

    /// A CRC-good data PDU of a known link whose record holds fewer octets than its Length (``LLLengthOverflowPacket``):
    /// its Length, for the link's maximum to be checked against (LL-05).
    private mutating func lengthOverflow(_ record: CaptureRecord, _ emit: (LinkLayerOutput) -> Void) {
        guard let p = LLLengthOverflowPacket(linkType: record.linkType, bytes: record.bytes), let i = connectionIndex(p.accessAddress),
            !conns[i].ended
        else { return }
        emit(
            .malformed(
                LLMalformedPDU(
                    handle: conns[i].info.handle, direction: p.direction,
                    shape: p.wholePayload.map { .crcCut(llid: p.header0 & 3, payload: $0) }
                        ?? .longerThanRecord(llid: p.header0 & 3, declared: p.declared, carried: p.carried), frame: record.frame,
                    timestamp: record.timestamp)))
    }

    private mutating func processAdvertising(
        _ air: LLAirPacket, _ record: CaptureRecord, _ findings: inout [Finding],
        _ emit: (LinkLayerOutput) -> Void
    ) {
        advertisingPackets &+= 1
        var crc = air.crc
        if crc == .notChecked {
            crc = LLCRC.compute(crcInit: 0x55_5555, over: air.packet.pdu) == air.packet.crc ? .valid : .invalid
        }
        if crc == .invalid {
            crcErrors &+= 1
            advertisingCRCErrors &+= 1
            if firstAdvertisingCRCErrorFrame == nil { firstAdvertisingCRCErrorFrame = record.frame }
            return
        }
        let header = LLAdvertisingHeader(air.packet.header0, air.packet.header1)
        let payload = air.packet.payload
        var advertiser: LLDeviceAddress?
        var data = UnsafeRawBufferPointer(start: nil, count: 0)
        switch header.type {
        case .advInd, .advNonconnInd, .advScanInd, .scanRsp, .advDirectInd:
            if payload.count >= 6 {
                advertiser = LinkLayerTracker.address(payload, 0, header.txAddRandom)
                if header.type != .advDirectInd { data = UnsafeRawBufferPointer(rebasing: payload[6...]) }
            }
        case .scanReq, .connectInd:
            if payload.count >= 12 { advertiser = LinkLayerTracker.address(payload, 6, header.rxAddRandom) }
        default: break
        }
        // Connectable advertising from a peripheral with a link, or a scanner's SCAN_REQ to it (sent only within T_IFS of
        // hearing its scannable advertisement, Vol 6, Part B, 4.4.2.3): it is advertising, so out of the link.
        if let advertiser, header.type == .advInd || header.type == .advDirectInd || header.type == .scanReq,
            !byPeripheral.isEmpty
        {
            noteAdvertising(by: advertiser, scanRequest: header.type == .scanReq, record)
        }
        emit(
            .advertising(
                LLAdvertisingReport(
                    frame: record.frame, timestamp: record.timestamp, channel: air.channel, rssi: air.rssi,
                    type: header.type, header: header, advertiser: advertiser, payload: payload,
                    advertisingData: data)))
        // On a secondary advertising channel the same PDU is AUX_CONNECT_REQ (Core Spec Vol 6, Part B, 2.3.3.1): it opens
        // the connection as CONNECT_IND does.
        guard header.type == .connectInd else { return }
        var r = ByteReader(payload)
        let pdu: LLAdvertisingPDU
        do { pdu = try LLAdvertisingPacketPDU.parsePayload(header, &r) } catch {
            malformed &+= 1
            findings.append(Finding(.warning, .llMalformed(error), frame: record.frame))
            // Cut short, it may still name its access address, and a peripheral may answer it (SweynTooth's CC2540).
            if let cut = TruncatedConnectInd(header, payload) {
                openConnection(
                    central: cut.initiator, peripheral: cut.advertiser, accessAddress: cut.accessAddress, crcInit: cut.crcInit,
                    connectParameters: nil, parameters: cut.parameters, record: record, emit)
            }
            return
        }
        guard case .connectInd(let c) = pdu else { return }
        openConnection(
            central: c.initiator, peripheral: c.advertiser, accessAddress: c.parameters.accessAddress, crcInit: c.parameters.crcInit,
            connectParameters: c.parameters,
            parameters: LLLinkParameters(
                interval: c.parameters.interval, latency: c.parameters.latency,
                timeout: c.parameters.timeout, channelMap: c.parameters.channelMap),
            record: record, emit)
    }

    /// A CONNECT_IND (or AUX_CONNECT_REQ) opens the link on its access address; one still open there was replaced.
    private mutating func openConnection(
        central: LLDeviceAddress, peripheral: LLDeviceAddress, accessAddress: LLAccessAddress, crcInit: UInt32,
        connectParameters: LLConnectionParameters?, parameters: LLLinkParameters, record: CaptureRecord,
        _ emit: (LinkLayerOutput) -> Void
    ) {
        let aa = accessAddress.rawValue
        if let old = byAccessAddress[aa] {
            endConnection(old, reason: .replaced, frame: record.frame, timestamp: record.timestamp, emit)
        }
        let info = LLConnectionInfo(
            handle: takeHandle(), accessAddress: accessAddress, central: central, peripheral: peripheral,
            connectParameters: connectParameters, parameters: parameters, startFrame: record.frame,
            startTimestamp: record.timestamp, inferred: false)
        conns.append(Conn(info: info, crcInit: crcInit))
        byAccessAddress[aa] = conns.count - 1
        byPeripheral[peripheral.value] = conns.count - 1
        lastIndex = -1
        emit(.connectionStarted(info))
    }

    /// A connectable advertisement from a peripheral with a link: the first after the link's last packet is kept.
    private mutating func noteAdvertising(by advertiser: LLDeviceAddress, scanRequest: Bool, _ record: CaptureRecord) {
        guard let i = byPeripheral[advertiser.value], !conns[i].ended else { return }
        let last = conns[i].lastGood?.frame ?? conns[i].info.startFrame
        if let seen = conns[i].readvertised, seen.frame > last { return }
        conns[i].readvertised = LinkSilence.Advertising(frame: record.frame, timestamp: record.timestamp, byScanRequest: scanRequest)
    }

    private mutating func takeHandle() -> UInt16 {
        let h = nextHandle
        nextHandle &+= 1
        return h
    }

    private mutating func endConnection(
        _ index: Int, reason: LLConnectionEndReason, frame: Int, timestamp: Timestamp,
        _ emit: (LinkLayerOutput) -> Void
    ) {
        guard !conns[index].ended else { return }
        conns[index].ended = true
        var s = conns[index].stats
        LinkLayerTracker.closeEvent(&s, conns[index].packetsThisEvent)
        emit(
            .connectionEnded(
                LLConnectionEnded(
                    connection: conns[index].info, reason: reason, frame: frame, timestamp: timestamp, stats: s,
                    encryption: conns[index].encryption.summary)))
    }

    /// At the end of the capture: ends the connections still running (reason `.captureEnded`, or `.silent` when the
    /// capture went on without them for longer than their supervision timeout).
    package mutating func finish(findings: inout [Finding], frame: Int, timestamp: Timestamp, emit: (LinkLayerOutput) -> Void) {
        if let f = advertisingCRCFinding { findings.append(f) }
        unanswered.finish()
        if let f = unanswered.finding { findings.append(f) }
        for i in conns.indices where !conns[i].ended {
            if let silence = conns[i].silence(captureEnd: timestamp) {
                endConnection(i, reason: .silent(silence), frame: silence.lastFrame, timestamp: silence.lastTimestamp, emit)
            } else if let last = conns[i].notFollowed(captureEnd: timestamp) {
                endConnection(i, reason: .notFollowed, frame: last.frame, timestamp: last.timestamp, emit)
            } else {
                endConnection(i, reason: .captureEnded, frame: frame, timestamp: timestamp, emit)
            }
        }
        findings += conns.compactMap { $0.terminate?.unacknowledgedFinding }
    }

    @inline(__always)
    private mutating func connectionIndex(_ aa: UInt32) -> Int? {
        if aa == lastAA, lastIndex >= 0 { return lastIndex }
        guard let i = byAccessAddress[aa] else { return nil }
        lastAA = aa
        lastIndex = i
        return i
    }

    private mutating func processData(
        _ air: LLAirPacket, _ record: CaptureRecord, _ findings: inout [Finding],
        _ emit: (LinkLayerOutput) -> Void
    ) {
        let aa = air.packet.accessAddress.rawValue
        let index: Int
        if let i = connectionIndex(aa) {
            index = i
        } else {
            if air.crc == .invalid {
                crcErrors &+= 1
                return
            }
            // A link the sniffer joined opens when the other side answers (``UnansweredPDUs``); the PDUs held until then
            // are replayed into it first.
            guard let earlier = unanswered.answer(air, record), let first = earlier.first else { return }
            let info = LLConnectionInfo(
                handle: takeHandle(), accessAddress: air.packet.accessAddress, central: nil, peripheral: nil,
                connectParameters: nil, parameters: LLLinkParameters(), startFrame: first.frame,
                startTimestamp: first.timestamp, inferred: true)
            conns.append(Conn(info: info, crcInit: nil))
            index = conns.count - 1
            byAccessAddress[aa] = index
            lastAA = aa
            lastIndex = index
            emit(.connectionStarted(info))
            for held in earlier { replay(held, into: index, &findings, emit) }
        }
        if !LinkLayerTracker.processConnectionPacket(&conns[index], air, record, &findings, keys: keyStore, buffer: plaintext, emit) {
            crcErrors &+= 1
        }
    }

    /// A PDU held until the link's first answer, into the connection it opened (its bytes are a copy).
    private mutating func replay(_ first: OwnedRecord, into index: Int, _ findings: inout [Finding], _ emit: (LinkLayerOutput) -> Void) {
        first.withRecord { r in
            guard let air = try? LLAirPacket(linkType: r.linkType, bytes: r.bytes) else { return }
            _ = LinkLayerTracker.processConnectionPacket(&conns[index], air, r, &findings, keys: keyStore, buffer: plaintext, emit)
        }
    }

    /// One packet of a known connection, in place. Returns false for a CRC-bad packet.
    static func processConnectionPacket(
        _ c: inout Conn, _ air: LLAirPacket, _ record: CaptureRecord, _ findings: inout [Finding],
        keys: LinkKeyStore?, buffer: LLPlaintextBuffer, _ emit: (LinkLayerOutput) -> Void
    ) -> Bool {
        c.stats.packets &+= 1
        let pkt = air.packet
        var direction = countEvent(&c, air, record, emit)
        c.packetsThisEvent &+= 1
        c.stats.packetsInEvents &+= 1

        // CRC.
        var crc = air.crc
        // A CRC field of 000000 on a capture that does not say it checked the CRC is one a tool left unwritten when it
        // rewrote the packet (crackle writes the packets it decrypted that way): not checkable, so not a CRC error.
        // A true CRC of 0 has odds of 2^-24.
        if crc == .notChecked, let initValue = c.crcInit, pkt.crc != 0 {
            crc = LLCRC.compute(crcInit: initValue, over: pkt.pdu) == pkt.crc ? .valid : .invalid
        }
        if crc == .invalid {
            c.stats.crcErrors &+= 1
            c.stats.missed.note(after: c.lastGood?.frame ?? c.info.startFrame, at: record.frame, events: 0)
            return false
        }
        c.lastGood = (record.frame, record.timestamp)

        let llid = pkt.header0 & 3
        if air.reportsEncryption, !air.encrypted, c.encryption.isOn, c.encryption.capturerBadMICs > 0, c.encryption.unflagged == nil {
            c.encryption.unflagged = LLUnflaggedCiphertext(from: record.frame, afterBadMICs: c.encryption.capturerBadMICs)
        }
        if !air.encrypted, !c.encryption.isOn { direction = attSide(&c, air, llid: llid, direction) }
        let d = direction == .rx ? 1 : 0
        c.resentToReceiver = noteReceiverView(&c, pkt, llid: llid, d: d, frame: record.frame)
        guard let retransmission = trackSequence(&c, pkt, llid: llid, d: d, frame: record.frame) else { return true }
        var payload = pkt.payload

        // Encryption (Core Spec Vol 6, Part E): decrypted by the capturer, decrypted here, or not at all.
        // Once LL_START_ENC_REQ has gone by, every non-empty PDU is encrypted until a pause (Core Spec Vol 6,
        // Part B, 5.1.3). A sniffer that flags each packet is believed (devices that keep talking in the clear
        // after an encryption start exist: SweynTooth's captures show them) until it has shown it lost the
        // link's counter (MIC failures): from then on a packet it leaves unflagged is ciphertext, not plaintext.
        // The same once the sniffer has flagged a packet encrypted with a bad MIC: nRF Sniffer, with no key for a
        // Secure Connections link, flags 10 PDUs so and then none (the NimBLE door lock, 4120–4129, then 4130 on):
        // the unflagged ones are ciphertext, not a pause (no LL_PAUSE_ENC_REQ).
        if air.encrypted, air.mic == .invalid, !air.decryptedByCapturer {
            c.encryption.capturerFailedMIC = true
            c.encryption.capturerBadMICs &+= 1
        }
        let trustFlag = air.reportsEncryption && c.stats.micFailures == 0 && !c.encryption.capturerFailedMIC
        if !air.reportsEncryption { inferUnseenStart(&c, llid: llid, payload: payload, record, emit) }
        if air.encrypted || (c.encryption.isOn && !trustFlag) {
            guard
                let plaintext = decryptPacket(
                    &c, air, record, llid: llid, direction: &direction, retransmission: retransmission, keys: keys, buffer: buffer,
                    emit)
            else { return true }
            payload = plaintext
        }

        if retransmission {
            c.stats.retransmissions &+= 1
        } else if d == 0 {
            c.stats.dataPDUsCentralToPeripheral &+= 1
            c.stats.payloadBytesCentralToPeripheral &+= payload.count
        } else {
            c.stats.dataPDUsPeripheralToCentral &+= 1
            c.stats.payloadBytesPeripheralToCentral &+= payload.count
        }
        deliverPDU(
            &c, llid: llid, payload, direction: direction, retransmission: retransmission, accessAddress: pkt.accessAddress, record,
            &findings, emit)
        return true
    }

    /// An encrypted PDU: the plaintext to go on with, or nil when there is none (a retransmission, no key, a MIC
    /// failure, an empty plaintext), each counted. The first encrypted PDU of the link announces the encryption;
    /// a PDU decrypted in the other direction than it was said to go turns `direction` round.
    private static func decryptPacket(
        _ c: inout Conn, _ air: LLAirPacket, _ record: CaptureRecord, llid: UInt8, direction: inout Direction,
        retransmission: Bool, keys: LinkKeyStore?, buffer: LLPlaintextBuffer, _ emit: (LinkLayerOutput) -> Void
    ) -> UnsafeRawBufferPointer? {
        let first = c.encryption.encryptedFrom == nil
        if first { c.encryption.encryptedFrom = record.frame }
        defer {
            if first && !c.encryption.startAnnounced {
                c.encryption.startAnnounced = true
                emit(
                    .encryptionStarted(
                        LLEncryptionStarted(
                            handle: c.info.handle, direction: direction, frame: record.frame,
                            timestamp: record.timestamp, state: c.encryption.stateText(c.stats))))
            }
        }
        if retransmission {
            // Decrypted (or not) the first time; a retransmission changes nothing.
            c.stats.retransmissions &+= 1
            return nil
        }
        let outcome = LinkLayerTracker.decrypt(
            &c, air, llid: llid, payload: air.packet.payload, direction: direction, header0: air.packet.header0,
            frame: record.frame, keys: keys, buffer: buffer)
        if !retransmission { noteEncryptedPDU(&c, readable: outcome.isPlaintext, llid: llid, record, emit) }
        switch outcome {
        case .plaintext(let p), .plaintextOtherDirection(let p):
            if case .plaintextOtherDirection = outcome { direction = direction == .rx ? .tx : .rx }
            if let rewritten = buffer.rewritten, !air.decryptedByCapturer {
                rewritten(record.frame, LLDecryptedRecord.rewrite(record, air, plaintext: p, crcInit: c.crcInit))
            }
            return p.isEmpty ? nil : p
        case .noKey:
            c.stats.encryptedUndecrypted &+= 1
            if !air.encrypted { c.encryption.unflagged?.pdus &+= 1 }
            c.stats.encryptedUndecryptedBytes &+= air.packet.payload.count
            noteEncryptedControl(&c, llid: llid, payloadCount: air.packet.payload.count, direction: direction, frame: record.frame)
            if c.encryption.firstUndecryptedFrame == nil { c.encryption.firstUndecryptedFrame = record.frame }
            return nil
        case .micFailed:
            c.stats.micFailures &+= 1
            if c.encryption.firstMICFailureFrame == nil { c.encryption.firstMICFailureFrame = record.frame }
            return nil
        }
    }

    /// A data PDU by its LLID (Core Spec Vol 6, Part B, 2.4): an L2CAP fragment (01 continuation, 10 start), a control
    /// PDU (11), or the reserved 00.
    private static func deliverPDU(
        _ c: inout Conn, llid: UInt8, _ payload: UnsafeRawBufferPointer, direction: Direction, retransmission: Bool,
        accessAddress: LLAccessAddress, _ record: CaptureRecord, _ findings: inout [Finding], _ emit: (LinkLayerOutput) -> Void
    ) {
        switch llid {
        case 1, 2:
            if !retransmission {
                emit(
                    .l2capFragment(
                        LLL2CAPFragment(
                            handle: c.info.handle, direction: direction, isStart: llid == 2, payload: payload,
                            frame: record.frame, timestamp: record.timestamp, isCut: record.isTruncated)))
            }
        case 3:
            c.stats.controlPDUs &+= 1
            let opcode = LLControlOpcode(rawValue: payload[0])
            var pdu: LLControlPDU?
            var r = ByteReader(payload)
            do { pdu = try LLControlPacket(parsing: &r).pdu } catch {
                findings.append(Finding(.warning, .llControlMalformed(opcode, error), frame: record.frame))
            }
            emit(
                .control(
                    LLControlEvent(
                        handle: c.info.handle, direction: direction, opcode: opcode, pdu: pdu,
                        unreadParameters: pdu == nil ? Array(payload[1...]) : [],
                        frame: record.frame, timestamp: record.timestamp, isRetransmission: retransmission,
                        resentToReceiver: c.resentToReceiver)))
            if !retransmission, let pdu { applyControl(&c, pdu, direction: direction, record, emit) }
        default:
            findings.append(Finding(.warning, .llReservedLLID(accessAddress), frame: record.frame))
            if !retransmission {
                emit(
                    .malformed(
                        LLMalformedPDU(
                            handle: c.info.handle, direction: direction, shape: .reservedLLID(length: payload.count), frame: record.frame,
                            timestamp: record.timestamp)))
            }
        }
    }
}
