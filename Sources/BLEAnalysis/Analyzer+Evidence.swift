import BLECapture
import BLECore
import BLEProtocols

/// What the diagnosis reads, recorded as the pass goes: one call per HCI command, per HCI event and per ATT exchange
/// that a rule may cite (``EvidenceEvent``); the SMP PDUs' and the signalling's come from the connection's machines
/// (``Analyzer/applySecurity(_:connection:frame:timestamp:)``, ``Analyzer/applySignal(_:frame:connection:direction:timestamp:state:)``).
/// Everything else a rule needs is in the connections (``Connection/link``, ``Connection/activity``).
extension Analyzer {
    /// What the diagnosis reads about the pass (after ``finish()``): the evidence events, the connections and the
    /// analyzer's findings. The capture reader's findings, the completeness verdict and the file name are the caller's
    /// to add.
    public func evidence(throughput: [ThroughputStream]? = nil) -> Evidence {
        // Stable by frame: some events are recorded when their wait ends (an unanswered request at the disconnection).
        let events = evidenceLog.events.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }.map(\.element)
        var evidence = Evidence(
            events: events, connections: connections, findings: findings, records: counters.records,
            lastTime: counters.records > 0 ? lastTimestamp : nil, lastFrame: lastFrame,
            isAirCapture: counters.linkLayerRecords > 0, controllers: controllerIdentities, aclBuffers: aclBuffers,
            eventsDropped: evidenceLog.dropped, throughput: throughput)
        // The ISO streams are the analyzer's own (every pass follows them), so every diagnosis reads them: `info` said
        // "nothing wrong found" where `diagnose` found the BIG sync loss (LA-05). The ASE operations (LA-02) come from
        // the LE Audio tracker, only where it runs (``CaptureAnalysis/leAudio``).
        evidence.iso = isoAnalysis
        return evidence
    }

    func evidence(_ kind: EvidenceEvent.Kind, frame: Int, timestamp: Timestamp, controller: UInt16 = 0, connection: Int? = nil) {
        guard options.evidence else { return }
        evidenceLog.append(EvidenceEvent(frame: frame, timestamp: timestamp, controller: controller, connection: connection, kind: kind))
    }

    /// The number of the connection `handle` names on `controller` (open, or the latest on the handle).
    func connectionNumber(controller: UInt16, handle: UInt16) -> Int? {
        if let i = table.lookup(ConnectionKey(controller: controller, handle: handle)) { return connections[i].number }
        return table.latest(onHandle: handle).map { connections[$0].number }
    }

    /// An HCI command the host sent.
    func recordCommand(_ packet: HCICommandPacket, frame: Int, timestamp: Timestamp, controller: UInt16) {
        let kind: EvidenceEvent.Kind
        switch packet.opcode {
        case .leCreateConnection:
            guard case .leCreateConnection(let c) = packet.decoded else { return }
            kind = .createConnection(command: packet.opcode, peer: c.initiatorFilterPolicy == 0 ? c.peerAddress.description : nil)
        case .leExtendedCreateConnection:
            guard case .leExtendedCreateConnection(let c) = packet.decoded else { return }
            kind = .createConnection(command: packet.opcode, peer: c.initiatorFilterPolicy == 0 ? c.peerAddress.description : nil)
        case .leExtendedCreateConnectionV2:
            guard case .leExtendedCreateConnectionV2(let c) = packet.decoded else { return }
            let e = c.connection
            kind = .createConnection(command: packet.opcode, peer: e.initiatorFilterPolicy == 0 ? e.peerAddress.description : nil)
        case .leCreateConnectionCancel:
            kind = .createConnectionCancel
        case .disconnect:
            guard case .disconnect(let d) = packet.decoded else { return }
            kind = .disconnectCommand(handle: d.handle & 0x0FFF, reason: d.reason)
        case .leEnableEncryption:
            guard let h = packet.connectionHandle else { return }
            kind = .encryptionStart(handle: h)
        case .leLongTermKeyRequestReply:
            guard let h = packet.connectionHandle else { return }
            kind = .longTermKeyReply(handle: h)
        case .leLongTermKeyRequestNegativeReply:
            guard let h = packet.connectionHandle else { return }
            kind = .longTermKeyNegativeReply(handle: h)
        case .leRemoteConnectionParameterRequestNegativeReply:
            guard case .leRemoteConnectionParameterRequestNegativeReply(let r) = packet.decoded else { return }
            kind = .remoteParameterNegativeReply(handle: r.handle & 0x0FFF, reason: r.reason)
        case .reset:
            kind = .reset
        default:
            guard let k = Self.classicCommandEvidence(packet) else { return }
            kind = k
        }
        var handle = packet.connectionHandle
        if case .authenticationRequested(let h) = kind { handle = h }
        let number = handle.flatMap { connectionNumber(controller: controller, handle: $0) }
        evidence(kind, frame: frame, timestamp: timestamp, controller: controller, connection: number)
    }

    /// A command answered: an error status, or an answer later than the HCI command time-out, is evidence.
    func recordAnswer(
        _ opcode: HCICommand, status: HCIStatus?, commandFrame: Int?, latency: Int64?, frame: Int, timestamp: Timestamp,
        controller: UInt16
    ) {
        if let status, status != .success {
            evidence(
                .commandFailed(opcode, status: status, commandFrame: commandFrame), frame: frame, timestamp: timestamp,
                controller: controller)
        }
        if let latency, let commandFrame, latency > hciCommandTimeoutMicroseconds {
            evidence(
                .commandLate(opcode, commandFrame: commandFrame, microseconds: latency), frame: frame, timestamp: timestamp,
                controller: controller)
        }
    }

    /// An HCI event, after the analyzer applied it (a connection it opened is open, one it closed is the latest on its
    /// handle).
    func recordEvent(_ decoded: HCIEventParameters, frame: Int, timestamp: Timestamp, controller: UInt16) {
        let kind: EvidenceEvent.Kind
        var handle: UInt16? = nil
        switch decoded {
        case .declared(let d):
            guard let (h, k) = Self.evidence(of: d.value) else { return }
            handle = h
            kind = k
        case .bluetoothQualityReport(let report) where report.reportID == .rootInflammation:
            kind = .rootInflammation(errorCode: report.remaining.first ?? 0, vendorErrorCode: report.remaining.dropFirst().first ?? 0)
        case .bluetoothQualityReport(let report):
            guard let q = report.linkQuality else { return }
            handle = q.handle
            kind = .qualityReport(
                handle: q.handle, report: report.reportID, rssi: Int(q.rssi), snr: Int(q.snr), noRx: Int(q.noRxCount),
                retransmissions: Int(q.retransmissionCount))
        case .raw(let code, let p) where code == .hardwareError:
            kind = .hardwareError(code: p.first ?? 0)
        case .raw(let code, let p) where code == .dataBufferOverflow:
            kind = .dataBufferOverflow(linkType: p.first ?? 0)
        case .raw(let code, let p) where code == .authenticatedPayloadTimeoutExpired && p.count >= 2:
            let h = (UInt16(p[0]) | UInt16(p[1]) << 8) & 0x0FFF
            handle = h
            kind = .authenticatedPayloadTimeout(handle: h)
        default:
            return
        }
        let number = handle.flatMap { connectionNumber(controller: controller, handle: $0) }
        evidence(kind, frame: frame, timestamp: timestamp, controller: controller, connection: number)
    }

    /// What a declared link event is as evidence, and the handle it names (nil for a connection that did not open).
    static func evidence(of event: any HCIParameterSet) -> (UInt16?, EvidenceEvent.Kind)? {
        switch event {
        case let d as DisconnectionComplete:
            return (d.handle, .disconnectionComplete(handle: d.handle, status: d.status, reason: d.reason))
        case let c as LEConnectionComplete: return connectionEvidence(c.status, c.handle, c.peerAddress)
        case let c as LEEnhancedConnectionComplete: return connectionEvidence(c.status, c.handle, c.peerAddress)
        case let v2 as LEEnhancedConnectionCompleteV2:
            return connectionEvidence(v2.connection.status, v2.connection.handle, v2.connection.peerAddress)
        case let u as LEConnectionUpdateComplete:
            let p =
                u.status == .success ? ConnectionParameters(interval: u.interval, latency: u.latency, timeout: u.supervisionTimeout) : nil
            return (u.handle, .connectionUpdateComplete(handle: u.handle, status: u.status, parameters: p))
        case let p as LEPHYUpdateComplete:
            let phy = p.status == .success ? PHYPair(tx: p.txPHY, rx: p.rxPHY) : nil
            return (p.handle, .phyUpdateComplete(handle: p.handle, status: p.status, phy: phy))
        case let r as LEReadRemoteFeaturesComplete:
            guard r.status != .success else { return nil }
            return (r.handle, .readRemoteFeaturesComplete(handle: r.handle, status: r.status))
        case let r as LERemoteConnectionParameterRequest:
            let request = ParameterRequest(
                intervalMin: r.intervalMin, intervalMax: r.intervalMax, latency: r.maxLatency, timeout: r.supervisionTimeout)
            return (r.handle, .remoteParameterRequest(handle: r.handle, request: request))
        case let r as LELongTermKeyRequest: return (r.handle, .longTermKeyRequest(handle: r.handle))
        case let e as EncryptionChange: return encryptionEvidence(e)
        case let e2 as EncryptionChangeV2: return encryptionEvidence(e2.change)
        default: return classicEventEvidence(event)
        }
    }

    /// The BR/EDR link events the diagnosis reads (``EvidenceEvent/Kind/classicConnectionComplete(handle:status:peer:linkType:)``
    /// and the authentication chain), with the handle each names.
    static func classicEventEvidence(_ event: any HCIParameterSet) -> (UInt16?, EvidenceEvent.Kind)? {
        switch event {
        case let c as ConnectionComplete:
            let h = c.handle & 0x0FFF
            let kind = EvidenceEvent.Kind.classicConnectionComplete(
                handle: h, status: c.status, peer: c.address.description, linkType: c.linkType)
            return (c.status == .success ? h : nil, kind)
        case let a as AuthenticationComplete:
            return (a.handle & 0x0FFF, .authenticationComplete(handle: a.handle & 0x0FFF, status: a.status))
        case let r as RoleChange: return (nil, .roleChange(peer: r.address.description, status: r.status, role: r.role))
        case let m as ModeChange: return (m.handle & 0x0FFF, .modeChange(handle: m.handle & 0x0FFF, status: m.status, mode: m.mode))
        case let p as PINCodeRequest: return (nil, .pinCodeRequest(peer: p.address.description))
        case let l as LinkKeyRequest: return (nil, .linkKeyRequest(peer: l.address.description))
        case let l as LinkKeyNotification: return (nil, .linkKeyCreated(peer: l.address.description))
        case let i as IOCapabilityRequest: return (nil, .ioCapabilityExchange(peer: i.address.description, sender: .local))
        case let i as IOCapabilityResponse: return (nil, .ioCapabilityExchange(peer: i.address.description, sender: .peer))
        case let s as SimplePairingComplete: return (nil, .simplePairingComplete(peer: s.address.description, status: s.status))
        default: return nil
        }
    }

    /// The BR/EDR commands the diagnosis reads, from their parameters' leading BD_ADDR or handle (Create Connection
    /// 7.1.5, Link Key Request Reply 7.1.10 and Negative Reply 7.1.11, Authentication Requested 7.1.15).
    static func classicCommandEvidence(_ packet: HCICommandPacket) -> EvidenceEvent.Kind? {
        let p = packet.parameters
        switch packet.opcode.rawValue {
        case 0x0405, 0x040B, 0x040C:
            guard p.count >= 6 else { return nil }
            let address = BDAddress(p.prefix(6).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }).description
            if packet.opcode.rawValue == 0x0405 { return .pageRequested(peer: address) }
            return .linkKeyAnswer(peer: address, found: packet.opcode.rawValue == 0x040B)
        case 0x0411:
            guard p.count >= 2 else { return nil }
            return .authenticationRequested(handle: (UInt16(p[0]) | UInt16(p[1]) << 8) & 0x0FFF)
        default:
            return nil
        }
    }

    static func connectionEvidence(_ status: HCIStatus, _ handle: UInt16, _ peer: BDAddress) -> (UInt16?, EvidenceEvent.Kind) {
        let opened = status == .success
        return (opened ? handle : nil, .connectionComplete(handle: handle, status: status, peer: opened ? peer.description : nil))
    }

    static func encryptionEvidence(_ e: EncryptionChange) -> (UInt16?, EvidenceEvent.Kind) {
        (e.handle, .encryptionChange(handle: e.handle, status: e.status, enabled: e.encryptionEnabled != 0))
    }
}

