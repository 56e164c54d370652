import BLECodecs
import BLECore
import BLEProtocols

/// A link's hot path, in one file: a fragment reassembled, the whole PDU through the ``ChannelMux``, an ATT PDU read
/// once (``ATTView``), counted on its link, its evidence noted, then either delivered in place (a statistics pass's
/// values, a timeline's notifications and write commands) or decoded, paired and applied
/// (`ConnectionMachine+ATTApply.swift`, `ConnectionMachine+ATTPairing.swift`); its attribute named and its value
/// decoded and handed to the observers. A notification goes record → `Analyzer.processACL` (`ACLPath.swift`) →
/// here → ``AnalysisSink/emit(_:waiting:)`` and ``AnalysisSink/deliver(_:value:)`` (`AnalysisSink.swift`): three files.
extension ConnectionMachine {
    /// One ACL fragment of the link, sent in `direction`, at the time of the record `now`: reassembled, and each whole
    /// PDU on through the link's channels.
    @inline(__always)
    func feed(_ fragment: L2CAPFragment, direction: Direction, now: Timestamp) {
        self.now = now
        reassemble(fragment, direction: direction)
    }

    /// One fragment into its stream's reassembler; whole PDUs go on to L2CAP dispatch.
    @inline(__always)
    func reassemble(_ fragment: L2CAPFragment, direction: Direction) {
        var reassemblyFindings: [Finding] = []
        // A PDU in one fragment (most of them) comes back as a value: no closure, whose captures were retained and
        // released per PDU even when captured `unowned(unsafe)` (see docs/performance.md#l2cap-reassembler).
        switch feedReassembler(fragment, direction: direction, findings: &reassemblyFindings) {
        case .pending:
            break
        case .whole(let pdu):
            processL2CAP(pdu, direction: direction, timestamp: fragment.timestamp)
        case .reassembled:
            deliverReassembled(direction: direction) { pdu in
                processL2CAP(pdu, direction: direction, timestamp: fragment.timestamp)
            }
        case .cut(let kept):
            noteCutPDU(kept, direction: direction, timestamp: fragment.timestamp)
        case .cutReassembled:
            deliverCut(direction: direction) { kept in
                noteCutPDU(kept, direction: direction, timestamp: fragment.timestamp)
            }
        }
        if !reassemblyFindings.isEmpty {
            for f in reassemblyFindings { decode.countReassembly(f) }
            // A PDU cut by the capturer is counted (decode health) and the cut said once (hci.acl-cut-by-capturer,
            // the completeness verdict): one finding per cut PDU would bury the others in a filtered log.
            sink.findings += reassemblyFindings.filter { $0.kind.code != .l2capCutByCapturer }
        }
    }

    /// One whole L2CAP PDU of the link: its ``ChannelMux`` says what it is, and this hands it on (ATT, SMP, the
    /// signalling's changes, K-frames and their SDUs) and counts it for the decode health.
    ///
    /// Kept small enough to be inlined into the reassembly loop: ATT (the bulk of every capture) is handed on here, the
    /// rest out of line (``routeChannelOutput(_:pdu:direction:timestamp:)``). Out of line as one function it cost
    /// about 28 instructions per PDU (callgrind, `info` of a 1 M-record capture: +2.3 %).
    @inline(__always)
    func processL2CAP(_ pdu: L2CAPPDU, direction: Direction, timestamp: Timestamp) {
        sink.counters.l2capPDUs += 1
        decode.l2capPDUs &+= 1
        if !transportKnown { learnTransport(channel: pdu.channel, frame: pdu.lastFrame, timestamp: timestamp) }
        let output = channels.feed(pdu, direction: direction, timestamp: timestamp)
        guard case .att(let bearer) = output else {
            routeChannelOutput(output, pdu: pdu, direction: direction, timestamp: timestamp)
            return
        }
        deliverATT(pdu, bearer: bearer, direction: direction, timestamp: timestamp)
    }

