import BLECapture
import BLECore
import BLEProtocols

/// What one HCI event adds to its timeline row: the command it answers, its status, its connection, its fields.
struct HCIEventNote {
    var requestFrame: Int? = nil
    var latency: Int64? = nil
    var status: String? = nil
    var handle: UInt16? = nil
    var fields: [(String, Int64)]? = nil
    /// The event was a synchronous link's (its Disconnection Complete): its evidence is that link's, not the ACL's.
    var synchronous = false
    /// A Connection Complete from before an HCI Reset still completing (``StaleAfterReset``): it names no link and is
    /// no evidence of one.
    var staleAfterReset = false
}

/// One handler per decoded HCI event (Core Spec Vol 4, Part E, 7.7): each turns the event into what it does to its link
/// (a ``LinkInput``, or a link opened) or to the controller's state, and says what its timeline row shows.
extension HCIMachine {
    func event(_ record: CaptureRecord) {
        if !sink.timeline && completedPacketsInPlace(record) { return }
        var input = record.reader
        let packet: HCIEventPacket
        do { packet = try HCIEventPacket(parsing: &input) } catch {
            sink.findings.append(Finding(.warning, .malformed("HCI event", error), frame: record.frame, offset: record.fileOffset))
            return
        }
        let decoding = packet.decoding
        let decoded = decoding.parameters
        if decoding.ignoredBytes > 0 || decoding.error != nil { noteEventDecoding(decoding, packet, record) }
        // The controller's from before its reset: no link's input nor evidence (the capture's edges count it).
        if !resets.isEmpty, let handle = staleAfterReset(record) {
            if sink.timeline { emitEvent(decoded, packet, record, HCIEventNote(handle: handle)) }
            return
        }
        let note = apply(decoded, packet, record)
        // After the event applied: a connection it opened is open, one it closed is the latest on its handle.
        if sink.recordsEvidence, !note.synchronous, !note.staleAfterReset, let (handle, kind) = HCIEvidence.event(decoded) {
            let controller = record.controllerIndex
            let number = handle.flatMap { links.number(controller: controller, handle: $0) }
            // The end of a link the log holds nothing else of (one from before it, or the one an HCI Reset dropped): no
            // link's end to diagnose; the log's edges say it (CompletenessTracker, `link-before-log-ended`).
            if number == nil, case .disconnectionComplete = kind {
            } else {
                sink.evidence(kind, frame: record.frame, timestamp: record.timestamp, controller: controller, connection: number)
            }
        }
        if sink.timeline { emitEvent(decoded, packet, record, note) }
    }

    private func apply(_ decoded: HCIEventParameters, _ packet: HCIEventPacket, _ record: CaptureRecord) -> HCIEventNote {
        switch decoded {
        case .commandComplete(let cc): return commandCompleted(cc, record)
        case .commandStatus(let cs):
            let note = answered(cs.opcode, status: cs.status, record)
            iso.commandStatus(
                cs.opcode, status: cs.status, controller: record.controllerIndex, frame: record.frame, timestamp: record.timestamp)
            classicCommandStatus(cs.opcode, status: cs.status, record)
            if cs.opcode == .disconnect { disconnectAnswered(status: cs.status, record) }
            return note
        case .numberOfCompletedPackets(let n): return packetsCompleted(n, record)
        case .declared(let d):
            let note = declaredEvent(d, record)
            noteSecurityRecord(d, record)
            return note
        case .bluetoothQualityReport(let report): return qualityReported(report, packet, record)
        case .raw(let code, let params) where code == .vendor:
            vendorEvent(params, packet, record)
            return HCIEventNote()
        case .leAdvertisingReport(let r):
            advertised(r, record)
            return HCIEventNote()
        case .leExtendedAdvertisingReport(let r):
            advertised(r, record)
            return HCIEventNote()
        case .raw(let code, let params) where code == ExtendedInquiryResult.code:
            inquiryAnswered(params, record)
            inquiryClasses(code, params, record)
            return HCIEventNote()
        case .raw(let code, let params) where code == .inquiryResult || code == .inquiryResultWithRSSI:
            inquiryClasses(code, params, record)
            return HCIEventNote()
        default: return HCIEventNote()
        }
    }

