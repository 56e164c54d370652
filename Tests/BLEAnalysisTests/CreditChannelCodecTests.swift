import BLEAnalysis
import BLEAnalysisTestSupport
import BLECodecs
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// A codec spec that matches an LE credit-based channel by PSM (`match: {psm: 0x0080}`): the channel's SDUs are
/// decoded like attribute values and reach the timeline, transfers and throughput. Captures built from typed packets;
/// the expected values are those the test puts in the SDUs.
@Suite struct CreditChannelCodecTests {
    /// A record protocol over LE CoC: the phone asks for a count, the device sends that many records, each with an
    /// index and a payload, closed by an XOR byte.
    static let spec = """
        codec: coc-records
        match: {psm: 0x0080}
        checksum: {algorithm: xor8, from: 0, to: -1, at: -1}
        fields:
          - {name: sync, type: u8, expect: 0xC0, hidden: true}
          - {name: command, type: u8, hidden: true}
        select: command
        messages:
          - id: 0x01
            name: countRequest
            direction: tx
            fields: [{name: total, type: u16le, role: total-count}]
          - id: 0x02
            name: record
            direction: rx
            fields:
              - {name: index, type: u16le, role: sequence}
              - {name: data, type: bytes}
        """

    static func frame(_ body: [UInt8]) -> [UInt8] { body + [body.reduce(0, ^)] }
    static func record(_ i: Int) -> [UInt8] { frame([0xC0, 0x02, UInt8(i), 0] + (0..<60).map { UInt8(truncatingIfNeeded: $0 * 7 + i) }) }

    /// LE CoC to PSM 0x0080 on handle 0x0040: we (tx) receive on 0x0040, the device on 0x0070; MPS 50, so each
    /// 65-byte record SDU (+2 length bytes) takes two K-frames. Returns the builder and the frames of the last K-frame of each SDU.
    static func capture(records: Int, badRecord: Int? = nil) -> (CaptureBuilder, request: Int, records: [Int]) {
        var b = CaptureBuilder().connect(handle: 0x0040)
            .signal(
                .leCreditBasedConnectionRequest(spsm: 0x0080, sourceCID: 0x0040, mtu: 512, mps: 50, initialCredits: 20),
                identifier: 1, handle: 0x0040, .tx, cid: 0x0005
            )
            .signal(
                .leCreditBasedConnectionResponse(destinationCID: 0x0070, mtu: 512, mps: 50, initialCredits: 20, result: 0),
                identifier: 1, handle: 0x0040, .rx, cid: 0x0005)
        func send(_ sdu: [UInt8], cid: UInt16, _ direction: Direction) -> Int {
            let stream = [UInt8(sdu.count & 0xFF), UInt8(sdu.count >> 8)] + sdu
            for start in stride(from: 0, to: stream.count, by: 50) {
                b = b.l2cap(cid: cid, payload: Array(stream[start..<min(stream.count, start + 50)]), handle: 0x0040, direction)
            }
            return b.nextFrame - 1
        }
        let request = send(frame([0xC0, 0x01, UInt8(records), 0]), cid: 0x0070, .tx)
        var frames: [Int] = []
        for i in 0..<records {
            var r = record(i)
            if i == badRecord { r[r.count - 1] ^= 0xFF }
            frames.append(send(r, cid: 0x0040, .rx))
        }
        return (b, request, frames)
    }

    static func options(_ extraSpecs: [String] = []) throws -> AnalyzerOptions {
        let registry = CodecRegistry()
        try registry.load(specText: spec)
        for s in extraSpecs { try registry.load(specText: s) }
        return AnalyzerOptions(codecs: registry)
    }

