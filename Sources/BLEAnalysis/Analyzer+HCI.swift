import BLECapture
import BLECore
import BLEProtocols

extension Analyzer {
    func processCommand(_ record: CaptureRecord) {
        counters.commands += 1
        var input = record.reader
        let packet: HCICommandPacket
        do { packet = try HCICommandPacket(parsing: &input) } catch {
            findings.append(Finding(.warning, .malformed("HCI command", error), frame: record.frame, offset: record.fileOffset))
            return
        }
        var eventID: Int? = nil
        if packet.opcode.isVendor {
            vendorTally.command(packet.opcode, controller: record.controllerIndex, frame: record.frame, parameters: packet.parameters)
        }
        if options.timeline {
            let decoded = packet.decoded
            let manufacturer = manufacturer(of: record.controllerIndex)
            var summary = decoded.summary
            if let sub = VendorSpecific.command(packet.opcode, parameters: packet.parameters, manufacturer: manufacturer)?.subcommand {
                summary = "subcommand=\(sub)" + (summary.isEmpty ? "" : " " + summary)
            }
            var e = TimelineEvent(
                frame: record.frame, timestamp: record.timestamp, connection: packet.connectionHandle,
                direction: .tx, layer: .hci, code: UInt32(packet.opcode.rawValue),
                name: packet.opcode.name(manufacturer: manufacturer), summary: summary)
            e.isRequest = true
            eventID = emit(e, waiting: true)
        }
        noteKeys(packet, controller: record.controllerIndex, frame: record.frame)
        noteSecurityCommand(packet, record)
        if packet.opcode == .disconnect { noteDisconnectCommand(packet, record) }
        if options.evidence {
            recordCommand(packet, frame: record.frame, timestamp: record.timestamp, controller: record.controllerIndex)
        }
        iso.noteCommand(packet, record: record)
        let sent = commands.feed(
            packet.opcode, controller: record.controllerIndex,
            .init(frame: record.frame, timestamp: record.timestamp, eventID: eventID))
        if let previous = sent.unanswered {
            findings.append(Finding(.warning, .commandUnanswered, frame: previous.frame))
            if let id = previous.eventID { sink.queue.settle(id) }
            // Sent again within the time-out: both may be outstanding (Num_HCI_Command_Packets > 1), not a controller hang.
            if record.timestamp.microseconds(since: previous.timestamp) > hciCommandTimeoutMicroseconds, packet.opcode.expectsAnswer {
                evidence(
                    .commandUnanswered(packet.opcode, commandFrame: previous.frame), frame: previous.frame, timestamp: previous.timestamp,
                    controller: record.controllerIndex)
            }
        }
        if sent.refused {
            noteLimit(.tooManyPendingCommands(HCICommandPairing.maxPending), frame: record.frame)
            if let id = eventID { sink.queue.settle(id) }
        }
    }

    /// Pairs a Command Complete / Status with its command; returns (request frame, latency, the command's opcode).
    func answerCommand(controller: UInt16, opcode: HCICommand, frame: Int, timestamp: Timestamp) -> (Int, Int64, HCICommand)? {
        guard let pending = commands.answer(opcode, controller: controller) else { return nil }
        let latency = timestamp.microseconds(since: pending.timestamp)
        if let id = pending.eventID {
            sink.queue.update(id) { e in
                if e.responseFrame == nil {
                    e.responseFrame = frame
                    e.latency = latency
                }
            }
            sink.queue.settle(id)
        }
        return (pending.frame, latency, pending.opcode)
    }

    /// An event longer than its fixed size (read by its first bytes) or one blescope decodes that did not: said, not
    /// dropped. The BQR vendor event says its own (``FindingKind/bqrMalformed(_:)``).
    func noteEventDecoding(_ decoding: HCIEventPacket.Decoding, _ packet: HCIEventPacket, _ record: CaptureRecord) {
        if decoding.ignoredBytes > 0 {
            findings.append(
                Finding(
                    .info,
                    FindingKind(
                        code: "hci.event-extra-bytes",
                        message:
                            "\(packet.name): \(decoding.ignoredBytes) byte(s) after the \(packet.parameters.count - decoding.ignoredBytes) the spec defines, ignored (as the Android stack and tshark do)"
                    ), frame: record.frame, offset: record.fileOffset))
        } else if let error = decoding.error, packet.code != .vendor {
            findings.append(Finding(.warning, .malformed(packet.name, error), frame: record.frame, offset: record.fileOffset))
        }
    }

