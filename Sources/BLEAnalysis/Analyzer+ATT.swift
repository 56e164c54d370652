import BLECodecs
import BLECore
import BLEProtocols

/// ATT state of one connection (one bearer on the fixed channel 0x0004).
///
/// Core Spec Vol 3, Part F, 3.3.2: one outstanding request per client; its response comes back
/// the other way. Indications wait for their confirmation the same way.
struct TransactionKey: Hashable {
    var direction: Direction
    var indication: Bool

    /// Who sent the request (or indication): this side when it went host → controller.
    var sender: EvidenceEvent.Sender { direction == .rx ? .peer : .local }
}

/// Which kind of channel carries an ATT bearer (Core Spec Vol 3, Part F, 3.2.11; Part G, 5.2–5.3).
public enum ATTBearerKind: String, Hashable, Sendable, CustomStringConvertible {
    /// The LE fixed channel, CID 0x0004.
    case leFixed = "le-fixed"
    /// A BR/EDR connection-oriented channel to PSM 0x001F.
    case bredr
    /// An enhanced ATT bearer: an enhanced credit-based channel to PSM 0x0027, over LE or BR/EDR.
    case eatt
    public var description: String { rawValue }
}

/// One ATT bearer of a connection: its own MTU and transactions; the GATT database is the connection's.
///
/// A value kept in its connection's ``ConnectionState`` and changed in place there through
/// ``ConnectionState/subscript(bearer:)``; the analyzer names a bearer by its ``ATTBearerSlot``.
struct ATTBearer {
    let kind: ATTBearerKind
    /// The dynamic channel it rides on (index into the connection's ``ChannelTable``); nil for the fixed channel.
    let channel: Int?
    /// ATT_MTU of a dynamic bearer, from the L2CAP MTUs of its channel; the fixed bearer uses the connection's
    /// (Exchange MTU). nil while not known: nothing is judged against it.
    var mtu: Int?

    init(kind: ATTBearerKind = .leFixed, channel: Int? = nil, mtu: Int? = nil) {
        self.kind = kind
        self.channel = channel
        self.mtu = mtu
    }

    struct Pending {
        var opcode: ATTOpcode
        var handle: UInt16?
        var frame: Int
        var timestamp: Timestamp
        var eventID: Int?
        /// For Read By Type / Group Type: the attribute type asked for (discovery needs it).
        var type: BluetoothUUID?
        /// For Find By Type Value: the service UUID asked for.
        var typeValue: [UInt8] = []
    }

    /// Outstanding request or indication, by the direction it was sent in. Requests and
    /// indications are separate transactions (a server may indicate while its own request waits).
    var pending: [TransactionKey: Pending] = [:]
    /// MTU proposed by each side (client in its request, server in its response).
    var clientMTU: Int?
    var serverMTU: Int?
    var longRead = LongReadAssembler()
    var preparedWrites = PreparedWriteAssembler()

    /// Bytes held for the long read and the queued writes.
    var heldBytes: Int { longRead.heldBytes + preparedWrites.heldBytes }

    /// Lets the long read and the queued writes go (the analyzer's memory budget ran out).
    mutating func shed() {
        longRead.drop()
        preparedWrites.drop()
    }
}

/// Where a connection keeps one of its ATT bearers: the LE fixed channel's, or the n-th on a dynamic channel
/// (``ConnectionState/bearers``).
enum ATTBearerSlot: Equatable {
    case fixed
    case dynamic(Int)
}

extension Analyzer {
    /// One whole L2CAP PDU of an open connection, whose decoding state is `state`, to its channel's decoder.
    func processL2CAP(_ pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp, state: ConnectionState) {
        counters.l2capPDUs += 1
        state.decode.l2capPDUs &+= 1
        switch pdu.channel {
        case 0x0004:
            state.decode.att &+= 1
            processATT(pdu, connection: index, direction: direction, timestamp: timestamp, state: state)
        case 0x0005, 0x0001:
            state.decode.signalling &+= 1
            processSignalling(pdu, connection: index, direction: direction, timestamp: timestamp)
        case 0x0006, 0x0007:
            state.decode.smp &+= 1
            processSMP(pdu, connection: index, direction: direction, timestamp: timestamp)
        default:
            processDynamicChannel(pdu, connection: index, direction: direction, timestamp: timestamp, state: state)
        }
    }

