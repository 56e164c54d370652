import BLECore
import BLEProtocols

extension Analyzer {
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
                giveUp(unanswered, sender: key.sender, at: input, connection: context.connection)
            }
            event?.isRequest = true
            return nil
        case .answered(let request, let latency)?:
            answered(request, latency: latency, typed, input: input, in: context, event: &event)
            return request
        case .responseWithoutRequest?:
            reportResponseWithoutRequest(opcode, input: input, state: context.state)
            return nil
        case nil:
            return nil
        }
    }

    /// A request (or indication) that a second one replaced before it was answered (Core Spec Vol 3, Part F, 3.3.2).
    func giveUp(_ stale: ATTTransaction, sender: EvidenceEvent.Sender, at input: ATTInput, connection index: Int) {
        findings.append(
            Finding(.info, .requestUnanswered(stale.opcode, handle: stale.handle, end: "the next request"), frame: stale.frame))
        if let id = stale.eventID { sink.queue.settle(id) }
        evidence(
            .attUnanswered(
                request: stale.opcode, handle: stale.handle, sender: sender, ended: .nextRequest, endFrame: input.frame,
                waited: input.timestamp.microseconds(since: stale.timestamp)), frame: stale.frame, timestamp: stale.timestamp,
            connection: connections[index].number)
    }

    /// A response (or confirmation) paired with its request: late-response evidence, the request's held-back event
    /// settled, and the response's event told its request (and, for Read By Type, what the items are).
    func answered(
        _ p: ATTTransaction, latency: Int64, _ typed: ATTPDU?, input: ATTInput, in context: ATTContext, event: inout TimelineEvent?
    ) {
        let frame = input.frame
        if ATTTransactions.isLate(latency) {
            evidence(
                .attLateResponse(request: p.opcode, handle: p.handle, requestFrame: p.frame, microseconds: latency), frame: frame,
                timestamp: input.timestamp, connection: connections[context.connection].number)
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
            if event != nil { nameAttribute(&event!, handle: h, connection: context.connection, db: context.db) }
        }
    }

    /// A response with no request on its bearer: on another bearer (where it may not be answered), or not in the capture.
    func reportResponseWithoutRequest(_ opcode: ATTOpcode, input: ATTInput, state: ConnectionState) {
        let requestKey = TransactionKey(direction: input.direction.reversed, indication: opcode.method == .confirmation)
        if let (other, p) = state.pendingElsewhere(requestKey, answeredBy: opcode, except: input.bearer) {
            // Core Spec Vol 3, Part F, 3.3.2 and 3.4.9: a response travels on the bearer of its request.
            findings.append(
                Finding(
                    .warning,
                    .responseOnOtherBearer(
                        opcode, on: state.bearerKind(input.bearer), cid: input.cid, request: p.opcode,
                        requestBearer: other.kind, requestFrame: p.frame), frame: input.frame))
            return
        }
        findings.append(
            Finding(
                .info,
                .init(
                    code: "att.response-without-request",
                    message: "ATT \(opcode) without a request in the capture"
                        + (state.decode.cutByCapturer > 0
                            ? " (the capturer cut \(state.decode.cutByCapturer) L2CAP PDUs of this connection so far: the request may be one of them)"
                            : "")), frame: input.frame))
    }
}
