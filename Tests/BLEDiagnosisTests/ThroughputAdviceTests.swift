import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// Advice only where it applies: "send fewer, larger values" is for a sender that fills the connection events with
/// small values; a stream of a few events, or one the application paces (values in few of the events, a rate far
/// below what values of that size could carry, fixed-size reports), says it is paced by the application.
@Suite struct ThroughputAdviceTests {
    static func streams(_ path: String) throws -> [ThroughputStream] {
        let capture = try CaptureFile.open(path: path)
        return CaptureAnalysis.analyze(capture, observing: Observing(throughput: ThroughputOptions())).throughput?.streams ?? []
    }

    /// Four 1-byte button presses at the default MTU: a few events, not a transfer.
    @Test func fourButtonPressesArePacedByTheApplication() {
        let link = LinkSnapshot(
            parameters: nil, phy: PHYPair(tx: .le1M, rx: .le1M),
            dataLength: DataLength(maxTxOctets: 27, maxTxTime: 328, maxRxOctets: 27, maxRxTime: 328), mtu: 23, encrypted: false)
        let v = ThroughputVerdict.judge(
            kind: .notification, direction: .rx, link: link, packets: 4, durationMicroseconds: 1_200_000, idleMicroseconds: 0,
            valueBytes: 4, averageValueSize: 1, uniformValueSize: true, packetsPerEvent: nil, idleThreshold: 2_000_000)
        #expect(v.limit == .app)
        #expect(v.text.contains("paced by the application: 4 values are a few events"))
        #expect(!v.text.contains("larger values where") && !v.text.contains("send fewer"))
    }

    /// The Secure DFU control point's responses in `nordic-dfu.btsnoop`: 106 notifications on 0x0010 (tshark:
    /// `btatt.opcode==0x1b && btatt.handle==0x0010`), 7-byte answers, one per request: paced by the application, which
    /// answers when asked; before, "limited by the value size … (send fewer, larger values)".
    @Test func dfuControlPointAnswersArePacedByTheApplication() throws {
        let s = try #require(
            try Self.streams(TestEnvironment.sample("nordic-dfu.btsnoop")).first { $0.key.handle == 0x0010 && $0.key.kind == .notification }
        )
        #expect(s.packets == 106)
        #expect(s.verdict.limit == .app)
        #expect(s.verdict.text.contains("paced by the application"), "\(s.verdict.text)")
        #expect(!s.verdict.text.contains("send fewer, larger values"))
    }

    /// A Bluetooth mouse app (corpus `android-btsnoop_bluetooth-mouse-le-att-543.log`): 495 Write Commands on 0x0009,
    /// 2,973 value bytes (tshark: `btatt.opcode==0x52 && btatt.handle==0x0009`), 6-byte reports in 30 % of the
    /// connection events: paced by the application; no TP-03 (the link parameters hold nothing back at 0.4 % of the
    /// ceiling).
    @Test func aMouseReportStreamIsPacedByTheApplication() throws {
        guard let dir = TestEnvironment.corpusDirectory else {
            print("BLESCOPE_CORPUS not set: skipped")
            return
        }
        let path = dir + "/android-btsnoop_bluetooth-mouse-le-att-543.log"
        let s = try #require(try Self.streams(path).first { $0.key.handle == 0x0009 && $0.key.kind == .writeCommand })
        #expect(s.packets == 495 && s.valueBytes == 2_973)
        #expect(s.verdict.limit == .app && s.verdict.text.contains("paced by the application"), "\(s.verdict.text)")
        let diagnosis = DiagnosisReport.analyze(try CaptureFile.open(path: path)).result
        #expect(!diagnosis.findings.contains { $0.rule.hasPrefix("TP-03") })
    }
}
