import BLEAnalysis
import BLECore
import BLEProtocols
import BLESecurity
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// The per-link security rules (SEC-08…SEC-18) on captures built from typed packets, each with the near miss that must
/// stay quiet. Values follow the Core Spec: key sizes (Vol 3, Part H, 2.3.4; Vol 4, Part E, 7.5.7), link key types
/// (7.7.24), the debug public key (Vol 3, Part H, 2.3.5.6.1), EDIV/Rand zero for an STK or a Secure Connections LTK.
extension DiagnosisRuleTests {
    @Suite struct SecurityRecord {
        static let handle: UInt16 = 0x000B
        static let peer = BDAddress(0x00_1B_DC_07_31_8E)
        static let otherPeer = BDAddress(0x00_1B_DC_07_31_99)

        static func event(_ set: some HCIParameterSet) -> [UInt8] { HCIBuild.event(.declared(set)) }
        static func command(_ set: some HCIParameterSet) -> [UInt8] { HCIBuild.command(.declared(set)) }

        /// A BR/EDR link to `peer` on `handle`, encrypted (E0), its key size read as `keySize` (3 or 4 records).
        static func classicSession(_ b: CaptureBuilder, handle: UInt16 = handle, peer: BDAddress = peer, keySize: UInt8?) -> CaptureBuilder
        {
            var b = b.event(
                event(
                    ConnectionComplete {
                        $0.handle = handle; $0.address = peer; $0.linkType = 1
                    })
            )
            .event(
                event(
                    EncryptionChange {
                        $0.handle = handle; $0.encryptionEnabled = 1
                    }))
            if let keySize {
                b = b.command(command(ReadEncryptionKeySize { $0.handle = handle }))
                    .event(
                        HCIBuild.commandComplete(
                            .readEncryptionKeySize,
                            returnParameters: ReadEncryptionKeySizeReturn {
                                $0.handle = handle; $0.keySize = keySize
                            }.bytes))
            }
            return b
        }

        @Test func aSevenByteKeyIsAWarningAFiveByteKeyAnErrorSixteenNothing() throws {
            let seven = try RuleTest.diagnose(Self.classicSession(CaptureBuilder(), keySize: 7))
            let d = try #require(seven.of("SEC-08").first)
            // Connection Complete 1, Encryption Change 2, Read Encryption Key Size 3, its Command Complete 4.
            #expect(d.severity == .warning && d.frame == 4 && d.connection == 1)
            #expect(d.message.contains("a 7-byte key (observed at frame 4)") && d.supporting.map(\.frame) == [2])
            #expect(try RuleTest.diagnose(Self.classicSession(CaptureBuilder(), keySize: 5)).of("SEC-08").first?.severity == .error)
            #expect(try RuleTest.diagnose(Self.classicSession(CaptureBuilder(), keySize: 16)).of("SEC-08").isEmpty)
            // No Read Encryption Key Size: the key size is not in the log, and no finding claims one.
            #expect(try RuleTest.diagnose(Self.classicSession(CaptureBuilder(), keySize: nil)).of("SEC-08").isEmpty)
        }

