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
}

/// One handler per decoded HCI event (Core Spec Vol 4, Part E, 7.7): each applies the event to the analysis and says
/// what its timeline row shows.
extension Analyzer {
    func processEvent(_ record: CaptureRecord) {
        counters.events += 1
        if !options.timeline && completedPacketsInPlace(record) { return }
        var input = record.reader
        let packet: HCIEventPacket
        do { packet = try HCIEventPacket(parsing: &input) } catch {
            findings.append(Finding(.warning, .malformed("HCI event", error), frame: record.frame, offset: record.fileOffset))
            return
        }
        let decoding = packet.decoding
        let decoded = decoding.parameters
        if decoding.ignoredBytes > 0 || decoding.error != nil { noteEventDecoding(decoding, packet, record) }
        let note = applyEvent(decoded, packet, record)
        if options.evidence {
            recordEvent(decoded, frame: record.frame, timestamp: record.timestamp, controller: record.controllerIndex)
        }
        if options.timeline { emitEvent(decoded, packet, record, note) }
    }

    func applyEvent(_ decoded: HCIEventParameters, _ packet: HCIEventPacket, _ record: CaptureRecord) -> HCIEventNote {
        switch decoded {
        case .commandComplete(let cc): return commandCompleted(cc, record)
        case .commandStatus(let cs): return commandStatus(cs, record)
        case .numberOfCompletedPackets(let n): return packetsCompleted(n, record)
        case .declared(let d): return declaredEvent(d, record)
        case .bluetoothQualityReport(let report): return qualityReported(report, packet, record)
        case .raw(let code, let params) where code == .vendor:
            vendorEvent(params, packet, record)
            return HCIEventNote()
        default: return HCIEventNote()
        }
    }

    func emitEvent(_ decoded: HCIEventParameters, _ packet: HCIEventPacket, _ record: CaptureRecord, _ note: HCIEventNote) {
        let manufacturer = manufacturer(of: record.controllerIndex)
        var e = TimelineEvent(
            frame: record.frame, timestamp: record.timestamp, connection: note.handle, direction: .rx, layer: .hci,
            code: UInt32(packet.code.rawValue), name: decoded.name(manufacturer: manufacturer),
            deferredSummary: .hciEvent(decoded, manufacturer))
        e.requestFrame = note.requestFrame
        e.latency = note.latency
        e.status = note.status
        e.fields = note.fields
        emit(e)
    }

    /// Command Complete (7.7.14): answers its command; some return parameters name the controller or its buffers.
    func commandCompleted(_ cc: CommandComplete, _ record: CaptureRecord) -> HCIEventNote {
        let frame = record.frame, time = record.timestamp, controller = record.controllerIndex
        let note = answered(cc.opcode, status: cc.status, record)
        let returns = cc.decodedReturn
        switch returns {
        case .readLocalVersionInformation(let v) where v.status == .success:
            controllerIdentities[controller] = ControllerIdentity(
                controller: controller, manufacturer: v.manufacturer, version: v, frame: frame, source: .readLocalVersionInformation)
        case .leReadBufferSize(let b):
            buffers.leBufferSize(controller: controller, length: Int(b.aclDataPacketLength), packets: Int(b.totalACLDataPackets))
        case .leReadBufferSizeV2(let b):
            buffers.leBufferSize(controller: controller, length: Int(b.aclDataPacketLength), packets: Int(b.totalACLDataPackets))
        case .readBufferSize(let b):
            buffers.bufferSize(controller: controller, length: Int(b.aclDataPacketLength), packets: Int(b.totalACLDataPackets))
        default: break
        }
        iso.commandComplete(cc.opcode, returns: returns, controller: controller, frame: frame, timestamp: time)
        return note
    }

    /// The event's note, with the command it answers (its frame and latency) when that command is in the capture;
    /// a NOP opcode (0x0000, the controller granting command credits) answers nothing (7.7.14, 7.7.15).
    func answered(_ opcode: HCICommand, status: HCIStatus?, _ record: CaptureRecord) -> HCIEventNote {
        var note = HCIEventNote(status: status?.description)
        guard opcode.rawValue != 0 else { return note }
        let answer = answerCommand(controller: record.controllerIndex, opcode: opcode, frame: record.frame, timestamp: record.timestamp)
        note.requestFrame = answer?.0
        note.latency = answer?.1
        recordAnswer(
            answer?.2 ?? opcode, status: status, commandFrame: note.requestFrame, latency: note.latency, frame: record.frame,
            timestamp: record.timestamp, controller: record.controllerIndex)
        return note
    }

    /// Command Status (7.7.15): a successful one leaves the command open for its completion event, but it is answered.
    func commandStatus(_ cs: CommandStatus, _ record: CaptureRecord) -> HCIEventNote {
        let frame = record.frame, time = record.timestamp, controller = record.controllerIndex
        let note = answered(cs.opcode, status: cs.status, record)
        iso.commandStatus(cs.opcode, status: cs.status, controller: controller, frame: frame, timestamp: time)
        return note
    }

