import BLECodecs
import BLECore
import BLEProtocols

extension ConnectionMachine {
    /// State changes and value delivery for a decoded ATT PDU: the MTU exchange, what the ``GATTLearner`` learns, the
    /// value for the observers, and the bearer's long reads and queued writes.
    func applyATT(
        _ pdu: ATTPDU, bearer slot: ATTBearerSlot, request: ATTTransaction?, in context: ATTContext, event: inout TimelineEvent?
    ) {
        switch pdu {
        case .exchangeMTURequest, .exchangeMTUResponse:
            exchangeMTU(pdu, bearer: slot, answering: request, in: context, event: &event)
        case .readByGroupTypeResponse, .findByTypeValueResponse, .readByTypeResponse, .findInformationResponse,
            .handleValueIndication:
            learnGATT(pdu, request: request, in: context, event: &event)
        default:
            deliverValues(pdu, request: request, in: context, event: &event)
        }
        // Long reads and queued writes, assembled per bearer.
        let read = LongReadAssembler.Input(
            pdu: pdu, requestHandle: request?.handle, requestFrame: request?.frame ?? 0, frame: context.frame,
            direction: context.direction, mtu: attMTU(slot, connectionMTU: linkSnapshot.mtu))
        switch feedLongRead(read, bearer: slot) {
        case .longRead(let whole)?: finishLongRead(whole, in: context)
        case .blobPart(let h, let value)?:
            value.withUnsafeBytes { deliverValue($0, kind: .readBlobResponse, handle: h, in: context, event: &event) }
        case nil: break
        }
        if let writes = feedPreparedWrites(pdu, frame: context.frame, bearer: slot) {
            for write in writes { finishLongWrite(write, in: context) }
        }
    }

    /// Exchange MTU (Core Spec Vol 3, Part F, 3.4.2): each side's proposal kept on the bearer; on the LE fixed bearer the
    /// response to a request in the capture sets the connection's ATT_MTU, the smaller of the two and at least 23.
    func exchangeMTU(
        _ pdu: ATTPDU, bearer slot: ATTBearerSlot, answering request: ATTTransaction?, in context: ATTContext,
        event: inout TimelineEvent?
    ) {
        let kind = bearerKind(slot)
        switch pdu {
        case .exchangeMTURequest(let mtu):
            self[bearer: slot].clientMTU = Int(mtu)
            if kind != .leFixed {
                // Core Spec Vol 3, Part F, 3.4.2.1: not used on BR/EDR nor on an enhanced bearer (the L2CAP MTU rules).
                sink.findings.append(
                    Finding(
                        .warning,
                        .init(
                            .attMTUExchangeOnBearer,
                            message:
                                "ATT Exchange MTU Request on a \(kind) bearer, where ATT_MTU comes from the L2CAP channel: ignored"),
                        frame: context.frame))
            }
        case .exchangeMTUResponse(let mtu):
            self[bearer: slot].serverMTU = Int(mtu)
            if kind == .leFixed { recordMTUExchange(server: Int(mtu), client: self[bearer: slot].clientMTU, request, in: context) }
            if request != nil, kind == .leFixed {
                let effective = max(23, min(self[bearer: slot].clientMTU ?? Int(mtu), Int(mtu)))
                feedLink(.mtu(effective), frame: context.frame, timestamp: context.timestamp)
                event?.summary += " → ATT_MTU \(effective)"
            }
        default:
            break
        }
    }

    /// A PDU the ``GATTLearner`` reads (discovery responses, indications): the database it serves learns, what names
    /// its handles is looked up again, values of a Read By Type and the indicated value go to the observers.
    func learnGATT(_ pdu: ATTPDU, request: ATTTransaction?, in context: ATTContext, event: inout TimelineEvent?) {
        let learnt = GATTLearner.feed(.init(pdu: pdu, request: request, frame: context.frame), into: &connection[database: context.db])
        switch learnt {
        case .discovered?:
            forgetAttributes()
            if event != nil { describeDiscovery(pdu, request: request, event: &event) }
        case .serviceChanged(let start, let end)?:
            forgetAttributes()
            event?.summary += "  (Service Changed: \(hex(start, width: 4))–\(hex(end, width: 4)) to be rediscovered)"
        case .values(let type)?:
            guard case .readByTypeResponse(let items) = pdu else { break }
            for item in items {
                // Read Using Characteristic UUID (Core Spec Vol 3, Part G, 4.8.2): the handle holds a value of the type.
                connection[database: context.db].learn(
                    type, for: item.handle, how: "a Read By Type for \(type) answered at frame \(context.frame)", frame: context.frame)
                forgetAttributes()
                readPeerName(item.value, handle: item.handle, typeHint: type, room: linkSnapshot.mtu - 4, in: context)
                item.value.withUnsafeBytes { raw in
                    deliverValue(raw, kind: .readResponse, handle: item.handle, typeHint: type, in: context, event: &event)
                }
            }
        case nil:
            break
        }
        if case .handleValueIndication(let h, let v) = pdu {
            v.withUnsafeBytes { deliverValue($0, kind: .indication, handle: h, in: context, event: &event) }
        }
    }

