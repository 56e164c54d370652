import BLECapture
import BLECore
import BLEProtocols

/// What the HCI machine asks of the connection table (the analyzer answers): find or open the link a packet names, and
/// feed it. Links are named by their index in the table.
protocol HCILinks: AnyObject {
    /// The link open on (controller, handle); with `infer`, one opened for traffic no Connection Complete announced.
    func link(controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp, infer: Bool) -> Int?
    /// A link a connection event opened (a link still open on the key ends, replaced).
    func openLink(
        controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp, isLE: Bool, configure: (inout Connection) -> Void)
    /// One ``LinkInput`` to the link's machine (`source` when the fact is not observed at `frame`); what it answers (its
    /// end, a security verdict) is the analyzer's to act on.
    func feed(_ input: LinkInput, link: Int, frame: Int, timestamp: Timestamp, source: FactSource?)
    /// The link's machine, for the inputs that answer nothing (buffer room, quality reports).
    func withMachine(_ link: Int, _ body: (inout LinkMachine) -> Void)
    /// `packets` of the open link on (controller, handle) completed at `moment` (Number Of Completed Packets): one call
    /// per entry, the lookup and the count together, on the path bulk traffic takes most.
    func completed(_ packets: Int, controller: UInt16, handle: UInt16, at moment: LinkActivity.Moment)
    /// The peripheral's address on the link, where the capture shows it (the peer a key is stored for).
    func peripheralAddress(link: Int) -> UInt64?
    /// The quality reports the link holds (bounded by ``Connection/maxQualitySamples``).
    func qualitySampleCount(link: Int) -> Int
    /// Hands a timeline event on with the number of the connection its handle names (``Analyzer/emit(_:waiting:)``).
    @discardableResult func emit(_ event: consuming TimelineEvent, waiting: Bool) -> Int
    /// The number of the connection `handle` names on `controller` (open, or the latest on the handle).
    func number(controller: UInt16, handle: UInt16) -> Int?
    /// The open BR/EDR link to `peer` on `controller` (BR/EDR events such as Role Change name the address, not the handle).
    func link(controller: UInt16, peer: String) -> Int?
    /// The link's connection number and peer address.
    func connectionNumber(link: Int) -> Int
    func peer(link: Int) -> String?
    /// The links open on `controller` (an HCI Reset ends them all), in the order they opened.
    func openLinks(controller: UInt16) -> [Int]
}

extension HCILinks {
    func feed(_ input: LinkInput, link: Int, frame: Int, timestamp: Timestamp) {
        feed(input, link: link, frame: frame, timestamp: timestamp, source: nil)
    }
}

/// The capture-wide HCI machine: commands paired with their Command Complete or Status, the controllers' ACL buffers and
/// identities, vendor activity, the keys a phone's log hands its controller, and the ISO tracker; HCI events become
/// ``LinkInput``s for the link they name (through ``HCILinks``). What it finds goes to the sink: timeline events,
/// findings, evidence (``HCIEvidence``).
final class HCIMachine {
    var commands = HCICommandPairing()
    /// Controller ACL buffers from (LE) Read Buffer Size and the packets in them.
    var buffers = ControllerBuffers()
    /// Who made each controller (by controller index), from Read Local Version Information or a monitor Index Info;
    /// the latest answer wins. Vendor-specific commands and events are named with it from its frame on.
    var identities: [UInt16: ControllerIdentity] = [:]
    /// The name each controller's host gave it (``LocalName``): Write Local Name, or Read Local Name's answer.
    var localNames: [UInt16: LocalName] = [:]
    var vendorTally = VendorTally()
    /// ACL packets on the Qualcomm controller-log handle (``VendorTrace/handle``) outside any connection.
    var vendorTrace = VendorTrace()
    /// Isochronous channels (CIG/CIS/BIG), their ISO data and, once finished, its health (`ISOTracker+Records.swift`).
    var iso = ISOTracker()
    /// SCO and eSCO links, each on its own handle beside its ACL (`Classic/SynchronousLinks.swift`).
    var synchronous = SynchronousLinks()
    /// What BR/EDR links' facts wait on between events (`Classic/HCIMachine+Classic.swift`).
    var classic = ClassicHCIState()
    /// The latest HCI Reset sent to each controller: its frame and time (``StaleAfterReset``).
    var resets: [UInt16: (frame: Int, timestamp: Timestamp)] = [:]
    /// Disconnects whose Disconnection Complete the log holds just before them (`HCI/DisconnectsLoggedFirst.swift`).
    var disconnectsLoggedFirst = DisconnectsLoggedFirst()
    /// The link each controller's HCI Disconnect waiting for its Command Status names.
    var disconnectAsked: [UInt16: Int] = [:]
    /// This side's LE address as its host set and chose it (the local side of each LE link's addresses).
    var localAddresses = LocalAddresses()
    /// The parameters of the log's first LE (Extended) Create Connection and its frame: a stack asks its own defaults
    /// there (``PlatformClues/firstCreate``).
    private(set) var firstCreate: (parameters: LEConnectionParameters, frame: Int)?
    let keyStore: LinkKeyStore
    /// The analyzer, which owns this machine and outlives it: `unowned(unsafe)` spares the atomic reference count a safe
    /// unowned reference pays on every use (every completed-packets entry).
    unowned(unsafe) let links: any HCILinks
    let sink: AnalysisSink