    private func emitEvent(_ decoded: HCIEventParameters, _ packet: HCIEventPacket, _ record: CaptureRecord, _ note: HCIEventNote) {
        let manufacturer = manufacturer(of: record.controllerIndex)
        var e = TimelineEvent(
            frame: record.frame, timestamp: record.timestamp, connection: note.handle, direction: .rx, layer: .hci,
            code: UInt32(packet.code.rawValue), name: decoded.name(manufacturer: manufacturer),
            deferredSummary: .hciEvent(decoded, manufacturer))
        e.requestFrame = note.requestFrame
        e.latency = note.latency
        e.status = note.status
        e.fields = note.fields
        links.emit(e, waiting: false)
    }

    /// An event longer than its fixed size (read by its first bytes) or one blescope decodes that did not: said, not
    /// dropped. The BQR vendor event says its own (``FindingKind/bqrMalformed(_:)``).
    private func noteEventDecoding(_ decoding: HCIEventPacket.Decoding, _ packet: HCIEventPacket, _ record: CaptureRecord) {
        if decoding.ignoredBytes > 0 {
            sink.findings.append(
                Finding(
                    .info,
                    FindingKind(
                        .hciEventExtraBytes,
                        message:
                            "\(packet.name): \(decoding.ignoredBytes) byte(s) after the \(packet.parameters.count - decoding.ignoredBytes) the spec defines, ignored (as the Android stack and tshark do)"
                    ), frame: record.frame, offset: record.fileOffset))
        } else if let error = decoding.error, packet.code != .vendor {
            sink.findings.append(Finding(.warning, .malformed(packet.name, error), frame: record.frame, offset: record.fileOffset))
        }
    }

    /// Command Complete (7.7.14): answers its command; some return parameters name the controller or its buffers.
    private func commandCompleted(_ cc: CommandComplete, _ record: CaptureRecord) -> HCIEventNote {
        let frame = record.frame, controller = record.controllerIndex
        let note = answered(cc.opcode, status: cc.status, record)
        let returns = cc.decodedReturn
        switch returns {
        case .readLocalVersionInformation(let v) where v.status == .success:
            identities[controller] = ControllerIdentity(
                controller: controller, manufacturer: v.manufacturer, version: v, frame: frame, source: .readLocalVersionInformation)
        case .leReadBufferSize(let b):
            buffers.leBufferSize(controller: controller, length: Int(b.aclDataPacketLength), packets: Int(b.totalACLDataPackets))
        case .leReadBufferSizeV2(let b):
            buffers.leBufferSize(controller: controller, length: Int(b.aclDataPacketLength), packets: Int(b.totalACLDataPackets))
        case .readBufferSize(let b):
            buffers.bufferSize(controller: controller, length: Int(b.aclDataPacketLength), packets: Int(b.totalACLDataPackets))
        default: break
        }
        if cc.opcode == .readEncryptionKeySize { noteKeySize(returns, record) }
        localAddresses.answered(cc, controller: controller, frame: frame)
        if cc.opcode == Self.readLocalName, cc.returnParameters.first == 0,
            let name = LocalName.parse(cc.returnParameters.dropFirst(), frame: frame)
        {
            localNames[controller] = name
        }
        iso.commandComplete(cc.opcode, returns: returns, controller: controller, frame: frame, timestamp: record.timestamp)
        classicCommandComplete(cc, record)
        return note
    }

    /// The event's note, with the command it answers (its frame and latency) when that command is in the capture;
    /// a NOP opcode (0x0000, the controller granting command credits) answers nothing (7.7.14, 7.7.15). An error status,
    /// or an answer later than the HCI command time-out, is evidence.
    private func answered(_ opcode: HCICommand, status: HCIStatus?, _ record: CaptureRecord) -> HCIEventNote {
        var note = HCIEventNote(status: status?.description)
        guard opcode.rawValue != 0 else { return note }
        let frame = record.frame, timestamp = record.timestamp, controller = record.controllerIndex
        let answer = answer(controller: controller, opcode: opcode, frame: frame, timestamp: timestamp)
        note.requestFrame = answer?.0.frame
        note.latency = answer?.1
        let command = answer?.0.opcode ?? opcode
        if let status, status != .success {
            sink.evidence(
                .commandFailed(command, status: status, commandFrame: note.requestFrame), frame: frame, timestamp: timestamp,
                controller: controller, connection: answer?.0.connection)
        }
        if let latency = note.latency, let commandFrame = note.requestFrame, latency > hciCommandTimeoutMicroseconds {
            sink.evidence(
                .commandLate(command, commandFrame: commandFrame, microseconds: latency), frame: frame, timestamp: timestamp,
                controller: controller)
        }
        return note
    }

