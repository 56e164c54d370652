import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// SEC-01 … SEC-07: bond lost in either role, pairing failed or stalled, attributes needing more security, key size,
/// authenticated payload time-out; each on a capture that shows it and on the near miss that must stay quiet.
extension DiagnosisRuleTests {
    @Suite struct Security {
        static func errorResponse(_ request: ATTOpcode, handle: UInt16, _ error: ATTErrorCode) -> ATTPDU {
            .errorResponse(ATTErrorResponse(requestOpcode: request, handle: handle, error: error))
        }

        /// Pairing Request from this side (central), the peer's Pairing Response.
        static func pairingStarted(_ b: CaptureBuilder) -> CaptureBuilder {
            b.smp(.pairingRequest(.bonding()), handle: 0x40, .tx).smp(.pairingResponse(.bonding()), handle: 0x40, .rx)
        }

        /// A Just Works pairing that completes: encryption with the STK, then the peer's keys.
        static func pairingCompleted(_ b: CaptureBuilder) -> CaptureBuilder {
            pairingStarted(b).encryptionChange(handle: 0x40).smp(.encryptionInformation(longTermKey: Array(0..<16)), handle: 0x40, .rx)
                .smp(.centralIdentification(ediv: 1, rand: 2), handle: 0x40, .rx)
        }

        // MARK: SEC-01 bond lost on the peripheral

