import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// LE Data Length Change to 251 bytes (2120 µs) both ways.
private let dataLength251 = LEDataLengthChange {
    $0.handle = 0x40
    $0.maxTxOctets = 251
    $0.maxTxTime = 2120
    $0.maxRxOctets = 251
    $0.maxRxTime = 2120
}

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

        /// A Number Of Completed Packets logged before the packet it reports (Android's btsnoop writes from two threads:
        /// the LG log's 2715 reports the SBC packet it logs at 2716, 1 ms later). Counted as still in flight, that packet
        /// kept the count one too high for the rest of the link, and the next idle stretch read as a stall (the LG log:
        /// "4 packets waited 89.2 s", where tshark counts as many packets completed as sent). The near miss: the packets
        /// after an idle minute are reported within 100 ms.
        @Test func aCompletionLoggedBeforeItsPacketIsNoStallLater() throws {
            var b = Self.connected().at(1).completed(handle: 0x40).at(1.001)
            b = b.att(.writeCommand(handle: 0x30, value: [1]), handle: 0x40, .tx).at(40)
            b = b.att(.writeCommand(handle: 0x30, value: [2]), handle: 0x40, .tx).at(40.1).completed(handle: 0x40)
            #expect(try RuleTest.diagnose(b).of("TP-01").isEmpty)
        }

        /// After such a resynchronisation a real stall is still one: the next packet waits 7 s.
        @Test func aStallAfterACompletionLoggedEarlyStillFires() throws {
            var b = Self.connected().at(1).completed(handle: 0x40).at(1.001)
            b = b.att(.writeCommand(handle: 0x30, value: [1]), handle: 0x40, .tx).at(2)
            let sent = b.nextFrame
            b = b.att(.writeCommand(handle: 0x30, value: [2]), handle: 0x40, .tx).at(9)
            let completed = b.nextFrame
            b = b.completed(handle: 0x40)
            let d = try #require(try RuleTest.diagnose(b).of("TP-01").first)
            #expect(d.severity == .error && d.frame == completed && d.supporting.map(\.frame) == [sent])
            #expect(d.message.contains("stalled: 1 packet waited 7.00 s"))
        }

        /// A wait across a gap of the log (70 s without any record) cannot tell a stall: the controller's reports of that
        /// time may be what the log lost. Info, saying so; the 6 s wait above, with records all along, is the near miss.
        @Test func aWaitAcrossALogGapIsCannotTell() throws {
            var b = Self.connected().at(1)
            let sent = b.nextFrame
            b = b.att(.writeCommand(handle: 0x30, value: [1]), handle: 0x40, .tx).at(71)
            let after = b.nextFrame
            b = b.completed(handle: 0x40)
            let d = try #require(try RuleTest.diagnose(b).of("TP-01").first)
            #expect(d.severity == .info && d.frame == after && d.supporting.map(\.frame) == [sent, after])
            #expect(
                d.message
                    == "Cannot tell whether sending to \(RuleTest.peerText) stalled: 1 packet waited 70.0 s in the controller (frames \(sent)–\(after)), across 70.0 s without any record in the log (before frame \(after)): the controller's reports of that time may be what the log lost."
            )
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

        /// 600 notifications of 20 bytes (12 kB) every 800 µs (200 kbit/s) at the default MTU, data length and PHY, 30 ms
        /// interval.
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
            let d = try #require(try RuleTest.diagnose(Self.bulkAtTheDefaults()).of("TP-03").first)
            #expect(d.severity == .warning && d.frame == 2 && d.device == RuleTest.peerText)  // the first notification
            // 600 × 20 bytes over 599 gaps of 800 µs: 96,000 bits in 0.4792 s.
            #expect(d.message.hasPrefix("Notifications from \(RuleTest.peerText) on 0x0025 (600 values, 12000 bytes) ran at 200.3 kbps"))
            #expect(
                d.message.contains(
                    "The link kept ATT_MTU 23 (20-byte values), data length 27, the 1M PHY, a 30 ms interval; with 2M/251/247"))
            #expect(d.facts.map(\.name) == ["ATT_MTU", "data length", "PHY", "connection interval"])
            #expect(d.facts.map(\.value) == ["23", "27", "1M", "30 ms"])
            #expect(d.facts.first { $0.name == "connection interval" }?.source.frame == 1)
            // A notification stream is never told to use Write Command instead of Write Request.
            #expect(!d.causes.joined().contains("Write"), "\(d.causes)")
        }

        @Test func nearMissFewPacketsOrALinkAlreadyAtTheFastestParameters() throws {
            var few = Self.connected()
            few.step = 800
            for i in 0..<50 { few = few.notify(handle: 0x0025, Array(repeating: UInt8(i), count: 20), connection: 0x40) }
            #expect(try RuleTest.diagnose(few).of("TP-03").isEmpty)
            // MTU 247, data length 251, 2M and a 15 ms interval: no default left to raise.
            var fast = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .central, interval: 12)
                .att(.exchangeMTURequest(clientRxMTU: 247), handle: 0x40, .tx).att(
                    .exchangeMTUResponse(serverRxMTU: 247), handle: 0x40, .rx
                )
                .event(HCIBuild.event(.declared(dataLength251)))
                .phyUpdateComplete(handle: 0x40, phy: .le2M)
            fast.step = 800
            for i in 0..<600 { fast = fast.notify(handle: 0x0025, Array(repeating: UInt8(i & 0xFF), count: 200), connection: 0x40) }
            #expect(try RuleTest.diagnose(fast).of("TP-03").isEmpty)
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
