import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import Testing

@testable import BLEAnalysis

/// The request ↔ response pairing of one ATT bearer (Core Spec Vol 3, Part F, 3.3.2–3.3.3), fed typed PDUs through
/// their wire bytes as the analyzer gets them. Expected pairings follow the spec's opcodes (a response is its request's
/// opcode + 1, an Error Response answers any request, a confirmation answers an indication); latencies are the
/// differences of the timestamps the tests give.
@Suite struct ATTTransactionsTests {
    /// Feeds `pdu`, sent `direction` at `frame` and `microseconds`, as the analyzer does: from its bytes, decoded.
    static func feed(
        _ pdu: ATTPDU, _ direction: Direction, frame: Int, at microseconds: Int64, into t: inout ATTTransactions
    ) throws -> ATTTransactions.Output? {
        let bytes = pdu.bytes
        let typed = try ATTPDU(bytes: bytes)
        let input = bytes.withUnsafeBytes { raw in
            ATTTransactions.Input(
                opcode: typed.opcode, method: typed.opcode.method, pdu: typed, payload: raw, direction: direction, frame: frame,
                timestamp: Timestamp(microseconds: microseconds))
        }
        return t.feed(input)
    }

    @Test func aReadResponseAnswersItsReadRequestWithItsLatency() throws {
        var t = ATTTransactions()
        let opened = try Self.feed(.readRequest(handle: 0x0003), .tx, frame: 10, at: 1_000_000, into: &t)
        #expect(opened == .opened(unanswered: nil))
        #expect(t.pending.count == 1)
        let out = try Self.feed(.readResponse(value: [0x42]), .rx, frame: 11, at: 1_007_500, into: &t)
        guard case .answered(let request, let latency)? = out else {
            Issue.record("not paired: \(String(describing: out))")
            return
        }
        #expect(request.opcode == .readRequest && request.handle == 0x0003 && request.frame == 10)
        #expect(latency == 7_500)
        #expect(t.pending.isEmpty)
    }

    @Test func anErrorResponseAnswersAWrite() throws {
        var t = ATTTransactions()
        _ = try Self.feed(.writeRequest(handle: 0x0012, value: [0x01, 0x00]), .tx, frame: 4, at: 500, into: &t)
        // 0x03 Write Not Permitted (Vol 3, Part F, 3.4.1.1).
        let error = ATTPDU.errorResponse(.init(requestOpcode: .writeRequest, handle: 0x0012, error: ATTErrorCode(0x03)))
        let out = try Self.feed(error, .rx, frame: 5, at: 2_500, into: &t)
        guard case .answered(let request, let latency)? = out else {
            Issue.record("not paired: \(String(describing: out))")
            return
        }
        #expect(request.opcode == .writeRequest && request.handle == 0x0012 && request.frame == 4)
        #expect(latency == 2_000)
    }

    /// A client sends one request and waits (3.3.2): a second request before the response gives the first up, and the
    /// response then answers the second.
    @Test func aSecondRequestBeforeTheResponseGivesTheFirstUp() throws {
        var t = ATTTransactions()
        _ = try Self.feed(.readRequest(handle: 0x0003), .tx, frame: 1, at: 0, into: &t)
        let second = try Self.feed(.readRequest(handle: 0x0005), .tx, frame: 2, at: 100, into: &t)
        guard case .opened(let unanswered?)? = second else {
            Issue.record("the first request was not given up: \(String(describing: second))")
            return
        }
        #expect(unanswered.frame == 1 && unanswered.handle == 0x0003)
        guard case .answered(let request, _)? = try Self.feed(.readResponse(value: [7]), .rx, frame: 3, at: 300, into: &t) else {
            Issue.record("not paired")
            return
        }
        #expect(request.frame == 2 && request.handle == 0x0005)
    }

