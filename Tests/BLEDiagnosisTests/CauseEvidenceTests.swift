import BLEAnalysis
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// Causes read from the evidence (issue 35 point 3): the frame that decides between a rule's causes is cited, and a
/// cause the evidence rules out is not offered.
extension DiagnosisRuleTests {
    @Suite struct CauseEvidence {
        /// 0x22 40 s after this side's own HCI Disconnect: the termination was never acknowledged; info (the link was
        /// being closed), citing the Disconnect.
        @Test func aTimeoutAfterThisSidesDisconnectIsTheUnacknowledgedTermination() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .central)
            let asked = b.nextFrame
            b = b.disconnectCommand(handle: 0x40).at(40).disconnect(handle: 0x40, reason: HCIStatus(rawValue: 0x22))
            let d = try #require(try RuleTest.diagnose(b).of("DC-04").first)
            #expect(d.severity == .info && d.supporting.map(\.frame) == [asked])
            #expect(d.message.contains("this side asked to disconnect at frame \(asked) (HCI Disconnect) and the peer never acknowledged"))
            #expect(!d.causes.contains { $0.contains("host did not answer") })
        }

        /// Near miss: a 0x22 with no Disconnect from this side stays critical ("the capture does not show which procedure").
        @Test func nearMissATimeoutNobodyAskedFor() throws {
            let b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .central).at(40)
                .disconnect(handle: 0x40, reason: HCIStatus(rawValue: 0x22))
            let d = try #require(try RuleTest.diagnose(b).of("DC-04").first)
            #expect(d.severity == .critical && d.message.contains("does not show which procedure"))
        }

        /// The peripheral's L2CAP Connection Parameter Update Request for 420 ms, then the update: LP-02 cites the request
        /// and who asked, and no longer offers "host defaults".
        @Test func aShortTimeoutThePeripheralAskedForCitesItsRequest() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .central)
            let request = b.nextFrame
            b = b.leSignal(
                .connectionParameterUpdateRequest(intervalMin: 6, intervalMax: 6, latency: 0, timeout: 42), identifier: 7, handle: 0x40, .rx
            )
            .leSignal(.connectionParameterUpdateResponse(result: 0), identifier: 7, handle: 0x40, .tx)
            let update = b.nextFrame
            b = b.connectionUpdateComplete(handle: 0x40, interval: 6, timeout: 42)
            let d = try #require(try RuleTest.diagnose(b).of("LP-02").first)
            #expect(d.frame == update && d.supporting.map(\.frame) == [request])
            #expect(d.message.contains("The peripheral asked for it at frame \(request) (L2CAP Connection Parameter Update Request"))
            #expect(d.causes.count == 1 && d.causes[0].hasPrefix("the peripheral asked for it"))
        }

        /// Insufficient Authorization on a link already encrypted: not "no pairing followed" (pairing cannot grant it).
        @Test func anAuthorizationErrorOnAnEncryptedLinkIsNotAMissingPairing() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .central)
            let encrypted = b.nextFrame
            b = b.encryptionChange(handle: 0x40).att(.readRequest(handle: 0x002A), handle: 0x40, .tx)
            let error = b.nextFrame
            b = b.att(
                .errorResponse(ATTErrorResponse(requestOpcode: .readRequest, handle: 0x002A, error: .insufficientAuthorization)),
                handle: 0x40, .rx)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-05").first)
            #expect(d.frame == error && d.supporting.map(\.frame).contains(encrypted))
            #expect(d.message.contains("although the link was already encrypted (frame \(encrypted))"))
            #expect(!d.message.contains("no pairing") && d.causes.first?.contains("application refused") == true)
        }
    }
}

extension DiagnosisRuleTests.CauseEvidence {
    /// A Write Request the peer never answered, then the supervision timeout 5 s later: DC-01 cites the request and puts
    /// the peer's silence first among the causes.
    @Test func aSupervisionTimeoutAfterAnUnansweredRequestCitesIt() throws {
        var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .central)
        let write = b.nextFrame
        b = b.att(.writeRequest(handle: 0x002A, value: [1]), handle: 0x40, .tx).at(5).disconnect(
            handle: 0x40, reason: HCIStatus(rawValue: 0x08))
        let d = try #require(try RuleTest.diagnose(b).of("DC-01").first)
        #expect(d.supporting.contains { $0.frame == write && $0.text.contains("never answered") })
        #expect(d.message.contains("the peer never answered this side's Write Request for 0x002a at frame \(write)"))
        #expect(d.causes.first?.hasPrefix("the peer stopped responding") == true)
    }
}

extension DiagnosisRuleTests.CauseEvidence {
    /// The controller fails the encryption start the loss interrupts with the same 0x08 (Encryption Change, Core Spec Vol
    /// 4, Part E, 7.7.8), as the Bafang iOS log does four frames before its Disconnection Complete (45368, 45372): DC-01
    /// cites it, so the failed encryption is not an error left unexplained.
    @Test func aSupervisionTimeoutCitesTheEncryptionItInterrupted() throws {
        var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .central)
        let failed = b.nextFrame
        b = b.event([0x08, 0x04, 0x08, 0x40, 0x00, 0x00]).disconnect(handle: 0x40, reason: HCIStatus(rawValue: 0x08))
        let d = try #require(try RuleTest.diagnose(b).of("DC-01").first)
        #expect(d.supporting.contains { $0.frame == failed && $0.text.contains("encryption start failed") })
        #expect(d.message.contains("the encryption being started failed with it at frame \(failed)"))
    }
}
