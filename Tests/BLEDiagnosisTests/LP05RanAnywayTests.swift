import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// LP-05 on a link-layer refusal that is no missing feature, when the link ran the procedure all the same (issue 48):
/// `lell-rf-lt256_blue2th-cafe-ots-att-05-81-pairing-cut-by-central.pcap`, the central rejects the peripheral's
/// LL_PHY_REQ with LL_REJECT_EXT_IND 0x0C (frame 14), sends its own LL_PHY_REQ, and LL_PHY_UPDATE_IND moves the link
/// to 2M (frame 25): context, nothing lost. Without the update the refusal stays a warning.
extension DiagnosisRuleTests {
    @Suite struct LP05RanAnyway {
        /// CONNECT_IND; the peripheral's LL_PHY_REQ (2M); the central's LL_REJECT_EXT_IND 0x0C (frame 4); then, when
        /// `thenUpdated`, the central's own LL_PHY_REQ, the peripheral's LL_PHY_RSP, LL_PHY_UPDATE_IND to 2M at instant 8,
        /// and empty PDUs past the instant.
        static func refused(thenUpdated: Bool) -> NordicBuilder {
            var b = NordicBuilder()
            b.connect()
            b.data(.continuation, [], event: 1)
            b.data(.control, LLControlPacket(.phyReq(txPHYs: 2, rxPHYs: 2)).bytes, central: false, event: 1)
            b.data(.control, LLControlPacket(.rejectExtInd(rejectOpcode: .phyReq, errorCode: 0x0C)).bytes, sn: true, event: 2)
            b.data(.continuation, [], central: false, sn: true, event: 2)
            var sn = false
            if thenUpdated {
                b.data(.control, LLControlPacket(.phyReq(txPHYs: 2, rxPHYs: 2)).bytes, event: 3)
                b.data(.continuation, [], central: false, event: 3)
                b.data(.continuation, [], sn: true, event: 4)
                b.data(.control, LLControlPacket(.phyRsp(txPHYs: 2, rxPHYs: 2)).bytes, central: false, sn: true, event: 4)
                b.data(
                    .control, LLControlPacket(.phyUpdateInd(centralToPeripheralPHY: 2, peripheralToCentralPHY: 2, instant: 8)).bytes,
                    event: 5)
                b.data(.continuation, [], central: false, event: 5)
                sn = true
            }
            for event in UInt16(6)...12 {
                b.data(.continuation, [], sn: sn, event: event)
                b.data(.continuation, [], central: false, sn: sn, event: event)
                sn.toggle()
            }
            return b
        }

        @Test func aPHYRequestRefusedWhileTheCentralRanItsOwnIsContext() throws {
            let r = try RuleTest.diagnose(air: Self.refused(thenUpdated: true))
            let d = try #require(r.of("LP-05").first)
            #expect(d.severity == .info && d.frame == 4)
            #expect(
                d.message.contains(
                    "the central rejected LL_PHY_REQ (0x0c Command Disallowed) (frame 4), and the link ran the procedure all the same: its PHY changed"
                ))
            #expect(d.message.hasSuffix("Nothing is lost."))
        }

        @Test func nearMissAPHYRequestRefusedAndNeverRunStaysAWarning() throws {
            let d = try #require(try RuleTest.diagnose(air: Self.refused(thenUpdated: false)).of("LP-05").first)
            #expect(d.severity == .warning && d.frame == 4)
            #expect(d.message.hasSuffix("the central rejected LL_PHY_REQ (0x0c Command Disallowed) (frame 4)."))
            // The central refused the peripheral's request: the headline names who refused (newcap20's ADI FIT capture).
            #expect(d.headline.hasSuffix("'s procedure refused by the central"))
        }

        /// The near miss of the headline: the peripheral refuses the central's LL_PHY_REQ; the peer refused.
        @Test func aRequestThePeripheralRefusedIsRefusedByThePeer() throws {
            var b = NordicBuilder()
            b.connect()
            b.data(.control, LLControlPacket(.phyReq(txPHYs: 2, rxPHYs: 2)).bytes, event: 1)
            b.data(.continuation, [], central: false, sn: false, nesn: true, event: 1)
            b.data(.continuation, [], sn: true, nesn: true, event: 2)
            b.data(
                .control, LLControlPacket(.rejectExtInd(rejectOpcode: .phyReq, errorCode: 0x0C)).bytes, central: false, sn: true,
                nesn: false, event: 2)
            let d = try #require(try RuleTest.diagnose(air: b).of("LP-05").first)
            #expect(d.severity == .warning && d.frame == 5)
            #expect(d.headline.hasPrefix("procedure refused by ") && !d.headline.contains("central"))
            #expect(d.message.hasSuffix("the peripheral rejected LL_PHY_REQ (0x0c Command Disallowed) (frame 5)."))
        }
    }
}
