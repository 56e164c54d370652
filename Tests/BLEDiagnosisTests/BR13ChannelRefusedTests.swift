import BLEAnalysis
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// BR-13 from typed signalling (Core Spec Vol 3, Part A, 4.2–4.3): a profile's channel refused, with the Pending status
/// that came first, as the Raspberry Pi answered an iPhone's AVDTP request in the audiostream PacketLogger log
/// (Pending "authorization pending" at 1038, Security block at 1039, no AVDTP after it).
extension DiagnosisRuleTests {
    @Suite struct ChannelRefused {
        static let handle: UInt16 = 0x000B

        /// BR/EDR link (1); this side's Connection Request for `psm` (2); Pending, authorization (3); `result` (4).
        static func refused(psm: UInt16 = 0x0019, result: UInt16 = 0x0003) -> CaptureBuilder {
            CaptureBuilder().connectBREDR(handle: handle)
                .signal(.connectionRequest(psm: psm, sourceCID: 0x0041), identifier: 7, handle: handle, .tx)
                .signal(.connectionResponse(destinationCID: 0, sourceCID: 0x0041, result: 1, status: 2), identifier: 7, handle: handle, .rx)
                .signal(
                    .connectionResponse(destinationCID: 0, sourceCID: 0x0041, result: result, status: 0), identifier: 7, handle: handle, .rx
                )
        }

        @Test func aSecurityBlockWithNoChannelAfterItIsAnError() throws {
            let r = try RuleTest.diagnose(Self.refused())
            let d = try #require(r.of("BR-13").first)
            #expect(d.severity == .error && d.frame == 4 && d.supporting.map(\.frame) == [2])
            #expect(d.message.contains("the peer refused this side's AVDTP (0x0019) channel with Security block (0x0003)"))
            #expect(
                d.message.contains("after answering Pending (authorization pending) at frame 4; no AVDTP (0x0019) channel opened after it"))
            #expect(d.causes.first?.contains("did not authorize the service") == true)
        }

        @Test func aRefusalFollowedByTheChannelOrForAnUnofferedPSMIsInfo() throws {
            // The same refusal, then a second request the peer accepts (5–6): the profile came up.
            let retried = Self.refused().signal(.connectionRequest(psm: 0x0019, sourceCID: 0x0042), identifier: 8, handle: Self.handle, .tx)
                .signal(
                    .connectionResponse(destinationCID: 0x0050, sourceCID: 0x0042, result: 0, status: 0), identifier: 8,
                    handle: Self.handle,
                    .rx)
            let d = try #require(try RuleTest.diagnose(retried).of("BR-13").first)
            #expect(d.severity == .info && d.message.hasSuffix("the AVDTP (0x0019) channel opened later (frame 6)."))
            // PSM not supported: the answer to a probe for a profile the peer does not offer.
            let probe = try #require(try RuleTest.diagnose(Self.refused(psm: 0x001B, result: 0x0002)).of("BR-13").first)
            #expect(probe.severity == .info)
            // A CID error is a protocol error, not a missing profile.
            #expect(try RuleTest.diagnose(Self.refused(result: 0x0007)).of("BR-13").first?.severity == .warning)
        }

        @Test func aSuccessAfterPendingIsNoFinding() throws {
            let ok = Self.refused(result: 0)
            #expect(try RuleTest.diagnose(ok).of("BR-13").isEmpty)
        }
    }
}