        /// Encryption Change v2 with encryption on and key size 0 (an iPhone's sysdiagnose log, bafang: raw `59 05 00 03 04
        /// 01 00`, 19 times): no size the specification allows (1–16), so the size is not reported, not a 0-byte key. The
        /// near miss: the same event with 7 is a 7-byte key.
        @Test(arguments: [(UInt8(0), false), (UInt8(7), true)])
        func aKeySizeOfZeroInEncryptionChangeV2IsNotReported(_ size: UInt8, _ fires: Bool) throws {
            let b = CaptureBuilder()
                .event(
                    Self.event(
                        ConnectionComplete {
                            $0.handle = Self.handle; $0.address = Self.peer; $0.linkType = 1
                        })
                )
                .event(
                    HCIBuild.event(
                        .declared(
                            EncryptionChangeV2 {
                                $0.change = EncryptionChange {
                                    $0.handle = Self.handle; $0.encryptionEnabled = 1
                                }
                                $0.keySize = size
                            })))
            let found = try RuleTest.diagnose(b).of("SEC-08")
            #expect(found.isEmpty == !fires)
            if fires { #expect(found.first?.message.contains("a 7-byte key (observed at frame 2)") == true) }
        }

        @Test func theRecordHoldsTheSessionWithItsAlgorithmAndKeySize() throws {
            let file = try Self.classicSession(CaptureBuilder(), keySize: 7).captureFile()
            let c = try #require(CaptureAnalysis.analyze(file, observing: Observing()).connections.first)
            let s = try #require(c.machine.securityRecord.sessions.first)
            #expect(s.onFrame == 2 && s.keySize == 7 && s.keySizeSource == .observed(frame: 4) && s.algorithm(isLE: false) == "E0")
        }

        /// A BR/EDR Connection Complete with Encryption_Enabled 1 (Vol 4, Part E, 7.7.3; the legacy-PIN capture of
        /// Thewbi/hci_bluetooth, frames 22 and 52, no Encryption Change after): the link is encrypted from it, E0.
        @Test func aLinkThatComesUpEncryptedIsEncryptedWithoutAnEncryptionChange() throws {
            func security(encrypted: Bool) throws -> (LinkSecurity, String) {
                let b = CaptureBuilder().connectBREDR(handle: Self.handle, peer: Self.peer, encrypted: encrypted)
                let c = try #require(CaptureAnalysis.analyze(try b.captureFile(), observing: Observing()).connections.first)
                let line = try RuleTest.diagnose(b).story.sentences.first { $0.text.hasPrefix("Security:") }?.text ?? ""
                return (c.machine.securityRecord, line)
            }
            let (record, line) = try security(encrypted: true)
            let s = try #require(record.sessions.first)
            #expect(s.onFrame == 1 && s.startFrame == nil && s.algorithm(isLE: false) == "E0")
            #expect(line.contains("1 BR/EDR encryption on (1)"))
            #expect(try !security(encrypted: false).1.contains("encryption on"))
            #expect(try security(encrypted: false).0.sessions.isEmpty)
        }

        @Test func aShorterKeyOnALaterSessionOfTheSamePeerIsADowngradeNotTheOtherWayRound() throws {
            let down = Self.classicSession(
                Self.classicSession(CaptureBuilder(), keySize: 16).disconnect(handle: Self.handle), handle: 0x000C, keySize: 7)
            let d = try #require(try RuleTest.diagnose(down).of("SEC-09").first)
            // Link 1: frames 1–4, its disconnection 5; link 2: 6–9, the 7-byte key stated at 9.
            #expect(d.frame == 9 && d.connection == 2 && d.supporting.map(\.frame) == [4])
            #expect(d.message.contains("went down from 16 bytes (link #1, frame 4) to 7 bytes on link #2"))
            let up = Self.classicSession(
                Self.classicSession(CaptureBuilder(), keySize: 7).disconnect(handle: Self.handle), handle: 0x000C, keySize: 16)
            #expect(try RuleTest.diagnose(up).of("SEC-09").isEmpty)
            // A different peer is another bond.
            let other = Self.classicSession(
                Self.classicSession(CaptureBuilder(), keySize: 16).disconnect(handle: Self.handle), handle: 0x000C, peer: Self.otherPeer,
                keySize: 7)
            #expect(try RuleTest.diagnose(other).of("SEC-09").isEmpty)
        }

        /// Secure Simple Pairing: IO Capability Request (2), this side's reply (3–4), the peer's response (5), the user
        /// step (6), Simple Pairing Complete (7), Link Key Notification of `keyType` (8).
        static func ssp(localIO: UInt8, peerIO: UInt8, authReq: UInt8 = 0x05, peerAuthReq: UInt8? = nil, keyType: UInt8) -> CaptureBuilder {
            let address = (0..<6).map { UInt8(truncatingIfNeeded: Self.peer.value >> (8 * UInt64($0))) }
            return CaptureBuilder()
                .event(
                    event(
                        ConnectionComplete {
                            $0.handle = Self.handle; $0.address = Self.peer; $0.linkType = 1
                        })
                )
                .event(event(IOCapabilityRequest { $0.address = Self.peer }))
                .command(
                    command(
                        IOCapabilityRequestReply {
                            $0.address = Self.peer; $0.ioCapability = localIO; $0.authenticationRequirements = authReq
                        })
                )
                .event(HCIBuild.commandComplete(HCICommand(ogf: 0x01, ocf: 0x002B), returnParameters: [0x00] + address))
                .event(
                    event(
                        IOCapabilityResponse {
                            $0.address = Self.peer; $0.ioCapability = peerIO; $0.authenticationRequirements = peerAuthReq ?? authReq
                        })
                )
                .event(
                    event(
                        UserConfirmationRequest {
                            $0.address = Self.peer; $0.numericValue = 123_456
                        })
                )
                .event(event(SimplePairingComplete { $0.address = Self.peer }))
                .event(
                    event(
                        LinkKeyNotification {
                            $0.address = Self.peer; $0.key = Array(repeating: 0x42, count: 16); $0.keyType = keyType
                        }))
        }

        @Test func secureSimplePairingNamesItsModelAndKeyType() throws {
            let file = try Self.ssp(localIO: 1, peerIO: 1, keyType: 0x08).captureFile()
            let c = try #require(CaptureAnalysis.analyze(file, observing: Observing()).connections.first)
            let p = try #require(c.machine.securityRecord.pairings.first)
            #expect(p.procedure == .secureSimplePairing && p.model == .numericComparison && p.modelSource == .observed(frame: 5))
            #expect(p.frame == 2 && p.bonding && p.mitmRequested && p.authenticated == true && p.curve == "P-256")
            #expect(p.linkKeyType == .authenticatedP256 && p.outcome == .completed(frame: 8))
            // DisplayYesNo facing NoInputNoOutput: Just Works, an unauthenticated key though MITM was asked (SEC-13).
            let jw = try RuleTest.diagnose(Self.ssp(localIO: 1, peerIO: 3, keyType: 0x07))
            let d = try #require(jw.of("SEC-13").first)
            #expect(
                d.frame == 2 && d.message.contains("Secure Simple Pairing Just Works (IO capabilities DisplayYesNo and NoInputNoOutput)"))
            #expect(d.message.contains("completed at frame 8 with an unauthenticated combination key (P-256)"))
            #expect(try RuleTest.diagnose(Self.ssp(localIO: 1, peerIO: 1, keyType: 0x08)).of("SEC-13").isEmpty)
            // No MITM asked (authReq 0x04): Just Works is what both wanted.
            #expect(try RuleTest.diagnose(Self.ssp(localIO: 1, peerIO: 3, authReq: 0x04, keyType: 0x07)).of("SEC-13").isEmpty)
        }

