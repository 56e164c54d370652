import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// TP-01 … TP-05: sending stalled in the controller, buffers overrun, throughput limited by the link parameters or
/// paced by the app, credit-based channels refused or starved; each on a capture that shows it and on the near miss
/// that must stay quiet.
extension DiagnosisRuleTests {
    @Suite struct Throughput {
        static func connected() -> CaptureBuilder { CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer) }

        // MARK: TP-01 controller stalled

        @Test func packetsWaiting6sForTheControllerWhileTheLinkStaysUp() throws {
            var b = Self.connected().at(1)
            let sent = b.nextFrame
            b = b.att(.writeCommand(handle: 0x30, value: [1]), handle: 0x40, .tx).at(7)
            let completed = b.nextFrame
            b = b.completed(handle: 0x40).att(.writeCommand(handle: 0x30, value: [2]), handle: 0x40, .tx).completed(handle: 0x40)
            let d = try #require(try RuleTest.diagnose(b).of("TP-01").first)
            #expect(d.severity == .error && d.frame == completed && d.supporting.map(\.frame) == [sent] && d.device == RuleTest.peerText)
            #expect(
                d.message
                    == "Sending to \(RuleTest.peerText) stalled: 1 packet waited 6.00 s in the controller (frames \(sent)–\(completed)) before it reported them sent."
            )
        }

        @Test func nearMissAControllerThatReportsPacketsSentPromptly() throws {
            var b = Self.connected()
            for i in 0..<10 {
                b = b.at(Double(i)).att(.writeCommand(handle: 0x30, value: [UInt8(i)]), handle: 0x40, .tx).completed(handle: 0x40)
            }
            #expect(try RuleTest.diagnose(b).of("TP-01").isEmpty)
        }

        // MARK: TP-02 buffer overflow

        @Test func aDataBufferOverflowEventFoldsOverItsRepeats() throws {
            var b = Self.connected()
            let first = b.nextFrame
            b = b.dataBufferOverflow().at(1)
            let second = b.nextFrame
            b = b.dataBufferOverflow()
            let d = try #require(try RuleTest.diagnose(b).of("TP-02").first)
            #expect(d.severity == .error && d.occurrences == [first, second])
            #expect(d.message == "The host overran the controller's ACL buffers (frame \(first)): packets were dropped.")
        }

        @Test func nearMissSendingUpToTheBufferCountWithoutOverflow() throws {
            var b = Self.connected().command(HCIBuild.command(.leReadBufferSize))
                .event(HCIBuild.commandComplete(.leReadBufferSize, returnParameters: [0x00, 0xFB, 0x00, 0x08]))
            for i in 0..<8 { b = b.att(.writeCommand(handle: 0x30, value: [UInt8(i)]), handle: 0x40, .tx) }
            b = b.completed(handle: 0x40, count: 8)
            #expect(try RuleTest.diagnose(b).of("TP-02").isEmpty)
        }

        // MARK: TP-03 limited by the link parameters

        /// 600 notifications of 20 bytes (12 kB) every 800 µs (200 kbit/s, 84 % of the 236.7 kbit/s that 1M/27/23 at
        /// 30 ms carries) at the default MTU, data length and PHY, 30 ms interval.
        static func bulkAtTheDefaults(spacing: Int64 = 800, valueSize: Int = 20, mtu: UInt16? = nil) -> CaptureBuilder {
            var b = Self.connected()
            if let mtu {
                b = b.att(.exchangeMTURequest(clientRxMTU: mtu), handle: 0x40, .tx).att(
                    .exchangeMTUResponse(serverRxMTU: mtu), handle: 0x40, .rx)
            }
            b.step = spacing
            for i in 0..<600 { b = b.notify(handle: 0x0025, Array(repeating: UInt8(i & 0xFF), count: valueSize), connection: 0x40) }
            return b
        }

        @Test func aBulkTransferAtTheDefaultParametersIsLimitedByThem() throws {
            let b = Self.bulkAtTheDefaults()
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("TP-03").first)
            #expect(d.severity == .warning && d.frame == 2 && d.device == RuleTest.peerText)  // the first notification
            // 600 × 20 bytes over 599 gaps of 800 µs: 96,000 bits in 0.4792 s.
            #expect(
                d.message.hasPrefix("Notify to/from \(RuleTest.peerText) on 0x0025: 200.3 kbps")
                    && d.message.contains("limited by the link's"))
            #expect(d.facts.map(\.name) == ["ATT_MTU", "data length", "PHY", "connection interval"])
            #expect(d.facts.map(\.value) == ["23", "27", "1M", "30 ms"])
        }

        /// vendor-ota (bumble): 125 Write Commands of 242 bytes at MTU 247 and data length 251 (its truth file), 4 per
        /// 15 ms event where 6 fit: limited by packets per event. The facts and the first write are checked against the
        /// truth file and tshark, not against blescope.
        @Test func aSampleWhoseTransferIsLimitedByPacketsPerEvent() throws {
            let path = TestEnvironment.sample("vendor-ota.btsnoop")
            let truth = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample("vendor-ota.truth.json")))) as? [String: Any])
            let r = DiagnosisReport.analyze(try CaptureFile.open(path: path)).result
            let d = try #require(r.of("TP-03").first)
            let handle = try #require(truth["data_value_handle"] as? Int)
            #expect(d.device == truth["device_address"] as? String && d.message.contains("on \(hex(UInt16(handle), width: 4))"))
            #expect(d.facts.first { $0.name == "ATT_MTU" }?.value == "\(truth["att_mtu"] as! Int)")
            #expect(d.facts.first { $0.name == "data length" }?.value == "\(truth["data_length_octets"] as! Int)")
            if let rows = TestEnvironment.tsharkFields([
                "-r", path, "-Y", "btatt.opcode == 0x52 && btatt.handle == \(handle)", "-T", "fields", "-e", "frame.number",
            ]) {
                #expect(d.frame == Int(rows.first?.first ?? ""))
            }
        }

        @Test func nearMissFewPacketsOrSmallValuesAtALargeMTU() throws {
            var few = Self.connected()
            few.step = 400
            for i in 0..<50 { few = few.notify(handle: 0x0025, Array(repeating: UInt8(i), count: 20), connection: 0x40) }
            #expect(try RuleTest.diagnose(few).of("TP-03").isEmpty)
            // 20-byte values at MTU 247: the value size limits, not the link.
            #expect(try RuleTest.diagnose(Self.bulkAtTheDefaults(mtu: 247)).of("TP-03").isEmpty)
        }

        // MARK: TP-04 paced by the app

        /// 120 values of 100 bytes, 0.6 s apart: every gap is over the 500 ms idle threshold.
        @Test func aTransferMostlyPausedIsPacedByTheApp() throws {
            var b = Self.connected().att(.exchangeMTURequest(clientRxMTU: 247), handle: 0x40, .tx)
                .att(.exchangeMTUResponse(serverRxMTU: 247), handle: 0x40, .rx)
            let first = b.nextFrame
            for i in 0..<120 {
                b = b.at(1 + Double(i) * 0.6).notify(handle: 0x0025, Array(repeating: UInt8(i), count: 100), connection: 0x40)
            }
            let d = try #require(try RuleTest.diagnose(b).of("TP-04").first)
            #expect(d.severity == .info && d.frame == first && d.device == RuleTest.peerText)
            #expect(d.message.contains("was paced by the sender, not the radio"))
        }

        @Test func nearMissTheSameTransferWithoutPauses() throws {
            #expect(try RuleTest.diagnose(Self.bulkAtTheDefaults(valueSize: 100, mtu: 247)).of("TP-04").isEmpty)
        }

        // MARK: TP-05 credit-based channel refused or starved

        static func creditRequest(_ b: CaptureBuilder) -> CaptureBuilder {
            b.leSignal(
                .leCreditBasedConnectionRequest(spsm: 0x0080, sourceCID: 0x0041, mtu: 512, mps: 64, initialCredits: 10), identifier: 3,
                handle: 0x40, .tx)
        }

        @Test func aCreditBasedChannelRefusedForSecurity() throws {
            var b = Self.creditRequest(Self.connected())
            let response = b.nextFrame
            b = b.leSignal(
                .leCreditBasedConnectionResponse(destinationCID: 0, mtu: 0, mps: 0, initialCredits: 0, result: 0x0005), identifier: 3,
                handle: 0x40, .rx)
            let d = try #require(try RuleTest.diagnose(b).of("TP-05").first)
            #expect(d.severity == .error && d.frame == response && d.device == RuleTest.peerText)
            #expect(
                d.message
                    == "\(RuleTest.peerText) refused the credit-based channel to PSM 0x0080 (frame \(response)): insufficient authentication/encryption: pair first."
            )
        }

        /// A channel opened with 2 credits for this side, two K-frames sent, then the peer's credits `creditAfter` seconds later.
        static func starved(creditAfter: Double) -> (CaptureBuilder, Int, Int) {
            var b = Self.creditRequest(Self.connected())
                .leSignal(
                    .leCreditBasedConnectionResponse(destinationCID: 0x0042, mtu: 512, mps: 64, initialCredits: 2, result: 0),
                    identifier: 3, handle: 0x40, .rx
                )
                .at(1)
            b = b.l2cap(cid: 0x0042, payload: L2CAPKFrame(sduLength: 4, payload: [1, 2]).bytes, handle: 0x40, .tx)
            let empty = b.nextFrame
            b = b.l2cap(cid: 0x0042, payload: L2CAPKFrame(sduLength: nil, payload: [3, 4]).bytes, handle: 0x40, .tx).completed(
                handle: 0x40, count: 2
            )
            .at(1 + creditAfter)
            let credit = b.nextFrame
            b = b.leSignal(.flowControlCreditIndication(cid: 0x0042, credits: 5), identifier: 4, handle: 0x40, .rx)
            return (b, empty, credit)
        }

        @Test func aSenderWithoutCreditsFor8sIsStarved() throws {
            let (b, empty, credit) = Self.starved(creditAfter: 8)
            let d = try #require(try RuleTest.diagnose(b).of("TP-05").first)
            #expect(d.frame == credit && d.supporting.map(\.frame) == [empty])
            #expect(d.message.contains("stalled for 8.00 s: the receiver granted no credits (frames \(empty)–\(credit))"))
        }

        @Test func nearMissAChannelOpenedOrCreditsReturnedSoon() throws {
            #expect(try RuleTest.diagnose(Self.starved(creditAfter: 0.5).0).of("TP-05").isEmpty)
            let opened = Self.creditRequest(Self.connected())
                .leSignal(
                    .leCreditBasedConnectionResponse(destinationCID: 0x0042, mtu: 512, mps: 64, initialCredits: 2, result: 0),
                    identifier: 3, handle: 0x40, .rx)
            #expect(try RuleTest.diagnose(opened).of("TP-05").isEmpty)
        }
    }
}
