import BLEAnalysis
import BLEAnalysisTestSupport
import BLECore
import Testing

@Suite struct L2CAPReassemblerTests {
    /// An L2CAP PDU on the ATT channel carrying a notification of `valueLength` bytes.
    static func pdu(valueLength: Int, seed: UInt8 = 1) -> [UInt8] {
        let att: [UInt8] = [0x1B, 0x2A, 0x00] + (0..<valueLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
        return [UInt8(att.count & 0xFF), UInt8(att.count >> 8), 0x04, 0x00] + att
    }

    static func feedAll(_ fragments: [[UInt8]], starts: [Bool]? = nil) -> (pdus: [[UInt8]], findings: [Finding], frames: [(Int, Int)]) {
        var r = L2CAPReassembler()
        var findings: [Finding] = []
        var out: [[UInt8]] = []
        var frames: [(Int, Int)] = []
        for (i, f) in fragments.enumerated() {
            f.withUnsafeBytes { raw in
                let start = starts?[i] ?? (i == 0)
                r.feed(
                    L2CAPFragment(isStart: start, payload: raw, frame: i + 1, timestamp: Timestamp(microseconds: Int64(i))),
                    findings: &findings
                ) { pdu in
                    out.append(Array(pdu.bytes))
                    frames.append((pdu.firstFrame, pdu.lastFrame))
                }
            }
        }
        r.finish(findings: &findings, frame: fragments.count)
        return (out, findings, frames)
    }

    @Test(arguments: [1, 2, 3, 4, 5, 27, 100, 251, 1000])
    func fragmentSizeNeverChangesTheResult(_ size: Int) {
        let pdu = Self.pdu(valueLength: 509)
        let fragments = stride(from: 0, to: pdu.count, by: size).map { Array(pdu[$0..<min($0 + size, pdu.count)]) }
        let result = Self.feedAll(fragments)
        #expect(result.pdus == [pdu])
        #expect(result.findings.isEmpty)
        #expect(result.frames.first! == (1, fragments.count))
    }

    @Test func continuationWithoutStartIsReportedAndDropped() {
        let pdu = Self.pdu(valueLength: 10)
        let result = Self.feedAll([Array(pdu[4...]), pdu], starts: [false, true])
        #expect(result.pdus == [pdu])
        #expect(result.findings.map(\.kind.code.id) == ["l2cap.unexpected-continuation"])
        #expect(result.findings.first?.frame == 1)
    }

    @Test func newStartBeforeCompletionDiscardsThePartialPDU() {
        let a = Self.pdu(valueLength: 40), b = Self.pdu(valueLength: 5, seed: 9)
        let result = Self.feedAll([Array(a[0..<20]), b], starts: [true, true])
        #expect(result.pdus == [b])
        #expect(result.findings.map(\.kind.code.id) == ["l2cap.incomplete-sdu"])
        #expect(result.findings.first?.frame == 2)
    }

    /// A PDU in progress when its link ends is cut by that end, not by the end of the capture (DA14680's air capture:
    /// the PDU of frame 68 cut by the link's inferred end at 69, said 'cut by the end of the capture' before).
    @Test func aPDUCutByItsLinksEndSaysSo() {
        let pdu = Self.pdu(valueLength: 40)
        var findings: [Finding] = []
        for end in [L2CAPReassembler.End.linkEnded(frame: 9), .captureEnded] {
            var r = L2CAPReassembler()
            Array(pdu[0..<20]).withUnsafeBytes { raw in
                r.feed(L2CAPFragment(isStart: true, payload: raw, frame: 4, timestamp: Timestamp(microseconds: 0)), findings: &findings) {
                    _ in
                }
            }
            r.finish(findings: &findings, frame: 9, end: end)
        }
        #expect(findings.map(\.kind.code.id) == ["l2cap.cut-by-end", "l2cap.cut-by-end"])
        #expect(
            findings.map(\.kind.message) == [
                "L2CAP PDU started at frame 4 is cut by the link's end at frame 9 (20 of 47 bytes)",
                "L2CAP PDU started at frame 4 is cut by the end of the capture (20 of 47 bytes)",
            ])
        // A start shorter than the basic header (SweynTooth's ATSAMB11 capture, frame 73: 1 byte) never said its length.
        var short = L2CAPReassembler()
        var shortFindings: [Finding] = []
        [UInt8(0x05)].withUnsafeBytes { raw in
            short.feed(
                L2CAPFragment(isStart: true, payload: raw, frame: 73, timestamp: Timestamp(microseconds: 0)), findings: &shortFindings
            ) { _ in }
        }
        short.finish(findings: &shortFindings, frame: 73, end: .linkEnded(frame: 73))
        #expect(
            shortFindings.last?.kind.message
                == "L2CAP PDU started at frame 73 is cut by the link's end at frame 73 (1 of the basic header's 4 bytes: its length never read)"
        )
    }

    @Test func extraBytesAreFlagged() {
        let a = Self.pdu(valueLength: 4)
        let result = Self.feedAll([Array(a[0..<5]), Array(a[5...]) + [0xEE, 0xEE]])
        #expect(result.pdus == [a])
        #expect(result.findings.map(\.kind.code.id) == ["l2cap.frame-too-long"])
    }

    @Test func pduCutByTheEndOfTheCaptureIsReported() {
        let a = Self.pdu(valueLength: 100)
        let result = Self.feedAll([Array(a[0..<30]), Array(a[30..<60])])
        #expect(result.pdus.isEmpty)
        #expect(result.findings.map(\.kind.code.id) == ["l2cap.cut-by-end"])
        #expect(result.findings.first?.message.contains("60 of 107 bytes") == true)
    }
}