    /// Number Of Completed Packets (7.7.19) through the general path (timeline on, or not well formed for
    /// ``completedPacketsInPlace(_:)``).
    private func packetsCompleted(_ n: NumberOfCompletedPackets, _ record: CaptureRecord) -> HCIEventNote {
        let controller = record.controllerIndex
        for entry in n.entries {
            completed(
                Int(entry.completedPackets), controller: controller, handle: entry.handle, frame: record.frame,
                timestamp: record.timestamp)
        }
        bufferRoomAgain(controller: controller, frame: record.frame, timestamp: record.timestamp)
        return HCIEventNote(handle: n.entries.count == 1 ? n.entries[0].handle : nil)
    }

    /// A declared event (``HCIParameterSet``): the link's own events to their ``LinkInput``, the rest (the isochronous
    /// ones) to the ISO tracker.
    private func declaredEvent(_ d: HCIDeclared, _ record: CaptureRecord) -> HCIEventNote {
        switch d.value {
        case let d as DisconnectionComplete: return disconnected(d, record)
        case let c as LEConnectionComplete:
            return leConnected(
                status: c.status, handle: c.handle, role: c.role, peer: .init(c.peerAddress, c.peerAddressType, rpa: nil, local: nil),
                timing: c.timing, record, event: LEConnectionComplete.name)
        case let c as LEEnhancedConnectionComplete: return leConnected(c, record)
        case let v2 as LEEnhancedConnectionCompleteV2: return leConnected(v2.connection, record)
        case let u as LEConnectionUpdateComplete:
            if u.status == .success {
                let p = ConnectionParameters(interval: u.interval, latency: u.latency, timeout: u.supervisionTimeout)
                feedLE(.parametersUpdated(p), handle: u.handle, record, shownBy: LEConnectionUpdateComplete.name)
            }
            return HCIEventNote(status: u.status.description, handle: u.handle)
        case let d as LEDataLengthChange:
            let length = DataLength(maxTxOctets: d.maxTxOctets, maxTxTime: d.maxTxTime, maxRxOctets: d.maxRxOctets, maxRxTime: d.maxRxTime)
            feedLE(.dataLengthChanged(length), handle: d.handle, record, shownBy: LEDataLengthChange.name)
            return HCIEventNote(handle: d.handle)
        case let p as LEPHYUpdateComplete:
            if p.status == .success {
                feedLE(.phyChanged(PHYPair(tx: p.txPHY, rx: p.rxPHY)), handle: p.handle, record, shownBy: LEPHYUpdateComplete.name)
            }
            return HCIEventNote(status: p.status.description, handle: p.handle)
        case let r as LELongTermKeyRequest:
            keyStore.hciLTKRequest(handle: r.handle, ediv: r.encryptedDiversifier, rand: r.randomNumber)
            feed(.encryption(.longTermKeyRequested), handle: r.handle, record, infer: false)
            return HCIEventNote()
        case let e as EncryptionChange: return encryptionChanged(e, record)
        case let e2 as EncryptionChangeV2: return encryptionChanged(e2.change, record)
        case let k as EncryptionKeyRefreshComplete: return HCIEventNote(status: k.status.description, handle: k.handle)
        case let c as ConnectionComplete: return brEDRConnected(c, record)
        case is LEReadRemoteFeaturesComplete, is LERemoteConnectionParameterRequest:
            return HCIEventNote()
        // The BR/EDR authentication and pairing events are the diagnosis's evidence only (``HCIEvidence``); the timeline
        // shows them as it did before they were declared.
        case is AuthenticationComplete, is PINCodeRequest, is LinkKeyRequest, is LinkKeyNotification, is IOCapabilityRequest,
            is IOCapabilityResponse, is SimplePairingComplete:
            return HCIEventNote()
        default:
            if let note = classicEvent(d.value, record) { return note }
            iso.event(d, controller: record.controllerIndex, frame: record.frame, timestamp: record.timestamp)
            return HCIEventNote(status: d.status?.description, handle: d.connectionHandle, fields: sink.timeline ? d.value.numbers : nil)
        }
    }

