import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// The long-read and prepared-write assemblers of an ATT bearer, fed typed PDUs (round-tripped through their wire bytes,
/// as the analyzer gets them). Expected values are the bytes the tests split up, worked out by hand.
@Suite struct ATTAssemblerTests {
    /// A PDU as the analyzer sees it: encoded, then decoded from its bytes.
    static func wire(_ pdu: ATTPDU) throws -> ATTPDU { try ATTPDU(bytes: pdu.bytes) }

    /// 49 bytes: at ATT_MTU 23 a Read Response and a Read Blob Response carry 22 each, the last Read Blob Response 5.
    static let name = Array("Heart rate sensor, left chest strap, serial 4711.".utf8)

    static func read(
        _ pdu: ATTPDU, _ assembler: inout LongReadAssembler, request: (handle: UInt16, frame: Int)? = nil,
        frame: Int, mtu: Int = 23
    ) throws -> LongReadAssembler.Output? {
        assembler.feed(
            .init(
                pdu: try wire(pdu), requestHandle: request?.handle, requestFrame: request?.frame ?? 0, frame: frame,
                direction: pdu.opcode.isResponse ? .rx : .tx, mtu: mtu))
    }

    @Test func longReadEndsAtAShortBlob() throws {
        #expect(Self.name.count == 49)
        var a = LongReadAssembler()
        #expect(try Self.read(.readRequest(handle: 0x0003), &a, frame: 1) == nil)
        #expect(try Self.read(.readResponse(value: Array(Self.name[0..<22])), &a, request: (0x0003, 1), frame: 2) == nil)
        #expect(a.heldBytes == 22)
        #expect(try Self.read(.readBlobRequest(handle: 0x0003, offset: 22), &a, frame: 3) == nil)
        #expect(try Self.read(.readBlobResponse(value: Array(Self.name[22..<44])), &a, request: (0x0003, 3), frame: 4) == nil)
        #expect(try Self.read(.readBlobRequest(handle: 0x0003, offset: 44), &a, frame: 5) == nil)
        let out = try Self.read(.readBlobResponse(value: Array(Self.name[44...])), &a, request: (0x0003, 5), frame: 6)
        #expect(out == .longRead(.init(handle: 0x0003, value: Self.name, frames: [1, 2, 3, 4, 5, 6], direction: .rx)))
        #expect(a.current == nil && a.heldBytes == 0)
    }