    /// A PDU on any other CID: an ATT bearer over BR/EDR (basic mode, PSM 0x001F), a K-frame of a credit-based
    /// channel (EATT SDUs go on to ATT), a channel known by its PSM whose protocol blescope does not decode, or a
    /// CID no decoder claims (counted for the decode health).
    func processDynamicChannel(_ pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp, state: ConnectionState?)
    {
        let cid = pdu.channel
        if let state, let c = state.channels.channel(direction: direction, cid: cid), let b = state.channelBearers[c],
            state.channels.channels[c].mode == .basic
        {
            state.decode.att &+= 1
            processATT(
                ATTInput(
                    payload: pdu.payload, frame: pdu.lastFrame, l2capBytes: pdu.bytes.count, direction: direction,
                    timestamp: timestamp, cid: cid, bearer: .dynamic(b)), connection: index, state: state)
            return
        }
        if processCreditFrame(pdu, connection: index, direction: direction, timestamp: timestamp) {
            state?.decode.creditFrames &+= 1
            return
        }
        if let state {
            if let c = state.channels.channel(direction: direction, cid: cid) {
                state.decode.countKnown(psm: state.channels.channels[c].psm.rawValue)
            } else {
                state.decode.countUnclaimed(cid: cid, bytes: pdu.bytes.count, frame: pdu.lastFrame)
            }
        }
        if options.timeline {
            var name = L2CAPCID(cid).description
            if let state, let c = state.channels.channel(direction: direction, cid: cid) {
                name += " " + state.channels.channels[c].psm.description
            }
            emit(
                TimelineEvent(
                    frame: pdu.lastFrame, timestamp: timestamp, connection: connections[index].handle, direction: direction,
                    layer: .l2cap, code: UInt32(cid), name: name, summary: "\(pdu.payload.count) bytes"))
        }
    }

    // MARK: ATT

    /// One ATT PDU and where it came from: the context ``processATT(_:connection:state:)`` works in.
    struct ATTInput {
        var payload: UnsafeRawBufferPointer
        /// The frame the PDU (or the SDU carrying it) completed at.
        var frame: Int
        /// Bytes of the L2CAP PDU (or K-frame SDU) that carried it, for throughput.
        var l2capBytes: Int
        var direction: Direction
        var timestamp: Timestamp
        /// The CID in the L2CAP header (0x0004 on the LE fixed channel).
        var cid: UInt16 = 0x0004
        /// The bearer: the connection's fixed one unless the PDU came on a dynamic channel.
        var bearer: ATTBearerSlot = .fixed
    }

    /// Where the values of one ATT PDU come from: what ``applyATT(_:bearer:request:in:event:)`` and
    /// ``deliverValue(_:kind:handle:typeHint:in:event:)`` need besides the PDU and the value.
    struct ATTContext {
        var connection: Int
        /// A strong reference. The crash once blamed on `unowned(unsafe)` here (BackgroundTimelineJSONTests, debug
        /// builds only) came from no dying object: an incremental debug build had left that test's object file compiled
        /// against an older stored-property layout of `Analyzer`. Its store to `onEvent` landed on `observers`, and the
        /// observer loop in `decodeAndDeliver` crashed (reproduced on 2026-11-24 by a layout change; recompiling the test
        /// file alone cured it). After changing the stored properties of a public class, rebuild its dependents in full.
        var state: ConnectionState
        /// The database that serves the PDU (``serverDatabase(_:_:)``).
        var db: GATTSide
        var direction: Direction
        var frame: Int
        var timestamp: Timestamp
        /// Bytes of the L2CAP PDU (or K-frame SDU) that carried it, for throughput; 0 for a value assembled from several PDUs.
        var l2capBytes: Int
    }

    @inline(__always)
    func processATT(_ pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp, state: ConnectionState) {
        processATT(
            ATTInput(payload: pdu.payload, frame: pdu.lastFrame, l2capBytes: pdu.bytes.count, direction: direction, timestamp: timestamp),
            connection: index, state: state)
    }

