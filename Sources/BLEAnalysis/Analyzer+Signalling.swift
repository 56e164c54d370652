import BLECore
import BLEProtocols

extension Analyzer {
    func processSignalling(_ pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp) {
        counters.signallingPDUs += 1
        var reader = ByteReader(pdu.payload)
        let signals: [L2CAPSignal]
        do { signals = try L2CAPSignal.parseAll(&reader) } catch {
            findings.append(Finding(.warning, .malformed("L2CAP signalling", error), frame: pdu.lastFrame))
            return
        }
        let handle = connections[index].handle
        let connectionState = table.states[index]
        for s in signals {
            if let connectionState, let change = connectionState.channels.feed(s, direction: direction, frame: pdu.lastFrame) {
                applyChannelChange(change, signal: s, connection: index, state: connectionState)
            }
            switch s.command {
            case .creditBasedConnectionRequest(let spsm, _, _, let credits, let sourceCIDs):
                // As for the LE request below, for each channel asked for (Core Spec Vol 3, Part A, 4.25).
                for cid in sourceCIDs {
                    addCreditChannel(
                        CreditKey(connection: index, direction: direction.reversed, cid: cid), spsm: spsm,
                        credits: Int(credits), frame: pdu.lastFrame)
                }
            case .leCreditBasedConnectionRequest(let spsm, let sourceCID, _, _, let credits):
                // Data towards the requester arrives on its source CID; the credits are the responder's to send with.
                addCreditChannel(
                    CreditKey(connection: index, direction: direction.reversed, cid: sourceCID), spsm: spsm,
                    credits: Int(credits), frame: pdu.lastFrame)
                creditChannels.pendingSPSM[index] = spsm
            case .leCreditBasedConnectionResponse(let destinationCID, _, _, let credits, let result):
                if result != 0 {
                    evidence(
                        .creditConnectionRefused(psm: creditChannels.pendingSPSM[index], result: result), frame: pdu.lastFrame,
                        timestamp: timestamp, connection: connections[index].number)
                }
                if result == 0, let spsm = creditChannels.pendingSPSM[index] {
                    addCreditChannel(
                        CreditKey(connection: index, direction: direction.reversed, cid: destinationCID), spsm: spsm,
                        credits: Int(credits), frame: pdu.lastFrame)
                }
            case .flowControlCreditIndication(let cid, let credits):
                // The receiver gives credits for the channel it receives on (its own CID).
                let key = CreditKey(connection: index, direction: direction.reversed, cid: cid)
                if let since = creditChannels.credit(key, Int(credits)) {
                    connections[index].creditStalls.record(
                        CreditStall(
                            cid: cid, startFrame: since.frame, startTime: since.time,
                            endFrame: pdu.lastFrame, endTime: timestamp))
                }
            case .connectionParameterUpdateRequest(let minimum, let maximum, let latency, let timeout):
                evidence(
                    .parameterUpdateRequest(
                        sender: direction == .rx ? .peer : .local, identifier: s.identifier,
                        request: ParameterRequest(intervalMin: minimum, intervalMax: maximum, latency: latency, timeout: timeout)),
                    frame: pdu.lastFrame, timestamp: timestamp, connection: connections[index].number)
            case .connectionParameterUpdateResponse(let result):
                evidence(
                    .parameterUpdateResponse(sender: direction == .rx ? .peer : .local, identifier: s.identifier, result: result),
                    frame: pdu.lastFrame, timestamp: timestamp, connection: connections[index].number)
            case .disconnectionResponse(let dcid, let scid):
                creditChannels.close(CreditKey(connection: index, direction: .tx, cid: dcid))
                creditChannels.close(CreditKey(connection: index, direction: .rx, cid: dcid))
                creditChannels.close(CreditKey(connection: index, direction: .tx, cid: scid))
                creditChannels.close(CreditKey(connection: index, direction: .rx, cid: scid))
            default:
                break
            }
            if options.timeline {
                emit(
                    TimelineEvent(
                        frame: pdu.lastFrame, timestamp: timestamp, connection: handle, direction: direction,
                        layer: .l2cap, code: UInt32(s.code.rawValue), name: s.code.description, summary: s.command.summary))
            }
        }
    }

    /// Opens the ATT bearers and credit-based reassembly of channels the signalling opened; follows MTU changes.
    func applyChannelChange(_ change: ChannelChange, signal: L2CAPSignal, connection index: Int, state: ConnectionState) {
        switch change {
        case .opened(let list, let refused, let towardsRequester):
            for cid in refused { creditChannels.close(CreditKey(connection: index, direction: towardsRequester, cid: cid)) }
            for i in list {
                let channel = state.channels.channels[i]
                if channel.mode == .enhancedCredit, case .creditBasedConnectionResponse(_, _, let credits, _, _) = signal.command {
                    // Data towards the responder, with the credits its response gave (the other way was opened at the request).
                    addCreditChannel(
                        CreditKey(connection: index, direction: channel.initiator, cid: channel.responderCID),
                        spsm: channel.psm.rawValue, credits: Int(credits), frame: channel.openFrame)
                }
                let kind: ATTBearerKind? =
                    switch (channel.psm, channel.mode) {
                    case (.att, .basic): .bredr
                    case (.eatt, .enhancedCredit): .eatt
                    default: nil
                    }
                if let kind, state.bearers.count < ChannelTable.maxChannels {
                    state.bearers.append(ATTBearer(kind: kind, channel: i, mtu: channel.commonMTU))
                    state.channelBearers[i] = state.bearers.count - 1
                }
            }
        case .mtuChanged(let list):
            for i in list { if let b = state.channelBearers[i] { state.bearers[b].mtu = state.channels.channels[i].commonMTU } }
        case .closed:
            break
        }
        connections[index].channels = state.channels.channels
    }