    /// Number Of Completed Packets (Core Spec Vol 4, Part E, 7.7.19), the event bulk traffic brings most of, read from
    /// the record's bytes when no timeline event is built: the general path copies the parameters and builds the
    /// entries, allocating per event (see docs/performance.md#analyzer-hci). Only a well-formed one (as many 4-byte
    /// entries as it says, within the record) is taken here; false for anything else, which the general path decodes
    /// (and reports) as before.
    func completedPacketsInPlace(_ record: CaptureRecord) -> Bool {
        let b = record.bytes
        guard b.count >= 3, b[0] == 0x13 else { return false }  // HCIEventCode.numberOfCompletedPackets
        let parameterLength = Int(b[1]), entries = Int(b[2])
        guard parameterLength <= b.count - 2, parameterLength == 1 + entries * 4 else { return false }
        let controller = record.controllerIndex
        for e in 0..<entries {
            let at = 3 + e * 4
            let handle = (UInt16(b[at]) | UInt16(b[at + 1]) << 8) & 0x0FFF
            completed(
                Int(UInt16(b[at + 2]) | UInt16(b[at + 3]) << 8), controller: controller, handle: handle, frame: record.frame,
                timestamp: record.timestamp)
        }
        bufferRoomAgain(controller: controller, frame: record.frame, timestamp: record.timestamp)
        return true
    }

    /// `packets` host → controller packets of (controller, handle) reported completed at `frame`.
    func completed(_ packets: Int, controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp) {
        // A CIS or BIS handle's completions are ISO buffers, not ACL ones (Core Spec Vol 4, Part E, 7.7.19).
        if iso.isStream(controller: controller, handle: handle) { return }
        if let i = table.lookup(ConnectionKey(controller: controller, handle: handle)) {
            connections[i].machine.feed(completed: packets, at: .init(frame: frame, timestamp: timestamp))
        }
        buffers.completed(controller: controller, packets: packets)
    }

    /// After completions: ends the full period of the connection whose send filled the controller's buffer, when it has
    /// room again.
    func bufferRoomAgain(controller: UInt16, frame: Int, timestamp: Timestamp) {
        if let i = buffers.roomAgain(controller: controller) {
            connections[i].machine.feed(bufferRoomAgainAt: .init(frame: frame, timestamp: timestamp))
        }
    }

    /// The maker of a controller as known at this point of the capture.
    func manufacturer(of controller: UInt16) -> ControllerManufacturer? { controllerIdentities[controller]?.manufacturer }

    /// Linux monitor opcode 10, Index Info (BlueZ `src/shared/btsnoop.h`, BTSNOOP_OPCODE_INDEX_INFO).
    static let monitorIndexInfo: UInt32 = 10

    /// A Linux monitor Index Info record: address(6) manufacturer(2, little-endian) (`struct
    /// btsnoop_opcode_index_info`). btmon writes it when it starts on a controller already up, so captures that
    /// never show Read Local Version Information still name the maker. A later Read Local Version wins.
    func noteIndexInfo(_ record: CaptureRecord) {
        var r = record.reader
        guard r.remaining >= 8, (try? r.skip(6)) != nil, let raw = try? UInt16(parsingLittleEndian: &r) else { return }
        let controller = record.controllerIndex
        if controllerIdentities[controller]?.source == .readLocalVersionInformation { return }
        controllerIdentities[controller] = ControllerIdentity(
            controller: controller, manufacturer: ControllerManufacturer(raw), version: nil, frame: record.frame,
            source: .monitorIndexInfo)
    }

    /// This side's HCI Disconnect (Core Spec Vol 4, Part E, 7.1.6): its connection waits for the Disconnection Complete,
    /// which then says this side ended it.
    func noteDisconnectCommand(_ packet: HCICommandPacket, _ record: CaptureRecord) {
        guard case .disconnect(let d) = packet.decoded,
            let i = table.lookup(ConnectionKey(controller: record.controllerIndex, handle: d.handle & 0x0FFF))
        else { return }
        feedLink(
            .lifecycle(.disconnectRequested(reason: d.reason, frame: record.frame)), connection: i, frame: record.frame,
            timestamp: record.timestamp)
    }

