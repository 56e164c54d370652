import BLEAnalysis
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// SEC-22 on Secure Simple Pairings built from typed HCI packets: the IO capabilities make the model (Core Spec Vol 3,
/// Part C, 5.2.2.6, Table 5.7), the User Confirmation / Passkey Request and this side's Reply give the time the answer
/// took (Vol 4, Part E, 7.7.42–43, 7.1.30–32), Link Key Notification the key type (7.7.24).
extension DiagnosisRuleTests {
    @Suite struct UserStepAnsweredByHost {
        static let handle: UInt16 = 0x000C
        static let peer = BDAddress(0x00_1B_DC_07_31_8E)

        /// Connection Complete 1, IO Capability Request 2, its Reply 3, Command Complete 4, IO Capability Response 5,
        /// the user step's request 6 (at 1 s), this side's answer 7 (`after` µs later), Simple Pairing Complete 8,
        /// Link Key Notification 9 (a failed pairing: Simple Pairing Complete 0x05 and no key).
        static func pairing(
            localIO: UInt8 = 1, peerIO: UInt8 = 1, authReq: UInt8 = 0x05, passkey: Bool = false, answer: (any HCIParameterSet)?,
            after: Int64, keyType: UInt8 = 0x05, failed: Bool = false
        ) -> CaptureBuilder {
            var b = CaptureBuilder()
                .declaredEvent(
                    ConnectionComplete {
                        $0.handle = handle; $0.address = peer; $0.linkType = 1
                    }
                )
                .declaredEvent(IOCapabilityRequest { $0.address = peer })
                .declaredCommand(
                    IOCapabilityRequestReply {
                        $0.address = peer; $0.ioCapability = localIO; $0.authenticationRequirements = authReq
                    }
                )
                .event(HCIBuild.commandComplete(HCICommand(ogf: 0x01, ocf: 0x002B)))
                .declaredEvent(
                    IOCapabilityResponse {
                        $0.address = peer; $0.ioCapability = peerIO; $0.authenticationRequirements = authReq
                    }
                )
                .at(microsecondsFromStart: 1_000_000)
            b =
                passkey
                ? b.declaredEvent(UserPasskeyRequest { $0.address = peer })
                : b.declaredEvent(
                    UserConfirmationRequest {
                        $0.address = peer; $0.numericValue = 81_602
                    })
            b = b.at(microsecondsFromStart: 1_000_000 + after)
            if let answer { b = b.declaredCommand(answer) }
            b = b.declaredEvent(
                SimplePairingComplete {
                    $0.address = peer; $0.status = failed ? .authenticationFailure : .success
                })
            guard !failed else { return b }
            return b.declaredEvent(
                LinkKeyNotification {
                    $0.address = peer; $0.key = Array(repeating: 0x5A, count: 16); $0.keyType = keyType
                })
        }

        static let confirm = UserConfirmationRequestReply { $0.address = peer }

        /// Both sides DisplayYesNo with MITM asked: Numeric Comparison, an authenticated key (0x05); this side's host
        /// confirmed 6.6 ms after the request (the Marvell car kit's 301 → 302): a warning at the Reply, frame 7.
        @Test func aNumericComparisonConfirmedInMillisecondsIsAWarning() throws {
            let r = try RuleTest.diagnose(Self.pairing(answer: Self.confirm, after: 6_581))
            let d = try #require(r.of("SEC-22").first)
            #expect(r.of("SEC-22").count == 1 && d.severity == .warning && d.frame == 7 && d.connection == 1)
            #expect(d.supporting.map(\.frame) == [2, 6, 9])
            let expected =
                "Link #1 with 00:1B:DC:07:31:8E: the pairing at frame 2 ran Secure Simple Pairing Numeric Comparison (IO capabilities DisplayYesNo and DisplayYesNo), and this side's host confirmed 7 ms after the controller asked (User Confirmation Request at frame 6, Reply at frame 7): no person compares six digits that fast (inferred from the time). The link key made at frame 9 is an authenticated combination key (P-192): marked MITM-protected, yet this side would have confirmed any number, a man in the middle's too."
            #expect(d.message == expected, "\(d.message)")
            // BTstack's auto-accept, 83 µs: said in µs, not rounded to 0 ms.
            let fast = try #require(try RuleTest.diagnose(Self.pairing(answer: Self.confirm, after: 83)).of("SEC-22").first)
            #expect(fast.message.contains("this side's host confirmed 83 µs after the controller asked"))
        }

