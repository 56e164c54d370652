import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import Testing

@testable import BLEAnalysis

/// The link's traffic, controller flow control and activity are its machine's: fed per packet, read by `Connection`.
@Suite struct LinkTrafficTests {
    static func at(_ frame: Int) -> LinkActivity.Moment { .init(frame: frame, timestamp: Timestamp(microseconds: Int64(frame) * 1_000)) }

    /// Three host → controller packets (27, 31, 27 bytes) and one received (9); the third fills the controller's buffer
    /// (3 packets); Number Of Completed Packets reports 2 at frame 7 (room again), then 1 at frame 9.
    @Test func flowControlIsTheMachines() {
        var m = LinkMachine(startFrame: 1)
        let roomForAPeriod = m.feed(acl: .tx, bytes: 27, at: Self.at(2))
        #expect(roomForAPeriod)
        _ = m.feed(acl: .tx, bytes: 31, at: Self.at(3))
        _ = m.feed(acl: .rx, bytes: 9, at: Self.at(4))
        _ = m.feed(acl: .tx, bytes: 27, at: Self.at(5))
        m.feed(bufferFilledWith: 3, at: Self.at(5))
        m.feed(completed: 2, at: Self.at(7))
        m.feed(bufferRoomAgainAt: Self.at(7))
        m.feed(completed: 1, at: Self.at(9))
        #expect(m.traffic.aclPackets.tx == 3 && m.traffic.aclPackets.rx == 1)
        #expect(m.traffic.aclBytes.tx == 85 && m.traffic.aclBytes.rx == 9)
        #expect(m.traffic.maxInFlight == 3 && m.traffic.inFlight == 0 && m.traffic.completedPackets == 3)
        #expect(m.traffic.controllerQueueFull.map(\.startFrame) == [5] && m.traffic.controllerQueueFull.map(\.endFrame) == [7])
        #expect(m.traffic.controllerQueueFullMicroseconds == 2_000)
        // Waits for the controller: frames 2 → 7 with 3 packets (5 ms), then 7 → 9 with 1 (2 ms); the longest is kept.
        let wait = m.activity.longestWait
        #expect(wait?.start.frame == 2 && wait?.end.frame == 7 && wait?.packets == 3 && wait?.microseconds == 5_000)
        #expect(m.activity.lastSent?.frame == 5 && m.activity.lastReceived?.frame == 4)
        // Air data PDUs count the same way, with no controller buffer.
        m.feed(airData: .rx, bytes: 20)
        #expect(m.traffic.aclPackets.rx == 2 && m.traffic.aclBytes.rx == 29 && m.traffic.inFlight == 0)
    }

