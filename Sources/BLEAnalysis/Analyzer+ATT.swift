import BLECodecs
import BLECore
import BLEProtocols

/// The ATT path of one PDU, in one file: read once (``ATTView``), counted on its link, its evidence noted, then either
/// delivered in place (a statistics pass's values, a timeline's notifications and write commands) or decoded, paired
/// and applied (`Analyzer+ATTPairing.swift`, `Analyzer+ATTApply.swift`); its attribute named and its value decoded and
/// handed to the observers (below). A notification goes record → `Analyzer.process` → `Analyzer+ACL.swift` → here →
/// `Analyzer.emit` and the observers: three files.
extension Analyzer {
    // MARK: ATT

    /// One ATT PDU of an open connection, whose decoding state is `state` (the caller's reference keeps it for the call:
    /// taking it non-optional, not looked up again here, saved a reference count per PDU).
    func processATT(_ input: ATTInput, connection index: Int, state: ConnectionState) {
        let direction = input.direction, timestamp = input.timestamp
        // Read once (``ATTView``): what every step below reads of the PDU.
        guard let pdu = ATTView(input.payload) else {
            findings.append(Finding(.warning, .init(code: "att.empty", message: "empty ATT PDU"), frame: input.frame))
            return
        }
        let opcode = pdu.opcode, frame = input.frame
        counters.attPDUs += 1
        counters.attByOpcode[Int(opcode.rawValue)] += 1
        // The evidence reads the LE fixed bearer's PDUs (what the rules look at).
        var noting = false
        if options.evidence, case .fixed = input.bearer { noting = true }
        connections[index].machine.feed(att: pdu, frame: frame, direction: direction, activity: noting)
        if noting { noteATT(pdu, direction: direction, connection: index, state: state, frame: frame, timestamp: timestamp) }
        let method = opcode.method
        let db = Self.serverDatabase(method, direction)
        // A statistics pass does not decode the bulk of real traffic (notifications, indications, writes): the table says
        // where such a PDU holds its value (``ATTView/span``), and it goes to the observers from there.
        let readInPlace = !options.timeline && pdu.carriesValue
        let inPlace = readInPlace ? pdu.span : nil
        let valueOnly = inPlace != nil && (method == .notification || method == .command)
        if valueOnly {
            // Nothing to pair and no event to build.
            checkMTU(opcode, size: pdu.size, connection: index, state: state, bearer: input.bearer, frame: frame)
            // Nobody looks at the value: return before the context is built (it holds `state`, one reference count).
            if observers.isEmpty && options.codecs == nil { return }
        }
        let context = ATTContext(
            connection: index, state: state, db: db, direction: direction, frame: frame, timestamp: timestamp,
            l2capBytes: input.l2capBytes)
        if let inPlace, valueOnly {
            // No `TimelineEvent?` to pass: a nil one was 333 bytes set and copied per value
            // (docs/performance.md#analyzer-att).
            _ = decodeAndDeliver(
                pdu.value, kind: ValueKind(carriedBy: opcode), handle: inPlace.handle, typeHint: nil, in: context)
            return
        }
        // The bulk of a timeline: notifications and write commands built from the bytes in place (below).
        if options.timeline, opcode == .handleValueNotification || opcode == .writeCommand, let span = pdu.span {
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
        let state = context.state, frame = input.frame, handle = span.handle, opcode = pdu.opcode
        checkMTU(opcode, size: pdu.size, connection: context.connection, state: state, bearer: input.bearer, frame: frame)
        let value = pdu.value
        var e = TimelineEvent(
            frame: frame, timestamp: input.timestamp, connection: state.handle, direction: input.direction, layer: .att,
            code: UInt32(opcode.rawValue), name: Self.opcodeNames[Int(opcode.rawValue)], summaryHandle: handle)
        e.handle = handle
        e.value = Array(value)
        e.connectionNumber = state.number
        e.bearer = state.bearerKind(input.bearer)
        e.cid = input.cid
        // Asked once for the name and the delivery (asked twice, ``attribute(_:handle:db:state:)`` showed in profiles:
        // docs/performance.md#analyzer-att); `state` is `table.states[context.connection]`, which
        // ``nameAttribute(_:handle:connection:db:)`` looks up again.
        let info = attribute(context.connection, handle: handle, db: context.db, state: state)
        nameAttribute(&e, handle: handle, info: info, connection: context.connection, db: context.db)
        // ``deliverValue(_:kind:handle:typeHint:in:event:)`` on an event that has no decoded value yet.
        if !(observers.isEmpty && options.codecs == nil),
            let decoded = decodeAndDeliver(
                value, kind: ValueKind(carriedBy: opcode), handle: handle, typeHint: nil, info: info, in: context)?.value
        {
            e.decoded = decoded
        }
        if opcode == .writeCommand, value.count == 2,
            let note = cccdNote(handle, value[0], value[1], connection: context.connection, db: context.db)
        {
            e.summary += note
        }
        emit(e)
    }

    /// The rest of ``processATT(_:connection:state:)``: decode, timeline event, pairing, state changes. Kept out of line so
    /// the bulk of a statistics pass (above) does not pay for this part's large stack frame.
    @inline(never)
    func decodeAndApplyATT(
        _ input: ATTInput, pdu: ATTView, method: ATTMethodType, decode: Bool, in context: ATTContext
    ) {
        let payload = input.payload, direction = input.direction, frame = input.frame, opcode = pdu.opcode
        let state = context.state, bearer = input.bearer
        // A statistics pass reads a value-carrying PDU's value in place (``ATTView/span``) instead of decoding it.
        let inPlace = decode ? nil : pdu.span

        checkMTU(opcode, size: payload.count, connection: context.connection, state: state, bearer: input.bearer, frame: frame)

        // Decoded once, typed, unless read in place above (a value PDU shorter than the table's minimum is then
        // left alone, as a statistics pass has always done).
        var typed: ATTPDU? = nil
        if decode {
            var reader = ByteReader(payload)
            do {
                typed = try ATTPDU(parsing: &reader)
            } catch {
                findings.append(Finding(.warning, .malformed("ATT \(opcode)", error), frame: frame))
            }
        }

        // Built by a function that returns it, straight into `event`: built here and assigned, it was copied (memcpy)
        // several more times per PDU.
        var event: TimelineEvent? =
            options.timeline
            ? attEvent(typed, opcode: opcode, input: input, bearerKind: state.bearerKind(bearer), in: context) : nil

        let transaction = ATTTransactions.Input(
            opcode: opcode, method: method, pdu: typed, payload: payload, direction: direction, frame: frame, timestamp: input.timestamp)
        let responseTo = pairATT(
            state.feedTransaction(transaction, bearer: bearer), typed, opcode: opcode, input: input, in: context, event: &event)

        if opcode == .errorResponse {
            noteATTError(
                pdu, direction: direction, requestFrame: responseTo?.frame, connection: context.connection, frame: frame,
                timestamp: input.timestamp)
        }
        if let typed {
            applyATT(typed, bearer: bearer, request: responseTo, in: context, event: &event)
        } else if let inPlace {
            // A request or indication read in place (statistics pass): paired above, its value goes to the observers.
            deliverValue(pdu.value, kind: ValueKind(carriedBy: opcode), handle: inPlace.handle, in: context, event: &event)
        }
        // Moved out (`take()`), not copied: see ``emit(_:waiting:)``.
        if let e = event.take() {
            let tkey = TransactionKey(direction: direction, indication: opcode == .handleValueIndication)
            if e.isRequest, state[bearer: bearer].transactions.isOutstanding(tkey, frame: frame) {
                let id = emit(e, waiting: true)
                state[bearer: bearer].transactions.setEventID(id, for: tkey)
            } else {
                emit(e)
            }
        }
    }

    /// The timeline event of one ATT PDU, before pairing and ``applyATT(_:bearer:request:in:event:)`` add to it: its
    /// text (``attEventText(_:opcode:input:bearerKind:state:)``), its attribute named.
    func attEvent(_ typed: ATTPDU?, opcode: ATTOpcode, input: ATTInput, bearerKind: ATTBearerKind, in context: ATTContext)
        -> TimelineEvent
    {
        var e = Self.attEventText(typed, opcode: opcode, input: input, bearerKind: bearerKind, state: context.state)
        if let h = e.handle { nameAttribute(&e, handle: h, connection: context.connection, db: context.db) }
        return e
    }

    /// A PDU longer than the ATT_MTU of its bearer (``ATTMTUCheck``): a finding, or, when the link's MTU was only assumed
    /// or inferred, the larger MTU the PDU proves.
    @inline(__always)
    func checkMTU(
        _ opcode: ATTOpcode, size: Int, connection index: Int, state: ConnectionState, bearer slot: ATTBearerSlot = .fixed, frame: Int
    ) {
        let verdict =
            if case .dynamic(let b) = slot {
                ATTMTUCheck.judge(size: size, bearer: state.bearers[b])
            } else {
                ATTMTUCheck.judge(size: size, link: table.connections[index].link.mtu)
            }
        switch verdict {
        case .fits:
            return
        case .provesLargerMTU:
            feedLink(
                .mtu(size), connection: index, frame: frame, timestamp: lastTimestamp,
                source: .inferred(.largestATTPDU(frame: frame, bytes: size)))
        case .exceeds(let mtu, let bearer):
            findings.append(Finding(.warning, .attPDUExceedsMTU(opcode, size: size, mtu: mtu, bearer: bearer), frame: frame))
        }
    }
}

extension Analyzer {
    /// Names a handle in an event from the connection's GATT database.
    func nameAttribute(_ e: inout TimelineEvent, handle: UInt16, connection index: Int, db: GATTSide) {
        guard let state = table.states[index] else { return }
        nameAttribute(&e, handle: handle, info: attribute(index, handle: handle, db: db, state: state), connection: index, db: db)
    }