    init(keyStore: LinkKeyStore, links: any HCILinks, sink: AnalysisSink) {
        self.keyStore = keyStore
        self.links = links
        self.sink = sink
    }

    /// Vendor-specific commands and events per controller, counted and named (see ``VendorActivity``).
    var vendorActivity: VendorActivity { vendorTally.activity(manufacturers: identities.mapValues(\.manufacturer)) }

    /// The maker of a controller as known at this point of the capture.
    func manufacturer(of controller: UInt16) -> ControllerManufacturer? { identities[controller]?.manufacturer }

    // MARK: commands

    func command(_ record: CaptureRecord) {
        var input = record.reader
        let packet: HCICommandPacket
        do { packet = try HCICommandPacket(parsing: &input) } catch {
            sink.findings.append(Finding(.warning, .malformed("HCI command", error), frame: record.frame, offset: record.fileOffset))
            return
        }
        if packet.opcode.isVendor {
            vendorTally.command(packet.opcode, controller: record.controllerIndex, frame: record.frame, parameters: packet.parameters)
        }
        let eventID = sink.timeline ? emitCommand(packet, record) : nil
        noteKeys(packet, controller: record.controllerIndex, frame: record.frame)
        noteSecurityCommand(packet, record)
        noteSecurityRecord(packet, record)
        localAddresses.command(packet, controller: record.controllerIndex, frame: record.frame, timestamp: record.timestamp)
        if firstCreate == nil, HCICommand.leConnectionCreates.contains(packet.opcode), let asked = packet.decoded.requestedConnection {
            firstCreate = (asked, record.frame)
        }
        if packet.opcode == .disconnect {
            noteDisconnectCommand(packet, record)
            noteDisconnectLoggedAfterItsEnd(packet, record)
        }
        if sink.recordsEvidence, let (handle, kind) = HCIEvidence.command(packet) {
            let number = handle.flatMap { links.number(controller: record.controllerIndex, handle: $0) }
            sink.evidence(kind, frame: record.frame, timestamp: record.timestamp, controller: record.controllerIndex, connection: number)
        }
        iso.noteCommand(packet, record: record)
        if packet.opcode == Self.writeLocalName, let name = LocalName.parse(packet.parameters, frame: record.frame) {
            localNames[record.controllerIndex] = name
        }
        classicCommand(packet, record)
        if packet.opcode == .reset {
            settleBeforeReset(record)
            resetEndsLinks(record)
        }
        pair(packet, record, eventID: eventID)
    }

    /// An HCI Reset ends every command its controller still owed an answer (Core Spec Vol 4, Part E, 7.3.2): one sent
    /// within the time-out before it was cut short by the reset (cannot tell, info); one older was never answered, and
    /// the reset is likely the host's recovery from it (a warning, with its evidence).
    private func settleBeforeReset(_ record: CaptureRecord) {
        for pending in commands.takeUnanswered(controller: record.controllerIndex) where !answeredBeforeItWasLogged(pending) {
            if let id = pending.eventID { sink.queue.settle(id) }
            guard record.timestamp.microseconds(since: pending.timestamp) > hciCommandTimeoutMicroseconds else {
                sink.findings.append(Finding(.info, .commandCutShort(by: "the HCI Reset at frame \(record.frame)"), frame: pending.frame))
                continue
            }
            unanswered(pending)
        }
    }

    private func unanswered(_ pending: HCICommandPairing.Unanswered) {
        sink.findings.append(Finding(.warning, .commandUnanswered, frame: pending.frame))
        unansweredEvidence(pending)
    }

    private func unansweredEvidence(_ pending: HCICommandPairing.Unanswered) {
        guard pending.opcode.expectsAnswer else { return }
        sink.evidence(
            .commandUnanswered(pending.opcode, commandFrame: pending.frame), frame: pending.frame, timestamp: pending.timestamp,
            controller: pending.controller)
    }

    /// The command's timeline event, waiting for its answer; returns its queue id.
    private func emitCommand(_ packet: HCICommandPacket, _ record: CaptureRecord) -> Int? {
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
        return links.emit(e, waiting: true)
    }