    func openLE(
        controller: UInt16, handle: UInt16, frame: Int, time: Timestamp, role: HCIRole, peer: BDAddress,
        peerType: LEAddressType, interval: UInt16, latency: UInt16, timeout: UInt16
    ) {
        openConnection(controller: controller, handle: handle, frame: frame, timestamp: time, isLE: true) { c in
            c.role = role == .central ? .central : .peripheral
            c.peerAddress = peer.description
            c.peerAddressType = peerType.description
            _ = c.machine.feed(
                .parametersUpdated(ConnectionParameters(interval: interval, latency: latency, timeout: timeout)), frame: frame,
                timestamp: time)
        }
    }

    /// Encryption Change with success status: through the connection's ``SecurityTracker`` to its link state.
    func setEncryption(_ controller: UInt16, _ handle: UInt16, _ on: Bool, _ frame: Int, _ time: Timestamp) {
        if let i = connectionIndex(controller: controller, handle: handle, frame: frame, timestamp: time, infer: true) {
            feedSecurity(.changed(status: .success, enabled: on), connection: i, frame: frame, timestamp: time)
        }
    }
}

extension HCICommandPacket {
    /// Commands whose first parameter is a connection handle (Core Vol 4, Part E, 7.1–7.8).
    static let handleFirst: Set<UInt16> = [
        HCICommand.disconnect.rawValue, HCICommand.readRemoteVersionInformation.rawValue,
        HCICommand.leConnectionUpdate.rawValue, HCICommand.leReadRemoteFeatures.rawValue,
        HCICommand.leEnableEncryption.rawValue, HCICommand.leLongTermKeyRequestReply.rawValue,
        HCICommand.leLongTermKeyRequestNegativeReply.rawValue, HCICommand.leRemoteConnectionParameterRequestReply.rawValue,
        HCICommand.leRemoteConnectionParameterRequestNegativeReply.rawValue, HCICommand.leSetDataLength.rawValue,
        HCICommand.leSetPHY.rawValue,
    ]

    /// The connection handle the command is about, when it names one.
    var connectionHandle: UInt16? {
        guard HCICommandPacket.handleFirst.contains(opcode.rawValue), parameters.count >= 2 else { return nil }
        return (UInt16(parameters[0]) | UInt16(parameters[1]) << 8) & 0x0FFF
    }
}

extension Analyzer {
    /// A phone's HCI log hands its controller the LTK of every encrypted LE link: LE Enable Encryption when the
    /// phone is central, LE Long Term Key Request Reply when it is peripheral (Core Spec Vol 4, Part E, 7.8.24–25).
    func noteKeys(_ packet: HCICommandPacket, controller: UInt16, frame: Int) {
        switch packet.opcode {
        case .leEnableEncryption:
            guard case .declared(let d) = packet.decoded, let p = d.as(LEEnableEncryption.self) else { return }
            keyStore.hciEnableEncryption(p, peer: peerValue(controller: controller, handle: p.handle), frame: frame)
        case .leLongTermKeyRequestReply:
            guard packet.parameters.count >= 18 else { return }
            let handle = UInt16(packet.parameters[0]) | UInt16(packet.parameters[1] & 0x0F) << 8
            keyStore.hciLTKReply(
                handle: handle, ltk: Array(packet.parameters[2..<18]), peer: peerValue(controller: controller, handle: handle),
                frame: frame)
        default:
            break
        }
    }

    /// The host's answer to an LE Long Term Key Request (Core Spec Vol 4, Part E, 7.8.25–26), to the connection's
    /// ``SecurityTracker``.
    func noteSecurityCommand(_ packet: HCICommandPacket, _ record: CaptureRecord) {
        let input: SecurityTracker.EncryptionInput
        switch packet.opcode {
        case .leLongTermKeyRequestReply: input = .longTermKeyReplied
        case .leLongTermKeyRequestNegativeReply: input = .longTermKeyRefused
        default: return
        }
        guard let handle = packet.connectionHandle else { return }
        feedSecurity(input, controller: record.controllerIndex, handle: handle, frame: record.frame, timestamp: record.timestamp)
    }

    func peerValue(controller: UInt16, handle: UInt16) -> UInt64? {
        table.lookup(ConnectionKey(controller: controller, handle: handle)).flatMap { connections[$0].peripheralAddressValue }
    }
}