    /// Number Of Completed Packets (7.7.19) through the general path (timeline on, or not well formed for
    /// ``completedPacketsInPlace(_:)``).
    func packetsCompleted(_ n: NumberOfCompletedPackets, _ record: CaptureRecord) -> HCIEventNote {
        let controller = record.controllerIndex
        for entry in n.entries {
            completed(
                Int(entry.completedPackets), controller: controller, handle: entry.handle, frame: record.frame,
                timestamp: record.timestamp)
        }
        bufferRoomAgain(controller: controller, frame: record.frame, timestamp: record.timestamp)
        return HCIEventNote(handle: n.entries.count == 1 ? n.entries[0].handle : nil)
    }

    /// A declared event (``HCIParameterSet``): the link's own events to their handlers, the rest (the isochronous ones)
    /// to the ISO tracker.
    func declaredEvent(_ d: HCIDeclared, _ record: CaptureRecord) -> HCIEventNote {
        switch d.value {
        case let d as DisconnectionComplete: return disconnected(d, record)
        case let c as LEConnectionComplete:
            return leConnected(
                status: c.status, handle: c.handle, role: c.role, peer: c.peerAddress, peerType: c.peerAddressType, timing: c.timing,
                record)
        case let c as LEEnhancedConnectionComplete: return leConnected(c, record)
        case let v2 as LEEnhancedConnectionCompleteV2: return leConnected(v2.connection, record)
        case let u as LEConnectionUpdateComplete: return connectionUpdated(u, record)
        case let d as LEDataLengthChange: return dataLengthChanged(d, record)
        case let p as LEPHYUpdateComplete: return phyUpdated(p, record)
        case let r as LELongTermKeyRequest:
            keyStore.hciLTKRequest(handle: r.handle, ediv: r.encryptedDiversifier, rand: r.randomNumber)
            feedSecurity(
                .longTermKeyRequested, controller: record.controllerIndex, handle: r.handle, frame: record.frame,
                timestamp: record.timestamp)
            return HCIEventNote()
        case let e as EncryptionChange: return encryptionChanged(e, record)
        case let e2 as EncryptionChangeV2: return encryptionChanged(e2.change, record)
        case let k as EncryptionKeyRefreshComplete: return HCIEventNote(status: k.status.description, handle: k.handle)
        case let c as ConnectionComplete: return brEDRConnected(c, record)
        case is ReadRemoteVersionInformationComplete, is LEReadRemoteFeaturesComplete, is LERemoteConnectionParameterRequest:
            return HCIEventNote()
        // The BR/EDR authentication, pairing, role and mode events are the diagnosis's evidence only
        // (``recordEvent(_:frame:timestamp:controller:)``); the timeline shows them as it did before they were declared.
        case is AuthenticationComplete, is RoleChange, is ModeChange, is PINCodeRequest, is LinkKeyRequest, is LinkKeyNotification,
            is IOCapabilityRequest, is IOCapabilityResponse, is SimplePairingComplete:
            return HCIEventNote()
        default:
            iso.event(d, controller: record.controllerIndex, frame: record.frame, timestamp: record.timestamp)
            return HCIEventNote(
                status: d.status?.description, handle: d.connectionHandle, fields: options.timeline ? d.value.numbers : nil)
        }
    }

    /// Disconnection Complete (7.7.5): closes the connection.
    func disconnected(_ d: DisconnectionComplete, _ record: CaptureRecord) -> HCIEventNote {
        let frame = record.frame, time = record.timestamp, controller = record.controllerIndex
        iso.disconnection(handle: d.handle, status: d.status, reason: d.reason, controller: controller, frame: frame, timestamp: time)
        if let i = table.lookup(ConnectionKey(controller: controller, handle: d.handle)) {
            feedLink(
                .lifecycle(.disconnected(status: d.status, reason: d.reason, frame: frame, timestamp: time)), connection: i,
                frame: frame, timestamp: time)
        }
        return HCIEventNote(status: d.status.description, handle: d.handle)
    }

    /// LE Enhanced Connection Complete v1 or v2 (7.7.65.10).
    func leConnected(_ c: LEEnhancedConnectionComplete, _ record: CaptureRecord) -> HCIEventNote {
        leConnected(
            status: c.status, handle: c.handle, role: c.role, peer: c.peerAddress, peerType: c.peerAddressType, timing: c.timing, record)
    }

    /// LE (Enhanced) Connection Complete (7.7.65.1, 7.7.65.10): opens the connection when it succeeded.
    func leConnected(
        status: HCIStatus, handle: UInt16, role: HCIRole, peer: BDAddress, peerType: LEAddressType, timing: LEConnectionTimingFields,
        _ record: CaptureRecord
    ) -> HCIEventNote {
        if status.rawValue == 0 {
            openLE(
                controller: record.controllerIndex, handle: handle, frame: record.frame, time: record.timestamp, role: role,
                peer: peer, peerType: peerType, interval: timing.interval, latency: timing.latency, timeout: timing.supervisionTimeout)
        }
        return HCIEventNote(status: status.description, handle: handle)
    }