    /// A discovery response's timeline text and JSON: its items named, as Wireshark shows them (``ATTDiscovery``).
    func describeDiscovery(_ pdu: ATTPDU, request: ATTTransaction?, event: inout TimelineEvent?) {
        guard let items = ATTDiscovery.attributes(pdu, requestType: request?.type, typeValue: request?.typeValue ?? []),
            !items.isEmpty
        else { return }
        event?[extra: TimelineEvent.discovered] = items
        event?.summary = items.map(\.text).joined(separator: ", ")
    }

    /// The value a PDU carries, to the observers (a write's CCCD meaning to the event).
    func deliverValues(_ pdu: ATTPDU, request: ATTTransaction?, in context: ATTContext, event: inout TimelineEvent?) {
        let db = context.db
        switch pdu {
        case .handleValueNotification(let h, let v):
            v.withUnsafeBytes { deliverValue($0, kind: .notification, handle: h, in: context, event: &event) }
        case .writeRequest(let h, let v):
            v.withUnsafeBytes { deliverValue($0, kind: .writeRequest, handle: h, in: context, event: &event) }
            describeCCCD(h, v, db: db, event: &event)
        case .writeCommand(let h, let v):
            v.withUnsafeBytes { deliverValue($0, kind: .writeCommand, handle: h, in: context, event: &event) }
            describeCCCD(h, v, db: db, event: &event)
        case .signedWriteCommand(let h, let v, _):
            v.withUnsafeBytes { deliverValue($0, kind: .signedWriteCommand, handle: h, in: context, event: &event) }
        case .multipleHandleValueNotification(let items):
            for item in items {
                item.value.withUnsafeBytes { deliverValue($0, kind: .notification, handle: item.handle, in: context, event: &event) }
            }
        case .readResponse(let value):
            guard let h = request?.handle else { break }
            readPeerName(value, handle: h, typeHint: nil, room: linkSnapshot.mtu - 1, in: context)
            value.withUnsafeBytes { deliverValue($0, kind: .readResponse, handle: h, in: context, event: &event) }
        case .errorResponse(let err):
            event?.status = err.error.description
        default:
            break
        }
    }

    /// A long read that ended: a "Long Read" event and the whole value for the observers.
    func finishLongRead(_ read: LongReadAssembler.LongRead, in context: ATTContext) {
        let frame = context.frame, timestamp = context.timestamp
        var event: TimelineEvent? = nil
        if sink.timeline {
            var e = TimelineEvent(
                frame: frame, timestamp: timestamp, connection: handle, direction: read.direction,
                layer: .att, code: nil, name: "Long Read",
                summary: "handle=\(hex(read.handle, width: 4)) \(read.value.count) bytes from frames "
                    + read.frames.map(String.init).joined(separator: ","))
            e.handle = read.handle
            e.value = read.value
            nameAttribute(&e, handle: read.handle, db: context.db)
            event = e
        }
        var assembled = context
        assembled.direction = read.direction
        assembled.l2capBytes = 0
        read.value.withUnsafeBytes { deliverValue($0, kind: .longRead, handle: read.handle, in: assembled, event: &event) }
        if let e = event { emit(e) }
    }

    /// A value an Execute Write wrote: a finding for each part out of place, a "Long Write" event, the value for the observers.
    func finishLongWrite(_ write: PreparedWriteAssembler.LongWrite, in context: ATTContext) {
        let frame = context.frame, h = write.handle
        for gap in write.gaps {
            sink.findings.append(
                Finding(
                    .warning,
                    .init(
                        .attPreparedWriteGap,
                        message: "Prepare Write on \(hex(h, width: 4)) at offset \(gap.offset), expected \(gap.expected)"), frame: gap.frame
                ))
        }
        var e: TimelineEvent? = nil
        if sink.timeline {
            var ev = TimelineEvent(
                frame: frame, timestamp: context.timestamp, connection: handle, direction: context.direction,
                layer: .att, code: nil, name: "Long Write",
                summary: "handle=\(hex(h, width: 4)) \(write.value.count) bytes from frames "
                    + (write.frames + [frame]).map(String.init).joined(separator: ","))
            ev.handle = h
            ev.value = write.value
            nameAttribute(&ev, handle: h, db: context.db)
            e = ev
        }
        var assembled = context
        assembled.l2capBytes = 0
        write.value.withUnsafeBytes { deliverValue($0, kind: .longWrite, handle: h, in: assembled, event: &e) }
        if let e { emit(e) }
    }

    /// "notifications on/off" for writes to a Client Characteristic Configuration descriptor (Core Vol 3, Part G, 3.3.3.3).
    func describeCCCD(_ handle: UInt16, _ value: [UInt8], db: GATTSide, event: inout TimelineEvent?) {
        guard event != nil, value.count == 2, let note = cccdNote(handle, value[0], value[1], db: db) else { return }
        event?.summary += note
    }

    /// ``describeCCCD(_:_:db:event:)``'s text for a two-byte value `low`, `high`; nil when `handle` is no CCCD.
    func cccdNote(_ handle: UInt16, _ low: UInt8, _ high: UInt8, db: GATTSide) -> String? {
        GATTLearner.cccdWrite(handle: handle, low, high, in: connection[database: db])?.note
    }
}
