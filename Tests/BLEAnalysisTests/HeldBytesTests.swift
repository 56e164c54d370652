import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// Hostile traffic that opens many L2CAP PDUs and never finishes them: what the analyzer holds stays
/// within its budget, a `limit.held-bytes` finding says so, and decoding goes on.
@Suite struct HeldBytesTests {
    /// `connections` handles, each sending a start fragment that announces a 65,535-byte PDU followed by
    /// `continuations` fragments of 1,000 bytes, round robin; then one whole notification on handle 1.
    static func hostile(connections: Int, continuations: Int) -> CaptureBuilder {
        var b = CaptureBuilder()
        let filler = [UInt8](repeating: 0xA5, count: 1000)
        for h in 1...connections {
            b = b.record(
                .acl, .rx,
                ACLPacket(
                    handle: UInt16(h), packetBoundary: .firstFlushable,
                    data: [0xFF, 0xFF, 0x04, 0x00] + filler
                ).bytes)
        }
        for _ in 0..<continuations {
            for h in 1...connections {
                b = b.record(.acl, .rx, ACLPacket(handle: UInt16(h), packetBoundary: .continuation, data: filler).bytes)
            }
        }
        return b.notify(handle: 0x0010, [1, 2, 3], connection: 1)
    }

    @Test(arguments: [(1 << 20, 100, 20), (2 << 20, 300, 20)])
    func staysWithinBudget(budget: Int, connections: Int, continuations: Int) throws {
        let b = Self.hostile(connections: connections, continuations: continuations)
        let fed = connections * (continuations + 1) * 1000
        #expect(fed > 2 * budget, "the capture must hold more than the budget if nothing is dropped")
        var maxHeld = 0
        var values = 0
        let capture = try b.captureFile()
        let analyzer = Analyzer(options: AnalyzerOptions(timeline: false, maxHeldBytes: budget))
        analyzer.observers = [ValueCounter { values += 1 }]
        while let r = capture.next() {
            analyzer.process(r)
            maxHeld = max(maxHeld, analyzer.heldBytes)
        }
        analyzer.finish()
        // Held bytes are buffer capacities, which grow by doubling; the count is checked every budget/8 bytes
        // fed (at least 64 KiB). Between two checks capacity can at most double what the count allows.
        #expect(maxHeld <= 2 * (budget + max(65_536, budget / 8)))
        #expect(analyzer.heldBytesSheds >= 1)
        #expect(analyzer.heldBytesDropped > budget / 2)
        #expect(analyzer.findings.filter { $0.kind.code.id == "limit.held-bytes" }.count == 1)
        // The notification after the flood: its start fragment cut the partial PDU of handle 1, then it decoded.
        #expect(values == 1)
    }

    /// Within the budget nothing is dropped.
    @Test func smallCaptureUntouched() throws {
        let b = Self.hostile(connections: 10, continuations: 5)
        let analyzer = Analyzer.analyze(try b.captureFile(), options: AnalyzerOptions(timeline: false))
        #expect(analyzer.heldBytesSheds == 0)
        #expect(!analyzer.findings.contains { $0.kind.code.id == "limit.held-bytes" })
    }
}

struct ValueCounter: AttributeValueObserver {
    let onValue: () -> Void
    init(_ onValue: @escaping () -> Void) { self.onValue = onValue }
    mutating func observe(_ event: AttributeValueEvent, value: RawSpan) { onValue() }
    mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {}
    mutating func finish(frame: Int, timestamp: Timestamp) {}
}
