import BLECodecs
import BLECore
import BLEProtocols

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