    /// Requests and indications are separate transactions, one each way: the server's indication does not give up the
    /// client's request, and each is answered by its own PDU.
    @Test func anIndicationWaitsBesideARequest() throws {
        var t = ATTTransactions()
        _ = try Self.feed(.readRequest(handle: 0x0003), .tx, frame: 1, at: 0, into: &t)
        #expect(
            try Self.feed(.handleValueIndication(handle: 0x0020, value: [1]), .rx, frame: 2, at: 10, into: &t) == .opened(unanswered: nil))
        #expect(t.pending.count == 2)
        guard case .answered(let indication, let l1)? = try Self.feed(.handleValueConfirmation, .tx, frame: 3, at: 40, into: &t) else {
            Issue.record("confirmation not paired")
            return
        }
        #expect(indication.opcode == .handleValueIndication && indication.frame == 2 && l1 == 30)
        guard case .answered(let read, let l2)? = try Self.feed(.readResponse(value: []), .rx, frame: 4, at: 90, into: &t) else {
            Issue.record("response not paired")
            return
        }
        #expect(read.frame == 1 && l2 == 90)
    }

    @Test func aResponseWithoutItsRequest() throws {
        var t = ATTTransactions()
        #expect(try Self.feed(.writeResponse, .rx, frame: 1, at: 0, into: &t) == .responseWithoutRequest(dropped: nil))
        // A response the wrong way does not answer: a request sent rx is answered tx.
        _ = try Self.feed(.readRequest(handle: 0x0003), .rx, frame: 2, at: 0, into: &t)
        #expect(try Self.feed(.readResponse(value: []), .rx, frame: 3, at: 5, into: &t) == .responseWithoutRequest(dropped: nil))
        #expect(t.pending.count == 1)
    }

    /// A Write Response (0x13) does not answer a Read Request (0x0A, answered by 0x0B): the request is given up with it.
    @Test func aResponseToAnotherRequestDropsTheOutstandingOne() throws {
        var t = ATTTransactions()
        _ = try Self.feed(.readRequest(handle: 0x0003), .tx, frame: 1, at: 0, into: &t)
        let out = try Self.feed(.writeResponse, .rx, frame: 2, at: 5, into: &t)
        guard case .responseWithoutRequest(let dropped?)? = out else {
            Issue.record("expected the read dropped: \(String(describing: out))")
            return
        }
        #expect(dropped.opcode == .readRequest && dropped.frame == 1)
        #expect(t.pending.isEmpty)
    }

    @Test func commandsAndNotificationsAreNoTransactions() throws {
        var t = ATTTransactions()
        #expect(try Self.feed(.writeCommand(handle: 0x0012, value: [1]), .tx, frame: 1, at: 0, into: &t) == nil)
        #expect(try Self.feed(.handleValueNotification(handle: 0x0012, value: [1]), .rx, frame: 2, at: 0, into: &t) == nil)
        #expect(t.pending.isEmpty)
    }

    /// Discovery needs what its request asked: the attribute type of a Read By Type, the service UUID of a Find By Type Value.
    @Test func aDiscoveryRequestKeepsWhatItAsked() throws {
        var t = ATTTransactions()
        let byType = ATTPDU.readByTypeRequest(.init(range: .init(start: 1, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2803)))
        _ = try Self.feed(byType, .tx, frame: 1, at: 0, into: &t)
        let key = TransactionKey(direction: .tx, indication: false)
        #expect(t.pending[key]?.type == BluetoothUUID(uuid16: 0x2803))
        // Heart Rate service 0x180D, little-endian.
        let byValue = ATTPDU.findByTypeValueRequest(.init(range: .init(start: 1, end: 0xFFFF), type: 0x2800, value: [0x0D, 0x18]))
        _ = try Self.feed(byValue, .tx, frame: 2, at: 0, into: &t)
        #expect(t.pending[key]?.type == BluetoothUUID(uuid16: 0x2800))
        #expect(t.pending[key]?.typeValue == [0x0D, 0x18])
    }

    /// A request that did not decode keeps the handle its bytes give only where its opcode carries one (bytes 1–2 of a
    /// Read Request; an Exchange MTU Request's bytes 1–2 are an MTU).
    @Test func aMalformedRequestKeepsOnlyARealHandle() {
        let read: [UInt8] = [0x0A, 0x2A, 0x00, 0xFF], mtu: [UInt8] = [0x02, 0x0F, 0x00, 0xFF]
        let r = read.withUnsafeBytes {
            ATTTransaction(request: nil, opcode: .readRequest, payload: $0, frame: 1, timestamp: Timestamp(microseconds: 0))
        }
        let m = mtu.withUnsafeBytes {
            ATTTransaction(request: nil, opcode: .exchangeMTURequest, payload: $0, frame: 1, timestamp: Timestamp(microseconds: 0))
        }
        #expect(r.handle == 0x002A)
        #expect(m.handle == nil)
    }

    /// A transaction not completed within 30 seconds has timed out (3.3.3).
    @Test func lateMeansMoreThanThirtySeconds() {
        #expect(!ATTTransactions.isLate(30_000_000))
        #expect(ATTTransactions.isLate(30_000_001))
    }
}