    /// Names a handle in an event from what ``attribute(_:handle:db:state:)`` said of it.
    @inline(__always)
    func nameAttribute(_ e: inout TimelineEvent, handle: UInt16, info: AttributeInfo, connection index: Int, db: GATTSide) {
        let userName = info.hasUserName ? connections[index][database: db].userNames[handle] : nil
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
        if observers.isEmpty && options.codecs == nil { return }
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
            info: attribute(context.connection, handle: handle, db: context.db, state: context.state), in: context)
    }

    /// ``decodeAndDeliver(_:kind:handle:typeHint:in:)`` with what ``attribute(_:handle:db:state:)`` said of the handle,
    /// for a caller that asked already (``processValuePDU(_:opcode:span:in:)``).
    @inline(__always)
    func decodeAndDeliver(
        _ value: UnsafeRawBufferPointer, kind: ValueKind, handle: UInt16, typeHint: BluetoothUUID?, info: AttributeInfo,
        in context: ATTContext
    ) -> DecodedBox? {
        let state = context.state, db = context.db
        // Rare (a write request, or values while a CCCD write waits for its notifications): out of line.
        if kind == .writeRequest || !state.cccdCandidates.isEmpty { learnCCCD(value, kind: kind, handle: handle, in: context) }
        let characteristic = typeHint ?? info.uuid
        // Bound only when needed: binding the registry costs a reference count per value.
        let decoded =
            options.codecs != nil && (typeHint != nil || info.codecPossible)
            ? decode(value, kind: kind, handle: handle, characteristic: characteristic, service: info.service, in: context) : nil
        guard !observers.isEmpty else { return decoded }
        // The event is still copied once per value to go through the observers' existential (an outlined copy and two
        // destroys): built in an out-of-line `deliver` from its parts, or passed to one `borrowing` or `consuming`, it
        // was copied all the same and cost more (docs/performance.md#analyzer-att).
        let event = AttributeValueEvent(
            frame: context.frame, timestamp: context.timestamp, connection: state.handle, connectionNumber: state.number,
            direction: context.direction, kind: kind, handle: handle, characteristic: characteristic, service: info.service,
            decodedBox: decoded, l2capBytes: context.l2capBytes, link: linkSnapshot(context.connection), serverIsPeer: db == .peer)
        for i in observers.indices { observers[i].observe(event, value: value.bytes) }
        return decoded
    }