        /// This side's user's answer to the user step, and how long it took (the blueprobe moto g04s's first pairing
        /// with the Echo Auto: User Confirmation Request, then the Reply 23.2 s later). Confirmation Request at 6 (1 s),
        /// Reply at 7 (24.2 s): "this side's user confirmed after 23.2 s (6 → 7)". Near misses: a Negative Reply is
        /// "rejected"; no answer in the log: none told.
        @Test func theUsersAnswerAndHowLongItTook() throws {
            func pairing(_ answer: (any HCIParameterSet)?) throws -> (SecurityPairing, String) {
                var b = CaptureBuilder()
                    .event(
                        Self.event(
                            ConnectionComplete {
                                $0.handle = Self.handle; $0.address = Self.peer; $0.linkType = 1
                            })
                    )
                    .event(Self.event(IOCapabilityRequest { $0.address = Self.peer }))
                    .command(
                        Self.command(
                            IOCapabilityRequestReply {
                                $0.address = Self.peer; $0.ioCapability = 1; $0.authenticationRequirements = 5
                            })
                    )
                    .event(HCIBuild.commandComplete(HCICommand(ogf: 0x01, ocf: 0x002B)))
                    .event(
                        Self.event(
                            IOCapabilityResponse {
                                $0.address = Self.peer; $0.ioCapability = 3; $0.authenticationRequirements = 4
                            })
                    )
                    .at(microsecondsFromStart: 1_000_000)
                    .event(
                        Self.event(
                            UserConfirmationRequest {
                                $0.address = Self.peer; $0.numericValue = 466_510
                            })
                    )
                    .at(microsecondsFromStart: 24_200_000)
                if let answer { b = b.declaredCommand(answer) }
                b = b.event(Self.event(SimplePairingComplete { $0.address = Self.peer }))
                let r = try RuleTest.diagnose(b)
                let c = try #require(CaptureAnalysis.analyze(try b.captureFile(), observing: Observing()).connections.first)
                let security = r.story.sentences.first { $0.text.hasPrefix("Security:") }?.text ?? ""
                return (try #require(c.machine.securityRecord.pairings.first), security)
            }
            let (confirmed, line) = try pairing(UserConfirmationRequestReply { $0.address = Self.peer })
            #expect(
                confirmed.userAnswer
                    == SecurityPairing.UserAnswer(accepted: true, requestFrame: 6, frame: 7, microseconds: 23_200_000, verb: "confirmed"))
            #expect(line.contains("this side's user confirmed after 23.2 s (6 → 7)"), "\(line)")
            let (rejected, _) = try pairing(UserConfirmationRequestNegativeReply { $0.address = Self.peer })
            #expect(rejected.userAnswer?.accepted == false && rejected.userAnswer?.verb == "rejected")
            let (none, quiet) = try pairing(nil)
            #expect(none.userAnswer == nil && !quiet.contains("user"))
        }

        /// Secure Simple Pairing's Passkey Entry (Vol 3, Part C, Table 5.7): the KeyboardOnly side types what the other
        /// shows; two KeyboardOnly sides both type it; Numeric Comparison has no passkey.
        @Test func sspPasskeyEntrySaysWhoShowsThePasskeyAndWhoAskedForMITM() throws {
            func pairing(_ b: CaptureBuilder) throws -> SecurityPairing {
                let c = try #require(CaptureAnalysis.analyze(try b.captureFile(), observing: Observing()).connections.first)
                return try #require(c.machine.securityRecord.pairings.first)
            }
            let typed = try pairing(Self.ssp(localIO: 2, peerIO: 0, keyType: 0x08))
            #expect(typed.model == .passkeyEntry && typed.passkey == .shownBy(.peer) && typed.mitmAskedBy == [.local, .peer])
            #expect(try pairing(Self.ssp(localIO: 1, peerIO: 2, keyType: 0x08)).passkey == .shownBy(.local))
            #expect(try pairing(Self.ssp(localIO: 2, peerIO: 2, keyType: 0x08)).passkey == .bothType)
            let compared = try pairing(Self.ssp(localIO: 1, peerIO: 1, authReq: 0x04, peerAuthReq: 0x05, keyType: 0x08))
            #expect(compared.model == .numericComparison && compared.passkey == nil && compared.mitmAskedBy == [.peer])
            // SEC-13 names the side that asked: here this side alone (the peer's 0x04 asks for none).
            let jw = try RuleTest.diagnose(Self.ssp(localIO: 1, peerIO: 3, authReq: 0x05, peerAuthReq: 0x04, keyType: 0x07))
            #expect(try #require(jw.of("SEC-13").first).message.contains("this side asked for MITM protection, yet the pairing ran"))
            let both = try RuleTest.diagnose(Self.ssp(localIO: 1, peerIO: 3, keyType: 0x07))
            #expect(try #require(both.of("SEC-13").first).message.contains("both sides asked for MITM protection"))
        }