        /// Near misses, each quiet: a user who took 1.6 s (the Windows laptop's 448 → 449), or exactly 1 s (999,999 µs
        /// is under the bound and fires); a Just Works pairing (the peer NoInputNoOutput: no MITM claimed, SEC-13's
        /// matter) answered at once; a Negative Reply; a pairing that failed; an unauthenticated key (0x04) though the
        /// IO capabilities said Numeric Comparison; no answer in the log.
        @Test func aUsersAnswerJustWorksARejectionOrAFailureStayQuiet() throws {
            #expect(try RuleTest.diagnose(Self.pairing(answer: Self.confirm, after: 1_634_579)).of("SEC-22").isEmpty)
            #expect(try RuleTest.diagnose(Self.pairing(answer: Self.confirm, after: 1_000_000)).of("SEC-22").isEmpty)
            #expect(try RuleTest.diagnose(Self.pairing(answer: Self.confirm, after: 999_999)).of("SEC-22").count == 1)
            let justWorks = try RuleTest.diagnose(Self.pairing(peerIO: 3, answer: Self.confirm, after: 390, keyType: 0x04))
            #expect(justWorks.of("SEC-22").isEmpty && justWorks.of("SEC-13").count == 1)
            let noMITM = try RuleTest.diagnose(Self.pairing(authReq: 0x04, answer: Self.confirm, after: 390, keyType: 0x04))
            #expect(noMITM.of("SEC-22").isEmpty)
            let rejected = UserConfirmationRequestNegativeReply { $0.address = Self.peer }
            #expect(try RuleTest.diagnose(Self.pairing(answer: rejected, after: 390, failed: true)).of("SEC-22").isEmpty)
            #expect(try RuleTest.diagnose(Self.pairing(answer: Self.confirm, after: 390, failed: true)).of("SEC-22").isEmpty)
            #expect(try RuleTest.diagnose(Self.pairing(answer: Self.confirm, after: 390, keyType: 0x04)).of("SEC-22").isEmpty)
            #expect(try RuleTest.diagnose(Self.pairing(answer: nil, after: 0)).of("SEC-22").isEmpty)
        }

        /// Passkey Entry typed on this side (KeyboardOnly facing DisplayYesNo): a User Passkey Request Reply 2 ms after
        /// the request is a passkey the host already held; 12 s later a person typed it (quiet).
        @Test func aPasskeyTypedAtOnceIsAPasskeyTheHostHeld() throws {
            let typed = UserPasskeyRequestReply {
                $0.address = Self.peer; $0.passkey = 123_456
            }
            let r = try RuleTest.diagnose(Self.pairing(localIO: 2, passkey: true, answer: typed, after: 2_000))
            let d = try #require(r.of("SEC-22").first)
            #expect(
                d.frame == 7
                    && d.message.contains("ran Secure Simple Pairing Passkey Entry (IO capabilities KeyboardOnly and DisplayYesNo)"))
            #expect(
                d.message.contains("this side's host typed the passkey 2 ms after the controller asked (User Passkey Request at frame 6"))
            #expect(d.message.contains("typed a passkey its host already held (fixed or stored)"))
            #expect(try RuleTest.diagnose(Self.pairing(localIO: 2, passkey: true, answer: typed, after: 12_000_000)).of("SEC-22").isEmpty)
        }
    }
}