    @Test func longReadEndingAtAFullPDUEndsWithItsErrorResponse() throws {
        // 44 bytes at ATT_MTU 23: two full responses, then Invalid Offset for the Read Blob at 44 (Vol 3, Part F, 3.4.4.6).
        var a = LongReadAssembler()
        _ = try Self.read(.readResponse(value: Array(Self.name[0..<22])), &a, request: (0x0010, 1), frame: 2)
        _ = try Self.read(.readBlobRequest(handle: 0x0010, offset: 22), &a, frame: 3)
        #expect(try Self.read(.readBlobResponse(value: Array(Self.name[22..<44])), &a, request: (0x0010, 3), frame: 4) == nil)
        _ = try Self.read(.readBlobRequest(handle: 0x0010, offset: 44), &a, frame: 5)
        let error = ATTPDU.errorResponse(.init(requestOpcode: .readBlobRequest, handle: 0x0010, error: .invalidOffset))
        #expect(
            try Self.read(error, &a, frame: 6)
                == .longRead(
                    .init(
                        handle: 0x0010, value: Array(Self.name[0..<44]), frames: [1, 2, 3, 4],
                        direction: .rx)))
    }

    @Test func aShortReadIsNoLongReadAndALoneBlobIsAPart() throws {
        var a = LongReadAssembler()
        #expect(try Self.read(.readResponse(value: [0x64]), &a, request: (0x0020, 1), frame: 2) == nil)  // battery 100 %
        #expect(a.current == nil)
        // A Read Blob answered with no Read Response before it: the part goes on by itself.
        #expect(
            try Self.read(.readBlobResponse(value: [0x01, 0x02]), &a, request: (0x0020, 3), frame: 4)
                == .blobPart(handle: 0x0020, value: [0x01, 0x02]))
        // A response whose request is not in the capture starts nothing.
        #expect(try Self.read(.readResponse(value: Array(Self.name[0..<22])), &a, frame: 5) == nil)
        #expect(a.current == nil)
    }

    @Test func anotherReadEndsALongReadAndWritesDoNot() throws {
        var a = LongReadAssembler()
        _ = try Self.read(.readResponse(value: Array(Self.name[0..<22])), &a, request: (0x0003, 1), frame: 2)
        _ = try Self.read(.readBlobRequest(handle: 0x0003, offset: 22), &a, frame: 3)
        _ = try Self.read(.readBlobResponse(value: Array(Self.name[22..<44])), &a, request: (0x0003, 3), frame: 4)
        #expect(try Self.read(.writeRequest(handle: 0x0011, value: [0x01, 0x00]), &a, frame: 5) == nil)
        #expect(try Self.read(.prepareWriteRequest(handle: 0x0011, offset: 0, value: [0x01]), &a, frame: 6) == nil)
        #expect(try Self.read(.exchangeMTURequest(clientRxMTU: 247), &a, frame: 6) == nil)
        #expect(a.heldBytes == 44)
        // A Read Blob at another offset than the 44 bytes read: the long read ended there.
        #expect(
            try Self.read(.readBlobRequest(handle: 0x0003, offset: 10), &a, frame: 7)
                == .longRead(.init(handle: 0x0003, value: Array(Self.name[0..<44]), frames: [1, 2, 3, 4], direction: .rx)))
        _ = try Self.read(.readResponse(value: Array(Self.name[0..<22])), &a, request: (0x0003, 8), frame: 9)
        _ = try Self.read(.readBlobRequest(handle: 0x0003, offset: 22), &a, frame: 10)
        _ = try Self.read(.readBlobResponse(value: Array(Self.name[22..<44])), &a, request: (0x0003, 10), frame: 11)
        #expect(
            try Self.read(.readRequest(handle: 0x0005), &a, frame: 12)
                == .longRead(.init(handle: 0x0003, value: Array(Self.name[0..<44]), frames: [8, 9, 10, 11], direction: .rx)))
    }

    @Test func fullMeansTheBearersMTU() throws {
        // At ATT_MTU 64 (an enhanced bearer's) 22 bytes are a short response, 63 a full one.
        var a = LongReadAssembler()
        _ = try Self.read(.readResponse(value: Array(Self.name[0..<22])), &a, request: (0x0003, 1), frame: 2, mtu: 64)
        #expect(a.current == nil)
        let value = (0..<70).map { UInt8($0) }
        _ = try Self.read(.readResponse(value: Array(value[0..<63])), &a, request: (0x0003, 3), frame: 4, mtu: 64)
        _ = try Self.read(.readBlobRequest(handle: 0x0003, offset: 63), &a, frame: 5, mtu: 64)
        #expect(
            try Self.read(.readBlobResponse(value: Array(value[63...])), &a, request: (0x0003, 5), frame: 6, mtu: 64)
                == .longRead(.init(handle: 0x0003, value: value, frames: [3, 4, 5, 6], direction: .rx)))
    }

    static func write(_ pdu: ATTPDU, _ assembler: inout PreparedWriteAssembler, frame: Int) throws -> [PreparedWriteAssembler.LongWrite]? {
        assembler.feed(try wire(pdu), frame: frame)
    }

    @Test func preparedWritesAreWrittenByHandleInOrder() throws {
        var a = PreparedWriteAssembler()
        let text = Array("OTA image header v2".utf8)  // 19 bytes, written 8 + 8 + 3
        #expect(try Self.write(.prepareWriteRequest(handle: 0x0030, offset: 0, value: Array(text[0..<8])), &a, frame: 1) == nil)
        #expect(try Self.write(.prepareWriteRequest(handle: 0x0040, offset: 0, value: [0xAA, 0xBB]), &a, frame: 3) == nil)
        #expect(try Self.write(.prepareWriteRequest(handle: 0x0030, offset: 8, value: Array(text[8..<16])), &a, frame: 5) == nil)
        #expect(try Self.write(.prepareWriteRequest(handle: 0x0030, offset: 16, value: Array(text[16...])), &a, frame: 7) == nil)
        #expect(a.heldBytes == 21)
        let out = try Self.write(.executeWriteRequest(flags: 0x01), &a, frame: 9)
        #expect(
            out == [
                .init(handle: 0x0030, value: text, frames: [1, 5, 7], gaps: []),
                .init(handle: 0x0040, value: [0xAA, 0xBB], frames: [3], gaps: []),
            ])
        #expect(a.parts.isEmpty)
    }

    @Test func gapsPadWithZerosAndOverlapsOverwrite() throws {
        var a = PreparedWriteAssembler()
        _ = try Self.write(.prepareWriteRequest(handle: 0x0030, offset: 0, value: [1, 2, 3, 4]), &a, frame: 1)
        _ = try Self.write(.prepareWriteRequest(handle: 0x0030, offset: 2, value: [9, 9]), &a, frame: 3)  // overwrites 3, 4
        _ = try Self.write(.prepareWriteRequest(handle: 0x0030, offset: 6, value: [7]), &a, frame: 5)  // 2 bytes past the end
        let out = try Self.write(.executeWriteRequest(flags: 0x01), &a, frame: 7)
        #expect(
            out == [
                .init(
                    handle: 0x0030, value: [1, 2, 9, 9, 0, 0, 7], frames: [1, 3, 5],
                    gaps: [.init(frame: 3, offset: 2, expected: 4), .init(frame: 5, offset: 6, expected: 4)])
            ])
    }

    @Test func cancelledWritesAreDropped() throws {
        var a = PreparedWriteAssembler()
        _ = try Self.write(.prepareWriteRequest(handle: 0x0030, offset: 0, value: [1, 2, 3]), &a, frame: 1)
        #expect(try Self.write(.executeWriteRequest(flags: 0x00), &a, frame: 3) == nil)
        #expect(a.parts.isEmpty)
        #expect(try Self.write(.executeWriteRequest(flags: 0x01), &a, frame: 5) == [])
        // Other PDUs leave the queue alone.
        _ = try Self.write(.prepareWriteRequest(handle: 0x0030, offset: 0, value: [1]), &a, frame: 7)
        #expect(try Self.write(.writeRequest(handle: 0x0030, value: [5]), &a, frame: 9) == nil)
        #expect(a.parts.count == 1)
    }

    @Test func theQueueIsBounded() throws {
        var a = PreparedWriteAssembler()
        for i in 0..<(PreparedWriteAssembler.maxParts + 10) {
            _ = try Self.write(
                .prepareWriteRequest(handle: 0x0030, offset: UInt16(i), value: [UInt8(truncatingIfNeeded: i)]), &a, frame: i + 1)
        }
        #expect(a.parts.count == PreparedWriteAssembler.maxParts)
        let out = try #require(try Self.write(.executeWriteRequest(flags: 0x01), &a, frame: 9_000))
        #expect(out.first?.value == (0..<PreparedWriteAssembler.maxParts).map { UInt8(truncatingIfNeeded: $0) })
    }

    /// The same long read carried on an enhanced ATT bearer (ATT_MTU 64, K-frames of 23 bytes) through the analyzer.
    @Test func longReadOnAnEnhancedBearer() throws {
        let value = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let eatt = TestBearer.eatt(cid: 0x0041, mps: 23), back = TestBearer.eatt(cid: 0x0040, mps: 23)
        let b = CaptureBuilder().connect(handle: 0x40)
            .openEATT(handle: 0x40, cids: [(local: 0x0040, remote: 0x0041)], localMTU: 64, remoteMTU: 64, mps: 23)
            .att(.readRequest(handle: 0x0003), handle: 0x40, .tx, bearer: eatt)
            .att(.readResponse(value: Array(value[0..<63])), handle: 0x40, .rx, bearer: back)
            .att(.readBlobRequest(handle: 0x0003, offset: 63), handle: 0x40, .tx, bearer: eatt)
            .att(.readBlobResponse(value: Array(value[63...])), handle: 0x40, .rx, bearer: back)
        let (_, events) = try AnalyzerRun.analyze(b)
        let read = try #require(events.first { $0.name == "Long Read" })
        #expect(read.value == value && read.handle == 0x0003)
    }
}
