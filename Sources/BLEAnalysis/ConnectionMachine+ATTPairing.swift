import BLECore
import BLEProtocols

/// A link's ATT PDUs past the in-place path (`ConnectionMachine+ATT.swift`): decoded, their event built, paired on
/// their bearer, then applied (`ConnectionMachine+ATTApply.swift`: the MTU exchange, what the ``GATTLearner`` learns,
/// the values for the observers, the bearer's long reads and queued writes).
extension ConnectionMachine {
    /// The rest of ``processATT(_:)``: decode, timeline event, pairing, state changes. Kept out of line so
    /// the bulk of a statistics pass does not pay for this part's large stack frame.
    @inline(never)
    func decodeAndApplyATT(
        _ input: ATTInput, pdu: ATTView, method: ATTMethodType, decode: Bool, in context: ATTContext
    ) {
        let payload = input.payload, direction = input.direction, frame = input.frame, opcode = pdu.opcode
        let bearer = input.bearer
        // A statistics pass reads a value-carrying PDU's value in place (``ATTView/span``) instead of decoding it.
        let inPlace = decode ? nil : pdu.span

        checkMTU(opcode, size: payload.count, bearer: input.bearer, frame: frame)

        // Decoded once, typed, unless read in place above (a value PDU shorter than the table's minimum is then
        // left alone, as a statistics pass has always done).
        var typed: ATTPDU? = nil
        if decode {
            var reader = ByteReader(payload)
            do {
                typed = try ATTPDU(parsing: &reader)
            } catch {
                sink.findings.append(Finding(.warning, .malformed("ATT \(opcode)", error), frame: frame))
            }
        }

        // Built by a function that returns it, straight into `event`: built here and assigned, it was copied (memcpy)
        // several more times per PDU.
        var event: TimelineEvent? =
            sink.timeline ? attEvent(typed, opcode: opcode, input: input, bearerKind: bearerKind(bearer), in: context) : nil

        let transaction = ATTTransactions.Input(
            opcode: opcode, method: method, pdu: typed, payload: payload, direction: direction, frame: frame, timestamp: input.timestamp)
        let responseTo = pairATT(
            feedTransaction(transaction, bearer: bearer), typed, opcode: opcode, input: input, in: context, event: &event)

        if opcode == .errorResponse {
            noteATTError(
                pdu, direction: direction, requestFrame: responseTo?.frame, frame: frame, timestamp: input.timestamp)
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
            if e.isRequest, self[bearer: bearer].transactions.isOutstanding(tkey, frame: frame) {
                let id = emit(e, waiting: true)
                self[bearer: bearer].transactions.setEventID(id, for: tkey)
            } else {
                emit(e)
            }
        }
    }

    /// The timeline event of one ATT PDU, before pairing and ``applyATT(_:bearer:request:in:event:)`` add to it: its
    /// text (``attEventText(_:opcode:input:bearerKind:handle:number:)``), its attribute named.
    func attEvent(_ typed: ATTPDU?, opcode: ATTOpcode, input: ATTInput, bearerKind: ATTBearerKind, in context: ATTContext)
        -> TimelineEvent
    {
        var e = Self.attEventText(typed, opcode: opcode, input: input, bearerKind: bearerKind, handle: self.handle, number: number)
        if let h = e.handle { nameAttribute(&e, handle: h, db: context.db) }
        return e
    }

    /// What the bearer's ``ATTTransactions`` made of a PDU, turned into findings, evidence and the event's pairing
    /// fields; returns the request a response answers.
    func pairATT(
        _ output: ATTTransactions.Output?, _ typed: ATTPDU?, opcode: ATTOpcode, input: ATTInput, in context: ATTContext,
        event: inout TimelineEvent?
    ) -> ATTTransaction? {
        switch output {
        case .opened(let unanswered)?:
            if let unanswered {
                let key = TransactionKey(direction: input.direction, indication: unanswered.opcode == .handleValueIndication)
                giveUp(unanswered, sender: key.sender, at: input)
            }
            event?.isRequest = true
            return nil
        case .answered(let request, let latency)?, .answeredReplaced(let request, let latency)?:
            // A replaced request answered in turn: GATT-02 was told when it was replaced; its answer is no orphan.
            answered(request, latency: latency, typed, input: input, in: context, event: &event)
            return request
        case .responseWithoutRequest?:
            reportResponseWithoutRequest(opcode, input: input)
            return nil
        case nil:
            return nil
        }
    }

    /// A request (or indication) that a second one replaced before it was answered (Core Spec Vol 3, Part F, 3.3.2).
    func giveUp(_ stale: ATTTransaction, sender: EvidenceEvent.Sender, at input: ATTInput) {
        sink.findings.append(
            Finding(.info, .requestUnanswered(stale.opcode, handle: stale.handle, end: "the next request"), frame: stale.frame))
        if let id = stale.eventID { sink.queue.settle(id) }
        sink.evidence(
            .attUnanswered(
                request: stale.opcode, handle: stale.handle, sender: sender, ended: .nextRequest, endFrame: input.frame,
                waited: input.timestamp.microseconds(since: stale.timestamp)), frame: stale.frame, timestamp: stale.timestamp,
            connection: number)
    }