    /// An LE event's input to the link on `handle` (one inferred for it if none is open): the event shows the link is LE
    /// when nothing had said so (a link up before the capture).
    private func feedLE(_ input: LinkInput, handle: UInt16, _ record: CaptureRecord, shownBy event: String) {
        guard
            let i = links.link(
                controller: record.controllerIndex, handle: handle, frame: record.frame, timestamp: record.timestamp, infer: true)
        else { return }
        links.feed(
            .transport(.le), link: i, frame: record.frame, timestamp: record.timestamp,
            source: .inferred(.transportShownBy(frame: record.frame, what: event)))
        links.feed(input, link: i, frame: record.frame, timestamp: record.timestamp)
    }

    /// Disconnection Complete (7.7.5): closes the connection.
    private func disconnected(_ d: DisconnectionComplete, _ record: CaptureRecord) -> HCIEventNote {
        let frame = record.frame, time = record.timestamp
        if d.status == .success {
            disconnectsLoggedFirst.disconnected(controller: record.controllerIndex, handle: d.handle, frame: frame, timestamp: time)
        }
        if synchronousDisconnected(d, record) {
            var note = HCIEventNote(status: d.status.description, handle: d.handle)
            note.synchronous = true
            return note
        }
        iso.disconnection(
            handle: d.handle, status: d.status, reason: d.reason, controller: record.controllerIndex, frame: frame, timestamp: time)
        feed(
            .lifecycle(.disconnected(status: d.status, reason: d.reason, frame: frame, timestamp: time)), handle: d.handle, record,
            infer: false)
        if d.status == .success, let number = links.number(controller: record.controllerIndex, handle: d.handle & 0x0FFF) {
            synchronous.aclEnded(number, frame: frame, timestamp: time)
        }
        return HCIEventNote(status: d.status.description, handle: d.handle)
    }

    /// LE Enhanced Connection Complete v1 or v2 (7.7.65.10).
    private func leConnected(_ c: LEEnhancedConnectionComplete, _ record: CaptureRecord) -> HCIEventNote {
        let addresses = ConnectedAddresses(
            c.peerAddress, c.peerAddressType, rpa: c.peerResolvablePrivateAddress, local: c.localResolvablePrivateAddress)
        return leConnected(
            status: c.status, handle: c.handle, role: c.role, peer: addresses, timing: c.timing, record,
            event: LEEnhancedConnectionComplete.name)
    }

    /// LE (Enhanced) Connection Complete (7.7.65.1, 7.7.65.10): opens the connection when it succeeded.
    private func leConnected(
        status: HCIStatus, handle: UInt16, role: HCIRole, peer: ConnectedAddresses, timing: LEConnectionTimingFields,
        _ record: CaptureRecord, event: String
    ) -> HCIEventNote {
        let stale = status.rawValue == 0 && isStaleAfterReset(record)
        if status.rawValue == 0, !stale {
            let frame = record.frame, time = record.timestamp
            let local = localAddresses.local(
                controller: record.controllerIndex, handle: handle, central: role == .central, localRPA: peer.local, frame: frame,
                event: event)
            links.openLink(controller: record.controllerIndex, handle: handle, frame: frame, timestamp: time, isLE: true) { c in
                _ = c.machine.feed(.role(role == .central ? .central : .peripheral), frame: frame, timestamp: time)
                c.peerAddress = peer.address.description
                c.peerAddressType = peer.type.description
                if let seen = peer.seen(frame: frame, event: event) {
                    _ = c.machine.feed(.security(.addressSeen(.peer, seen)), frame: frame, timestamp: time)
                }
                if let local { _ = c.machine.feed(.security(.addressSeen(.local, local)), frame: frame, timestamp: time) }
                let p = ConnectionParameters(interval: timing.interval, latency: timing.latency, timeout: timing.supervisionTimeout)
                _ = c.machine.feed(.parametersUpdated(p), frame: frame, timestamp: time)
            }
        }
        var note = HCIEventNote(status: status.description, handle: handle)
        note.staleAfterReset = stale
        return note
    }

    /// A connection the controller announced before the HCI Reset still waiting for its completion: the reset ended it,
    /// so it opens no link (the capture's edges count it: ``CompletenessTracker``, `stale-after-reset`).
    private func isStaleAfterReset(_ record: CaptureRecord) -> Bool {
        StaleAfterReset.isStale(record.timestamp, resetSent: commands.waiting(.reset, controller: record.controllerIndex)?.timestamp)
    }

