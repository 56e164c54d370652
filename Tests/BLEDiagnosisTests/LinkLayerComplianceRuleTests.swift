import BLEAnalysis
import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// The link-layer compliance rules (LL-01…LL-03) on nRF Sniffer air captures built from typed PDUs, each with its near
/// miss: LL_VERSION_IND once per direction (Core Spec Vol 6, Part B, 5.1.4), at least 2 used channels (2.3.3.1, 5.1.2),
/// CONNECT_IND timing in range (2.3.3.1).
extension DiagnosisRuleTests {
    @Suite struct LinkLayerCompliance {
        static func connect(_ b: inout NordicBuilder, _ p: LLConnectionParameters) {
            let c = LLConnectInd(
                initiator: LLDeviceAddress(0x1122_3344_5566, isRandom: true), advertiser: LLDeviceAddress(0xC0FF_EE00_0001),
                parameters: p)
            b.add(aa: .advertising, pdu: LLAdvertisingPacketPDU(.connectInd(c)).bytes, crcInit: 0x55_5555, data: false)
        }

        static func parameters(interval: UInt16 = 24, timeout: UInt16 = 72, channelMap: UInt64 = 0x1F_FFFF_FFFF, hop: UInt8 = 7)
            -> LLConnectionParameters
        {
            LLConnectionParameters(
                accessAddress: NordicBuilder.aa, crcInit: NordicBuilder.crcInit, interval: interval, timeout: timeout,
                channelMap: channelMap,
                hop: hop)
        }

        static let version = LLControlPacket(.versionInd(version: 0x0B, companyID: 0x0059, subversion: 0x0001)).bytes

        /// CONNECT_IND (1), then LL_VERSION_IND from the central (2) answered by the peripheral `answers` times, each
        /// answer drawing another from the central when `loop`. Each PDU acknowledges the other side's last (Vol 6, Part
        /// B, 4.5.9): the central's NESN is its SN, the peripheral's the central's SN plus one, so each is new data.
        static func versions(answers: Int, loop: Bool) -> NordicBuilder {
            var b = NordicBuilder()
            b.connect()
            var sn = false
            for i in 0..<answers {
                if i == 0 || loop { b.data(.control, Self.version, sn: sn, nesn: sn, event: UInt16(2 * i + 1)) }
                b.data(.control, Self.version, central: false, sn: sn, nesn: !sn, event: UInt16(2 * i + 1))
                sn.toggle()
            }
            return b
        }

        static let otherVersion = LLControlPacket(.versionInd(version: 0x08, companyID: 0x0000, subversion: 0x0000)).bytes

        /// A second LL_VERSION_IND its receiver takes as resent (same SN, the first not acknowledged) is the same PDU,
        /// whatever its bytes: the SweynTooth Telink capture, 849–850 (the central's, other parameters, SN 0 twice) and
        /// 852–854 (the peripheral's SN 1 while the central's NESN at 853 asks for 0). Its near miss: the same second
        /// PDU sent as new data (the next SN, the first acknowledged) is a second version exchange.
        @Test func aVersionIndicationItsReceiverTakesAsResentIsNotASecondExchange() throws {
            var central = NordicBuilder()
            central.connect()
            central.data(.control, Self.version, sn: false, nesn: false, event: 1)
            central.data(.control, Self.otherVersion, sn: false, nesn: true, event: 1)  // nothing of the peripheral between
            #expect(try RuleTest.diagnose(air: central).of("LL-01").isEmpty)

            var peripheral = NordicBuilder()
            peripheral.connect()
            peripheral.data(.control, Self.version, sn: false, nesn: false, event: 1)
            peripheral.data(.control, Self.version, central: false, sn: false, nesn: true, event: 1)
            peripheral.data(.continuation, [], sn: true, nesn: false, event: 2)  // the central asks for SN 0 again
            peripheral.data(.control, Self.version, central: false, sn: true, nesn: false, event: 2)
            #expect(try RuleTest.diagnose(air: peripheral).of("LL-01").isEmpty)

            // Near miss: the peripheral acknowledged the first (NESN 1) and the central's second has SN 1: new data.
            var again = NordicBuilder()
            again.connect()
            again.data(.control, Self.version, sn: false, nesn: false, event: 1)
            again.data(.continuation, [], central: false, sn: false, nesn: true, event: 1)
            again.data(.control, Self.otherVersion, sn: true, nesn: true, event: 2)
            let d = try #require(try RuleTest.diagnose(air: again).of("LL-01").first)
            #expect(d.frame == 4 && d.severity == .info && d.message.contains("sent LL_VERSION_IND 2 times"))
            #expect(d.supporting.map(\.frame) == [2])
        }

        @Test func aVersionIndicationAnsweredInKindAgainAndAgainIsALoop() throws {
            let r = try RuleTest.diagnose(air: Self.versions(answers: 12, loop: true))
            let found = r.of("LL-01")
            // One per side: the central's (frames 2, 4, …, 24) and the peripheral's (3, 5, …, 25).
            #expect(found.count == 2)
            let central = try #require(found.first { $0.headline.contains("the central") })
            #expect(central.frame == 4 && central.severity == .warning && central.occurrences == [4])
            #expect(central.supporting.map(\.frame) == [2, 24])
            #expect(
                central.message.contains(
                    "sent LL_VERSION_IND 12 times (retransmissions not counted) on link #1 (first at frame 2, again at 4, last at 24)"))
            // Once each way is the exchange the specification describes.
            #expect(try RuleTest.diagnose(air: Self.versions(answers: 1, loop: false)).of("LL-01").isEmpty)
        }

        @Test func aChannelMapWithOneChannelIsInvalidTwoAreEnough() throws {
            var one = NordicBuilder()
            Self.connect(&one, Self.parameters(channelMap: 0x1))
            let d = try #require(try RuleTest.diagnose(air: one).of("LL-02").first)
            #expect(
                d.frame == 1 && d.severity == .error && d.message.contains("CONNECT_IND at frame 1")
                    && d.message.contains("uses 1 data channel"))
            var none = NordicBuilder()
            Self.connect(&none, Self.parameters(channelMap: 0))
            #expect(try RuleTest.diagnose(air: none).of("LL-02").first?.message.contains("uses 0 data channels") == true)
            var two = NordicBuilder()
            Self.connect(&two, Self.parameters(channelMap: 0x3))
            #expect(try RuleTest.diagnose(air: two).of("LL-02").isEmpty)
        }

        @Test func connectTimingOutOfRangeIsSaidInRangeIsNot() throws {
            var zero = NordicBuilder()
            Self.connect(&zero, Self.parameters(interval: 0, hop: 3))
            let d = try #require(try RuleTest.diagnose(air: zero).of("LL-03").first)
            #expect(
                d.frame == 1 && d.message.contains("sets interval 0 (allowed 6–3200 (7.5 ms–4 s))")
                    && d.message.contains("hop increment 3"), "\(d.message) \(d.frame)")
            // A timeout no longer than (1 + latency) × interval × 2: 200 ms against 100 ms × 2; 210 ms is enough.
            var short = NordicBuilder()
            Self.connect(&short, Self.parameters(interval: 80, timeout: 20))
            #expect(
                try RuleTest.diagnose(air: short).of("LL-03").first?.message.contains(
                    "supervision timeout 20 (allowed more than (1 + latency) × interval × 2)") == true)
            var fine = NordicBuilder()
            Self.connect(&fine, Self.parameters(interval: 80, timeout: 21))
            #expect(try RuleTest.diagnose(air: fine).of("LL-03").isEmpty)
        }
    }
}