    /// The command waits for its answer; one sent again unanswered is said (``HCICommandPairing``).
    private func pair(_ packet: HCICommandPacket, _ record: CaptureRecord, eventID: Int?) {
        let connection =
            sink.recordsEvidence
            ? packet.handleParameter.flatMap { links.number(controller: record.controllerIndex, handle: $0 & 0x0FFF) } : nil
        let sent = commands.feed(
            packet.opcode, controller: record.controllerIndex,
            .init(frame: record.frame, timestamp: record.timestamp, eventID: eventID, connection: connection))
        if let previous = sent.unanswered {
            if let id = previous.eventID { sink.queue.settle(id) }
            // Sent again within the time-out: both may be outstanding (Num_HCI_Command_Packets > 1), or the log holds the
            // same command twice (a corpus Android btsnooz log: LE Rand at 63 and 65, one Command Complete), not a hang.
            let late = record.timestamp.microseconds(since: previous.timestamp) > hciCommandTimeoutMicroseconds
            sink.findings.append(
                late
                    ? Finding(.warning, .commandUnanswered, frame: previous.frame)
                    : Finding(
                        .info, .commandCutShort(by: "the same command again at frame \(record.frame), one answer for both"),
                        frame: previous.frame))
            if late, packet.opcode.expectsAnswer {
                sink.evidence(
                    .commandUnanswered(packet.opcode, commandFrame: previous.frame), frame: previous.frame, timestamp: previous.timestamp,
                    controller: record.controllerIndex)
            }
        }
        if sent.refused {
            sink.noteLimit(.tooManyPendingCommands(HCICommandPairing.maxPending), frame: record.frame)
            if let id = eventID { sink.queue.settle(id) }
        }
    }

    /// Pairs a Command Complete / Status with its command; returns the command waiting (its frame, opcode and
    /// connection) and the latency.
    func answer(controller: UInt16, opcode: HCICommand, frame: Int, timestamp: Timestamp) -> (HCICommandPairing.Pending, Int64)? {
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
        return (pending, latency)
    }

    /// This side's HCI Disconnect (Core Spec Vol 4, Part E, 7.1.6): its connection waits for the Disconnection Complete,
    /// which then says this side ended it.
    private func noteDisconnectCommand(_ packet: HCICommandPacket, _ record: CaptureRecord) {
        guard case .disconnect(let d) = packet.decoded,
            let i = links.link(
                controller: record.controllerIndex, handle: d.handle & 0x0FFF, frame: record.frame, timestamp: record.timestamp,
                infer: false)
        else { return }
        links.feed(
            .lifecycle(.disconnectRequested(reason: d.reason, frame: record.frame)), link: i, frame: record.frame,
            timestamp: record.timestamp)
        disconnectAsked[record.controllerIndex] = i
    }

    /// The Disconnect's Command Status: refused, the link's end is no longer this side's request.
    func disconnectAnswered(status: HCIStatus, _ record: CaptureRecord) {
        guard let i = disconnectAsked.removeValue(forKey: record.controllerIndex), status != .success else { return }
        links.feed(.lifecycle(.disconnectRefused(frame: record.frame)), link: i, frame: record.frame, timestamp: record.timestamp)
    }

    /// A phone's HCI log hands its controller the LTK of every encrypted LE link: LE Enable Encryption when the
    /// phone is central, LE Long Term Key Request Reply when it is peripheral (Core Spec Vol 4, Part E, 7.8.24–25).
    private func noteKeys(_ packet: HCICommandPacket, controller: UInt16, frame: Int) {
        switch packet.opcode {
        case .leEnableEncryption:
            guard case .declared(let d) = packet.decoded, let p = d.as(LEEnableEncryption.self) else { return }
            keyStore.hciEnableEncryption(p, peer: peerValue(controller: controller, handle: p.handle), frame: frame)
        case .leLongTermKeyRequestReply:
            guard case .declared(let d) = packet.decoded, let p = d.as(LELongTermKeyRequestReply.self) else { return }
            let handle = p.handle & 0x0FFF
            keyStore.hciLTKReply(handle: handle, ltk: p.longTermKey, peer: peerValue(controller: controller, handle: handle), frame: frame)
        default:
            break
        }
    }

    /// The host's answer to an LE Long Term Key Request (Core Spec Vol 4, Part E, 7.8.25–26), to the link's
    /// ``SecurityTracker``.
    private func noteSecurityCommand(_ packet: HCICommandPacket, _ record: CaptureRecord) {
        let input: SecurityTracker.EncryptionInput
        switch packet.opcode {
        case .leLongTermKeyRequestReply: input = .longTermKeyReplied
        case .leLongTermKeyRequestNegativeReply: input = .longTermKeyRefused
        default: return
        }
        guard let handle = packet.connectionHandle else { return }
        feed(.encryption(input), handle: handle, record, infer: false)
    }

