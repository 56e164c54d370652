import BLECore
import BLEProtocols

/// Which transaction of a bearer a PDU belongs to: the requests sent in one direction, or the indications.
///
/// Core Spec Vol 3, Part F, 3.3.2: one outstanding request per client; its response comes back
/// the other way. Indications wait for their confirmation the same way.
struct TransactionKey: Hashable {
    var direction: Direction
    var indication: Bool

    /// Who sent the request (or indication): this side when it went host → controller.
    var sender: EvidenceEvent.Sender { direction == .rx ? .peer : .local }
}

/// A request or indication waiting for its response or confirmation.
struct ATTTransaction: Equatable {
    var opcode: ATTOpcode
    var handle: UInt16?
    var frame: Int
    var timestamp: Timestamp
    /// The timeline event of the request, held back until it is answered (the analyzer's event queue).
    var eventID: Int?
    /// For Read By Type / Group Type: the attribute type asked for (discovery needs it).
    var type: BluetoothUUID?
    /// For Find By Type Value: the service UUID asked for.
    var typeValue: [UInt8] = []
    /// For the discovery requests (Find Information, Find By Type Value, Read By Type, Read By Group Type): the handle
    /// range asked, which every handle of the answer lies in (Core Spec Vol 3, Part F, 3.4.3–3.4.4).
    var range: ClosedRange<UInt16>?

    /// The request in `payload` (decoded as `pdu` when it decoded). A malformed request keeps the handle its bytes give
    /// only where its opcode carries one there (an Exchange MTU Request's bytes 1–2 are an MTU: a SweynTooth capture's
    /// fuzzed one gave its response a "handle" 0x000f).
    init(request pdu: ATTPDU?, opcode: ATTOpcode, payload: UnsafeRawBufferPointer, frame: Int, timestamp: Timestamp) {
        self.opcode = opcode
        self.handle = if let pdu { pdu.attributeHandle } else { ATTHeader(of: payload)?.handle }
        self.frame = frame
        self.timestamp = timestamp
        switch opcode {
        case .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readByGroupTypeRequest:
            guard payload.count >= 5 else { break }
            let start = UInt16(payload[1]) | UInt16(payload[2]) << 8, end = UInt16(payload[3]) | UInt16(payload[4]) << 8
            if start <= end { range = start...end }
        default: break
        }
        switch pdu {
        case .readByTypeRequest(let r)?, .readByGroupTypeRequest(let r)?: type = r.type
        case .findByTypeValueRequest(let r)?:
            type = BluetoothUUID(uuid16: r.type)
            typeValue = r.value
        default: break
        }
    }

    /// Whether `opcode` (of method `method`) answers this transaction: its response opcode, a confirmation of an
    /// indication, or an Error Response (which may answer any request).
    func isAnswered(by opcode: ATTOpcode, method: ATTMethodType) -> Bool {
        opcode == .errorResponse || self.opcode.responseOpcode == opcode
            || (method == .confirmation && self.opcode == .handleValueIndication)
    }
}

/// Pairs the requests and responses (indications and confirmations) of one ATT bearer.
///
/// Core Spec Vol 3, Part F, 3.3.2 (sequential protocol): a client sends one request and waits for its response before
/// the next; a server sends one indication and waits for its confirmation. Requests and indications are separate
/// transactions (a server may indicate while its own request waits), kept by the direction they were sent in. 3.3.3: a
/// transaction not completed within 30 seconds has timed out (``isLate(_:)``).
///
/// Failure cases, named in ``Output``: a second request before the first was answered (`.opened(unanswered:)`, the
/// first is given up), a response with no request it answers outstanding (`.responseWithoutRequest`; the request may be
/// on another bearer or outside the capture). A response that does not answer the outstanding request is one of those
/// too, and the request it does not answer is given up with it (`dropped`), unless it answers a request given up
/// before (`.answeredReplaced`): a server may still answer, in turn, requests a client sent before their turn (the
/// SweynTooth Cypress capture: three Read By Group Type Requests at frames 9223, 9248 and 9274, two responses at 9276
/// and 9277, each a new PDU by its SN; tshark reads the same). Such a response is no orphan.
/// Commands and notifications are no transactions: ``feed(_:)`` returns nil for them.
struct ATTTransactions {
    /// One PDU of the bearer, as the pairing needs it.
    struct Input {
        var opcode: ATTOpcode
        var method: ATTMethodType
        var direction: Direction
        var frame: Int
        var timestamp: Timestamp
        /// What a request or indication asks; nil for the other PDUs.
        var request: ATTTransaction?
        /// A response's first handle, where its opcode lists handles (a discovery response) or names one (an Error
        /// Response), and the request opcode an Error Response names: what says which replaced request it may answer.
        var listedHandle: UInt16?
        var erroredRequest: ATTOpcode?

