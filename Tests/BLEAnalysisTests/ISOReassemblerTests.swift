import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import Testing

@testable import BLEAnalysis

/// ``ISOReassembler`` and ``ISOHeader`` (Core Spec Vol 4, Part E, 5.4.5), from packets built field by field.
@Suite struct ISOReassemblerTests {
    static let sdu: [UInt8] = (0..<120).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 5) }

    /// The HCI ISO data packets of one SDU cut into fragments of `size` bytes (the first carries the SDU header).
    static func packets(_ sdu: [UInt8], size: Int, sequence: UInt16 = 7, status: ISOPacketStatus = .valid, ts: UInt32? = 123_456)
        -> [[UInt8]]
    {
        if sdu.count <= size {
            return [
                ISOHeader(
                    handle: 0x60, boundary: .complete, timestamp: ts, sequenceNumber: sequence, sduLength: UInt16(sdu.count),
                    status: status, fragmentLength: sdu.count
                ).packet(sdu)
            ]
        }
        var out: [[UInt8]] = []
        var at = 0
        while at < sdu.count {
            let piece = Array(sdu[at..<min(sdu.count, at + size)])
            let boundary: ISOPacketBoundary = at == 0 ? .first : at + size >= sdu.count ? .last : .continuation
            let header = ISOHeader(
                handle: 0x60, boundary: boundary, timestamp: at == 0 ? ts : nil, sequenceNumber: sequence,
                sduLength: UInt16(sdu.count), status: status, fragmentLength: piece.count)
            out.append(header.packet(piece))
            at += size
        }
        return out
    }

    static func feed(_ packet: [UInt8], into r: inout ISOReassembler, frame: Int, findings: inout [Finding]) throws -> ISOSDU? {
        try packet.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) throws -> ISOSDU? in
            var reader = ByteReader(buffer)
            let header = try ISOHeader(parsing: &reader)
            let payload = UnsafeRawBufferPointer(rebasing: buffer[header.fragmentOffset..<(header.fragmentOffset + header.fragmentLength)])
            return r.feed(
                ISOFragment(header: header, payload: payload, frame: frame, timestamp: Timestamp(microseconds: Int64(frame))),
                findings: &findings)
        }
    }

    @Test(arguments: Array(1...121))
    func reassemblesAnyFragmentSize(_ size: Int) throws {
        var r = ISOReassembler(keepsBytes: true)
        var findings: [Finding] = []
        let packets = Self.packets(Self.sdu, size: size)
        var out: [ISOSDU] = []
        for (i, p) in packets.enumerated() {
            if let s = try Self.feed(p, into: &r, frame: i + 1, findings: &findings) { out.append(s) }
        }
        #expect(findings.isEmpty)
        let s = try #require(out.first)
        #expect(out.count == 1)
        #expect(s.bytes == Self.sdu)
        #expect(s.length == 120 && s.received == 120)
        #expect(s.sequenceNumber == 7 && s.controllerTimestamp == 123_456 && s.status == .valid)
        #expect(s.fragments == packets.count && s.firstFrame == 1 && s.lastFrame == packets.count)
        #expect(!r.inProgress)
    }

    @Test func headerFieldsReadAsWritten() throws {
        let bytes: [UInt8] = [0x60, 0x60, 0x0C, 0x00, 0x94, 0x1A, 0x67, 0x2A, 0x05, 0x00, 0x28, 0x40, 0xAA, 0xBB, 0xCC, 0xDD]
        // handle 0x060, PB 10 (complete), TS 1; load 12: time stamp 0x2A671A94, seq 5, SDU length 40, status 01.
        let h = try bytes.withUnsafeBytes { (b: UnsafeRawBufferPointer) throws -> ISOHeader in
            var r = ByteReader(b)
            return try ISOHeader(parsing: &r)
        }
        #expect(h.handle == 0x060 && h.boundary == .complete && h.timestamp == 0x2A67_1A94)
        #expect(h.sequenceNumber == 5 && h.sduLength == 40 && h.status == .possiblyInvalid)
        #expect(h.fragmentOffset == 12 && h.fragmentLength == 4 && h.loadLength == 12)
        #expect(h.packet([0xAA, 0xBB, 0xCC, 0xDD]) == bytes)
    }

    @Test func aLoadLongerThanTheRecordIsAnError() {
        let bytes: [UInt8] = [0x60, 0x20, 0x10, 0x00, 0x01, 0x00]
        #expect(throws: DecodeError.self) {
            try bytes.withUnsafeBytes { (b: UnsafeRawBufferPointer) throws in
                var r = ByteReader(b)
                _ = try ISOHeader(parsing: &r)
            }
        }
    }

    @Test func aContinuationWithoutAFirstFragmentIsDropped() throws {
        var r = ISOReassembler()
        var findings: [Finding] = []
        let packets = Self.packets(Self.sdu, size: 50)
        #expect(try Self.feed(packets[1], into: &r, frame: 1, findings: &findings) == nil)
        #expect(try Self.feed(packets[2], into: &r, frame: 2, findings: &findings) == nil)
        #expect(findings.map(\.kind.code.id) == ["iso.unexpected-continuation", "iso.unexpected-continuation"])
    }

    @Test func aNewSDUBeforeTheLastEndedDiscardsIt() throws {
        var r = ISOReassembler()
        var findings: [Finding] = []
        let first = Self.packets(Self.sdu, size: 50)
        let second = Self.packets([1, 2, 3], size: 50, sequence: 8)
        #expect(try Self.feed(first[0], into: &r, frame: 1, findings: &findings) == nil)
        let s = try #require(try Self.feed(second[0], into: &r, frame: 2, findings: &findings))
        #expect(s.sequenceNumber == 8 && s.length == 3)
        #expect(findings.map(\.kind.code.id) == ["iso.incomplete-sdu"])
        #expect(findings.first?.frame == 2)
    }

    @Test func moreBytesThanAnnouncedAreCutAndSaid() throws {
        var r = ISOReassembler(keepsBytes: true)
        var findings: [Finding] = []
        let packet = ISOHeader(handle: 1, boundary: .complete, sequenceNumber: 1, sduLength: 2, fragmentLength: 4).packet([9, 8, 7, 6])
        let s = try #require(try Self.feed(packet, into: &r, frame: 1, findings: &findings))
        #expect(s.bytes == [9, 8] && s.received == 2)
        #expect(findings.map(\.kind.code.id) == ["iso.sdu-too-long"])
    }

    @Test func aLostSDUIsWholeAndEmpty() throws {
        var r = ISOReassembler()
        var findings: [Finding] = []
        let packet = ISOHeader(handle: 1, boundary: .complete, sequenceNumber: 9, sduLength: 0, status: .lost, fragmentLength: 0).packet([])
        let s = try #require(try Self.feed(packet, into: &r, frame: 1, findings: &findings))
        #expect(s.status == .lost && s.received == 0 && findings.isEmpty)
    }

    @Test func anSDUCutByTheEndOfTheCaptureIsSaid() throws {
        var r = ISOReassembler()
        var findings: [Finding] = []
        _ = try Self.feed(Self.packets(Self.sdu, size: 50)[0], into: &r, frame: 1, findings: &findings)
        r.finish(findings: &findings, frame: 9)
        #expect(findings.map(\.kind.code.id) == ["iso.cut-by-end"])
    }

    /// The health counts of a stream built packet by packet: gaps, flags, bursts, wrap of the sequence numbers.
    @Test func accumulatorCountsGapsFlagsAndWrap() {
        var a = ISOAccumulator(controller: 0, handle: 1, direction: .rx)
        a.interval = 10_000
        var findings: [Finding] = []
        let sequences: [(UInt16, ISOPacketStatus)] = [
            (0xFFFD, .valid), (0xFFFE, .valid), (0x0001, .valid), (0x0002, .lost), (0x0003, .lost), (0x0004, .possiblyInvalid),
            (0x0004, .valid), (0x0005, .valid),
        ]
        for (i, (seq, status)) in sequences.enumerated() {
            let h = ISOHeader(
                handle: 1, boundary: .complete, timestamp: UInt32(i) * 10_000, sequenceNumber: seq, sduLength: 4, status: status,
                fragmentLength: status == .lost ? 0 : 4)
            a.add(h, frame: i + 1, timestamp: Timestamp(microseconds: Int64(i) * 10_000), findings: &findings)
        }
        let health = a.health(stream: nil)
        #expect(health.expectedSDUs == 9)  // 0xFFFD … 0x0005 unwrapped
        #expect(health.missingSDUs == 2 && health.sequenceGaps == 1)  // 0xFFFF, 0x0000
        #expect(health.flaggedLost == 2 && health.possiblyInvalid == 1 && health.outOfOrder == 1)
        #expect(health.lostSDUs == 4 && health.lossBursts == 2)
        #expect(health.longestBurst?.sdus == 2)
    }

    /// A damaged record's time stamp can be anything: consecutive SDUs whose host times are Int64.min and Int64.max
    /// apart (the seeded fuzzer found this, an arithmetic-overflow trap) are counted, their step is no measurement.
    @Test func extremeTimeStampsAreNoStep() {
        var a = ISOAccumulator(controller: 0, handle: 1, direction: .rx)
        a.interval = 10_000
        var findings: [Finding] = []
        for (i, t) in [Int64.min + 1, Int64.max, 0].enumerated() {
            let h = ISOHeader(
                handle: 1, boundary: .complete, timestamp: UInt32(i) &* 3_000_000_000, sequenceNumber: UInt16(i * 3), sduLength: 4,
                status: .valid, fragmentLength: 4)
            a.add(h, frame: i + 1, timestamp: Timestamp(microseconds: t), findings: &findings)
        }
        #expect(a.health(stream: nil).sdus == 3)
    }
}