        @Test func aDebugCombinationKeyIsAnErrorAnUnauthenticatedOneIsNot() throws {
            let d = try #require(try RuleTest.diagnose(Self.ssp(localIO: 3, peerIO: 3, keyType: 0x03)).of("SEC-11").first)
            #expect(d.severity == .error && d.frame == 8 && d.message.contains("a debug combination link key"))
            #expect(try RuleTest.diagnose(Self.ssp(localIO: 3, peerIO: 3, keyType: 0x04)).of("SEC-11").isEmpty)
        }

        @Test func theSameLinkKeyWithTwoPeersIsAnErrorDifferentKeysAreNot() throws {
            func keyed(_ b: CaptureBuilder, handle: UInt16, peer: BDAddress, key: UInt8) -> CaptureBuilder {
                b.event(
                    Self.event(
                        ConnectionComplete {
                            $0.handle = handle; $0.address = peer; $0.linkType = 1
                        })
                )
                .event(Self.event(LinkKeyRequest { $0.address = peer }))
                .command(
                    Self.command(
                        LinkKeyRequestReply {
                            $0.address = peer; $0.key = Array(repeating: key, count: 16)
                        }))
            }
            let same = keyed(
                keyed(CaptureBuilder(), handle: 0x0B, peer: Self.peer, key: 0x42), handle: 0x0C, peer: Self.otherPeer, key: 0x42)
            let d = try #require(try RuleTest.diagnose(same).of("SEC-14").first)
            #expect(d.frame == 6 && d.supporting.map(\.frame) == [3] && d.message.contains("with 2 different peers"))
            let different = keyed(
                keyed(CaptureBuilder(), handle: 0x0B, peer: Self.peer, key: 0x42), handle: 0x0C, peer: Self.otherPeer, key: 0x43)
            #expect(try RuleTest.diagnose(different).of("SEC-14").isEmpty)
        }

        // MARK: LE

        /// LE link 0x40 (frame 1), Pairing Request (2) and Response (3) with these features.
        static func lePairing(
            _ b: CaptureBuilder = CaptureBuilder().connect(handle: 0x40), sc: Bool, io: UInt8 = 3, mitm: Bool = false,
            keySize: UInt8 = 16
        ) -> CaptureBuilder {
            let authReq = SMPAuthReq(rawValue: 0x01 | (mitm ? 0x04 : 0) | (sc ? 0x08 : 0))
            let features = SMPPairingParameters(
                ioCapability: SMPIOCapability(rawValue: io), authReq: authReq, maxEncryptionKeySize: keySize,
                initiatorKeyDistribution: [.encKey], responderKeyDistribution: [.encKey])
            return b.smp(.pairingRequest(features), handle: 0x40, .tx).smp(.pairingResponse(features), handle: 0x40, .rx)
        }

        static func value(_ byte: UInt8) -> [UInt8] { Array(repeating: byte, count: 16) }

        @Test func legacyJustWorksIsCrackableSecureConnectionsIsNot() throws {
            let d = try #require(try RuleTest.diagnose(Self.lePairing(sc: false)).of("SEC-10").first)
            #expect(d.frame == 2 && d.supporting.map(\.frame) == [3] && d.message.contains("LE legacy Just Works pairing: its TK is 0"))
            #expect(try RuleTest.diagnose(Self.lePairing(sc: true)).of("SEC-10").isEmpty)
        }