        /// The PDU in `payload` with opcode `opcode` (of method `method`), decoded as `pdu` when it decoded.
        init(
            opcode: ATTOpcode, method: ATTMethodType, pdu: ATTPDU?, payload: UnsafeRawBufferPointer, direction: Direction, frame: Int,
            timestamp: Timestamp
        ) {
            self.opcode = opcode
            self.method = method
            self.direction = direction
            self.frame = frame
            self.timestamp = timestamp
            if method == .request || method == .indication {
                request = ATTTransaction(request: pdu, opcode: opcode, payload: payload, frame: frame, timestamp: timestamp)
            } else if method == .response {
                // Vol 3, Part F, 3.4.1.1 (Error Response: request opcode, handle in error), 3.4.3.2 (Find Information
                // Response: format, then handles), 3.4.3.4 (Find By Type Value Response: handles), 3.4.4.2 and 3.4.4.10
                // (Read By Type and Read By Group Type Responses: length, then handles).
                let at: Int? =
                    switch opcode {
                    case .errorResponse, .findInformationResponse, .readByTypeResponse, .readByGroupTypeResponse: 2
                    case .findByTypeValueResponse: 1
                    default: nil
                    }
                if let at, payload.count >= at + 2 { listedHandle = UInt16(payload[at]) | UInt16(payload[at + 1]) << 8 }
                if opcode == .errorResponse, payload.count >= 2 { erroredRequest = ATTOpcode(rawValue: payload[1]) }
            }
        }
    }

    enum Output: Equatable {
        /// A request or indication is now outstanding. `unanswered`: the one sent before it the same way, never
        /// answered and now given up (the sequential protocol broken).
        case opened(unanswered: ATTTransaction?)
        /// A response or confirmation answered `request` after `latency` microseconds.
        case answered(ATTTransaction, latency: Int64)
        /// A response or confirmation that answers no outstanding request but one a later request replaced (`request`,
        /// given up then, within the 30 s transaction timeout): the server answering it in turn. The outstanding request,
        /// if any, still waits.
        case answeredReplaced(ATTTransaction, latency: Int64)
        /// A response with no request it answers outstanding on this bearer. `dropped`: the request that was
        /// outstanding the same way, which the response does not answer, given up (nil when none was).
        case responseWithoutRequest(dropped: ATTTransaction?)
    }

    /// A transaction not completed within 30 seconds has timed out (Core Spec Vol 3, Part F, 3.3.3).
    static func isLate(_ latency: Int64) -> Bool { latency > attTransactionTimeoutMicroseconds }

    /// The outstanding requests and indications, by the way they were sent.
    private(set) var pending: [TransactionKey: ATTTransaction] = [:]
    /// The requests and indications a later one replaced before their answer, oldest first, the last
    /// ``replacedKept`` of each way.
    private(set) var replaced: [TransactionKey: [ATTTransaction]] = [:]
    /// How many replaced requests of one way are kept (a bound on memory; the 30 s timeout bounds them in time): the
    /// SweynTooth NXP capture's fuzzer sent 6 Exchange MTU Requests (27–105) and 10 Read By Group Type Requests ahead of
    /// the 6 MTU responses (107–236) the server sent in turn.
    static let replacedKept = 32