    func processSMP(_ pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp) {
        counters.smpPDUs += 1
        var reader = ByteReader(pdu.payload)
        let handle = connections[index].handle
        do {
            let smp = try SMPPDU(parsing: &reader)
            let c = connections[index]
            keyStore.smp(
                smp, raw: pdu.payload, handle: handle, centralToPeripheral: c.centralToPeripheral(direction), frame: pdu.lastFrame,
                central: c.centralAddressValue, peripheral: c.peripheralAddressValue)
            recordSMP(smp, connection: index, direction: direction, frame: pdu.lastFrame, timestamp: timestamp)
            if options.timeline {
                var e = TimelineEvent(
                    frame: pdu.lastFrame, timestamp: timestamp, connection: handle, direction: direction,
                    layer: .smp, code: UInt32(smp.code.rawValue), name: smp.code.description, summary: smp.summary)
                if case .pairingFailed = smp { e.status = smp.summary }
                emit(e)
            }
        } catch {
            findings.append(Finding(.warning, .malformed("SMP PDU", error), frame: pdu.lastFrame))
        }
    }

    /// Opens a credit-based channel, within ``CreditChannelTable/maxChannels``.
    func addCreditChannel(_ key: CreditKey, spsm: UInt16, credits: Int, frame: Int) {
        if !creditChannels.open(key, spsm: spsm, credits: credits) {
            noteLimit(.tooManyCreditChannels(CreditChannelTable.maxChannels), frame: frame)
        }
    }

    /// K-frames on a dynamic LE credit-based channel.
    func processCreditFrame(_ pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp) -> Bool {
        let key = CreditKey(connection: index, direction: direction, cid: pdu.channel)
        guard
            let (spsm, out) = creditChannels.feed(
                key,
                .init(
                    payload: pdu.payload, l2capBytes: pdu.bytes.count, firstFrame: pdu.firstFrame,
                    frame: pdu.lastFrame, timestamp: timestamp))
        else { return false }
        if out.withoutCredit {
            findings.append(
                Finding(
                    .warning,
                    .init(
                        code: "l2cap.no-credit",
                        message: "K-frame on \(hex(pdu.channel, width: 4)) sent without a credit"), frame: pdu.lastFrame))
        }
        if out.tooShortToStart {
            findings.append(
                Finding(
                    .warning,
                    .init(
                        code: "l2cap.short-kframe",
                        message:
                            "first K-frame of an SDU on \(hex(pdu.channel, width: 4)) has \(pdu.payload.count) bytes, fewer than the 2-byte SDU length"
                    ),
                    frame: pdu.lastFrame))
        }
        guard let sdu = out.sdu else { return true }
        handOnSDU(sdu, spsm: spsm, pdu: pdu, connection: index, direction: direction, timestamp: timestamp)
        if sdu.bytes.count > sdu.announced {
            findings.append(
                Finding(
                    .warning,
                    .init(
                        code: "l2cap.sdu-too-long",
                        message: "credit-based SDU on \(hex(pdu.channel, width: 4)) longer than its announced \(sdu.announced) bytes"),
                    frame: pdu.lastFrame))
        }
        return true
    }

    /// A whole SDU: an ATT PDU on an enhanced ATT bearer, or a stream the observers see by PSM.
    func handOnSDU(
        _ sdu: CreditChannelState.SDU, spsm: UInt16, pdu: L2CAPPDU, connection index: Int, direction: Direction,
        timestamp: Timestamp
    ) {
        if spsm == L2CAPPSM.eatt.rawValue, let owner = table.states[index],
            let c = owner.channels.channel(direction: direction, cid: pdu.channel), let b = owner.channelBearers[c]
        {
            // An enhanced ATT bearer: each SDU is one ATT PDU (Core Spec Vol 3, Part G, 5.3.2).
            sdu.bytes.withUnsafeBytes { raw in
                processATT(
                    ATTInput(
                        payload: raw, frame: pdu.lastFrame, l2capBytes: sdu.kframeBytes, direction: direction, timestamp: timestamp,
                        cid: pdu.channel, bearer: .dynamic(b)), connection: index, state: owner)
            }
            return
        }
        // A codec spec may match the channel's PSM: its SDUs are then decoded like attribute values.
        let decoded = decodeCreditSDU(sdu.bytes, psm: spsm, cid: pdu.channel, direction: direction, frame: pdu.lastFrame)
        if !observers.isEmpty, let owner = table.states[index] {
            // An LE CoC stream (Object Transfer, firmware images over L2CAP …): throughput sees its SDUs by PSM.
            sdu.bytes.withUnsafeBytes { raw in
                var e = AttributeValueEvent(
                    frame: pdu.lastFrame, timestamp: timestamp, connection: owner.handle, connectionNumber: owner.number,
                    direction: direction, kind: .creditSDU, handle: pdu.channel, characteristic: nil, service: nil,
                    decoded: decoded, l2capBytes: sdu.kframeBytes, link: linkSnapshot(index))
                e.psm = spsm
                for i in observers.indices { observers[i].observe(e, value: raw.bytes) }
            }
        }
        guard options.timeline else { return }
        var e = TimelineEvent(
            frame: pdu.lastFrame, timestamp: timestamp, connection: connections[index].handle, direction: direction,
            layer: .l2cap, code: UInt32(pdu.channel), name: "LE Credit Based SDU",
            summary: "cid=\(hex(pdu.channel, width: 4)) spsm=\(hex(spsm, width: 4)) \(sdu.bytes.count) bytes from frame \(sdu.firstFrame)")
        e.value = sdu.bytes
        e.decoded = decoded
        emit(e)
    }
}