/// A server may answer, in turn, the requests a client sent ahead of their answers (the SweynTooth Cypress capture:
/// Read By Group Type Requests 9223, 9248, 9274, responses 9276 and 9277, each a new PDU by its SN).
extension ATTTransactionsTests {
    @Test func aReplacedRequestAnsweredInTurnIsNoOrphan() throws {
        var t = ATTTransactions()
        _ = try Self.feed(.readRequest(handle: 0x0003), .tx, frame: 1, at: 0, into: &t)
        _ = try Self.feed(.readRequest(handle: 0x0005), .tx, frame: 2, at: 100, into: &t)
        guard case .answered(let newest, _)? = try Self.feed(.readResponse(value: [1]), .rx, frame: 3, at: 300, into: &t) else {
            Issue.record("the outstanding request not answered")
            return
        }
        #expect(newest.frame == 2)
        let late = try Self.feed(.readResponse(value: [2]), .rx, frame: 4, at: 400, into: &t)
        guard case .answeredReplaced(let replaced, let latency)? = late else {
            Issue.record("the replaced request not answered: \(String(describing: late))")
            return
        }
        #expect(replaced.frame == 1 && replaced.handle == 0x0003 && replaced.eventID == nil && latency == 400)
        // Once: a third response answers nothing.
        #expect(try Self.feed(.readResponse(value: [3]), .rx, frame: 5, at: 500, into: &t) == .responseWithoutRequest(dropped: nil))
    }

    /// A replaced request whose answer opcode differs, or sent more than 30 s before (3.3.3: the transaction timed out),
    /// explains nothing; a replaced request answered late leaves the outstanding one waiting.
    @Test func nearMissAReplacedRequestOfAnotherKindOrTimedOut() throws {
        var t = ATTTransactions()
        _ = try Self.feed(.exchangeMTURequest(clientRxMTU: 247), .tx, frame: 1, at: 0, into: &t)
        _ = try Self.feed(.readRequest(handle: 0x0005), .tx, frame: 2, at: 100, into: &t)
        let other = try Self.feed(.writeResponse, .rx, frame: 3, at: 200, into: &t)
        guard case .responseWithoutRequest(let dropped?)? = other else {
            Issue.record("a Write Response answered: \(String(describing: other))")
            return
        }
        #expect(dropped.frame == 2)
        var u = ATTTransactions()
        _ = try Self.feed(.readRequest(handle: 0x0003), .tx, frame: 1, at: 0, into: &u)
        _ = try Self.feed(.readRequest(handle: 0x0005), .tx, frame: 2, at: 100, into: &u)
        _ = try Self.feed(.readResponse(value: [1]), .rx, frame: 3, at: 200, into: &u)
        #expect(try Self.feed(.readResponse(value: [2]), .rx, frame: 4, at: 30_000_001, into: &u) == .responseWithoutRequest(dropped: nil))
        var w = ATTTransactions()
        _ = try Self.feed(.exchangeMTURequest(clientRxMTU: 247), .tx, frame: 1, at: 0, into: &w)
        _ = try Self.feed(.readRequest(handle: 0x0005), .tx, frame: 2, at: 100, into: &w)
        guard case .answeredReplaced(let mtu, _)? = try Self.feed(.exchangeMTUResponse(serverRxMTU: 247), .rx, frame: 3, at: 200, into: &w)
        else {
            Issue.record("the MTU request not answered in turn")
            return
        }
        #expect(mtu.frame == 1 && w.pending[TransactionKey(direction: .tx, indication: false)]?.frame == 2)
    }
}