    /// One PDU of the bearer, in order; nil for commands and notifications.
    mutating func feed(_ input: Input) -> Output? {
        if let request = input.request {
            let key = TransactionKey(direction: input.direction, indication: input.method == .indication)
            let unanswered = pending.updateValue(request, forKey: key)
            if let unanswered { keepReplaced(unanswered, key: key) }
            return .opened(unanswered: unanswered)
        }
        switch input.method {
        case .response, .confirmation:
            let key = TransactionKey(direction: input.direction.reversed, indication: input.method == .confirmation)
            let request = pending.removeValue(forKey: key)
            if let request, request.isAnswered(by: input.opcode, method: input.method) {
                if !replaced.isEmpty { forgetReplaced(key, notAnsweredBy: input) }
                return .answered(request, latency: input.timestamp.microseconds(since: request.timestamp))
            }
            if !replaced.isEmpty, let late = takeReplaced(key, answeredBy: input) {
                if let request { pending[key] = request }
                return .answeredReplaced(late, latency: input.timestamp.microseconds(since: late.timestamp))
            }
            return .responseWithoutRequest(dropped: request)
        default:
            return nil
        }
    }

    /// Keeps `stale`, replaced before its answer, for ``takeReplaced(_:answeredBy:)`` (its held-back event was settled).
    private mutating func keepReplaced(_ stale: ATTTransaction, key: TransactionKey) {
        var kept = replaced[key, default: []]
        if kept.count == Self.replacedKept { kept.removeFirst() }
        var stale = stale
        stale.eventID = nil
        kept.append(stale)
        replaced[key] = kept
    }

    /// A later request of `key` answered by `input`: a server answering in turn would have answered the replaced
    /// requests first, so those `input` could not answer never will be (an air capture's Read Request at 26557 of the
    /// Ubertooth shaver log, its answer missed, followed by answered Find Information and Write Requests: the Read
    /// Response at 26611 answers a request the sniffer missed, not 26557).
    private mutating func forgetReplaced(_ key: TransactionKey, notAnsweredBy input: Input) {
        guard var kept = replaced[key] else { return }
        kept.removeAll { !$0.isAnswered(by: input.opcode, method: input.method) }
        replaced[key] = kept.isEmpty ? nil : kept
    }

    /// The oldest replaced request of `key` that `input` answers, sent less than 30 s before it (Core Spec Vol 3, Part
    /// F, 3.3.3: after that the transaction has timed out), taken out with the older ones of its way (a server answers
    /// in turn). nil when none is.
    private mutating func takeReplaced(_ key: TransactionKey, answeredBy input: Input) -> ATTTransaction? {
        guard var kept = replaced[key] else { return nil }
        kept.removeAll { Self.isLate(input.timestamp.microseconds(since: $0.timestamp)) }
        let index = kept.firstIndex { r in
            // The response must fit the request: its opcode, the request an Error Response names, a listed handle in the
            // range asked (an air capture's response to a request the sniffer missed is no late answer to another).
            guard r.isAnswered(by: input.opcode, method: input.method) else { return false }
            if let asked = input.erroredRequest, asked != r.opcode { return false }
            if let range = r.range, let listed = input.listedHandle, !range.contains(listed) { return false }
            return true
        }
        let late = index.map { kept[$0] }
        if let index { kept.removeFirst(index + 1) }
        replaced[key] = kept.isEmpty ? nil : kept
        return late
    }

    /// Whether the request sent at `frame` the way `key` says still waits (its event can wait with it).
    func isOutstanding(_ key: TransactionKey, frame: Int) -> Bool { pending[key]?.frame == frame }

    /// Ties the held-back timeline event `id` to the outstanding request of `key`.
    mutating func setEventID(_ id: Int, for key: TransactionKey) { pending[key]?.eventID = id }
}
