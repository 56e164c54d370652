import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// CE-03's severity follows what was lost (issue 48): a second LE Create Connection refused 0x0C while one the
/// controller accepted is pending is the answer the spec prescribes (Core Spec Vol 4, Part E, 7.8.12), and the pending
/// attempt goes on. The real case: macOS bluetoothd's background connect through the accept list, refused at frames
/// 132, 633 and 2031 of `pklg-macos-le_hciparse-broadcom-2.5h-sleep-wake-bg-connect-create-cancel-x64.pklg` while the
/// attempts of 129, 622 and 2020 were pending.
extension DiagnosisRuleTests {
    @Suite struct CE03PendingAttempt {
        @Test func aSecondCreateWhileTheAcceptListAttemptIsPendingLosesNothing() throws {
            var b = CaptureBuilder()
            let pending = b.nextFrame
            b = b.createConnection(to: nil)
            let refused = b.nextFrame
            b = b.createConnection(to: nil, status: .commandDisallowed)
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("CE-03").first)
            #expect(d.severity == .info && d.frame == refused + 1)
            #expect(d.supporting.map(\.frame) == [pending, refused])
            #expect(d.message.contains("while the one of frame \(pending) through the filter accept list was pending"))
            #expect(d.message.hasSuffix("that attempt went on: nothing was lost."))
            #expect(r.of("HH-04").isEmpty)
        }

        @Test func aSecondCreateForAnotherDeviceWhileOneIsPendingIsAWarning() throws {
            var b = CaptureBuilder().createConnection(to: RuleTest.peer)
            b = b.createConnection(to: RuleTest.otherPeer, status: .commandDisallowed)
            let d = try #require(try RuleTest.diagnose(b).of("CE-03").first)
            #expect(d.severity == .warning && d.device == RuleTest.otherPeerText)
            #expect(d.message.hasSuffix("the connection to \(RuleTest.otherPeerText) waits until the host asks again."))
        }

        @Test func nearMissARefusalOnceTheEarlierAttemptEndedIsStillAnError() throws {
            // The earlier attempt completed (a link), or was cancelled (Connection Complete 0x02): nothing is pending.
            let completed = CaptureBuilder().createConnection(to: RuleTest.peer).connect(handle: 0x40, peer: RuleTest.peer)
            let cancelled = CaptureBuilder().createConnection(to: nil).createConnectionCancel()
                .connectionFailed(.unknownConnectionIdentifier)
            for b in [completed, cancelled] {
                let r = try RuleTest.diagnose(b.createConnection(to: RuleTest.otherPeer, status: .commandDisallowed))
                let d = try #require(r.of("CE-03").first)
                #expect(d.severity == .error && d.message.contains("another connection attempt was already pending, or scanning"))
            }
        }
    }
}