    /// An ATT PDU, the L2CAP PDU's payload, to its bearer.
    @inline(__always)
    func deliverATT(_ pdu: L2CAPPDU, bearer: ATTBearerSlot, direction: Direction, timestamp: Timestamp) {
        decode.att &+= 1
        processATT(
            ATTInput(
                payload: pdu.payload, frame: pdu.lastFrame, l2capBytes: pdu.bytes.count, direction: direction,
                timestamp: timestamp, cid: pdu.channel, bearer: bearer))
    }

    // MARK: ATT

    /// One ATT PDU of the link.
    func processATT(_ input: ATTInput) {
        let direction = input.direction, timestamp = input.timestamp
        // Read once (``ATTView``): what every step below reads of the PDU.
        guard let pdu = ATTView(input.payload) else {
            sink.findings.append(Finding(.warning, .init(.attEmpty, message: "empty ATT PDU"), frame: input.frame))
            return
        }
        let opcode = pdu.opcode, frame = input.frame
        sink.counters.attPDUs += 1
        sink.counters.attByOpcode[Int(opcode.rawValue)] += 1
        // The evidence reads the LE fixed bearer's PDUs (what the rules look at).
        var noting = false
        if sink.recordsEvidence, case .fixed = input.bearer { noting = true }
        connection.machine.feed(
            att: pdu, at: LinkActivity.Moment(frame: frame, timestamp: timestamp), direction: direction, activity: noting)
        if noting { noteATT(pdu, direction: direction, frame: frame, timestamp: timestamp) }
        let method = opcode.method
        let db = Self.serverDatabase(method, direction)
        // A statistics pass does not decode the bulk of real traffic (notifications, indications, writes): the table says
        // where such a PDU holds its value (``ATTView/span``), and it goes to the observers from there.
        let readInPlace = !sink.timeline && pdu.carriesValue
        let inPlace = readInPlace ? pdu.span : nil
        let valueOnly = inPlace != nil && (method == .notification || method == .command)
        if valueOnly {
            // Nothing to pair and no event to build.
            checkMTU(opcode, size: pdu.size, bearer: input.bearer, frame: frame)
            // Nobody looks at the value: return before the context is built.
            if sink.observers.isEmpty && capture.codecs == nil { return }
        }
        let context = ATTContext(db: db, direction: direction, frame: frame, timestamp: timestamp, l2capBytes: input.l2capBytes)
        if let inPlace, valueOnly {
            // No `TimelineEvent?` to pass: a nil one was 333 bytes set and copied per value
            // (docs/performance.md#analyzer-att).
            _ = decodeAndDeliver(
                pdu.value, kind: ValueKind(carriedBy: opcode), handle: inPlace.handle, typeHint: nil, in: context)
            return
        }
        // The bulk of a timeline: notifications and write commands built from the bytes in place (below).
        if sink.timeline, opcode == .handleValueNotification || opcode == .writeCommand, let span = pdu.span {
            processValuePDU(input, pdu: pdu, span: span, in: context)
            return
        }
        decodeAndApplyATT(input, pdu: pdu, method: method, decode: !readInPlace, in: context)
    }