extension Analyzer {
    /// The evidence in an ATT PDU of connection `index` (its activity is the link machine's, ``LinkActivity``): a CCCD
    /// written, a Service Changed indication, a BASS source removed. Only the rare PDUs go further than a comparison.
    @inline(__always)
    func noteATT(
        _ pdu: ATTView, direction: Direction, connection index: Int, state: ConnectionState, frame: Int, timestamp: Timestamp
    ) {
        guard pdu.size == 5 || pdu.size == 7, let handle = pdu.handle else { return }
        let value = pdu.value
        if pdu.opcode == .handleValueIndication {
            guard direction == .rx, pdu.size == 7 else { return }
            noteServiceChanged(value, handle: handle, connection: index, state: state, frame: frame, timestamp: timestamp)
        } else if pdu.isWrite, pdu.size == 5 {
            if direction == .tx {
                noteCCCDWrite(
                    handle, value: UInt16(value[0]) | UInt16(value[1]) << 8, byCommand: pdu.opcode == .writeCommand,
                    connection: index, frame: frame, timestamp: timestamp)
            } else if value[0] == Self.removeSourceOpcode {
                // The peer's 2-byte write 05 xx may be a BASS Remove Source: only then is the database asked.
                noteSourceRemoved(handle, sourceID: value[1], connection: index, frame: frame, timestamp: timestamp)
            }
        }
    }