    private func peerValue(controller: UInt16, handle: UInt16) -> UInt64? {
        links.link(controller: controller, handle: handle, frame: 0, timestamp: Timestamp(microseconds: 0), infer: false).flatMap {
            links.peripheralAddress(link: $0)
        }
    }

    /// `input` to the link `handle` names on the record's controller (with `infer`, one opened for it).
    func feed(_ input: LinkInput, handle: UInt16, _ record: CaptureRecord, infer: Bool) {
        guard
            let i = links.link(
                controller: record.controllerIndex, handle: handle, frame: record.frame, timestamp: record.timestamp, infer: infer)
        else { return }
        links.feed(input, link: i, frame: record.frame, timestamp: record.timestamp)
    }

    // MARK: controller buffers

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
        links.completed(packets, controller: controller, handle: handle, at: .init(frame: frame, timestamp: timestamp))
        buffers.completed(controller: controller, packets: packets)
    }

    /// After completions: ends the full period of the connection whose send filled the controller's buffer, when it has
    /// room again.
    func bufferRoomAgain(controller: UInt16, frame: Int, timestamp: Timestamp) {
        if let i = buffers.roomAgain(controller: controller) {
            links.withMachine(i) { $0.feed(bufferRoomAgainAt: .init(frame: frame, timestamp: timestamp)) }
        }
    }

    // MARK: controller identity

    /// Write Local Name and Read Local Name (Core Spec Vol 4, Part E, 7.3.11–12).
    static let writeLocalName = HCICommand(ogf: 0x03, ocf: 0x0013)
    static let readLocalName = HCICommand(ogf: 0x03, ocf: 0x0014)

    /// Linux monitor opcode 10, Index Info (BlueZ `src/shared/btsnoop.h`, BTSNOOP_OPCODE_INDEX_INFO).
    static let monitorIndexInfo: UInt32 = 10

    /// A Linux monitor Index Info record: address(6) manufacturer(2, little-endian) (`struct
    /// btsnoop_opcode_index_info`). btmon writes it when it starts on a controller already up, so captures that
    /// never show Read Local Version Information still name the maker. A later Read Local Version wins.
    func monitor(_ record: CaptureRecord) {
        guard record.rawType == Self.monitorIndexInfo else { return }
        var r = record.reader
        guard r.remaining >= 8, (try? r.skip(6)) != nil, let raw = try? UInt16(parsingLittleEndian: &r) else { return }
        let controller = record.controllerIndex
        if identities[controller]?.source == .readLocalVersionInformation { return }
        identities[controller] = ControllerIdentity(
            controller: controller, manufacturer: ControllerManufacturer(raw), version: nil, frame: record.frame,
            source: .monitorIndexInfo)
    }

    // MARK: the end

    /// What the pass leaves: commands never answered, quality reports no link claimed.
    func finish(lastTimestamp: Timestamp? = nil) {
        if let f = vendorTally.reportsWithoutLinkFinding() { sink.findings.append(f) }
        for pending in commands.takeUnanswered() where !answeredBeforeItWasLogged(pending) {
            // The log ended within the time-out after it: its answer may simply not be in the capture (BTstack's HFP logs:
            // the Disconnect sent 170 µs before the log's last record).
            if let last = lastTimestamp, last.microseconds(since: pending.timestamp) <= hciCommandTimeoutMicroseconds {
                sink.findings.append(Finding(.info, .commandCutShort(by: "the end of the capture"), frame: pending.frame))
                // CQ-03 tells of it from the evidence (and HH-01 leaves a command the capture ended on to it).
                unansweredEvidence(pending)
                continue
            }
            unanswered(pending)
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

    /// The connection handle the command is about: ``connectionHandle``, or the handle field of its declared parameter
    /// set (Sniff Mode, Exit Sniff Mode, Write Link Supervision Timeout…).
    var handleParameter: UInt16? {
        if let handle = connectionHandle { return handle }
        // The Link Policy commands that name a link first (Vol 4, Part E, 7.2: Hold, Sniff, Exit Sniff, QoS Setup,
        // Role Discovery, Read/Write Link Policy Settings, Flow Specification, Sniff Subrating).
        if opcode.ogf == 0x02, [0x01, 0x03, 0x04, 0x07, 0x09, 0x0C, 0x0D, 0x10, 0x11].contains(opcode.ocf), parameters.count >= 2 {
            return (UInt16(parameters[0]) | UInt16(parameters[1]) << 8) & 0x0FFF
        }
        guard case .declared(let set) = decoded else { return nil }
        return set.connectionHandle
    }
}
