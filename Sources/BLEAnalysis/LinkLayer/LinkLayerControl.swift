import BLECapture
import BLECore
import BLEProtocols

/// LL control procedures of a connection (Core Spec Vol 6, Part B, 5.1): what a control PDU changes at once
/// (encryption, termination) and what waits for its instant (connection update, channel map, PHY update).
extension LinkLayerTracker {
    /// What a control PDU changes: an instant-bound change queued, the encryption's progress, the end of the link.
    static func applyControl(
        _ c: inout Conn, _ pdu: LLControlPDU, direction: Direction, _ record: CaptureRecord, _ emit: (LinkLayerOutput) -> Void
    ) {
        // At most one procedure with an instant is in progress at a time (Core Vol 6, Part B, 5.1); a
        // capture that announces more (lost packets, hostile input) keeps only the latest few.
        if c.pending.count >= 8 { c.pending.removeFirst(c.pending.count - 7) }
        switch pdu {
        case .connectionUpdateInd(let u):
            c.pending.append(Pending(instant: u.instant, opcode: .connectionUpdateInd, update: u))
        case .channelMapInd(let m, let instant):
            c.pending.append(Pending(instant: instant, opcode: .channelMapInd, channelMap: m))
        case .phyUpdateInd(let cp, let pc, let instant):
            if cp == 0 && pc == 0 { return }  // no change
            c.pending.append(Pending(instant: instant, opcode: .phyUpdateInd, phys: (cp, pc)))
        case let .encReq(rand, ediv, skd, iv):
            c.encryption.noteRequest(rand: rand, ediv: ediv, skdCentral: skd, ivCentral: iv)
            emit(.linkChanged(LLLinkChange(handle: c.info.handle, change: .keyRequested, frame: record.frame, timestamp: record.timestamp)))
        case let .encRsp(skd, iv):
            c.encryption.noteResponse(skdPeripheral: skd, ivPeripheral: iv)
        case .startEncReq:
            // Sent in the clear by the peripheral; from here on every non-empty PDU of both sides is
            // encrypted (Core Spec Vol 6, Part B, 5.1.3.1). LT 256/251 carry no flag that says so.
            c.encryption.phase = .encrypted
            c.encryption.startResponses = 0
            c.encryptionSaid = false
            emit(.linkChanged(LLLinkChange(handle: c.info.handle, change: .keyGiven, frame: record.frame, timestamp: record.timestamp)))
        case .lengthReq, .lengthRsp, .rejectInd, .rejectExtInd, .unknownRsp:
            applyProcedureAnswer(&c, pdu, direction: direction, record, emit)
        case .startEncRsp:
            // The central's LL_START_ENC_RSP, then the peripheral's, end the encryption start (5.1.3.1). A capture
            // whose PDUs after it are flagged unencrypted (nRF Sniffer on a fuzzer's link, corpus telink enc-loop
            // frames 413, 415) never shows an encrypted PDU, yet the procedure finished: the second response says so.
            c.encryption.startResponses += 1
            if c.encryption.startResponses == 2 { sayEncryption(&c, on: true, inferred: false, record, emit) }
            if c.encryption.startResponses == 2 && !c.encryption.startAnnounced {
                c.encryption.startAnnounced = true
                emit(
                    .encryptionStarted(
                        LLEncryptionStarted(
                            handle: c.info.handle, direction: direction, frame: record.frame, timestamp: record.timestamp,
                            state: "LL_START_ENC_RSP both ways; the capture shows the PDUs that follow in the clear")))
            }
        case .pauseEncRsp where c.encryption.isOn:
            // The central's LL_PAUSE_ENC_RSP goes in the clear: the link is unencrypted until the next LL_START_ENC_REQ.
            c.encryption.pause()
            sayEncryption(&c, on: false, inferred: false, record, emit)
        case .terminateInd(let e):
            guard !c.ended else { return }
            c.terminate = TerminateAcknowledgement(frame: record.frame, centralSent: direction != .rx)
            c.ended = true
            var s = c.stats
            LinkLayerTracker.closeEvent(&s, c.packetsThisEvent)
            emit(
                .connectionEnded(
                    LLConnectionEnded(
                        connection: c.info, reason: .terminated(errorCode: e), frame: record.frame,
                        timestamp: record.timestamp, stats: s, encryption: c.encryption.summary,
                        terminatedByCentral: direction == .unknown ? nil : direction != .rx)))
        default: break
        }
    }

    /// Applies the pending changes whose instant the event counter has reached (modulo 65536, Vol 6, Part B, 5.5.1).
    static func applyInstants(_ c: inout Conn, _ record: CaptureRecord, _ emit: (LinkLayerOutput) -> Void) {
        var remaining: [Pending] = []
        for p in c.pending {
            guard (c.eventCounter &- p.instant) < 0x8000 else { remaining.append(p); continue }
            if let u = p.update {
                c.info.parameters.interval = u.interval
                c.info.parameters.latency = u.latency
                c.info.parameters.timeout = u.timeout
            }
            if let m = p.channelMap { c.info.parameters.channelMap = m }
            if let (cp, pc) = p.phys {
                if let phy = LEPHY(llBits: cp) { c.info.parameters.centralToPeripheralPHY = phy }
                if let phy = LEPHY(llBits: pc) { c.info.parameters.peripheralToCentralPHY = phy }
            }
            emit(
                .parametersChanged(
                    LLParametersChanged(
                        handle: c.info.handle, parameters: c.info.parameters, instant: p.instant,
                        frame: record.frame, timestamp: record.timestamp, announcedIn: p.opcode)))
        }
        c.pending = remaining
    }
}