    /// A 2-byte write to a handle the peer's database names a CCCD (0x2902), or that follows a notifying
    /// characteristic's value: a subscription.
    func noteCCCDWrite(_ handle: UInt16, value: UInt16, byCommand: Bool, connection index: Int, frame: Int, timestamp: Timestamp) {
        let database = connections[index].gatt
        let owner = database.characteristic(owning: handle)
        let isCCCD: Bool
        if let t = database.attributeTypes[handle] {
            isCCCD = t.uuid16 == GATTAttributeType.clientCharacteristicConfiguration
        } else if let c = owner, c.valueHandle &+ 1 == handle, !c.properties.intersection([.notify, .indicate]).isEmpty {
            isCCCD = true
        } else {
            isCCCD = false
        }
        guard isCCCD else { return }
        evidence(
            .cccdWrite(handle: handle, valueHandle: owner?.valueHandle, value: value, byCommand: byCommand, sender: .local),
            frame: frame, timestamp: timestamp, connection: connections[index].number)
    }

    /// A write of `05 id` by the peer to this side's Broadcast Audio Scan Control Point: the assistant removed a source.
    func noteSourceRemoved(_ handle: UInt16, sourceID: UInt8, connection index: Int, frame: Int, timestamp: Timestamp) {
        guard connections[index].localGATT.uuid(for: handle)?.uuid16 == Self.broadcastAudioScanControlPoint else { return }
        evidence(
            .broadcastSourceRemoved(sourceID: sourceID, sender: .peer), frame: frame, timestamp: timestamp,
            connection: connections[index].number)
    }