        /// SEC-10's cause names the sides whose Pairing Request or Response left the SC flag unset (the rgbCTF G613 log:
        /// the keyboard's Pairing Response 80 without it), never a BR/EDR cause on an LE pairing. Near miss: the
        /// request set SC and the response did not: only the responder is named.
        @Test func legacyPairingCauseNamesTheSideWithoutTheSecureConnectionsFlag() throws {
            let neither = try #require(try RuleTest.diagnose(Self.lePairing(sc: false)).of("SEC-10").first)
            #expect(
                neither.causes == [
                    "neither side set the Secure Connections flag: this side (Pairing Request, frame 2) and the peer (Pairing Response, frame 3)"
                ])
            func features(sc: Bool) -> SMPPairingParameters {
                SMPPairingParameters(
                    ioCapability: SMPIOCapability(rawValue: 3), authReq: SMPAuthReq(rawValue: 0x01 | (sc ? 0x08 : 0)),
                    maxEncryptionKeySize: 16, initiatorKeyDistribution: [.encKey], responderKeyDistribution: [.encKey])
            }
            let declined = CaptureBuilder().connect(handle: 0x40).smp(.pairingRequest(features(sc: true)), handle: 0x40, .tx)
                .smp(.pairingResponse(features(sc: false)), handle: 0x40, .rx)
            let one = try #require(try RuleTest.diagnose(declined).of("SEC-10").first)
            #expect(
                one.causes == [
                    "The peer (Pairing Response, frame 3) did not set the Secure Connections flag: without LE Secure Connections support or with it turned off"
                ])
        }

        /// LE Passkey Entry (Table 2.8): a KeyboardDisplay central facing a DisplayOnly peripheral types what the
        /// peripheral shows; the MITM flag of the request alone is enough, and the record says whose it was.
        @Test func lePasskeyEntrySaysWhoShowsThePasskeyAndWhoAskedForMITM() throws {
            func features(_ io: UInt8, mitm: Bool) -> SMPPairingParameters {
                SMPPairingParameters(
                    ioCapability: SMPIOCapability(rawValue: io), authReq: SMPAuthReq(rawValue: 0x01 | (mitm ? 0x04 : 0) | 0x08),
                    maxEncryptionKeySize: 16, initiatorKeyDistribution: [.encKey], responderKeyDistribution: [.encKey])
            }
            func record(_ central: UInt8, _ peripheral: UInt8, centralMITM: Bool = true, peripheralMITM: Bool = false) throws
                -> SecurityPairing
            {
                let b = CaptureBuilder().connect(handle: 0x40)
                    .smp(.pairingRequest(features(central, mitm: centralMITM)), handle: 0x40, .tx)
                    .smp(.pairingResponse(features(peripheral, mitm: peripheralMITM)), handle: 0x40, .rx)
                let c = try #require(CaptureAnalysis.analyze(try b.captureFile(), observing: Observing()).connections.first)
                return try #require(c.machine.securityRecord.pairings.first)
            }
            let p = try record(4, 0)
            #expect(p.model == .passkeyEntry && p.passkey == .shownBy(.peer) && p.mitmAskedBy == [.local])
            #expect(try record(4, 2).passkey == .shownBy(.local))  // a KeyboardOnly peripheral types
            #expect(try record(4, 4).passkey == nil)  // Secure Connections between two KeyboardDisplay sides compares
            // Near miss: neither side asks for MITM, so Just Works whatever the IO capabilities, and no passkey.
            let none = try record(4, 0, centralMITM: false)
            #expect(none.model == .justWorks && none.passkey == nil && none.mitmAskedBy.isEmpty)
        }

        @Test func theLEKeySizeComesFromThePairingAndAShortOneIsSaid() throws {
            // Legacy, 7-byte maximum: LE Enable Encryption with EDIV/Rand 0 (4–5), Encryption Change (6).
            let b = Self.lePairing(sc: false, keySize: 7)
                .command(
                    Self.command(
                        LEEnableEncryption {
                            $0.handle = 0x40; $0.longTermKey = Self.value(1)
                        })
                )
                .event(HCIBuild.commandStatus(.leEnableEncryption)).encryptionChange(handle: 0x40)
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("SEC-08").first)
            #expect(d.frame == 3 && d.severity == .warning && d.supporting.map(\.frame) == [6])
            #expect(
                d.message.contains(
                    "a 7-byte key (inferred: the smaller Maximum Encryption Key Size of the pairing (Pairing Response at frame 3))"))
            #expect(r.story.sentences.contains { $0.text.contains("7-byte key (from the pairing)") })
            #expect(r.of("SEC-12").isEmpty)
        }

        /// The NimBLE door lock's captures: the lock notifies while the pairing runs, before the link is encrypted (SC
        /// 4053; legacy 4741, 4807, 4874, encryption from 4888): the Security line says so. Near miss: the same
        /// notification after the Encryption Change is encrypted, and nothing is said.
        @Test(arguments: [true, false]) func aNotificationDuringThePairingWentInTheClear(_ beforeEncryption: Bool) throws {
            var b = Self.lePairing(sc: false)
            let notified = b.nextFrame + (beforeEncryption ? 0 : 4)
            if beforeEncryption { b = b.notify(handle: 0x0012, [0x01, 0x02], connection: 0x40) }
            b = b.command(
                Self.command(
                    LEEnableEncryption {
                        $0.handle = 0x40; $0.longTermKey = Self.value(1)
                    })
            )
            .event(HCIBuild.commandStatus(.leEnableEncryption)).encryptionChange(handle: 0x40)
            if !beforeEncryption { b = b.notify(handle: 0x0012, [0x01, 0x02], connection: 0x40) }
            let line = try RuleTest.diagnose(b).story.sentences.first { $0.text.hasPrefix("Security:") }?.text ?? ""
            #expect(
                line.contains("1 notification went in the clear during the pairing, before encryption (\(notified))") == beforeEncryption,
                "\(line)")
        }

        /// The NimBLE door lock's legacy capture: the central asks for bonding, MITM and Secure Connections (AuthReq 0x0d at
        /// 4670), the DisplayOnly lock answers 0x00 (4675): no keys are stored and the pairing runs legacy. The Security
        /// line says what the answer refused. Near miss: the same request answered in kind (0x0d): nothing refused.
        @Test(arguments: [UInt8(0x00), UInt8(0x0D)]) func whatTheResponseRefusedOfTheRequestIsSaid(_ answer: UInt8) throws {
            func features(_ authReq: UInt8, io: UInt8) -> SMPPairingParameters {
                SMPPairingParameters(
                    ioCapability: SMPIOCapability(rawValue: io), authReq: SMPAuthReq(rawValue: authReq), maxEncryptionKeySize: 16,
                    initiatorKeyDistribution: [.encKey], responderKeyDistribution: [.encKey])
            }
            let b = CaptureBuilder().connect(handle: 0x40)
                .smp(.pairingRequest(features(0x0D, io: 4)), handle: 0x40, .tx)
                .smp(.pairingResponse(features(answer, io: 0)), handle: 0x40, .rx)
            let line = try RuleTest.diagnose(b).story.sentences.first { $0.text.hasPrefix("Security:") }?.text ?? ""
            let refused = answer == 0
            #expect(line.contains("the peer answered No Bonding: no keys stored") == refused, "\(line)")
            #expect(line.contains("this side asked for Secure Connections: the peer's answer made it legacy") == refused, "\(line)")
            #expect(line.contains(refused ? "LE legacy Passkey Entry" : "LE Secure Connections Passkey Entry"), "\(line)")
        }

        /// No pairing in the capture: LE Enable Encryption (frame 2) names the stored key by EDIV and Rand. Zeros name a
        /// Secure Connections LTK (Vol 3, Part H, 2.4.4, 3.6.1), a random EDIV/Rand a legacy one (3.6.2): said as
        /// inferred. With the pairing on the link (the near miss) its key is not "stored" and nothing is inferred.
        @Test func aStoredKeyNamedByZerosIsInferredSecureConnectionsANonZeroOneLegacy() throws {
            func stored(_ b: CaptureBuilder = CaptureBuilder().connect(handle: 0x40), ediv: UInt16, rand: UInt64) -> CaptureBuilder {
                b.command(
                    Self.command(
                        LEEnableEncryption {
                            $0.handle = 0x40; $0.encryptedDiversifier = ediv; $0.randomNumber = rand; $0.longTermKey = Self.value(1)
                        })
                )
                .event(HCIBuild.commandStatus(.leEnableEncryption)).encryptionChange(handle: 0x40)
            }
            func security(_ b: CaptureBuilder) throws -> String {
                try RuleTest.diagnose(b).story.sentences.first { $0.text.hasPrefix("Security:") }?.text ?? ""
            }
            #expect(
                try security(stored(ediv: 0, rand: 0)).contains(
                    "a stored key of an LE Secure Connections pairing (inferred: EDIV and Rand 0 at 2)"))
            #expect(
                try security(stored(ediv: 0x1F2E, rand: 0x0102_0304_0506_0708)).contains(
                    "a stored LE legacy key (inferred: non-zero EDIV and Rand at 2)"))
            let paired = try security(stored(Self.lePairing(sc: true), ediv: 0, rand: 0))
            #expect(!paired.contains("stored") && paired.contains("LE Secure Connections"))
        }

        @Test func aSecureConnectionsKeyStartedWithNonZeroEDIVIsSaidZeroIsNot() throws {
            func started(ediv: UInt16) -> CaptureBuilder {
                Self.lePairing(sc: true).smp(.pairingDHKeyCheck(Self.value(2)), handle: 0x40, .tx).smp(
                    .pairingDHKeyCheck(Self.value(3)), handle: 0x40, .rx
                )
                .command(
                    Self.command(
                        LEEnableEncryption {
                            $0.handle = 0x40; $0.encryptedDiversifier = ediv; $0.longTermKey = Self.value(1)
                        })
                )
                .event(HCIBuild.commandStatus(.leEnableEncryption)).encryptionChange(handle: 0x40)
            }
            let d = try #require(try RuleTest.diagnose(started(ediv: 0x0040)).of("SEC-12").first)
            #expect(d.frame == 6 && d.message.contains("EDIV 0x0040 and Rand 0x0000000000000000"))
            #expect(d.message.hasSuffix("the peripheral accepted it (encryption on at frame 8)."))
            #expect(try RuleTest.diagnose(started(ediv: 0)).of("SEC-12").isEmpty)
            #expect(try RuleTest.diagnose(started(ediv: 0)).of("SEC-18").isEmpty)
        }

        @Test func encryptionBeforeTheDHKeyChecksIsSaid() throws {
            let b = Self.lePairing(sc: true)
                .command(
                    Self.command(
                        LEEnableEncryption {
                            $0.handle = 0x40; $0.longTermKey = Self.value(1)
                        })
                )
                .event(HCIBuild.commandStatus(.leEnableEncryption)).encryptionChange(handle: 0x40)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-18").first)
            #expect(d.frame == 4 && d.severity == .error && d.message.contains("without this side's and the peer's DHKey Check"))
        }

        /// The peripheral's side: the host's LE Long Term Key Request Reply is the key accepted, even when the capture ends
        /// before the Encryption Change; with no reply the capture shows no acceptance and SEC-18 stays a warning.
        @Test func aPeripheralsKeyReplyIsTheAcceptanceTheRequestAloneIsNot() throws {
            // Connection 1, Pairing Request 2, Response 3 (no DHKey Check), LTK Request 4 (EDIV 0xBEEF), Reply 5, its Complete 6.
            let asked = Self.lePairing(sc: true).longTermKeyRequest(handle: 0x40)
            let replied = asked.longTermKeyReply(handle: 0x40)
            let r = try RuleTest.diagnose(replied)
            let skip = try #require(r.of("SEC-18").first)
            #expect(skip.frame == 4 && skip.severity == .error && skip.message.contains("the peripheral accepted the key anyway (frame 5)"))
            let ediv = try #require(r.of("SEC-12").first)
            #expect(ediv.message.hasSuffix("the peripheral accepted it (frame 5); the capture shows no end of the start."))
            let unanswered = try #require(try RuleTest.diagnose(asked).of("SEC-18").first)
            #expect(unanswered.severity == .warning && unanswered.message.contains("the capture shows no acceptance"))
        }

        @Test func theDebugPublicKeyIsAnErrorAnyOtherKeyIsNot() throws {
            func keys(_ x: [UInt8], _ y: [UInt8]) -> CaptureBuilder {
                Self.lePairing(sc: true).smp(.pairingPublicKey(x: x, y: y), handle: 0x40, .rx)
            }
            let d = try #require(
                try RuleTest.diagnose(keys(SecureConnections.debugPublicKeyX, SecureConnections.debugPublicKeyY)).of("SEC-11").first)
            #expect(d.frame == 4 && d.message.contains("the specification's debug P-256 public key"))
            #expect(try RuleTest.diagnose(keys(Self.value(5) + Self.value(5), Self.value(6) + Self.value(6))).of("SEC-11").isEmpty)
        }

        /// Identity Information (frame 4) and Identity Address Information (5) from the peer: an all-zero IRK is SEC-20 at
        /// info (Vol 6, Part B, 4.7: the identity address is used), any other IRK is not; the record keeps both.
        @Test func anAllZeroIdentityKeyIsSaidAsNoPrivacyARealOneIsNot() throws {
            let identityAddress = RuleTest.peer
            func distributed(irk: [UInt8]) -> CaptureBuilder {
                Self.lePairing(sc: true).smp(.identityInformation(irk: irk), handle: 0x40, .rx)
                    .smp(.identityAddressInformation(addressType: 0x01, address: identityAddress), handle: 0x40, .rx)
            }
            let r = try RuleTest.diagnose(distributed(irk: Self.value(0)))
            let d = try #require(r.of("SEC-20").first)
            #expect(d.frame == 4 && d.severity == .info)
            #expect(
                r.story.sentences.contains {
                    $0.text.contains("1 LE pairing (LE Secure Connections Just Works, all-zero IRK from the peer: no privacy)")
                }
            )
            #expect(
                d.message.contains(
                    "in the pairing at frame 2, the peer (identity address C0:11:22:33:44:55 (random), frame 4) distributed an all-zero identity resolving key; it does not use privacy"
                ))
            func identity(irk: [UInt8]) throws -> DistributedIdentity? {
                let file = try distributed(irk: irk).captureFile()
                return CaptureAnalysis.analyze(file, observing: Observing()).connections.first?.machine.securityRecord.pairings.last?
                    .identities[.peer]
            }
            let zero = try #require(try identity(irk: Self.value(0)))
            #expect(zero.frame == 4 && zero.irkIsZero && zero.address == "C0:11:22:33:44:55 (random)")
            let real = try RuleTest.diagnose(distributed(irk: Self.value(7)))
            // A real IRK is only named among the keys the peer distributed, with no privacy note.
            #expect(real.of("SEC-20").isEmpty && !real.story.sentences.contains { $0.text.contains("all-zero IRK") })
            #expect(real.story.sentences.contains { $0.text.contains("keys distributed at 4 (IRK from the peer)") })
            #expect(try identity(irk: Self.value(7))?.irkIsZero == false)
        }

        @Test func aPublicKeyOffTheCurveOrInALegacyPairingIsSaidTheDebugKeyIsNot() throws {
            func key(sc: Bool, _ x: [UInt8], _ y: [UInt8]) -> CaptureBuilder {
                Self.lePairing(sc: sc).smp(.pairingPublicKey(x: x, y: y), handle: 0x40, .tx)
            }
            // X = 0x0505…, Y = 0x0606…: y² ≠ x³ − 3x + b mod p (OpenSSL's check).
            let off = try #require(
                try RuleTest.diagnose(key(sc: true, Self.value(5) + Self.value(5), Self.value(6) + Self.value(6))).of("SEC-19").first)
            #expect(off.frame == 4 && off.message.contains("not a point on P-256 (frame 4)"))
            // The debug key is a point on the curve, in an SC pairing: nothing to say here (SEC-11 says the rest).
            let debug = key(sc: true, SecureConnections.debugPublicKeyX, SecureConnections.debugPublicKeyY)
            #expect(try RuleTest.diagnose(debug).of("SEC-19").isEmpty)
            // The same valid key in a pairing the feature exchange made legacy is out of place.
            let legacy = try #require(
                try RuleTest.diagnose(key(sc: false, SecureConnections.debugPublicKeyX, SecureConnections.debugPublicKeyY)).of("SEC-19")
                    .first)
            #expect(legacy.frame == 4 && legacy.message.contains("in a pairing whose feature exchange made it LE legacy"))
        }

        @Test func aMaximumKeySizeOutOfRangeIsSaid() throws {
            let d = try #require(try RuleTest.diagnose(Self.lePairing(sc: true, keySize: 253)).of("SEC-17").first)
            #expect(d.frame == 2 && d.message.contains("Maximum Encryption Key Size of 253"))
            #expect(try RuleTest.diagnose(Self.lePairing(sc: true, keySize: 7)).of("SEC-17").isEmpty)
        }

        /// Link `n` (handle 0x40 + n) to the peer, paired with bonding and keys distributed, then ended.
        static func pairedLink(_ b: CaptureBuilder, _ n: UInt16) -> CaptureBuilder {
            Self.lePairing(b.connect(handle: 0x40), sc: true).smp(.encryptionInformation(longTermKey: Self.value(1)), handle: 0x40, .rx)
                .smp(.centralIdentification(ediv: 0, rand: 0), handle: 0x40, .rx).disconnect(handle: 0x40)
        }

        @Test func pairingOnEveryOneOfThreeLinksIsALostBondTwoAreNot() throws {
            let three = Self.pairedLink(Self.pairedLink(Self.pairedLink(CaptureBuilder(), 1), 2), 3)
            let d = try #require(try RuleTest.diagnose(three).of("SEC-16").first)
            // Each link: connect, request, response, two key PDUs, disconnection (6 records).
            #expect(d.frame == 8 && d.occurrences == [8, 14] && d.message.contains("paired again on each of its 3 links"))
            #expect(try RuleTest.diagnose(Self.pairedLink(Self.pairedLink(CaptureBuilder(), 1), 2)).of("SEC-16").isEmpty)
        }

        @Test func aBondedLinkThatNeverEncryptsIsSaid() throws {
            let probe = Self.pairedLink(CaptureBuilder(), 1).connect(handle: 0x40).att(.readRequest(handle: 0x0003), handle: 0x40, .tx)
            // Watched 6 s with data and no encryption: the bond protected nothing on it.
            let b = probe.at(microsecondsFromStart: 6_000_000).att(.readRequest(handle: 0x0005), handle: 0x40, .tx)
            let d = try #require(try RuleTest.diagnose(b).of("SEC-15").first)
            #expect(d.frame == 7 && d.connection == 2 && d.message.contains("bonded on link #1 (pairing at frame 2)"))
            let encrypted = b.enableEncryption(handle: 0x40).encryptionChange(handle: 0x40)
            #expect(try RuleTest.diagnose(encrypted).of("SEC-15").isEmpty)
            // A link the capture watched for 1 ms (a test tool's probe) may not have had the time to encrypt.
            #expect(try RuleTest.diagnose(probe).of("SEC-15").isEmpty)
        }

        @Test func aStoredKeyTakesTheBondsKeySize() throws {
            let b = Self.lePairing(CaptureBuilder().connect(handle: 0x40), sc: true, keySize: 10)
                .smp(.encryptionInformation(longTermKey: Self.value(1)), handle: 0x40, .rx)
                .smp(.centralIdentification(ediv: 0, rand: 0), handle: 0x40, .rx).disconnect(handle: 0x40)
                .connect(handle: 0x40).enableEncryption(handle: 0x40).encryptionChange(handle: 0x40)
            let file = try b.captureFile()
            let links = CaptureAnalysis.analyze(file, observing: Observing()).connections
            let s = try #require(links.last?.machine.securityRecord.sessions.first)
            #expect(s.origin == .stored && s.keySize == 10 && s.keySizeSource == .inferred(.bondKeySize(frame: 3, connection: 1)))
        }
    }
}