        @Test(arguments: [(HCIStatus.pinOrKeyMissing, false), (.pinOrKeyMissing, true), (.authenticationFailure, false)])
        func encryptionWithTheStoredKeyRefusedMeansThePeripheralLostTheBond(_ status: HCIStatus, _ v2: Bool) throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let start = b.nextFrame
            b = b.enableEncryption(handle: 0x40).at(0.1)
            let change = b.nextFrame
            b = b.encryptionChange(handle: 0x40, status: status, enabled: false, v2: v2)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-01").first)
            #expect(d.severity == .critical && d.frame == change && d.device == RuleTest.peerText)
            #expect(d.supporting.map(\.frame) == [start])
            #expect(
                d.message.hasPrefix(
                    "\(RuleTest.peerText) no longer has the bond: encryption with the stored key failed (\(hex(status.rawValue))"))
            #expect(d.message.hasSuffix("Remove the pairing on the phone and pair again."))
        }

        @Test func thePeripheralRefusingLLEncReqOnAnAirCaptureIsTheSameBondLoss() throws {
            var b = NordicBuilder()
            b.connect()
            b.data(.control, LLControlPacket(.encReq(rand: 1, ediv: 2, skdCentral: 3, ivCentral: 4)).bytes, event: 1)
            let reject = b.records.count + 1
            b.data(.control, LLControlPacket(.rejectExtInd(rejectOpcode: .encReq, errorCode: 0x06)).bytes, central: false, event: 1)
            b.data(.continuation, [], sn: true, event: 2)
            let r = try RuleTest.diagnose(air: b)
            let d = try #require(r.of("SEC-01").first)
            #expect(d.severity == .critical && d.frame == reject)
            // Not a procedure the peer lacks: LP-05's fall-back advice would be wrong.
            #expect(r.of("LP-05").isEmpty)
        }

        @Test func nearMissEncryptionThatWorkedOrThisSideBeingThePeripheral() throws {
            let fine = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer).enableEncryption(handle: 0x40).encryptionChange(
                handle: 0x40)
            #expect(try RuleTest.diagnose(fine).of("SEC-01").isEmpty)
            // As peripheral this side has no key (SEC-02): the central did not lose anything.
            let peripheral = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .peripheral).longTermKeyRequest(handle: 0x40)
                .longTermKeyNegativeReply(handle: 0x40).encryptionChange(handle: 0x40, status: .pinOrKeyMissing, enabled: false)
            let r = try RuleTest.diagnose(peripheral)
            #expect(r.of("SEC-01").isEmpty && r.of("SEC-02").count == 1)
        }

        // MARK: SEC-02 no key for the central

        @Test func aNegativeReplyToTheCentralsKeyRequestMeansThisPeripheralHasNoKey() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .peripheral)
            let request = b.nextFrame
            b = b.longTermKeyRequest(handle: 0x40)
            let reply = b.nextFrame
            b = b.longTermKeyNegativeReply(handle: 0x40).at(1).disconnect(handle: 0x40)
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("SEC-02").first)
            #expect(d.severity == .critical && d.frame == reply && d.device == RuleTest.peerText)
            #expect(d.supporting.map(\.frame) == [request])
            #expect(d.message.contains("no key for \(RuleTest.peerText)") && d.message.contains("negative reply at frame \(reply)"))
            #expect(r.of("DC-04").isEmpty)
        }

        @Test func nearMissAKeyRequestAnswered() throws {
            let b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .peripheral).longTermKeyRequest(handle: 0x40)
                .longTermKeyReply(handle: 0x40).encryptionChange(handle: 0x40)
            #expect(try RuleTest.diagnose(b).of("SEC-02").isEmpty)
        }

        // MARK: SEC-03 pairing failed

        @Test(arguments: [
            (SMPPairingFailedReason.authenticationRequirements, "Authentication Requirements", "It demands MITM protection"),
            (.confirmValueFailed, "Confirm Value Failed", "The passkey or the confirmation did not match."),
            (.pairingNotSupported, "Pairing Not Supported", "Pairing is not supported or disabled on that side."),
            (.repeatedAttempts, "Repeated Attempts", "Too many attempts"),
        ])
        func pairingFailedByThePeerNamesTheReason(_ reason: SMPPairingFailedReason, _ name: String, _ meaning: String) throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let request = b.nextFrame
            b = Self.pairingStarted(b)
            let failed = b.nextFrame
            b = b.smp(.pairingFailed(reason), handle: 0x40, .rx)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-03").first)
            #expect(d.severity == .critical && d.frame == failed && d.device == RuleTest.peerText)
            #expect(d.supporting.map(\.frame) == [request])
            #expect(
                d.message.hasPrefix(
                    "Pairing with \(RuleTest.peerText) failed: \(RuleTest.peerText) sent Pairing Failed \"\(name)\" (\(hex(reason.rawValue)))"
                ))
            #expect(d.message.contains(meaning))
        }

        @Test func pairingFailedSentByThisSideSaysSo() throws {
            let b = Self.pairingStarted(CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer))
                .smp(.pairingFailed(.passkeyEntryFailed), handle: 0x40, .tx)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-03").first)
            #expect(d.message.contains("failed: this side sent Pairing Failed \"Passkey Entry Failed\""))
        }

        @Test func nearMissAPairingThatCompleted() throws {
            let r = try RuleTest.diagnose(Self.pairingCompleted(CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)))
            #expect(r.of("SEC-03").isEmpty && r.of("SEC-04").isEmpty)
        }

        // MARK: SEC-04 pairing stalled

        @Test func aPairingThatNeverFinishedBeforeTheLinkEnded() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let request = b.nextFrame
            b = Self.pairingStarted(b).at(5)
            let end = b.nextFrame
            b = b.disconnect(handle: 0x40)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-04").first)
            #expect(d.severity == .error && d.frame == end && d.supporting.map(\.frame) == [request])
            #expect(
                d.message
                    == "Pairing with \(RuleTest.peerText) started at frame \(request) but never finished: no encryption or keys followed before the link ended (frame \(end))."
            )
        }

        /// A Pairing Request sent again before any answer is the same attempt asked again (Vol 3, Part H, 3.5.1: only a
        /// Pairing Response or Pairing Failed answers it): one finding from the first request, said never answered, and
        /// this side's Disconnect (HCI Disconnect 0x0406 before the Disconnection Complete) named as what ended it.
        @Test func aPairingAskedTwiceNeverAnsweredThenThisSideDisconnects() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let first = b.nextFrame
            b = b.smp(.pairingRequest(.bonding()), handle: 0x40, .tx).at(1)
            let second = b.nextFrame
            b = b.smp(.pairingRequest(.bonding()), handle: 0x40, .tx).at(2).command([0x06, 0x04, 0x03, 0x40, 0x00, 0x13])
            let end = b.nextFrame
            b = b.disconnect(handle: 0x40, reason: .connectionTerminatedByLocalHost)
            let found = try RuleTest.diagnose(b).of("SEC-04")
            let d = try #require(found.first)
            #expect(found.count == 1 && d.frame == end && d.supporting.map(\.frame) == [first, second])
            #expect(
                d.message
                    == "Pairing with \(RuleTest.peerText) was asked 2 times from frame \(first) (\(first), \(second)) and never answered: no Pairing Response or Pairing Failed before this side ended the link (frame \(end))."
            )
            #expect(d.causes.first == "this side ended the link during the pairing (its app or stack gave up)")
        }

        /// A link that ended without a Disconnection Complete (a new Connection Complete on its handle; on air, a new
        /// CONNECT_IND on its access address, as SweynTooth's fuzzer reconnects) ended the pairing there, 2 s after it
        /// started, not "in 30 s" at the end of the capture.
        @Test func aPairingCutByALinkThatEndedWithoutADisconnection() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let request = b.nextFrame
            b = Self.pairingStarted(b).at(2)
            let end = b.nextFrame
            b = b.connect(handle: 0x40, peer: RuleTest.peer).at(60).notify(handle: 0x25, [1], connection: 0x40)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-04").first)
            #expect(d.frame == end && d.supporting.map(\.frame) == [request])
            #expect(
                d.message.hasSuffix("before the link ended (frame \(end): replaced by a new connection on the same handle)."),
                "\(d.message)")
        }

        @Test func aPairingStillSilentAfter30sWhileTheLinkStaysUp() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let request = b.nextFrame
            b = Self.pairingStarted(b).at(40).notify(handle: 0x25, [1], connection: 0x40)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-04").first)
            #expect(d.frame == request && d.message.hasSuffix("in 30 s."))
        }

        @Test func nearMissAPairingThatFailedOrEncrypted() throws {
            let failed = Self.pairingStarted(CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer))
                .smp(.pairingFailed(.unspecifiedReason), handle: 0x40, .rx).at(5).disconnect(handle: 0x40)
            let r = try RuleTest.diagnose(failed)
            #expect(r.of("SEC-04").isEmpty && r.of("SEC-03").count == 1)
            let encrypted = Self.pairingStarted(CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)).encryptionChange(handle: 0x40)
                .at(5).disconnect(handle: 0x40)
            #expect(try RuleTest.diagnose(encrypted).of("SEC-04").isEmpty)
        }

        // MARK: SEC-05 insufficient security

        @Test func aRefusalWithNothingFollowingIsAnError() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let read = b.nextFrame
            b = b.att(.readRequest(handle: 0x002A), handle: 0x40, .tx)
            let error = b.nextFrame
            b = b.att(Self.errorResponse(.readRequest, handle: 0x002A, .insufficientAuthentication), handle: 0x40, .rx)
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("SEC-05").first)
            #expect(d.severity == .error && d.frame == error && d.supporting.map(\.frame) == [read] && d.device == RuleTest.peerText)
            #expect(
                d.message.hasPrefix("Read Request on 0x002a was refused with")
                    && d.message.hasSuffix("and no pairing or encryption followed."))
            #expect(r.of("GATT-08").isEmpty)  // explained here
        }

        @Test func aRefusalThatPairingCuredIsOnlyContext() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let read = b.nextFrame
            b = b.att(.readRequest(handle: 0x002A), handle: 0x40, .tx)
                .att(Self.errorResponse(.readRequest, handle: 0x002A, .insufficientEncryption), handle: 0x40, .rx)
            b = Self.pairingStarted(b)
            let secured = b.nextFrame
            b = b.encryptionChange(handle: 0x40).att(.readRequest(handle: 0x002A), handle: 0x40, .tx).att(
                .readResponse(value: [7]), handle: 0x40, .rx)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-05").first)
            #expect(d.severity == .info && d.frame == read + 1 && d.supporting.map(\.frame) == [read, secured])
            #expect(d.message.hasSuffix("until the link was secured at frame \(secured)."))
        }

        @Test func aRefusalThatCameBackAfterJustWorksNeedsMITM() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let read = b.nextFrame
            b = b.att(.readRequest(handle: 0x002A), handle: 0x40, .tx)
                .att(Self.errorResponse(.readRequest, handle: 0x002A, .insufficientAuthentication), handle: 0x40, .rx)
            b = Self.pairingStarted(b)
            let secured = b.nextFrame
            b = b.encryptionChange(handle: 0x40).att(.readRequest(handle: 0x002A), handle: 0x40, .tx)
            let again = b.nextFrame
            b = b.att(Self.errorResponse(.readRequest, handle: 0x002A, .insufficientAuthentication), handle: 0x40, .rx)
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("SEC-05").first)
            #expect(r.of("SEC-05").count == 1)
            #expect(d.severity == .error && d.frame == again && d.supporting.map(\.frame) == [read, read + 1, secured])
            #expect(d.message.contains("came back at frame \(again) after the link was secured at frame \(secured)"))
            #expect(d.message.contains("MITM"))
        }

        @Test func everyRefusalOfTheSameHandleIsAnOccurrence() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            var errors: [Int] = []
            for i in 0..<3 {
                b = b.at(Double(i)).att(.writeRequest(handle: 0x0013, value: [1, 0]), handle: 0x40, .tx)
                errors.append(b.nextFrame)
                b = b.att(Self.errorResponse(.writeRequest, handle: 0x0013, .insufficientAuthentication), handle: 0x40, .rx)
            }
            let found = try RuleTest.diagnose(b).of("SEC-05")
            #expect(found.count == 1 && found.first?.occurrences == errors && found.first?.severity == .error)
            #expect(Set(errors).isSubset(of: Set(found.first?.frames ?? [])))
        }

        @Test func aPairingThatNeverSecuredTheLinkIsNotNoPairing() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer).att(.readRequest(handle: 0x002A), handle: 0x40, .tx)
                .att(Self.errorResponse(.readRequest, handle: 0x002A, .insufficientEncryption), handle: 0x40, .rx)
            let pairing = b.nextFrame
            b = Self.pairingStarted(b).smp(.pairingFailed(.unspecifiedReason), handle: 0x40, .rx)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-05").first)
            #expect(d.severity == .error && d.message.hasSuffix("and the pairing started at frame \(pairing) never secured the link."))
        }

        @Test func nearMissAnErrorThatIsNotAboutSecurity() throws {
            let b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer).att(.readRequest(handle: 0x002A), handle: 0x40, .tx)
                .att(Self.errorResponse(.readRequest, handle: 0x002A, .unlikelyError), handle: 0x40, .rx)
            let r = try RuleTest.diagnose(b)
            #expect(r.of("SEC-05").isEmpty && r.of("GATT-08").count == 1)
        }

        // MARK: SEC-06 key size

        @Test func aKeyTooShortForTheAttributeOrThePairing() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer).att(.readRequest(handle: 0x002A), handle: 0x40, .tx)
            let error = b.nextFrame
            b = b.att(Self.errorResponse(.readRequest, handle: 0x002A, .encryptionKeySizeTooShort), handle: 0x40, .rx)
            b = Self.pairingStarted(b)
            let failed = b.nextFrame
            b = b.smp(.pairingFailed(.encryptionKeySize), handle: 0x40, .rx)
            let r = try RuleTest.diagnose(b)
            let found = r.of("SEC-06")
            #expect(found.count == 1 && found.first?.occurrences == [error, failed])
            #expect(found.first?.severity == .error && found.first?.device == RuleTest.peerText)
            #expect(
                found.first?.message
                    == "With \(RuleTest.peerText), Read Request on 0x002a was refused: the encryption key is too short (frame \(error)).")
            #expect(r.of("GATT-08").isEmpty)
        }

        @Test func nearMissAPairingFailedForAnotherReason() throws {
            let b = Self.pairingStarted(CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer))
                .smp(.pairingFailed(.authenticationRequirements), handle: 0x40, .rx)
            #expect(try RuleTest.diagnose(b).of("SEC-06").isEmpty)
        }

        // MARK: SEC-07 authenticated payload time-out

        @Test func anAuthenticatedPayloadTimeoutIsAWarningFoldedPerDevice() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer).enableEncryption(handle: 0x40).encryptionChange(
                handle: 0x40
            ).at(30)
            let first = b.nextFrame
            b = b.authenticatedPayloadTimeoutExpired(handle: 0x40).at(60)
            let second = b.nextFrame
            b = b.authenticatedPayloadTimeoutExpired(handle: 0x40)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-07").first)
            #expect(d.severity == .warning && d.occurrences == [first, second] && d.device == RuleTest.peerText)
            #expect(
                d.message
                    == "No valid encrypted packet from \(RuleTest.peerText) within the authenticated payload time-out (frame \(first)).")
        }

        @Test func nearMissAnEncryptedLinkWithoutTheEvent() throws {
            let b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer).enableEncryption(handle: 0x40).encryptionChange(
                handle: 0x40
            )
            .at(60).notify(handle: 0x25, [1], connection: 0x40)
            #expect(try RuleTest.diagnose(b).of("SEC-07").isEmpty)
        }
    }
}