    /// A Handle Value Notification or Write Command of a timeline pass (at least opcode and handle, so the typed decoder
    /// would take it): the event and the value read where the table's ``ATTValueLayout`` says, without the typed
    /// ``ATTPDU``. What the general path does for these two, in the same order: no pairing (neither is a request nor a
    /// response), the event ``attEvent(_:opcode:input:bearerKind:in:)`` builds (summary `handle=…`, the handle named,
    /// no list), the value delivered, a write command's CCCD described; the long-read and prepared-write assemblers
    /// ignore both (a long read ends only on a request). The typed enum, moved between the decoder, the event, the
    /// ``applyATT(_:bearer:request:in:event:)`` switch and the assemblers' inputs, was most of the decoding thread's
    /// `memmove` (see docs/performance.md#analyzer-att).
    @inline(never)
    func processValuePDU(_ input: ATTInput, pdu: ATTView, span: ATTValueSpan, in context: ATTContext) {
        let frame = input.frame, handle = span.handle, opcode = pdu.opcode
        checkMTU(opcode, size: pdu.size, bearer: input.bearer, frame: frame)
        let value = pdu.value
        var e = TimelineEvent(
            frame: frame, timestamp: input.timestamp, connection: self.handle, direction: input.direction, layer: .att,
            code: UInt32(opcode.rawValue), name: Self.opcodeNames[Int(opcode.rawValue)], summaryHandle: handle)
        e.handle = handle
        if capture.eventValues { e.value = Array(value) }
        e.connectionNumber = number
        e.bearer = bearerKind(input.bearer)
        e.cid = input.cid
        // Asked once for the name and the delivery (asked twice, ``attribute(handle:db:)`` showed in profiles:
        // docs/performance.md#analyzer-att).
        let info = attribute(handle: handle, db: context.db)
        nameAttribute(&e, handle: handle, info: info, db: context.db)
        // ``deliverValue(_:kind:handle:typeHint:in:event:)`` on an event that has no decoded value yet.
        if !(sink.observers.isEmpty && capture.codecs == nil),
            let decoded = decodeAndDeliver(
                value, kind: ValueKind(carriedBy: opcode), handle: handle, typeHint: nil, info: info, in: context)?.value
        {
            e.decoded = decoded
        }
        if opcode == .writeCommand, value.count == 2,
            let note = cccdNote(handle, value[0], value[1], db: context.db)
        {
            e.summary += note
        }
        emit(e)
    }

    /// A PDU longer than the ATT_MTU of its bearer (``ATTMTUCheck``): a finding, or, when the link's MTU was only assumed
    /// or inferred, the larger MTU the PDU proves.
    @inline(__always)
    func checkMTU(_ opcode: ATTOpcode, size: Int, bearer slot: ATTBearerSlot = .fixed, frame: Int) {
        let verdict: ATTMTUCheck.Verdict
        if case .dynamic(let b) = slot {
            verdict = ATTMTUCheck.judge(size: size, bearer: bearers[b])
        } else {
            // The fact handed over only for a PDU longer than its value: handed over each time, its history was retained
            // and released per ATT PDU (docs/performance.md#link-state).
            guard let mtu = connection.link.mtu.value, size > mtu else { return }
            verdict = ATTMTUCheck.judge(size: size, link: connection.link.mtu)
        }
        switch verdict {
        case .fits:
            return
        case .provesLargerMTU:
            feedLink(.mtu(size), frame: frame, timestamp: now, source: .inferred(.largestATTPDU(frame: frame, bytes: size)))
        case .exceeds(let mtu, let bearer):
            sink.findings.append(Finding(.warning, .attPDUExceedsMTU(opcode, size: size, mtu: mtu, bearer: bearer), frame: frame))
        }
    }

    /// The evidence in an ATT PDU of the link (its activity is the link machine's, ``LinkActivity``): a CCCD
    /// written, a Service Changed indication, a BASS source removed. Only the rare PDUs go further than a comparison.
    @inline(__always)
    func noteATT(_ pdu: ATTView, direction: Direction, frame: Int, timestamp: Timestamp) {
        guard pdu.size == 5 || pdu.size == 7, let handle = pdu.handle else { return }
        let value = pdu.value
        if pdu.opcode == .handleValueIndication {
            guard direction == .rx, pdu.size == 7 else { return }
            noteServiceChanged(value, handle: handle, frame: frame, timestamp: timestamp)
        } else if pdu.isWrite, pdu.size == 5 {
            if direction == .tx {
                noteCCCDWrite(
                    handle, value: UInt16(value[0]) | UInt16(value[1]) << 8, byCommand: pdu.opcode == .writeCommand,
                    frame: frame, timestamp: timestamp)
            } else if value[0] == Self.removeSourceOpcode {
                // The peer's 2-byte write 05 xx may be a BASS Remove Source: only then is the database asked.
                noteSourceRemoved(handle, sourceID: value[1], frame: frame, timestamp: timestamp)
            }
        }
    }

    @inline(__always)
    func attribute(handle: UInt16, db: GATTSide) -> AttributeInfo {
        let key = UInt32(handle) | (db == .peer ? 0 : 0x10000)
        if lastAttributeKey == key { return lastAttribute }
        let info = attributeLookedUp(key: key, handle: handle, db: db)
        lastAttributeKey = key
        lastAttribute = info
        return info
    }

