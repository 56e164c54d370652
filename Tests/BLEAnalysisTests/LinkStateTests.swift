import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// Each link fact lives in `Connection.link` alone, with where it came from: observed at a frame, the initial value of a
/// connection seen from its start, or assumed for one that began before the capture.
@Suite struct LinkStateTests {
    static func analyze(_ b: CaptureBuilder) throws -> Analyzer {
        Analyzer.analyze(try b.captureFile(), options: AnalyzerOptions(timeline: false))
    }

    @Test func aConnectionSeenFromItsStartHasItsInitialValuesInferredThenObserved() throws {
        let b = CaptureBuilder()
            .connect(handle: 0x40, interval: 24)  // frame 1
            .att(.exchangeMTURequest(clientRxMTU: 247), handle: 0x40, .tx)  // 2
            .att(.exchangeMTUResponse(serverRxMTU: 185), handle: 0x40, .rx)  // 3
        let link = try #require(Self.analyze(b).connections.first).link
        #expect(link.mtu.value == 185)
        #expect(link.mtu.source == .observed(frame: 3))
        #expect(link.mtu.changes.map(\.frame) == [3])
        #expect(link.snapshot.mtu == 185)
        #expect(link.parameters.value == ConnectionParameters(interval: 24, latency: 0, timeout: 400))
        #expect(link.parameters.source == .observed(frame: 1))
        // Never announced: the spec's initial values, known because the connection started in the capture.
        #expect(link.phy.value == .le1M)
        #expect(link.phy.source == .inferred(.initialValue(connectionFrame: 1)))
        #expect(link.dataLength.value == .default)
        #expect(link.encryption.value == false)
        #expect(link.encryption.source.kind == "inferred")
    }

    @Test func aConnectionInferredFromTrafficHasItsValuesAssumed() throws {
        let b = CaptureBuilder().notify(handle: 0x2A, [1, 2, 3], connection: 0x41)
        let c = try #require(Self.analyze(b).connections.first)
        #expect(c.inferred)
        #expect(c.link.mtu.value == 23)
        #expect(c.link.mtu.source == .assumed)
        #expect(c.link.parameters.value == nil)
        #expect(c.link.phy.source == .assumed)
        #expect(c.link.mtu.source.description == "assumed (default)")
    }

    @Test func applyKeepsHistorySourceAndSnapshotTogether() {
        var link = LinkState(startFrame: 7)
        let t = Timestamp(microseconds: 1_000)
        link.apply(.phy(PHYPair(tx: .le2M, rx: .le2M)), frame: 10, timestamp: t)
        link.apply(.mtu(208), frame: 12, timestamp: t, source: .inferred(.largestATTPDU(frame: 12, bytes: 208)))
        link.apply(.encryption(true), frame: 15, timestamp: t)
        #expect(link.phy.changes.map(\.value) == [PHYPair(tx: .le2M, rx: .le2M)])
        #expect(link.snapshot.phy == PHYPair(tx: .le2M, rx: .le2M) && link.snapshot.mtu == 208 && link.snapshot.encrypted)
        #expect(link.mtu.source.kind == "inferred")
        #expect(link.mtu.source.frame == 12)
        #expect(link.mtu.source.description == "inferred: at least the 208-byte ATT PDU at frame 12")
        #expect(link.dataLength.source == .inferred(.initialValue(connectionFrame: 7)))
    }

    /// The value in force at a frame: a BR/EDR link whose role switched at frame 849 (the iPhone log: peripheral from
    /// the set-up) and back at 1028 is the central at 1039, the peripheral at 900; before its first value, the initial
    /// one (nil: not shown).
    @Test func aFactsValueAtAFrameIsTheLastChangeAtOrBeforeIt() {
        var link = LinkState(startFrame: 858)
        let t = Timestamp(microseconds: 1_000)
        link.apply(.role(.peripheral), frame: 858, timestamp: t)
        link.apply(.role(.central), frame: 1028, timestamp: t)
        #expect(link.role.value(atFrame: 1039) == .central && link.role.value(atFrame: 1028) == .central)
        #expect(link.role.value(atFrame: 1027) == .peripheral && link.role.value(atFrame: 900) == .peripheral)
        #expect(link.role.value(atFrame: 800) == nil && link.role.value == .central)
    }

    @Test func historiesStayBounded() {
        var link = LinkState(startFrame: 1)
        for i in 0..<5_000 { link.apply(.mtu(23 + i % 200), frame: i + 2, timestamp: Timestamp(microseconds: Int64(i))) }
        #expect(link.mtu.changes.count == 4_096)
        #expect(link.mtu.value == 23 + 4_999 % 200)
        #expect(link.mtu.source == .observed(frame: 5_001))
    }
}