    /// One ATT PDU of an open connection, whose decoding state is `state` (the caller's reference keeps it for the call:
    /// taking it non-optional, not looked up again here, saved a reference count per PDU).
    func processATT(_ input: ATTInput, connection index: Int, state: ConnectionState) {
        let payload = input.payload, direction = input.direction, timestamp = input.timestamp
        guard let first = payload.first else {
            findings.append(Finding(.warning, .init(code: "att.empty", message: "empty ATT PDU"), frame: input.frame))
            return
        }
        counters.attPDUs += 1
        counters.attByOpcode[Int(first)] += 1
        connections[index].attPDUs += 1
        let opcode = ATTOpcode(rawValue: first)
        let frame = input.frame
        if case .fixed = input.bearer {
            noteATT(payload, opcode: first, direction: direction, connection: index, state: state, frame: frame, timestamp: timestamp)
        }
        let method = opcode.method
        let db = Self.serverDatabase(method, direction)
        // A statistics pass does not decode the bulk of real traffic (notifications, indications, writes): the table says
        // where such a PDU holds its value (``ATTValueLayout``), and it goes to the observers from there.
        let layout = options.timeline ? nil : opcode.valueLayout
        let inPlace = layout?.value(in: payload)
        let valueOnly = inPlace != nil && (method == .notification || method == .command)
        if valueOnly {
            // Nothing to pair and no event to build.
            checkMTU(opcode, size: payload.count, connection: index, state: state, bearer: input.bearer, frame: frame)
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
                UnsafeRawBufferPointer(rebasing: payload[inPlace.range]), kind: ValueKind(carriedBy: opcode),
                handle: inPlace.handle, typeHint: nil, in: context)
            return
        }
        // The bulk of a timeline: notifications and write commands built from the bytes in place (below).
        if options.timeline, opcode == .handleValueNotification || opcode == .writeCommand,
            let span = opcode.valueLayout?.value(in: payload)
        {
            processValuePDU(input, opcode: opcode, span: span, in: context)
            return
        }
        processATT(input, opcode: opcode, method: method, decode: layout == nil, inPlace: inPlace, in: context)
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
    func processValuePDU(_ input: ATTInput, opcode: ATTOpcode, span: ATTValueSpan, in context: ATTContext) {
        let state = context.state, frame = input.frame, handle = span.handle
        checkMTU(opcode, size: input.payload.count, connection: context.connection, state: state, bearer: input.bearer, frame: frame)
        let value = UnsafeRawBufferPointer(rebasing: input.payload[span.range])
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
    func processATT(
        _ input: ATTInput, opcode: ATTOpcode, method: ATTMethodType, decode: Bool, inPlace: ATTValueSpan?,
        in context: ATTContext
    ) {
        let payload = input.payload, direction = input.direction, timestamp = input.timestamp, frame = input.frame
        let index = context.connection, state = context.state, db = context.db
        let bearer = input.bearer, bearerKind = state.bearerKind(bearer)

        checkMTU(opcode, size: payload.count, connection: index, state: state, bearer: input.bearer, frame: frame)

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
            ? attEvent(typed, opcode: opcode, input: input, bearerKind: bearerKind, in: context) : nil

        // Request / response pairing.
        var responseTo: ATTBearer.Pending? = nil
        if method == .request || method == .indication {
            let tkey = TransactionKey(direction: direction, indication: method == .indication)
            if let stale = state[bearer: bearer].pending[tkey] {
                findings.append(
                    Finding(.info, .requestUnanswered(stale.opcode, handle: stale.handle, end: "the next request"), frame: stale.frame))
                if let id = stale.eventID { queue.settle(id) }
                evidence(
                    .attUnanswered(
                        request: stale.opcode, handle: stale.handle, sender: tkey.sender, ended: .nextRequest, endFrame: frame,
                        waited: timestamp.microseconds(since: stale.timestamp)), frame: stale.frame, timestamp: stale.timestamp,
                    connection: connections[index].number)
            }
            // A malformed request keeps the handle its bytes give only where its opcode carries one there (an Exchange MTU
            // Request's bytes 1–2 are an MTU: a SweynTooth capture's fuzzed one gave its response a "handle" 0x000f).
            let handle = if let typed { typed.attributeHandle } else { ATTHeader(of: payload)?.handle }
            var p = ATTBearer.Pending(opcode: opcode, handle: handle, frame: frame, timestamp: timestamp)
            if let typed {
                switch typed {
                case .readByTypeRequest(let r), .readByGroupTypeRequest(let r): p.type = r.type
                case .findByTypeValueRequest(let r):
                    p.type = BluetoothUUID(uuid16: r.type)
                    p.typeValue = r.value
                default: break
                }
            }
            event?.isRequest = true
            state[bearer: bearer].pending[tkey] = p
        } else if method == .response || method == .confirmation {
            let requestKey = TransactionKey(direction: direction.reversed, indication: method == .confirmation)
            if let p = state[bearer: bearer].pending.removeValue(forKey: requestKey),
                opcode == .errorResponse || p.opcode.responseOpcode == opcode
                    || (method == .confirmation && p.opcode == .handleValueIndication)
            {
                responseTo = p
                let latency = timestamp.microseconds(since: p.timestamp)
                if latency > attTransactionTimeoutMicroseconds {
                    evidence(
                        .attLateResponse(request: p.opcode, handle: p.handle, requestFrame: p.frame, microseconds: latency), frame: frame,
                        timestamp: timestamp, connection: connections[index].number)
                }
                if let id = p.eventID {
                    queue.update(id) {
                        $0.responseFrame = frame; $0.latency = latency
                    }
                    queue.settle(id)
                }
                event?.requestFrame = p.frame
                event?.latency = latency
                if let typed, case .readByTypeResponse = typed, event != nil {
                    // The request says whether the items are characteristic declarations.
                    let declarations = p.type?.uuid16 == GATTAttributeType.characteristic
                    event?.handles = Self.listedHandles(typed, declarations: declarations)
                    event?.values = Self.listedValues(typed, declarations: declarations)
                }
                if event?.handle == nil, event?.handles == nil, let h = p.handle {
                    event?.handle = h
                    if event != nil { nameAttribute(&event!, handle: h, connection: index, db: db) }
                }
            } else if let p = state[bearer: bearer].pending[requestKey] {
                findings.append(
                    Finding(
                        .warning,
                        .init(
                            code: "att.unexpected-response",
                            message: "ATT \(opcode) does not answer the outstanding \(p.opcode) (frame \(p.frame))"), frame: frame))
            } else if let (other, p) = state.pendingElsewhere(requestKey, answeredBy: opcode, except: bearer) {
                // Core Spec Vol 3, Part F, 3.3.2 and 3.4.9: a response travels on the bearer of its request.
                findings.append(
                    Finding(
                        .warning,
                        .responseOnOtherBearer(
                            opcode, on: bearerKind, cid: input.cid, request: p.opcode,
                            requestBearer: other.kind, requestFrame: p.frame), frame: frame))
            } else {
                findings.append(
                    Finding(
                        .info,
                        .init(
                            code: "att.response-without-request",
                            message: "ATT \(opcode) without a request in the capture"
                                + (state.decode.cutByCapturer > 0
                                    ? " (the capturer cut \(state.decode.cutByCapturer) L2CAP PDUs of this connection so far: the request may be one of them)"
                                    : "")), frame: frame))
            }
        }

        if opcode == .errorResponse {
            noteATTError(
                payload, direction: direction, requestFrame: responseTo?.frame, connection: index, frame: frame, timestamp: timestamp)
        }
        if let typed {
            applyATT(typed, bearer: bearer, request: responseTo, in: context, event: &event)
        } else if let inPlace {
            // A request or indication read in place (statistics pass): paired above, its value goes to the observers.
            deliverValue(
                UnsafeRawBufferPointer(rebasing: payload[inPlace.range]), kind: ValueKind(carriedBy: opcode), handle: inPlace.handle,
                in: context, event: &event)
        }
        // Moved out (`take()`), not copied: see ``emit(_:waiting:)``.
        if let e = event.take() {
            let tkey = TransactionKey(direction: direction, indication: opcode == .handleValueIndication)
            if e.isRequest, state[bearer: bearer].pending[tkey]?.frame == frame {
                state[bearer: bearer].pending[tkey]?.eventID = emit(e, waiting: true)
            } else {
                emit(e)
            }
        }
    }

    /// The timeline event of one ATT PDU, before pairing and ``applyATT(_:bearer:request:in:event:)`` add to it.
    func attEvent(_ typed: ATTPDU?, opcode: ATTOpcode, input: ATTInput, bearerKind: ATTBearerKind, in context: ATTContext)
        -> TimelineEvent
    {
        let first = opcode.rawValue, name = Self.opcodeNames[Int(first)]
        var e =
            if let h = Self.summaryHandle(typed) {
                TimelineEvent(
                    frame: input.frame, timestamp: input.timestamp, connection: context.state.handle, direction: input.direction,
                    layer: .att, code: UInt32(first), name: name, summaryHandle: h)
            } else {
                TimelineEvent(
                    frame: input.frame, timestamp: input.timestamp, connection: context.state.handle, direction: input.direction,
                    layer: .att, code: UInt32(first), name: name,
                    summary: Self.summary(typed, opcode: opcode, payload: input.payload))
            }
        e.handle = typed?.attributeHandle
        e.value = typed?.value
        if let typed {
            e.handles = Self.listedHandles(typed, declarations: nil)
            e.values = Self.listedValues(typed, declarations: nil)
        }
        if case .findByTypeValueRequest(let r)? = typed { e.value = r.value }
        e.connectionNumber = context.state.number
        e.bearer = bearerKind
        e.cid = input.cid
        if let h = e.handle { nameAttribute(&e, handle: h, connection: context.connection, db: context.db) }
        return e
    }

    /// A PDU longer than the connection's ATT_MTU (not judged when the MTU is only assumed: a connection inferred from
    /// traffic whose MTU exchange was not seen). A dynamic bearer is judged against its own MTU, once known.
    @inline(__always)
    func checkMTU(
        _ opcode: ATTOpcode, size: Int, connection index: Int, state: ConnectionState, bearer slot: ATTBearerSlot = .fixed, frame: Int
    ) {
        if case .dynamic(let b) = slot {
            let bearer = state.bearers[b]
            guard let mtu = bearer.mtu, size > mtu else { return }
            findings.append(
                Finding(
                    .warning,
                    .init(
                        code: "att.pdu-exceeds-mtu",
                        message: "ATT \(opcode) of \(size) bytes exceeds the \(bearer.kind) bearer's ATT_MTU \(mtu)"), frame: frame))
            return
        }
        let mtu = table.connections[index].link.mtu
        guard let value = mtu.value, size > value else { return }
        switch mtu.source {
        case .assumed, .inferred(.largestATTPDU):
            // The exchange is not in the capture: the PDU proves ATT_MTU is at least its size (Core Spec Vol 3,
            // Part F, 3.2.8), and the link is judged against that from here on, said to be inferred.
            table.connections[index].link.apply(
                .mtu(size), frame: frame, timestamp: lastTimestamp, source: .inferred(.largestATTPDU(frame: frame, bytes: size)))
            return
        default:
            break
        }
        findings.append(
            Finding(
                .warning,
                .init(
                    code: "att.pdu-exceeds-mtu",
                    message: "ATT \(opcode) of \(size) bytes exceeds the connection's ATT_MTU \(value)"), frame: frame))
    }

    /// `declarations`: the request asked for characteristic declarations (0x2803); nil when the
    /// request is not in the capture, then guessed from the item length (5 or 19 bytes).
    /// The handles a list-carrying response names, in the order Wireshark lists them: group
    /// start handles, Find Information handles, Read By Type item handles (plus the value handle of
    /// a characteristic declaration).
    static func listedHandles(_ pdu: ATTPDU, declarations: Bool?) -> [UInt16]? {
        switch pdu {
        case .readByGroupTypeResponse(let groups): return groups.map(\.start)
        case .findInformationResponse(let info): return info.entries.map(\.handle)
        case .findByTypeValueResponse(let ranges): return ranges.map(\.start)
        case .readByTypeResponse(let items):
            return items.flatMap { item -> [UInt16] in
                if declarations ?? (item.value.count == 5 || item.value.count == 19), item.value.count >= 3 {
                    return [item.handle, UInt16(item.value[1]) | UInt16(item.value[2]) << 8]
                }
                return [item.handle]
            }
        case .multipleHandleValueNotification(let items): return items.map(\.handle)
        case .readMultipleRequest(let handles), .readMultipleVariableRequest(let handles): return handles
        default: return nil
        }
    }

    /// The attribute values a list-carrying response holds (Read By Group Type: service UUIDs;
    /// Read By Type of anything but characteristic declarations; Read Multiple Variable).
    static func listedValues(_ pdu: ATTPDU, declarations: Bool?) -> [[UInt8]]? {
        switch pdu {
        case .readByGroupTypeResponse(let groups): return groups.map(\.value)
        case .readByTypeResponse(let items):
            if declarations ?? items.allSatisfy({ $0.value.count == 5 || $0.value.count == 19 }) { return nil }
            return items.map(\.value)
        case .readMultipleVariableResponse(let items): return items.map(\.value)
        case .multipleHandleValueNotification(let items): return items.map(\.value)
        default: return nil
        }
    }

    /// Both sides of a connection may be GATT servers (phones are too): the peer's database answers
    /// what this side sends as a client (requests, commands, confirmations → tx) and what the peer
    /// sends as a server (responses, notifications, indications → rx); the local one the reverse.
    static func serverDatabase(_ method: ATTMethodType, _ direction: Direction) -> GATTSide {
        let clientToServer = method == .request || method == .command || method == .confirmation
        let sentByUs = direction != .rx
        return clientToServer == sentByUs ? .peer : .local
    }

    /// The one-line decode. Value-carrying PDUs say only their handle: the value is in the event
    /// (`value`), and rendering it twice would double the cost of a timeline of notifications.
    static func summary(_ typed: ATTPDU?, opcode: ATTOpcode, payload: UnsafeRawBufferPointer) -> String {
        guard let typed else { return "malformed: " + hexString(payload) }
        if let h = summaryHandle(typed) { return "handle=" + hex(h, width: 4) }
        return strip(typed.summary, prefix: opcode.description)
    }

    /// The handle of a value-carrying PDU, whose summary is only `handle=0x002a` (``TimelineEvent/summaryHandle``).
    @inline(__always)
    static func summaryHandle(_ typed: ATTPDU?) -> UInt16? {
        switch typed {
        case .handleValueNotification(let h, _)?, .handleValueIndication(let h, _)?, .writeCommand(let h, _)?, .writeRequest(let h, _)?:
            h
        default: nil
        }
    }

    /// ``ATTOpcode/description`` of every opcode, for the timeline's `name`: an array index instead of the opcode table's
    /// dictionary lookup per event.
    static let opcodeNames: [String] = (0...255).map { ATTOpcode(rawValue: UInt8($0)).description }

    static func strip(_ summary: String, prefix: String) -> String {
        guard summary.hasPrefix(prefix) else { return summary }
        return String(summary.dropFirst(prefix.count).drop(while: { $0 == " " }))
    }

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

    /// State changes and value delivery for a decoded ATT PDU.
    func applyATT(
        _ pdu: ATTPDU, bearer slot: ATTBearerSlot, request: ATTBearer.Pending?, in context: ATTContext, event: inout TimelineEvent?
    ) {
        let state = context.state, kind = state.bearerKind(slot)
        let index = context.connection, db = context.db, direction = context.direction, frame = context.frame, timestamp = context.timestamp
        switch pdu {
        case .exchangeMTURequest(let mtu):
            state[bearer: slot].clientMTU = Int(mtu)
            if kind != .leFixed {
                // Core Spec Vol 3, Part F, 3.4.2.1: not used on BR/EDR nor on an enhanced bearer (the L2CAP MTU rules).
                findings.append(
                    Finding(
                        .warning,
                        .init(
                            code: "att.mtu-exchange-on-bearer",
                            message:
                                "ATT Exchange MTU Request on a \(kind) bearer, where ATT_MTU comes from the L2CAP channel: ignored"),
                        frame: frame))
            }
        case .exchangeMTUResponse(let mtu):
            state[bearer: slot].serverMTU = Int(mtu)
            if request != nil, kind == .leFixed {
                let effective = max(23, min(state[bearer: slot].clientMTU ?? Int(mtu), Int(mtu)))
                connections[index].link.apply(.mtu(effective), frame: frame, timestamp: timestamp)
                event?.summary += " → ATT_MTU \(effective)"
            }
        case .readByGroupTypeResponse(let groups):
            table.states[index]?.forgetAttributes()
            let primary = request?.type?.uuid16 != GATTAttributeType.secondaryService
            for g in groups {
                guard let uuid = uuidFromValue(g.value) else { continue }
                connections[index][database: db].addService(
                    .init(startHandle: g.start, endHandle: g.end, uuid: uuid, isPrimary: primary, discoveredAt: frame))
            }
        case .findByTypeValueResponse(let ranges):
            table.states[index]?.forgetAttributes()
            if let r = request, r.type?.uuid16 == GATTAttributeType.primaryService || r.type?.uuid16 == GATTAttributeType.secondaryService,
                let uuid = uuidFromValue(r.typeValue)
            {
                for range in ranges {
                    connections[index][database: db].addService(
                        .init(
                            startHandle: range.start, endHandle: range.end, uuid: uuid,
                            isPrimary: r.type?.uuid16 == GATTAttributeType.primaryService, discoveredAt: frame))
                }
            }
        case .readByTypeResponse(let items):
            if request?.type?.uuid16 == GATTAttributeType.characteristic || request?.type?.uuid16 == GATTAttributeType.include {
                table.states[index]?.forgetAttributes()
            }
            if request?.type?.uuid16 == GATTAttributeType.characteristic {
                for item in items where item.value.count == 5 || item.value.count == 19 {
                    let props = CharacteristicProperties(rawValue: item.value[0])
                    let valueHandle = UInt16(item.value[1]) | UInt16(item.value[2]) << 8
                    guard let uuid = uuidFromValue(Array(item.value[3...])) else { continue }
                    connections[index][database: db].addCharacteristic(
                        .init(
                            declarationHandle: item.handle, properties: props,
                            valueHandle: valueHandle, uuid: uuid, discoveredAt: frame))
                }
            } else if request?.type?.uuid16 == GATTAttributeType.include {
                for item in items where item.value.count >= 4 {
                    let start = UInt16(item.value[0]) | UInt16(item.value[1]) << 8
                    let end = UInt16(item.value[2]) | UInt16(item.value[3]) << 8
                    connections[index][database: db].addInclude(
                        .init(
                            handle: item.handle, startHandle: start, endHandle: end,
                            uuid: item.value.count == 6 ? uuidFromValue(Array(item.value[4...])) : nil))
                }
            } else if let type = request?.type {
                for item in items {
                    item.value.withUnsafeBytes { raw in
                        deliverValue(raw, kind: .readResponse, handle: item.handle, typeHint: type, in: context, event: &event)
                    }
                }
            }
        case .findInformationResponse(let info):
            table.states[index]?.forgetAttributes()
            for entry in info.entries { connections[index][database: db].addAttributeType(handle: entry.handle, uuid: entry.uuid) }
        case .handleValueNotification(let h, let v):
            v.withUnsafeBytes { deliverValue($0, kind: .notification, handle: h, in: context, event: &event) }
        case .handleValueIndication(let h, let v):
            if v.count == 4, connections[index][database: db].uuid(for: h)?.uuid16 == GATTAttributeType.serviceChanged {
                // Service Changed (Core Vol 3, Part G, 7.1): the range's attributes are no longer valid.
                let start = UInt16(v[0]) | UInt16(v[1]) << 8, end = UInt16(v[2]) | UInt16(v[3]) << 8
                connections[index][database: db].invalidate(start...max(start, end), keeping: h)
                table.states[index]?.forgetAttributes()
                event?.summary += "  (Service Changed: \(hex(start, width: 4))–\(hex(end, width: 4)) to be rediscovered)"
            }
            v.withUnsafeBytes { deliverValue($0, kind: .indication, handle: h, in: context, event: &event) }
        case .writeRequest(let h, let v):
            v.withUnsafeBytes { deliverValue($0, kind: .writeRequest, handle: h, in: context, event: &event) }
            describeCCCD(h, v, connection: index, db: db, event: &event)
        case .writeCommand(let h, let v):
            v.withUnsafeBytes { deliverValue($0, kind: .writeCommand, handle: h, in: context, event: &event) }
            describeCCCD(h, v, connection: index, db: db, event: &event)
        case .signedWriteCommand(let h, let v, _):
            v.withUnsafeBytes { deliverValue($0, kind: .signedWriteCommand, handle: h, in: context, event: &event) }
        case .multipleHandleValueNotification(let items):
            for item in items {
                item.value.withUnsafeBytes { deliverValue($0, kind: .notification, handle: item.handle, in: context, event: &event) }
            }
        case .readResponse(let value):
            guard let h = request?.handle else { break }
            value.withUnsafeBytes { deliverValue($0, kind: .readResponse, handle: h, in: context, event: &event) }
        case .errorResponse(let err):
            event?.status = err.error.description
        default:
            break
        }
        // Long reads and queued writes, assembled per bearer.
        let read = LongReadAssembler.Input(
            pdu: pdu, requestHandle: request?.handle, requestFrame: request?.frame ?? 0, frame: frame,
            direction: direction, mtu: state.attMTU(slot, connectionMTU: linkSnapshot(index).mtu))
        switch state.feedLongRead(read, bearer: slot) {
        case .longRead(let whole)?: finishLongRead(whole, in: context)
        case .blobPart(let h, let value)?:
            value.withUnsafeBytes { deliverValue($0, kind: .readBlobResponse, handle: h, in: context, event: &event) }
        case nil: break
        }
        if let writes = state.feedPreparedWrites(pdu, frame: frame, bearer: slot) {
            for write in writes { finishLongWrite(write, in: context) }
        }
    }

    /// A long read that ended: a "Long Read" event and the whole value for the observers.
    func finishLongRead(_ read: LongReadAssembler.LongRead, in context: ATTContext) {
        let index = context.connection, frame = context.frame, timestamp = context.timestamp
        var event: TimelineEvent? = nil
        if options.timeline {
            var e = TimelineEvent(
                frame: frame, timestamp: timestamp, connection: connections[index].handle, direction: read.direction,
                layer: .att, code: nil, name: "Long Read",
                summary: "handle=\(hex(read.handle, width: 4)) \(read.value.count) bytes from frames "
                    + read.frames.map(String.init).joined(separator: ","))
            e.handle = read.handle
            e.value = read.value
            nameAttribute(&e, handle: read.handle, connection: index, db: context.db)
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
        let index = context.connection, frame = context.frame, h = write.handle
        for gap in write.gaps {
            findings.append(
                Finding(
                    .warning,
                    .init(
                        code: "att.prepared-write-gap",
                        message: "Prepare Write on \(hex(h, width: 4)) at offset \(gap.offset), expected \(gap.expected)"), frame: gap.frame
                ))
        }
        var e: TimelineEvent? = nil
        if options.timeline {
            var ev = TimelineEvent(
                frame: frame, timestamp: context.timestamp, connection: connections[index].handle, direction: context.direction,
                layer: .att, code: nil, name: "Long Write",
                summary: "handle=\(hex(h, width: 4)) \(write.value.count) bytes from frames "
                    + (write.frames + [frame]).map(String.init).joined(separator: ","))
            ev.handle = h
            ev.value = write.value
            nameAttribute(&ev, handle: h, connection: index, db: context.db)
            e = ev
        }
        var assembled = context
        assembled.l2capBytes = 0
        write.value.withUnsafeBytes { deliverValue($0, kind: .longWrite, handle: h, in: assembled, event: &e) }
        if let e { emit(e) }
    }

    /// "notifications on/off" for writes to a Client Characteristic Configuration descriptor (Core Vol 3, Part G, 3.3.3.3).
    func describeCCCD(_ handle: UInt16, _ value: [UInt8], connection index: Int, db: GATTSide, event: inout TimelineEvent?) {
        guard event != nil, value.count == 2, let note = cccdNote(handle, value[0], value[1], connection: index, db: db) else { return }
        event?.summary += note
    }

    /// ``describeCCCD(_:_:connection:db:event:)``'s text for a two-byte value `low`, `high`; nil when `handle` is no CCCD.
    func cccdNote(_ handle: UInt16, _ low: UInt8, _ high: UInt8, connection index: Int, db: GATTSide) -> String? {
        let database = connections[index][database: db]
        let isCCCD: Bool
        if let t = database.attributeTypes[handle] {
            isCCCD = t.uuid16 == GATTAttributeType.clientCharacteristicConfiguration
        } else if let c = database.characteristic(owning: handle), c.valueHandle &+ 1 == handle,
            !c.properties.intersection([.notify, .indicate]).isEmpty
        {
            isCCCD = true
        } else {
            isCCCD = false
        }
        guard isCCCD else { return nil }
        let bits = UInt16(low) | UInt16(high) << 8
        var parts: [String] = []
        parts.append(bits & 1 != 0 ? "notifications on" : "notifications off")
        if bits & 2 != 0 { parts.append("indications on") }
        return "  (CCCD: " + parts.joined(separator: ", ") + ")"
    }

    func uuidFromValue(_ bytes: [UInt8]) -> BluetoothUUID? {
        guard bytes.count == 2 || bytes.count == 16 || bytes.count == 4 else { return nil }
        return try? withByteReader(bytes) { (r: inout ByteReader) throws(DecodeError) in
            try BluetoothUUID(parsingLittleEndian: &r, width: bytes.count)
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

extension FindingKind {
    static func responseOnOtherBearer(
        _ opcode: ATTOpcode, on kind: ATTBearerKind, cid: UInt16, request: ATTOpcode,
        requestBearer: ATTBearerKind, requestFrame: Int
    ) -> FindingKind {
        .init(
            code: "att.response-on-other-bearer",
            message: "ATT \(opcode) on the \(kind) bearer (CID \(hex(cid, width: 4))) would answer the \(request) of frame \(requestFrame) "
                + "sent on the \(requestBearer) bearer: a response must come on its request's bearer (Core Spec Vol 3, Part F, 3.3.2); not paired"
        )
    }
}

extension ConnectionState {
    /// The kind of a bearer, read in place: `self[bearer: slot].kind` copied the whole ``ATTBearer`` (its pending
    /// dictionary and assemblers: retained, then released) for every ATT PDU of a timeline
    /// (docs/performance.md#analyzer-att).
    @inline(__always)
    func bearerKind(_ slot: ATTBearerSlot) -> ATTBearerKind {
        switch slot {
        case .fixed: bearer.kind
        case .dynamic(let i): bearers[i].kind
        }
    }

    /// `self[bearer: slot].longRead.feed(input)` without the subscript's `_modify` coroutine, whose frame was
    /// allocated and freed on the heap for every ATT PDU of a timeline (docs/performance.md#analyzer-att).
    @inline(__always)
    func feedLongRead(_ input: LongReadAssembler.Input, bearer slot: ATTBearerSlot) -> LongReadAssembler.Output? {
        switch slot {
        case .fixed: bearer.longRead.feed(input)
        case .dynamic(let i): bearers[i].longRead.feed(input)
        }
    }

    /// `self[bearer: slot].preparedWrites.feed(pdu, frame:)` without the coroutine (see ``feedLongRead(_:bearer:)``).
    @inline(__always)
    func feedPreparedWrites(_ pdu: ATTPDU, frame: Int, bearer slot: ATTBearerSlot) -> [PreparedWriteAssembler.LongWrite]? {
        switch slot {
        case .fixed: bearer.preparedWrites.feed(pdu, frame: frame)
        case .dynamic(let i): bearers[i].preparedWrites.feed(pdu, frame: frame)
        }
    }

    /// ATT_MTU of a bearer, read in place (see ``bearerKind(_:)``): the connection's (`connectionMTU`, from its
    /// ``LinkState``) for the LE fixed one, the channel's for the others.
    @inline(__always)
    func attMTU(_ slot: ATTBearerSlot, connectionMTU: Int) -> Int {
        switch slot {
        case .fixed: bearer.kind == .leFixed ? connectionMTU : (bearer.mtu ?? 23)
        case .dynamic(let i): bearers[i].kind == .leFixed ? connectionMTU : (bearers[i].mtu ?? 23)
        }
    }
}