    /// Each ATT PDU is read once (``ATTView``) for the per-handle activity the rules read (Core Spec Vol 3, Part F,
    /// 3.4: handle after the opcode for reads, writes, notifications; the default ATT_MTU 23, 3.2.8).
    @Test func anATTPDUIsReadOnceForTheActivity() throws {
        var m = LinkMachine(startFrame: 1)
        let pdus: [([UInt8], Direction)] = [
            ([0x1B, 0x2A, 0x00, 1, 2, 3], .rx),  // 10: notification of 0x002A
            ([0x52, 0x2B, 0x00, 1], .tx),  // 11: write command to 0x002B
            ([0x0A, 0x2C, 0x00], .tx),  // 12: read request of 0x002C
            ([0x0C, 0x2C, 0x00, 0x16, 0x00], .tx),  // 13: read blob request: a long value
            ([0x1B, 0x2A], .rx),  // 14: too short to name its handle, a value all the same
            ([0x13], .rx),  // 15: write response
            ([0x1B, 0x2A, 0x00] + [UInt8](repeating: 0, count: 20), .rx),  // 16: 23 bytes, filling ATT_MTU
        ]
        for (i, (bytes, direction)) in pdus.enumerated() {
            try bytes.withUnsafeBytes { raw in
                m.feed(att: try #require(ATTView(raw)), at: Self.moment(10 + i), direction: direction, activity: true)
            }
        }
        #expect(m.traffic.attPDUs == 7)
        #expect(m.activity.notified[0x2A].map { [$0.count, $0.first, $0.last] } == [2, 10, 16])
        #expect(m.activity.written[0x2B]?.first == 11 && m.activity.read[0x2C]?.count == 1 && m.activity.read.count == 1)
        #expect(m.activity.values == 4 && m.activity.longValueRequests == 1)
        #expect(m.activity.valuesFillingMTU == 1 && m.activity.firstFullValueFrame == 16)
        #expect(m.activity.largestATTPDU == 23 && m.activity.largestATTPDUFrame == 16)
        // A pass that gathers no evidence counts the PDU and notes nothing.
        try [UInt8]([0x52, 0x2D, 0x00, 1]).withUnsafeBytes { raw in
            m.feed(att: try #require(ATTView(raw)), at: Self.moment(17), direction: .tx, activity: false)
        }
        #expect(m.traffic.attPDUs == 8 && m.activity.written[0x2D] == nil && m.activity.values == 4)
        #expect(ATTView(UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
    }

    /// Frame `frame` at `ms` milliseconds.
    static func moment(_ frame: Int, ms: Int64 = 0) -> LinkActivity.Moment {
        LinkActivity.Moment(frame: frame, timestamp: Timestamp(microseconds: 1_700_000_000_000_000 + ms * 1_000))
    }

    /// Each Read Blob or Prepare Write Request is one round trip a larger MTU would spare, timed to its answer (Core
    /// Spec Vol 3, Part F, 3.4.4.5-6, 3.4.6.1-2; an Error Response naming it, 3.4.1.1); a run of pieces starts at
    /// another handle or at an offset not past the last, so a value moved again counts again.
    @Test func longValuesAreTimedToTheirAnswersAndCountedInRuns() throws {
        var m = LinkMachine(startFrame: 1)
        let pdus: [([UInt8], Direction, Int64)] = [
            ([0x0C, 0x2C, 0x00, 0x16, 0x00], .tx, 0),  // 1: Read Blob 0x002C at 22: a run starts
            ([0x0D] + [UInt8](repeating: 1, count: 22), .rx, 30),  // 2: its response, 30 ms
            ([0x0C, 0x2C, 0x00, 0x2C, 0x00], .tx, 40),  // 3: at 44: the same run
            ([0x01, 0x0C, 0x2C, 0x00, 0x07], .rx, 70),  // 4: Error Response (Invalid Offset) to it, 30 ms
            ([0x1B, 0x2A, 0x00, 1], .rx, 80),  // 5: a notification: no answer
            ([0x0C, 0x2C, 0x00, 0x16, 0x00], .tx, 1_000),  // 6: 0x002C at 22 again: a second run, unanswered
            ([0x16, 0x2D, 0x00, 0x00, 0x00, 9], .tx, 1_010),  // 7: Prepare Write 0x002D at 0: a third run
            ([0x16, 0x2D, 0x00, 0x00, 0x00, 9], .tx, 1_020),  // 8: the same piece the same way: not an answer
            ([0x17, 0x2D, 0x00, 0x00, 0x00, 9], .rx, 1_060),  // 9: Prepare Write Response, 40 ms after 8
        ]
        for (i, (bytes, direction, ms)) in pdus.enumerated() {
            try bytes.withUnsafeBytes { raw in
                m.feed(att: try #require(ATTView(raw)), at: Self.moment(1 + i, ms: ms), direction: direction, activity: true)
            }
        }
        let l = m.activity.longValues
        #expect(m.activity.longValueRequests == 5 && l.answered == 3 && l.roundTripMicroseconds == 100_000)
        #expect(l.runs == 4 && l.first?.frame == 1 && l.last?.frame == 8)
        #expect(l.mostRepeated.map { [Int($0.handle), $0.runs] } == [0x2C, 2])
    }
}
