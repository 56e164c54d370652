import BLEAnalysis
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// SMP on the BR/EDR Security Manager channel (L2CAP CID 0x0007) after a BR/EDR Secure Connections pairing derives the
/// LE keys from the link key (Core Spec Vol 3, Part H, 2.3.5.7): no TK, no STK, no association model (3.5.1: the IO
/// capability, OOB and MITM fields are not used over BR/EDR). The zabbits Android log: Link Key Notification type 0x08
/// at 301, then Pairing Request (AuthReq 0x20, IO 0) at 308 and Response (0x21) at 311 on CID 0x0007, which SEC-10 took
/// for LE legacy Just Works. The near miss: the same features on an LE link's CID 0x0006 are LE legacy Just Works.
extension DiagnosisRuleTests {
    @Suite struct CrossTransportKeyDerivation {
        typealias Security = DiagnosisRuleTests.SecurityRecord

        static let request = SMPPairingParameters(
            ioCapability: SMPIOCapability(rawValue: 0), authReq: SMPAuthReq(rawValue: 0x20), maxEncryptionKeySize: 16,
            initiatorKeyDistribution: SMPKeyDistribution(rawValue: 0x07), responderKeyDistribution: SMPKeyDistribution(rawValue: 0x07))
        static let response = SMPPairingParameters(
            ioCapability: SMPIOCapability(rawValue: 0), authReq: SMPAuthReq(rawValue: 0x21), maxEncryptionKeySize: 16,
            initiatorKeyDistribution: SMPKeyDistribution(rawValue: 0x07), responderKeyDistribution: SMPKeyDistribution(rawValue: 0x07))

        /// The SSP pairing of the security record tests (Link Key Notification type 0x08 at frame 8), then the peer's
        /// Pairing Request (9) and this side's Pairing Response (10) on `cid` of the BR/EDR link.
        static func derivation(cid: UInt16) -> CaptureBuilder {
            Security.ssp(localIO: 1, peerIO: 1, keyType: 0x08)
                .l2cap(cid: cid, payload: SMPPDU.pairingRequest(Self.request).bytes, handle: Security.handle, .rx)
                .l2cap(cid: cid, payload: SMPPDU.pairingResponse(Self.response).bytes, handle: Security.handle, .tx)
        }

        @Test func smpOnTheBREDRChannelIsCrossTransportKeyDerivationNotLegacyPairing() throws {
            let b = Self.derivation(cid: 0x0007)
            let r = try RuleTest.diagnose(b)
            #expect(r.of("SEC-10").isEmpty && r.of("SEC-13").isEmpty)
            let file = try b.captureFile()
            let c = try #require(CaptureAnalysis.analyze(file, observing: Observing()).connections.first)
            let pairings = c.machine.securityRecord.pairings
            #expect(pairings.map(\.procedure) == [.secureSimplePairing, .crossTransport])
            let derived = try #require(pairings.last)
            #expect(derived.frame == 9 && derived.responseFrame == 10 && derived.model == nil && derived.keySize == 16)
            let line = try #require(r.story.sentences.first { $0.text.hasPrefix("Security:") })
            #expect(line.text.contains("LE keys derived from the BR/EDR link key (CTKD), frame 9"), "\(line.text)")
            #expect(!line.text.contains("LE legacy"))
        }

        @Test func nearMissTheSameFeaturesOnAnLELinkAreLegacyJustWorks() throws {
            let b = CaptureBuilder().connect(handle: 0x40).smp(.pairingRequest(Self.request), handle: 0x40, .rx)
                .smp(.pairingResponse(Self.response), handle: 0x40, .tx)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-10").first)
            #expect(d.frame == 2 && d.message.contains("LE legacy Just Works pairing"))
        }

        /// A legacy pairing is a weakness, not a failure: alone above info, the verdict says nothing failed first. The
        /// near miss: the same link then lost to a supervision timeout (DC-01, critical) is counted as before.
        @Test(arguments: [false, true]) func aWeaknessAloneIsToldAsNothingFailed(_ lost: Bool) throws {
            var b = CaptureBuilder().connect(handle: 0x40).smp(.pairingRequest(Self.request), handle: 0x40, .rx)
                .smp(.pairingResponse(Self.response), handle: 0x40, .tx)
            if lost { b = b.at(5).disconnect(handle: 0x40, reason: .connectionTimeout) }
            let r = try RuleTest.diagnose(b)
            #expect(r.findings.first { $0.rule == "SEC-10" }?.severity == .warning)
            if lost {
                #expect(r.tally.hasPrefix("1 critical") && !r.tally.contains("nothing failed"), "\(r.tally)")
            } else {
                #expect(r.tally == "nothing failed; 1 weakness: 1 warning", "\(r.tally)")
            }
        }
    }
}