    /// Connection Complete (7.7.3), BR/EDR; the handle is 12 bits (5.4.2).
    private func brEDRConnected(_ c: ConnectionComplete, _ record: CaptureRecord) -> HCIEventNote {
        let h = c.handle & 0x0FFF
        if c.linkType == SynchronousLinkType.sco {
            scoConnectionComplete(c, record)
            return HCIEventNote(handle: h)
        }
        let stale = c.status.rawValue == 0 && isStaleAfterReset(record)
        if c.status.rawValue == 0, !stale {
            links.openLink(controller: record.controllerIndex, handle: h, frame: record.frame, timestamp: record.timestamp, isLE: false) {
                conn in
                conn.peerAddress = c.address.description
                conn.peerAddressType = "BR/EDR"
            }
            if let i = links.link(
                controller: record.controllerIndex, handle: h, frame: record.frame, timestamp: record.timestamp, infer: false)
            {
                classicLinkOpened(i, address: c.address.description, record)
            }
            // Encryption_Enabled 0x01 (7.7.3): the link came up encrypted (legacy encryption mode, E0), with no
            // Encryption Change to follow: the link's security record and state take it from here.
            if c.encryptionEnabled != 0 {
                feed(.encryption(.changed(status: .success, enabled: true)), handle: h, record, infer: false)
                feed(.security(.encryptionDetails(enabledValue: c.encryptionEnabled, keySize: nil)), handle: h, record, infer: false)
            }
        }
        var note = HCIEventNote(handle: h)
        note.staleAfterReset = stale
        return note
    }

    /// Encryption Change v1 or v2 (7.7.8): through the link's ``SecurityTracker`` to its link state.
    private func encryptionChanged(_ e: EncryptionChange, _ record: CaptureRecord) -> HCIEventNote {
        if e.status.rawValue == 0 {
            feed(.encryption(.changed(status: .success, enabled: e.encryptionEnabled != 0)), handle: e.handle, record, infer: true)
        }
        return HCIEventNote(status: e.status.description, handle: e.handle)
    }

    /// Android's Bluetooth Quality Report (vendor event 0xFF, sub-event 0x58): a link quality sample on its connection.
    private func qualityReported(_ report: BluetoothQualityReport, _ packet: HCIEventPacket, _ record: CaptureRecord) -> HCIEventNote {
        let frame = record.frame, controller = record.controllerIndex
        vendorTally.event(parameters: packet.parameters, controller: controller, frame: frame)
        guard let q = report.linkQuality else {
            if !report.reportID.isKnown {
                sink.findings.append(Finding(.info, .bqrUnknownReport(report.reportID), frame: frame, offset: record.fileOffset))
            }
            return HCIEventNote()
        }
        let sample = LinkQualitySample(frame: frame, timestamp: record.timestamp, reportID: report.reportID, quality: q)
        // A vendor event opens no link: a report on a handle no connection has waits for traffic to open one there.
        if let i = links.link(controller: controller, handle: q.handle, frame: frame, timestamp: record.timestamp, infer: false) {
            if links.qualitySampleCount(link: i) < Connection.maxQualitySamples {
                links.withMachine(i) { _ = $0.feed(.qualityReport(sample), frame: frame, timestamp: record.timestamp) }
            } else {
                sink.noteLimit(.tooManyQualityReports(Connection.maxQualitySamples), frame: frame)
            }
        } else {
            vendorTally.holdReport(sample, controller: controller, handle: q.handle)
        }
        return HCIEventNote(handle: q.handle, fields: sink.timeline ? q.fields : nil)
    }

    /// A vendor event (0xFF) without a typed decoder; a BQR sub-event (0x58) that did not decode says why, with the
    /// offset in the event parameters.
    private func vendorEvent(_ params: [UInt8], _ packet: HCIEventPacket, _ record: CaptureRecord) {
        vendorTally.event(parameters: params, controller: record.controllerIndex, frame: record.frame)
        guard params.first == AndroidVendorSubevent.bluetoothQualityReport.rawValue else { return }
        do throws(DecodeError) { _ = try packet.decodeParameters() } catch {
            sink.findings.append(Finding(.warning, .bqrMalformed(error), frame: record.frame, offset: record.fileOffset))
        }
    }
}
