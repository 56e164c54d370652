import BLEAnalysis
import BLEAnalysisTestSupport
import BLECore
import Testing

/// The one SMP reassembler of the transfer and OTA trackers.
@Suite struct SMPReassemblerTests {
    static func message(_ id: UInt8, body: Int) -> [UInt8] {
        SMPHeader(op: 2, flags: 0, length: UInt16(body), group: 1, sequence: id, id: 1).bytes
            + (0..<body).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(id)) }
    }

    /// Fragment size never changes the messages, their chunk counts or first frames.
    @Test(arguments: [1, 2, 5, 27, 251])
    func reassemblesAnyFragmentSize(_ size: Int) throws {
        let stream = Self.message(1, body: 300) + Self.message(2, body: 0) + Self.message(3, body: 40)
        var r = SMPReassembler()
        var got: [SMPReassembler.Message] = []
        for (i, chunk) in chunked(stream, size).enumerated() {
            got += try chunk.withUnsafeBytes { b throws(SMPReassembler.Failure) in
                try r.feed(b, frame: i + 1, time: Timestamp(microseconds: Int64(i)))
            }
        }
        #expect(got.map(\.bytes) == [Self.message(1, body: 300), Self.message(2, body: 0), Self.message(3, body: 40)])
        #expect(got.map { $0.header?.sequence } == [1, 2, 3])
        #expect(got.first?.chunks == (308 + size - 1) / size)
        #expect(got.first?.firstFrame == 1)
        #expect(r.pending == nil)
    }

    @Test func cutMessageIsPendingAndBadStartIsNamed() throws {
        var r = SMPReassembler()
        let m = Self.message(4, body: 20)
        let done = try Array(m[0..<12]).withUnsafeBytes { b throws(SMPReassembler.Failure) in
            try r.feed(b, frame: 7, time: Timestamp(microseconds: 0))
        }
        #expect(done.isEmpty)
        #expect(r.pending?.bytes == Array(m[0..<12]))
        #expect(r.pending?.header?.length == 20)
        r.reset()
        #expect(r.pending == nil)
        #expect(throws: SMPReassembler.Failure.notAMessageStart(opByte: 0x24)) {
            try [0x24, 0, 0, 0].withUnsafeBytes { b throws(SMPReassembler.Failure) in
                try r.feed(b, frame: 8, time: Timestamp(microseconds: 0))
            }
        }
    }
}