    /// The Broadcast Audio Scan Control Point characteristic (Assigned Numbers 3.8).
    static let broadcastAudioScanControlPoint: UInt16 = 0x2BC7
    /// Its Remove Source operation (BASS 3.1.1, opcode 0x05: Source_ID follows).
    static let removeSourceOpcode: UInt8 = 0x05

    /// An indication of the Service Changed characteristic (0x2A05): the peer's database changed in a range.
    func noteServiceChanged(
        _ value: UnsafeRawBufferPointer, handle: UInt16, connection index: Int, state: ConnectionState, frame: Int,
        timestamp: Timestamp
    ) {
        guard attribute(index, handle: handle, db: .peer, state: state).uuid?.uuid16 == 0x2A05 else { return }
        let start = UInt16(value[0]) | UInt16(value[1]) << 8, end = UInt16(value[2]) | UInt16(value[3]) << 8
        evidence(.serviceChanged(start: start, end: end), frame: frame, timestamp: timestamp, connection: connections[index].number)
    }

    /// An ATT Error Response, with the request it answers when the capture holds it.
    func noteATTError(
        _ pdu: ATTView, direction: Direction, requestFrame: Int?, connection index: Int, frame: Int, timestamp: Timestamp
    ) {
        guard let e = pdu.errorResponse else { return }
        evidence(
            .attError(
                request: e.request, handle: e.handle, error: e.error, requestFrame: requestFrame, sender: direction == .rx ? .peer : .local),
            frame: frame, timestamp: timestamp, connection: connections[index].number)
    }
}