    @Test func sdusOfTheMatchingPSMAreDecodedInTheTimeline() throws {
        let (b, request, frames) = Self.capture(records: 4)
        let (analyzer, events) = try AnalyzerRun.analyze(b, options: try Self.options())
        let sdus = events.filter { $0.name == "LE Credit Based SDU" }
        #expect(sdus.map(\.frame) == [request] + frames)
        #expect(sdus.map { $0.decoded?.codec } == Array(repeating: "coc-records", count: 5))
        #expect(sdus.map { $0.decoded?.message } == ["countRequest", "record", "record", "record", "record"])
        #expect(sdus.first?.decoded?.roles[.totalCount]?.intValue == 4)
        #expect(sdus.dropFirst().map { $0.decoded?.roles[.sequence]?.intValue } == [0, 1, 2, 3])
        #expect(sdus.allSatisfy { $0.decoded?.valid == true })
        #expect(analyzer.findings.isEmpty)
    }

    @Test func aBadChecksumIsAFindingNamingTheChannel() throws {
        let (b, _, frames) = Self.capture(records: 3, badRecord: 1)
        let (analyzer, _) = try AnalyzerRun.analyze(b, options: try Self.options())
        let bad = analyzer.findings.filter { $0.kind.code.id == "codec.invalid" }
        #expect(bad.map(\.frame) == [frames[1]])
        #expect(bad.first?.kind.message.contains("CID 0x0040 (PSM 0x0080)") == true)
    }

    @Test func recordsOverTheChannelAreATransferAndAThroughputStream() throws {
        let (b, request, frames) = Self.capture(records: 5)
        let (analyzer, _) = try AnalyzerRun.analyze(
            b, options: try Self.options(),
            observers: [ChunkedTransferTracker(), ThroughputTracker()])
        let transfers = try #require(analyzer.observers.first as? ChunkedTransferTracker).transfers
        #expect(transfers.count == 1)
        let t = try #require(transfers.first)
        #expect(t.codec == "coc-records" && t.complete && t.expectedCount == 5 && t.chunks == 5)
        #expect(t.countFrame == request && t.lastFrame == frames.last)
        #expect(t.data == (0..<5).flatMap { Self.record($0) })
        let throughput = try #require(analyzer.observers.last as? ThroughputTracker)
        let s = try #require(throughput.streams.first { $0.key.kind == .creditSDU && $0.key.direction == .rx })
        #expect(s.psm == 0x0080 && s.packets == 5 && s.valueBytes == 5 * 65)
    }

    @Test func specsWithoutPSMLeaveChannelDataAloneAndPSMSpecsLeaveAttributesAlone() throws {
        // An attribute spec that would accept any value starting C0, and a spec with no match at all.
        let prefixOnly = "codec: any-c0\nmatch: {prefix: C0}\nfields: [{name: b, type: bytes}]\n"
        let registry = CodecRegistry()
        try registry.load(specText: prefixOnly)
        let sdu = Self.record(0)
        #expect(registry.decode(sdu, context: CodecContext(direction: .rx, psm: 0x0080)) == nil)
        #expect(registry.decode(sdu, context: CodecContext(handle: 9, direction: .rx, operation: .notify))?.codec == "any-c0")
        try registry.load(specText: Self.spec)
        #expect(registry.decode(sdu, context: CodecContext(direction: .rx, psm: 0x0080))?.codec == "coc-records")
        #expect(registry.decode(sdu, context: CodecContext(direction: .rx, psm: 0x0081)) == nil)
        let psmOnly = CodecRegistry()
        try psmOnly.load(specText: Self.spec)
        #expect(psmOnly.decode(sdu, context: CodecContext(handle: 9, direction: .rx, operation: .notify)) == nil)
        #expect(!psmOnly.mayDecode(CodecContext(handle: 9)))
        #expect(psmOnly.mayDecode(CodecContext(psm: 0x0080)))
    }

    @Test func psmWithAnAttributeKeyIsASpecError() {
        let text = "codec: x\nmatch: {psm: 0x0080, characteristic: FFE1}\nfields: [{name: b, type: bytes}]\n"
        #expect(throws: CodecSpecError.self) { try CodecRegistry().load(specText: text) }
        let zero = "codec: x\nmatch: {psm: 0}\nfields: [{name: b, type: bytes}]\n"
        #expect(throws: CodecSpecError.self) { try CodecRegistry().load(specText: zero) }
    }
}
