import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// DC-02 on a link the log joined after it was set up (issue 48, "cannot tell" at info): the peer's 0x13 with nothing
/// failed before it, on a link whose set-up and use are not in the log, says so instead of warning. The real case: the
/// Thewbi BTstack Windows log, handle 0x000b first seen at frame 46, closed 0x13 at frame 49
/// (`pklg-btstack-be-ms-clock_thewbi-windows-bt400-spp-ssp-numcomp-accept-timeout-10.pklg`).
extension DiagnosisRuleTests {
    @Suite struct DC02UnseenStart {
        @Test func aPeerEndingALinkFromBeforeTheLogWithNothingFailedCannotTell() throws {
            var b = CaptureBuilder().notify(handle: 0x25, [1], connection: 0x40).at(20)
            let drop = b.nextFrame
            b = b.disconnect(handle: 0x40, reason: .remoteUserTerminatedConnection)
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("DC-02").first)
            #expect(d.severity == .info && d.frame == drop)
            #expect(d.message.hasSuffix("The link started before the log (first seen at frame 1): why the peer ended it cannot be told."))
            #expect(d.causes == ["cannot tell: the link's set-up and use are not in the log"])
            #expect(r.of("CQ-01").first?.frame == 1)
        }

        @Test func nearMissAFailureBeforeTheEndOfALinkFromBeforeTheLogIsStillCited() throws {
            var b = CaptureBuilder().att(.writeRequest(handle: 0x0030, value: [1]), handle: 0x40, .tx)
            b = b.att(
                .errorResponse(ATTErrorResponse(requestOpcode: .writeRequest, handle: 0x0030, error: ATTErrorCode(0x80))), handle: 0x40, .rx
            )
            b = b.disconnect(handle: 0x40, reason: .remoteUserTerminatedConnection)
            let d = try #require(try RuleTest.diagnose(b).of("DC-02").first)
            #expect(d.severity == .error && !d.message.contains("cannot be told"))
        }
    }
}