    /// A response (or confirmation) paired with its request: late-response evidence, the request's held-back event
    /// settled, and the response's event told its request (and, for Read By Type, what the items are).
    func answered(
        _ p: ATTTransaction, latency: Int64, _ typed: ATTPDU?, input: ATTInput, in context: ATTContext, event: inout TimelineEvent?
    ) {
        let frame = input.frame
        if ATTTransactions.isLate(latency) {
            sink.evidence(
                .attLateResponse(request: p.opcode, handle: p.handle, requestFrame: p.frame, microseconds: latency), frame: frame,
                timestamp: input.timestamp, connection: number)
        }
        if let id = p.eventID {
            sink.queue.update(id) {
                $0.responseFrame = frame; $0.latency = latency
            }
            sink.queue.settle(id)
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
            if event != nil { nameAttribute(&event!, handle: h, db: context.db) }
        }
    }

    /// A response with no request on its bearer: on another bearer (where it may not be answered), or not in the capture.
    func reportResponseWithoutRequest(_ opcode: ATTOpcode, input: ATTInput) {
        let requestKey = TransactionKey(direction: input.direction.reversed, indication: opcode.method == .confirmation)
        if let (other, p) = pendingElsewhere(requestKey, answeredBy: opcode, except: input.bearer) {
            // Core Spec Vol 3, Part F, 3.3.2 and 3.4.9: a response travels on the bearer of its request.
            sink.findings.append(
                Finding(
                    .warning,
                    .responseOnOtherBearer(
                        opcode, on: bearerKind(input.bearer), cid: input.cid, request: p.opcode,
                        requestBearer: other.kind, requestFrame: p.frame), frame: input.frame))
            return
        }
        sink.evidence(
            .attResponseUnpaired(response: opcode, requester: requestKey.sender), frame: input.frame, timestamp: input.timestamp,
            connection: number)
        sink.findings.append(
            Finding(
                .info,
                .init(
                    .attResponseWithoutRequest,
                    message: "ATT \(opcode) without a request in the capture"
                        + (decode.cutByCapturer > 0
                            ? " (the capturer cut \(decode.cutByCapturer) L2CAP PDUs of this connection so far: the request may be one of them)"
                            : "")), frame: input.frame))
    }
}

/// The evidence in the rare ATT PDUs ``noteATT(_:direction:frame:timestamp:)`` picks out.
extension ConnectionMachine {
    /// A 2-byte write to a handle the peer's database names a CCCD (0x2902), or that follows a notifying
    /// characteristic's value: a subscription.
    func noteCCCDWrite(_ handle: UInt16, value: UInt16, byCommand: Bool, frame: Int, timestamp: Timestamp) {
        let database = connection.gatt
        let owner = database.characteristic(owning: handle)
        let isCCCD: Bool
        if let t = database.attributeTypes[handle] {
            isCCCD = t.uuid16 == GATTAttributeType.clientCharacteristicConfiguration
        } else if let c = owner, c.valueHandle &+ 1 == handle, !c.properties.intersection([.notify, .indicate]).isEmpty {
            isCCCD = true
        } else {
            isCCCD = false
        }
        guard isCCCD else { return }
        sink.evidence(
            .cccdWrite(handle: handle, valueHandle: owner?.valueHandle, value: value, byCommand: byCommand, sender: .local),
            frame: frame, timestamp: timestamp, connection: number)
    }

    /// A write of `05 id` by the peer to this side's Broadcast Audio Scan Control Point: the assistant removed a source.
    func noteSourceRemoved(_ handle: UInt16, sourceID: UInt8, frame: Int, timestamp: Timestamp) {
        guard connection.localGATT.uuid(for: handle)?.uuid16 == Self.broadcastAudioScanControlPoint else { return }
        sink.evidence(.broadcastSourceRemoved(sourceID: sourceID, sender: .peer), frame: frame, timestamp: timestamp, connection: number)
    }

    /// The Broadcast Audio Scan Control Point characteristic (Assigned Numbers 3.8).
    static let broadcastAudioScanControlPoint: UInt16 = 0x2BC7
    /// Its Remove Source operation (BASS 3.1.1, opcode 0x05: Source_ID follows).
    static let removeSourceOpcode: UInt8 = 0x05

    /// An indication of the Service Changed characteristic (0x2A05): the peer's database changed in a range.
    func noteServiceChanged(_ value: UnsafeRawBufferPointer, handle: UInt16, frame: Int, timestamp: Timestamp) {
        guard attribute(handle: handle, db: .peer).uuid?.uuid16 == 0x2A05 else { return }
        let start = UInt16(value[0]) | UInt16(value[1]) << 8, end = UInt16(value[2]) | UInt16(value[3]) << 8
        sink.evidence(.serviceChanged(start: start, end: end), frame: frame, timestamp: timestamp, connection: number)
    }

    /// An ATT Error Response, with the request it answers when the capture holds it.
    func noteATTError(_ pdu: ATTView, direction: Direction, requestFrame: Int?, frame: Int, timestamp: Timestamp) {
        guard let e = pdu.errorResponse else { return }
        sink.evidence(
            .attError(
                request: e.request, handle: e.handle, error: e.error, requestFrame: requestFrame, sender: direction == .rx ? .peer : .local),
            frame: frame, timestamp: timestamp, connection: number)
    }
}