    /// Hands a timeline event of the link to the sink, with the link's number.
    @discardableResult
    @inline(__always)
    func emit(_ event: consuming TimelineEvent, waiting: Bool = false) -> Int {
        if event.connectionNumber == nil { event.connectionNumber = number }
        return sink.emit(event, waiting: waiting)
    }
}

extension ConnectionMachine {
    /// Names a handle in an event from the connection's GATT database.
    func nameAttribute(_ e: inout TimelineEvent, handle: UInt16, db: GATTSide) {
        nameAttribute(&e, handle: handle, info: attribute(handle: handle, db: db), db: db)
    }

    /// Names a handle in an event from what ``attribute(handle:db:)`` said of it.
    @inline(__always)
    func nameAttribute(_ e: inout TimelineEvent, handle: UInt16, info: AttributeInfo, db: GATTSide) {
        let userName = info.hasUserName ? connection[database: db].userNames[handle] : nil
        guard userName != nil || info.uuid != nil else { return }
        // One change of the event's boxed fields (``TimelineEvent/updateDetails(_:)``) for all three.
        e.updateDetails { d in
            if let userName {
                d.attributeName = userName
                d.nameSource = .userMap
            }
            if let uuid = info.uuid {
                d.uuid = uuid
                if d.attributeName == nil {
                    d.attributeName = AssignedNumbers.name(for: uuid)
                    d.nameSource = info.source
                }
            }
        }
    }

    /// Decodes a value with the codecs and hands it to the observers.
    /// `typeHint`: the attribute type a Read By Type request asked for, where the database does not name the handle.
    @inline(__always)
    func deliverValue(
        _ value: UnsafeRawBufferPointer, kind: ValueKind, handle: UInt16, typeHint: BluetoothUUID? = nil,
        in context: ATTContext, event: inout TimelineEvent?
    ) {
        // Statistics-only passes: nobody looks at the value (checked here, inlined, so they do not pay for a call).
        if sink.observers.isEmpty && capture.codecs == nil { return }
        if let decoded = decodeAndDeliver(value, kind: kind, handle: handle, typeHint: typeHint, in: context)?.value, event != nil,
            event?.decoded == nil
        {
            event?.decoded = decoded
        }
    }

    /// Decodes a value with the codecs (if any) and hands it to the observers; returns what the codecs made of it.
    ///
    /// Returned boxed, the codecs' part out of line and the event built once into a `let`: returning a `DecodedValue?`
    /// (nil on a statistics pass) cost an outlined copy of the optional per value
    /// (see docs/performance.md#analyzer-att).
    func decodeAndDeliver(
        _ value: UnsafeRawBufferPointer, kind: ValueKind, handle: UInt16, typeHint: BluetoothUUID?, in context: ATTContext
    ) -> DecodedBox? {
        decodeAndDeliver(
            value, kind: kind, handle: handle, typeHint: typeHint,
            info: attribute(handle: handle, db: context.db), in: context)
    }

    /// ``decodeAndDeliver(_:kind:handle:typeHint:in:)`` with what ``attribute(handle:db:)`` said of the handle,
    /// for a caller that asked already (``processValuePDU(_:opcode:span:in:)``).
    @inline(__always)
    func decodeAndDeliver(
        _ value: UnsafeRawBufferPointer, kind: ValueKind, handle: UInt16, typeHint: BluetoothUUID?, info: AttributeInfo,
        in context: ATTContext
    ) -> DecodedBox? {
        let db = context.db
        // Rare (a write request, or values while a CCCD write waits for its notifications): out of line.
        if kind == .writeRequest || !cccdCandidates.isEmpty { learnCCCD(value, kind: kind, handle: handle, in: context) }
        let characteristic = typeHint ?? info.uuid
        // Bound only when needed: binding the registry costs a reference count per value.
        let decoded =
            capture.codecs != nil && (typeHint != nil || info.codecPossible)
            ? decode(value, kind: kind, handle: handle, characteristic: characteristic, service: info.service, in: context) : nil
        guard !sink.observers.isEmpty else { return decoded }
        // The event is still copied once per value to go through the observers' existential (an outlined copy and two
        // destroys): built in an out-of-line `deliver` from its parts, or passed to one `borrowing` or `consuming`, it
        // was copied all the same and cost more (docs/performance.md#analyzer-att).
        let event = AttributeValueEvent(
            frame: context.frame, timestamp: context.timestamp, connection: self.handle, connectionNumber: number,
            direction: context.direction, kind: kind, handle: handle, characteristic: characteristic, service: info.service,
            decodedBox: decoded, l2capBytes: context.l2capBytes, link: linkSnapshot, serverIsPeer: db == .peer)
        sink.deliver(event, value: value.bytes)
        return decoded
    }