    /// Connection Complete (7.7.3), BR/EDR; the handle is 12 bits (5.4.2).
    func brEDRConnected(_ c: ConnectionComplete, _ record: CaptureRecord) -> HCIEventNote {
        let h = c.handle & 0x0FFF
        if c.status.rawValue == 0 {
            openConnection(
                controller: record.controllerIndex, handle: h, frame: record.frame, timestamp: record.timestamp, isLE: false
            ) { conn in
                conn.peerAddress = c.address.description
                conn.peerAddressType = "BR/EDR"
            }
        }
        return HCIEventNote(handle: h)
    }

    /// The index of the connection an event names, inferring one the capture did not see open.
    func eventConnection(_ handle: UInt16, _ record: CaptureRecord) -> Int? {
        connectionIndex(
            controller: record.controllerIndex, handle: handle, frame: record.frame, timestamp: record.timestamp, infer: true)
    }

    /// LE Connection Update Complete (7.7.65.3).
    func connectionUpdated(_ u: LEConnectionUpdateComplete, _ record: CaptureRecord) -> HCIEventNote {
        if u.status.rawValue == 0, let i = eventConnection(u.handle, record) {
            feedLink(
                .parametersUpdated(ConnectionParameters(interval: u.interval, latency: u.latency, timeout: u.supervisionTimeout)),
                connection: i, frame: record.frame, timestamp: record.timestamp)
        }
        return HCIEventNote(status: u.status.description, handle: u.handle)
    }

    /// LE Data Length Change (7.7.65.7).
    func dataLengthChanged(_ d: LEDataLengthChange, _ record: CaptureRecord) -> HCIEventNote {
        if let i = eventConnection(d.handle, record) {
            feedLink(
                .dataLengthChanged(
                    DataLength(maxTxOctets: d.maxTxOctets, maxTxTime: d.maxTxTime, maxRxOctets: d.maxRxOctets, maxRxTime: d.maxRxTime)),
                connection: i, frame: record.frame, timestamp: record.timestamp)
        }
        return HCIEventNote(handle: d.handle)
    }

    /// LE PHY Update Complete (7.7.65.12).
    func phyUpdated(_ p: LEPHYUpdateComplete, _ record: CaptureRecord) -> HCIEventNote {
        if p.status.rawValue == 0, let i = eventConnection(p.handle, record) {
            feedLink(.phyChanged(PHYPair(tx: p.txPHY, rx: p.rxPHY)), connection: i, frame: record.frame, timestamp: record.timestamp)
        }
        return HCIEventNote(status: p.status.description, handle: p.handle)
    }

    /// Encryption Change v1 or v2 (7.7.8).
    func encryptionChanged(_ e: EncryptionChange, _ record: CaptureRecord) -> HCIEventNote {
        if e.status.rawValue == 0 {
            setEncryption(record.controllerIndex, e.handle, e.encryptionEnabled != 0, record.frame, record.timestamp)
        }
        return HCIEventNote(status: e.status.description, handle: e.handle)
    }

    /// Android's Bluetooth Quality Report (vendor event 0xFF, sub-event 0x58): a link quality sample on its connection.
    func qualityReported(_ report: BluetoothQualityReport, _ packet: HCIEventPacket, _ record: CaptureRecord) -> HCIEventNote {
        let frame = record.frame
        vendorTally.event(parameters: packet.parameters, controller: record.controllerIndex, frame: frame)
        guard let q = report.linkQuality else {
            if !report.reportID.isKnown {
                findings.append(Finding(.info, .bqrUnknownReport(report.reportID), frame: frame, offset: record.fileOffset))
            }
            return HCIEventNote()
        }
        let sample = LinkQualitySample(frame: frame, timestamp: record.timestamp, reportID: report.reportID, quality: q)
        // A vendor event opens no link: a report on a handle no connection has waits for traffic to open one there.
        if let i = table.lookup(ConnectionKey(controller: record.controllerIndex, handle: q.handle)) {
            if table[i].linkQuality.count < Connection.maxQualitySamples {
                _ = table[i].machine.feed(.qualityReport(sample), frame: frame, timestamp: record.timestamp)
            } else {
                noteLimit(.tooManyQualityReports(Connection.maxQualitySamples), frame: frame)
            }
        } else {
            vendorTally.holdReport(sample, controller: record.controllerIndex, handle: q.handle)
        }
        return HCIEventNote(handle: q.handle, fields: options.timeline ? q.fields : nil)
    }

    /// A vendor event (0xFF) without a typed decoder; a BQR sub-event (0x58) that did not decode says why, with the
    /// offset in the event parameters.
    func vendorEvent(_ params: [UInt8], _ packet: HCIEventPacket, _ record: CaptureRecord) {
        vendorTally.event(parameters: params, controller: record.controllerIndex, frame: record.frame)
        guard params.first == AndroidVendorSubevent.bluetoothQualityReport.rawValue else { return }
        do throws(DecodeError) { _ = try packet.decodeParameters() } catch {
            findings.append(Finding(.warning, .bqrMalformed(error), frame: record.frame, offset: record.fileOffset))
        }
    }
}