/// A late answer must fit the replaced request: WHAD's air capture (frame 1520) holds a Read By Type Response listing
/// 0x002e to a request the sniffer missed; the replaced Read By Type Requests of 1471 (0x0007–0x000b) and 1481
/// (0x000c–0x000f) asked other ranges, so it stays a response without a request.
extension ATTTransactionsTests {
    @Test func aLateAnswerOutsideTheReplacedRequestsRangeIsAnOrphan() throws {
        let characteristics = BluetoothUUID(uuid16: 0x2803)
        var t = ATTTransactions()
        let first = ATTPDU.readByTypeRequest(.init(range: .init(start: 0x0007, end: 0x000B), type: characteristics))
        let second = ATTPDU.readByTypeRequest(.init(range: .init(start: 0x000C, end: 0x000F), type: characteristics))
        _ = try Self.feed(first, .tx, frame: 1471, at: 0, into: &t)
        _ = try Self.feed(second, .tx, frame: 1473, at: 15_000, into: &t)
        let error = ATTPDU.errorResponse(.init(requestOpcode: .readByTypeRequest, handle: 0x000C, error: .attributeNotFound))
        #expect(try Self.feed(error, .rx, frame: 1476, at: 22_000, into: &t) != .responseWithoutRequest(dropped: nil))
        let outside = ATTPDU.readByTypeResponse([ATTHandleValue(handle: 0x002E, value: [0x10, 0x2F, 0x00, 0x01, 0x2A])])
        #expect(try Self.feed(outside, .rx, frame: 1520, at: 250_000, into: &t) == .responseWithoutRequest(dropped: nil))
        // Near miss: the same response listing 0x0009, in the first request's range, is its answer in turn.
        let inside = ATTPDU.readByTypeResponse([ATTHandleValue(handle: 0x0009, value: [0x10, 0x0A, 0x00, 0x01, 0x2A])])
        guard case .answeredReplaced(let late, _)? = try Self.feed(inside, .rx, frame: 1521, at: 260_000, into: &t) else {
            Issue.record("the first request not answered in turn")
            return
        }
        #expect(late.frame == 1471)
    }
}

/// A server answers in turn: once it answered a later request with a response the replaced one could not take, the
/// replaced one will not be answered (the Ubertooth shaver log: Read Request 26557, its answer missed, then answered Find
/// Information and Write Requests; the Read Response at 26611 answers a request the sniffer missed).
extension ATTTransactionsTests {
    @Test func aReplacedRequestPassedOverByTheServerIsForgotten() throws {
        var t = ATTTransactions()
        _ = try Self.feed(.readRequest(handle: 0x0022), .tx, frame: 26557, at: 0, into: &t)
        let info = ATTPDU.findInformationRequest(.init(start: 0x002D, end: 0x002E))
        _ = try Self.feed(info, .tx, frame: 26560, at: 60_000, into: &t)
        let found = ATTPDU.findInformationResponse(
            .init(format: 1, entries: [ATTHandleUUID(handle: 0x002D, uuid: BluetoothUUID(uuid16: 0x2902))]))
        _ = try Self.feed(found, .rx, frame: 26563, at: 90_000, into: &t)
        #expect(
            try Self.feed(.readResponse(value: [0x37]), .rx, frame: 26611, at: 900_000, into: &t) == .responseWithoutRequest(dropped: nil))
        // Near miss: answered by a Read Response (which it could take), the replaced Read Request still waits its turn.
        var u = ATTTransactions()
        _ = try Self.feed(.readRequest(handle: 0x0063), .tx, frame: 26616, at: 0, into: &u)
        _ = try Self.feed(.readRequest(handle: 0x0070), .tx, frame: 26619, at: 60_000, into: &u)
        _ = try Self.feed(.readResponse(value: [0]), .rx, frame: 26622, at: 90_000, into: &u)
        guard case .answeredReplaced(let late, _)? = try Self.feed(.readResponse(value: [0]), .rx, frame: 26624, at: 120_000, into: &u)
        else {
            Issue.record("the replaced Read Request not answered in turn")
            return
        }
        #expect(late.frame == 26616)
    }
}
