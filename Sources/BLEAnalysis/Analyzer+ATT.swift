import BLECodecs
import BLECore
import BLEProtocols

extension Analyzer {
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
        decodeAndApplyATT(input, opcode: opcode, method: method, decode: layout == nil, inPlace: inPlace, in: context)
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
    func decodeAndApplyATT(
        _ input: ATTInput, opcode: ATTOpcode, method: ATTMethodType, decode: Bool, inPlace: ATTValueSpan?,
        in context: ATTContext
    ) {
        let payload = input.payload, direction = input.direction, frame = input.frame
        let state = context.state, bearer = input.bearer

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
        let responseTo = pairATT(state.feedTransaction(transaction, bearer: bearer), typed, input: input, in: context, event: &event)

        if opcode == .errorResponse {
            noteATTError(
                payload, direction: direction, requestFrame: responseTo?.frame, connection: context.connection, frame: frame,
                timestamp: input.timestamp)
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
            if e.isRequest, state[bearer: bearer].transactions.isOutstanding(tkey, frame: frame) {
                let id = emit(e, waiting: true)
                state[bearer: bearer].transactions.setEventID(id, for: tkey)
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
}