    /// A CCCD told by the traffic where no discovery named it (Core Spec Vol 3, Part G, 3.3.3.3, and the usual layout
    /// of 3.3: the descriptor follows its characteristic's value): a two-byte write of 01 00, 02 00 or 03 00 to a
    /// handle, then notifications (bit 0) or indications (bit 1) of the handle before it. Learned into the database
    /// with how (``GATTDatabase/learn(_:for:how:frame:)``).
    @inline(never)
    func learnCCCD(_ value: UnsafeRawBufferPointer, kind: ValueKind, handle: UInt16, in context: ATTContext) {
        let state = context.state, index = context.connection
        switch kind {
        case .writeRequest:
            guard value.count == 2, value[1] == 0, (1...3).contains(value[0]),
                connections[index][database: context.db].uuid(for: handle) == nil, state.cccdCandidates.count < 64
            else { return }
            state.cccdCandidates[handle] = (context.frame, value[0])
        case .notification, .indication:
            let cccd = handle &+ 1
            guard let write = state.cccdCandidates[cccd], write.bits & (kind == .notification ? 1 : 2) != 0 else { return }
            state.cccdCandidates[cccd] = nil
            let what = kind == .notification ? "notifications" : "indications"
            connections[index][database: context.db].learn(
                BluetoothUUID(uuid16: GATTAttributeType.clientCharacteristicConfiguration), for: cccd,
                how:
                    "a write of \(hexString([write.bits])) 00 at frame \(write.frame), then \(what) of \(hex(handle, width: 4)) at frame \(context.frame)",
                frame: write.frame)
            state.forgetAttributes()
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
        guard let codecs = options.codecs else { return nil }
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
            findings.append(
                Finding(
                    .warning,
                    .init(
                        code: "codec.invalid",
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