    /// A CCCD told by the traffic where no discovery named it (Core Spec Vol 3, Part G, 3.3.3.3, and the usual layout
    /// of 3.3: the descriptor follows its characteristic's value): a two-byte write of 01 00, 02 00 or 03 00 to a
    /// handle, then notifications (bit 0) or indications (bit 1) of the handle before it. Learned into the database
    /// with how (``GATTDatabase/learn(_:for:how:frame:)``).
    @inline(never)
    func learnCCCD(_ value: UnsafeRawBufferPointer, kind: ValueKind, handle: UInt16, in context: ATTContext) {
        switch kind {
        case .writeRequest:
            guard value.count == 2, value[1] == 0, (1...3).contains(value[0]),
                connection[database: context.db].uuid(for: handle) == nil, cccdCandidates.count < 64
            else { return }
            cccdCandidates[handle] = (context.frame, value[0])
        case .notification, .indication:
            let cccd = handle &+ 1
            guard let write = cccdCandidates[cccd], write.bits & (kind == .notification ? 1 : 2) != 0 else { return }
            cccdCandidates[cccd] = nil
            let what = kind == .notification ? "notifications" : "indications"
            connection[database: context.db].learn(
                BluetoothUUID(uuid16: GATTAttributeType.clientCharacteristicConfiguration), for: cccd,
                how:
                    "a write of \(hexString([write.bits])) 00 at frame \(write.frame), then \(what) of \(hex(handle, width: 4)) at frame \(context.frame)",
                frame: write.frame)
            forgetAttributes()
        default:
            return
        }
    }

    /// The codecs' reading of a value (a finding when they call it invalid); out of line, as most values have no codec.
    @inline(never)
    func decode(
        _ value: UnsafeRawBufferPointer, kind: ValueKind, handle: UInt16, characteristic: BluetoothUUID?, service: BluetoothUUID?,
        in context: ATTContext
    ) -> DecodedBox? {
        guard let codecs = capture.codecs else { return nil }
        let operation: AttributeOperation =
            switch kind {
            case .notification: .notify
            case .indication: .indicate
            case .writeRequest, .longWrite, .prepareWrite: .write
            case .writeCommand, .signedWriteCommand: .writeCommand
            default: .read
            }
        let codecContext = CodecContext(
            service: service, characteristic: characteristic, handle: handle, direction: context.direction,
            operation: operation)
        guard let d = codecs.decode(value, context: codecContext) else { return nil }
        if !d.valid {
            sink.findings.append(
                Finding(
                    .warning,
                    .init(
                        .codecInvalid,
                        message: "\(d.codec).\(d.message) on handle \(hex(handle, width: 4)): "
                            + (d.problems.isEmpty ? "invalid" : d.problems.joined(separator: "; "))),
                    frame: context.frame))
        }
        return DecodedBox(d)
    }
}

extension ValueKind {
    /// How an observer sees the value of a PDU that carries one (``ATTOpcode/valueLayout``).
    init(carriedBy opcode: ATTOpcode) {
        self =
            switch opcode {
            case .handleValueNotification: .notification
            case .handleValueIndication: .indication
            case .writeRequest: .writeRequest
            case .signedWriteCommand: .signedWriteCommand
            default: .writeCommand
            }
    }
}
