import BLEAnalysis
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// The BR/EDR rules (BR-01…BR-06) on captures of the shapes no shared capture shows, built from the declared events
/// (Core Spec Vol 4, Part E, 7.7): a Secure Simple Pairing that fails after a missing link key, a bond the peer lost,
/// a refused connection, encryption and sniff. BR-01 on the real pongbot log is in EndToEndTests (StoryTests).
extension DiagnosisRuleTests {
    @Suite struct Classic {
        static let peer = BDAddress(0x00_1B_DC_07_31_8E)
        static let peerText = "00:1B:DC:07:31:8E"
        static let handle: UInt16 = 0x000B

        /// BD_ADDR as HCI carries it (little-endian).
        static var address: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: peer.value >> (8 * UInt64($0))) } }

        static func event(_ set: some HCIParameterSet) -> [UInt8] {
            guard case .event(let code) = type(of: set).carrier else { return [] }
            return HCIBuild.event(code, parameters: set.bytes)
        }

        /// Create Connection (frames 1–2) and Connection Complete 0x00 on handle 0x000B (frame 3).
        static func connected() -> CaptureBuilder {
            CaptureBuilder()
                .commandRefusedByStatus(
                    HCICommand(rawValue: 0x0405), parameters: address + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01], status: .success
                )
                .event(
                    event(
                        ConnectionComplete {
                            $0.handle = handle; $0.address = peer; $0.linkType = 1
                        }))
        }

        /// Authentication Requested (4–5), Link Key Request (6), the host's answer (7–8).
        static func keyAsked(found: Bool) -> CaptureBuilder {
            connected()
                .commandRefusedByStatus(HCICommand(rawValue: 0x0411), parameters: [UInt8(handle), 0], status: .success)
                .event(event(LinkKeyRequest { $0.address = peer }))
                .commandRefusedByComplete(
                    HCICommand(rawValue: found ? 0x040B : 0x040C), parameters: address + (found ? [UInt8](repeating: 0x42, count: 16) : []),
                    status: .success)
        }

        /// The SSP chain after a missing key: IO Capability Request (9), Response (10), Simple Pairing Complete 0x05
        /// (11), Authentication Complete 0x05 (12).
        @Test func secureSimplePairingFailureCitesTheChain() throws {
            let b = Self.keyAsked(found: false)
                .event(Self.event(IOCapabilityRequest { $0.address = Self.peer }))
                .event(
                    Self.event(
                        IOCapabilityResponse {
                            $0.address = Self.peer; $0.ioCapability = 1; $0.authenticationRequirements = 0x03
                        })
                )
                .event(
                    Self.event(
                        SimplePairingComplete {
                            $0.status = HCIStatus(rawValue: 0x05); $0.address = Self.peer
                        })
                )
                .event(
                    Self.event(
                        AuthenticationComplete {
                            $0.status = HCIStatus(rawValue: 0x05); $0.handle = Self.handle
                        }))
            let r = try RuleTest.diagnose(b)
            let f = try #require(r.of("BR-03").first)
            #expect(r.of("BR-03").count == 1 && f.severity == .error && f.frame == 11)
            #expect(f.supporting.map(\.frame) == [4, 6, 7, 9, 10])
            #expect(f.message.contains("Secure Simple Pairing with \(Self.peerText) failed (0x05 Authentication Failure at frame 11)"))
            #expect(f.message.contains("after this side said it had no link key"))
            // A pairing followed the Negative Reply: not BR-04's missing key.
            #expect(r.of("BR-04").isEmpty)
            // The story's one Security: line carries the BR/EDR sentence (its own prefix shortened to "BR/EDR: ").
            let security = try #require(r.story.sentences.first { $0.text.hasPrefix("Security: ") && $0.text.contains("BR/EDR: ") })
            #expect(security.text.contains("Simple Pairing failed (0x05 Authentication Failure)") && security.frames.contains(11))
        }

        /// Negative Reply, then Authentication Complete 0x06 with no pairing: this side lost the key.
        @Test func missingLinkKeyWithoutPairing() throws {
            let b = Self.keyAsked(found: false)
                .event(
                    Self.event(
                        AuthenticationComplete {
                            $0.status = HCIStatus(rawValue: 0x06); $0.handle = Self.handle
                        }))
            let r = try RuleTest.diagnose(b)
            let f = try #require(r.of("BR-04").first)
            #expect(f.frame == 9 && f.severity == .error && f.headline == "no link key for \(Self.peerText) (0x06)")
            #expect(f.message.contains("Negative Reply at frame 7") && f.message.hasPrefix("Authentication with "))
            #expect(r.of("BR-03").isEmpty)
        }

        /// The same missing key, then a new pairing with the peer later in the log (Link Key Notification at 10): the
        /// bond is back, the failed attempt is what was lost (the blueprobe moto g04s log: 0x06 at 3304, a new key at
        /// 3467, tshark). A warning that says so; the near miss is the test above (no pairing: an error).
        @Test func missingLinkKeyThenPairedAgain() throws {
            let b = Self.keyAsked(found: false)
                .event(
                    Self.event(
                        AuthenticationComplete {
                            $0.status = HCIStatus(rawValue: 0x06); $0.handle = Self.handle
                        })
                )
                .event(
                    Self.event(
                        LinkKeyNotification {
                            $0.address = Self.peer; $0.key = [UInt8](repeating: 0x11, count: 16); $0.keyType = 4
                        }))
            let f = try #require(try RuleTest.diagnose(b).of("BR-04").first)
            #expect(
                f.severity == .warning
                    && f.message.hasSuffix("(Negative Reply at frame 7); they paired again and a new link key was made at frame 10."))
            #expect(f.supporting.map(\.frame).contains(10))
        }

        /// This side deleted its stored key for the peer (Delete Stored Link Key, frame 1), then the missing key's 0x06:
        /// BR-04 cites the deletion as the removal of the bond (the moto g04s log: Delete Stored Link Key for
        /// F8:5C:7D:18:E2:FF, Delete_All 0, at 3038; Negative Reply 3299; tshark). The near misses: a deletion for
        /// another address, one of every key with no key for the peer seen before (BlueZ clears the controller's
        /// keys at start-up), and one that opens a pairing (a Remote Name Request for the peer right after it, frames
        /// 3–4: Android's bonding, the Broadcom classic AVDTP log's 124 → 126) are not cited.
        @Test(arguments: [0, 1, 2, 3]) func aStoredKeyDeletedHereIsTheBondRemoved(_ which: Int) throws {
            let other: [UInt8] = [1, 2, 3, 4, 5, 6]
            var b = CaptureBuilder().commandRefusedByComplete(
                HCICommand(rawValue: 0x0C12), parameters: (which == 2 ? other : Self.address) + [which == 1 ? 1 : 0], status: .success)
            if which == 3 {
                b = b.commandRefusedByStatus(HCICommand(rawValue: 0x0419), parameters: Self.address + [1, 0, 0, 0], status: .success)
            }
            b = b.at(5)
            for r in Self.keyAsked(found: false).records { b = b.record(r.kind, r.direction, r.bytes) }
            b = b.event(
                Self.event(
                    AuthenticationComplete {
                        $0.status = HCIStatus(rawValue: 0x06); $0.handle = Self.handle
                    }))
            let r = try RuleTest.diagnose(b)
            let f = try #require(r.of("BR-04").first)
            let security = r.story.sentences.first { $0.text.contains("no stored key for 1 request") }?.text ?? ""
            let reply = which == 3 ? 11 : 9
            #expect(security.contains("(9: this side had deleted the stored key of \(Self.peerText) at 1)") == (which == 0), "\(security)")
            if which == 0 {
                #expect(
                    f.message.hasSuffix(
                        "(Negative Reply at frame 9): this side deleted the stored key for it at frame 1 (Delete Stored Link Key) and no pairing followed."
                    ), "\(f.message)")
                #expect(
                    f.supporting.map(\.frame).contains(1)
                        && f.causes.first?.hasPrefix("this side removed the bond (Delete Stored Link Key at frame 1)") == true)
            } else {
                #expect(
                    f.message.hasSuffix("(Negative Reply at frame \(reply)) and no pairing followed.")
                        && !f.supporting.map(\.frame).contains(1),
                    "\(f.message)")
            }
        }

        /// Reply with the stored key, then Authentication Complete 0x05: the peer forgot the bond (hcidoc's LinkKeyMismatch).
        @Test func storedKeyRefusedByThePeer() throws {
            let b = Self.keyAsked(found: true)
                .event(
                    Self.event(
                        AuthenticationComplete {
                            $0.status = HCIStatus(rawValue: 0x05); $0.handle = Self.handle
                        }))
            let r = try RuleTest.diagnose(b)
            let f = try #require(r.of("BR-04").first)
            #expect(f.frame == 9 && f.message.contains("the peer refused the link key this side gave at frame 7"))
        }

        /// A connection that fails 0x05 after the controller asked for a PIN (Link Key Request 3, Negative Reply 4–5, PIN
        /// Code Request 6, PIN Code Request Reply 7–8, Connection Complete 0x05 at 9; the legacy-PIN capture of
        /// Thewbi/hci_bluetooth, frames 11–14): the PIN pairing failed. The near miss: no PIN asked, a stored key given.
        @Test(arguments: [true, false]) func anAuthenticationFailureAfterAPINRequestIsThePINPairing(_ pinAsked: Bool) throws {
            var b = CaptureBuilder()
                .commandRefusedByStatus(
                    HCICommand(rawValue: 0x0405), parameters: Self.address + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01], status: .success
                )
                .event(Self.event(LinkKeyRequest { $0.address = Self.peer }))
            if pinAsked {
                b = b.commandRefusedByComplete(HCICommand(rawValue: 0x040C), parameters: Self.address, status: .success)
                    .event(Self.event(PINCodeRequest { $0.address = Self.peer }))
                    .commandRefusedByComplete(
                        HCICommand(rawValue: 0x040D),
                        parameters: Self.address + [4, 0x31, 0x32, 0x33, 0x34] + [UInt8](repeating: 0, count: 12),
                        status: .success)
            } else {
                b = b.commandRefusedByComplete(
                    HCICommand(rawValue: 0x040B), parameters: Self.address + [UInt8](repeating: 0x42, count: 16), status: .success)
            }
            b = b.event(
                Self.event(
                    ConnectionComplete {
                        $0.status = .authenticationFailure; $0.address = Self.peer; $0.linkType = 1
                    }))
            let d = try #require(try RuleTest.diagnose(b).of("BR-02").first)
            if pinAsked {
                #expect(d.frame == 9 && d.supporting.map(\.frame) == [1, 6])
                #expect(
                    d.message.hasSuffix(
                        "the legacy PIN pairing (PIN Code Request at frame 6) failed: the PINs on the two sides did not match."))
            } else {
                #expect(d.message.hasSuffix("authentication failed: a link key is missing or does not match."))
            }
        }

        /// Connection Complete 0x3A (Controller Busy), then the peer's own link to this side up 7 ms later: a page
        /// collision, info (the blueprobe midlog: 6063, the buds' link at 6070). Near miss: no link follows, a warning.
        @Test(arguments: [true, false]) func aPageCollisionIsNoFailure(_ linkFollows: Bool) throws {
            var b = CaptureBuilder()
                .commandRefusedByStatus(
                    HCICommand(rawValue: 0x0405), parameters: Self.address + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01], status: .success
                )
                .event(
                    Self.event(
                        ConnectionComplete {
                            $0.status = .controllerBusy; $0.address = Self.peer; $0.linkType = 1
                        }))
            let up = b.nextFrame
            if linkFollows { b = b.connectBREDR(handle: Self.handle, peer: Self.peer) }
            let d = try #require(try RuleTest.diagnose(b).of("BR-02").first)
            #expect(d.severity == (linkFollows ? .info : .warning))
            #expect(d.message.contains("a page collision") == linkFollows)
            #expect(d.supporting.map(\.frame).contains(up) == linkFollows)
        }

        /// Connection Complete 0x0E (rejected: security) is BR-02; 0x04 is BR-01's, with its Create Connection.
        @Test func failedConnectionsByStatus() throws {
            let b = CaptureBuilder()
                .commandRefusedByStatus(
                    HCICommand(rawValue: 0x0405), parameters: Self.address + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01], status: .success
                )
                .event(
                    Self.event(
                        ConnectionComplete {
                            $0.status = HCIStatus(rawValue: 0x0E); $0.address = Self.peer; $0.linkType = 1
                        })
                )
                .commandRefusedByStatus(
                    HCICommand(rawValue: 0x0405), parameters: Self.address + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01], status: .success
                )
                .event(
                    Self.event(
                        ConnectionComplete {
                            $0.status = HCIStatus(rawValue: 0x04); $0.address = Self.peer; $0.linkType = 1
                        }))
            let r = try RuleTest.diagnose(b)
            let refused = try #require(r.of("BR-02").first)
            #expect(refused.frame == 3 && refused.severity == .warning && refused.supporting.map(\.frame) == [1])
            let page = try #require(r.of("BR-01").first)
            #expect(page.frame == 6 && page.count == 1 && page.supporting.map(\.frame) == [1])
            #expect(page.message.contains("Create Connection 2 times, first at frame 1"))
        }

        /// A page that timed out, then the device connected (the host's next page): info, citing the connection. The near
        /// miss: the connection is another device's, so the paged one never answered; no inquiry found it, so the host
        /// was reconnecting to a device it knew and whether anyone waited cannot be seen: info too, saying so.
        @Test(arguments: [true, false]) func pageTimeoutThenConnected(_ samePeer: Bool) throws {
            let other = BDAddress(0x00_1B_DC_07_31_8F)
            let b = CaptureBuilder()
                .commandRefusedByStatus(
                    HCICommand(rawValue: 0x0405), parameters: Self.address + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01], status: .success
                )
                .event(
                    Self.event(
                        ConnectionComplete {
                            $0.status = HCIStatus(rawValue: 0x04); $0.address = Self.peer; $0.linkType = 1
                        })
                )
                .at(30)
                .event(
                    Self.event(
                        ConnectionComplete {
                            $0.handle = Self.handle; $0.address = samePeer ? Self.peer : other; $0.linkType = 1
                        }))
            let r = try RuleTest.diagnose(b)
            let page = try #require(r.of("BR-01").first)
            #expect(page.frame == 3)
            if samePeer {
                #expect(page.severity == .info && page.supporting.map(\.frame) == [1, 4])
                #expect(page.message.hasSuffix("it connected at frame 4, after the last timeout: nothing was lost in the end."))
            } else {
                #expect(page.severity == .info && page.supporting.map(\.frame) == [1])
                #expect(
                    page.message.hasSuffix(
                        "the device never answered. No inquiry in the log found it: the host paged a device it already knew, as a "
                            + "background reconnect does; whether anyone waited for it cannot be seen."))
            }
        }

        /// An Inquiry Result with RSSI (Core Spec Vol 4, Part E, 7.7.33) listing two devices, the paged one second (its
        /// BD_ADDR at byte 15: Num_Responses, then 14 bytes per response as BlueZ's `inquiry_info_with_rssi`), then a
        /// page to it that times out: a device picked from a scan, a warning citing the inquiry. The near miss: the
        /// inquiry listed two other devices, so the page is a reconnect to a known device (info).
        @Test(arguments: [true, false]) func pageTimeoutAfterAnInquiryFoundTheDevice(_ listed: Bool) throws {
            let others = [BDAddress(0x11_22_33_44_55_66), BDAddress(0x00_1B_DC_07_31_8F)]
            func response(_ a: BDAddress) -> [UInt8] {
                (0..<6).map { UInt8(truncatingIfNeeded: a.value >> (8 * UInt64($0))) }
                    + [0x01, 0x00, 0x0C, 0x02, 0x5A, 0x34, 0x12, 0xC4]
            }
            let listedDevices = listed ? [others[0], Self.peer] : others
            let inquiryResult = HCIBuild.event(
                HCIEventCode(0x22), parameters: [2] + listedDevices.flatMap(response))
            let b = CaptureBuilder()
                .event(inquiryResult)
                .commandRefusedByStatus(
                    HCICommand(rawValue: 0x0405), parameters: Self.address + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01], status: .success
                )
                .event(
                    Self.event(
                        ConnectionComplete {
                            $0.status = HCIStatus(rawValue: 0x04); $0.address = Self.peer; $0.linkType = 1
                        }))
            let r = try RuleTest.diagnose(b)
            let page = try #require(r.of("BR-01").first)
            #expect(page.frame == 4)
            if listed {
                #expect(page.severity == .warning && page.supporting.map(\.frame) == [1, 2])
                #expect(
                    page.message.hasSuffix(
                        "the device never answered. The host's inquiry had found it at frame 1: a device picked from a scan."))
            } else {
                #expect(page.severity == .info && page.supporting.map(\.frame) == [2])
            }
        }

        /// Encryption Change 0x06 on the BR/EDR link: BR-05.
        @Test func encryptionFailure() throws {
            let b = Self.connected().encryptionChange(handle: Self.handle, status: HCIStatus(rawValue: 0x06), enabled: false)
            let r = try RuleTest.diagnose(b)
            let f = try #require(r.of("BR-05").first)
            #expect(f.frame == 4 && f.severity == .error)
        }

        /// DC-01 on a BR/EDR link cites the supervision timeout the host wrote (Write Link Supervision Timeout 8000 slots
        /// = 5 s, accepted by its Command Complete), as on LE (newcap14's iPhone radar log: 8000 written at 241,
        /// completed at 243, the link lost 0x08 at 740 after 5.42 s of silence). The near miss: none written, no
        /// timeout is claimed (the controller's default may have been changed unseen).
        @Test(arguments: [true, false]) func aBREDRLossCitesTheSupervisionTimeoutWritten(_ written: Bool) throws {
            var b = Self.connected()
            if written {
                b = b.declaredCommand(
                    WriteLinkSupervisionTimeout {
                        $0.handle = Self.handle; $0.timeout = 8000
                    }
                )  // 4
                .event(
                    HCIBuild.commandComplete(
                        WriteLinkSupervisionTimeout.opcodeForTests, returnParameters: [0x00, UInt8(Self.handle), 0x00]))  // 5
            }
            b = b.at(30).disconnect(handle: Self.handle, reason: HCIStatus(rawValue: 0x08))
            let f = try #require(try RuleTest.diagnose(b).of("DC-01").first)
            if written {
                #expect(f.message.contains("the 5000 ms supervision timeout expired") && f.supporting.map(\.frame).contains(5))
            } else {
                #expect(!f.message.contains("supervision timeout expired"))
            }
        }

        /// Exit Sniff Mode refused Command Disallowed (0x0C) after a Mode Change that had already made the link active
        /// (Core Vol 4 Part E 7.2.3: Exit Sniff Mode ends sniff mode on a link in it): the peer's own exit crossed this
        /// side's, as in the corpus's BlueZ A2DP sink (Exit Sniff Mode 199, Mode Change to active 200, refusal 201).
        /// BR-06 says so and cites the Mode Change. The near miss: the latest Mode Change put the link in sniff, so the
        /// refusal is not explained by the mode and stays "the link went on as it was".
        @Test(arguments: [UInt8(0), 2]) func exitFromSniffRefusedOnALinkAlreadyActive(_ mode: UInt8) throws {
            let exit = HCICommand(rawValue: 0x0804)
            let b = Self.connected()
                .at(5).command(HCIBuild.command(exit, parameters: [UInt8(Self.handle), 0]))  // 4
                .event(
                    Self.event(
                        ModeChange {
                            $0.handle = Self.handle; $0.mode = mode; $0.interval = mode == 0 ? 0 : 0x0320
                        })
                )  // 5
                .event(HCIBuild.commandStatus(exit, status: .commandDisallowed))  // 6
            let f = try #require(try RuleTest.diagnose(b).of("BR-06").first)
            #expect(f.frame == 6 && f.severity == .info)
            if mode == 0 {
                #expect(
                    f.message.hasSuffix(
                        "the link was already in active mode (Mode Change at frame 5, between the command at 4 and its refusal: the peer's own change crossed it); the controller refuses a change to the mode a link is in."
                    ))
                #expect(f.supporting.map(\.frame) == [5] && f.connection == 1)
            } else {
                #expect(f.message.hasSuffix("the link went on as it was.") && f.supporting.isEmpty)
            }
        }

        /// The Mode Change to active before the command (the corpus's Sony headphones log: Mode Change 27227, Exit Sniff
        /// Mode 27234, refused 0x0C at 27235): the Command Status names no link, the command's handle does, so the
        /// refusal is told with its link and the Mode Change that had already made it active. The near miss: that Mode
        /// Change is on another link (handle 0x0002, sniff on ours), and the refusal stays unexplained.
        @Test(arguments: [true, false]) func exitFromSniffRefusedAfterAnEarlierModeChange(_ sameLink: Bool) throws {
            let exit = HCICommand(rawValue: 0x0804)
            let other: UInt16 = 0x0002
            var b = Self.connected()
            if !sameLink {
                b = b.event(
                    Self.event(
                        ModeChange {
                            $0.handle = Self.handle; $0.mode = 2; $0.interval = 0x0320
                        })
                )
                .event(
                    Self.event(
                        ConnectionComplete {
                            $0.handle = other; $0.address = BDAddress(0x11_22_33_44_55_66); $0.linkType = 1
                        }))
            }
            b = b.at(5).event(
                Self.event(
                    ModeChange {
                        $0.handle = sameLink ? Self.handle : other; $0.mode = 0
                    })
            )
            .at(6).command(HCIBuild.command(exit, parameters: [UInt8(Self.handle), 0]))
            .event(HCIBuild.commandStatus(exit, status: .commandDisallowed))
            let f = try #require(try RuleTest.diagnose(b).of("BR-06").first)
            #expect(f.connection == 1 && !f.message.contains("a BR/EDR device"))
            if sameLink {
                #expect(
                    f.message.hasSuffix(
                        "the link was already in active mode (Mode Change at frame 4); the controller refuses a change to the mode a link is in."
                    ))
                #expect(f.supporting.map(\.frame) == [4])
            } else {
                #expect(f.message.hasSuffix("the link went on as it was.") && f.supporting.isEmpty)
            }
        }

        /// Exit Sniff Mode for a link lost the moment before, refused Unknown Connection Identifier (0x02): the corpus's
        /// Ethermind log (lost 0x08 at 1492, Exit Sniff Mode for handle 0x0004 at 1493, refused 0x02 at 1494). BR-06
        /// says the link had ended, cites the end, and does not say "the link went on as it was". The near miss: the
        /// same refusal while the link is open keeps the plain reading.
        @Test(arguments: [true, false]) func aRefusalForALinkAlreadyGoneSaysSo(_ gone: Bool) throws {
            var b = Self.connected()
            if gone { b = b.at(5).disconnect(handle: Self.handle, reason: HCIStatus(rawValue: 0x08)) }  // 4
            b = b.at(6).commandRefusedByStatus(
                HCICommand(rawValue: 0x0804), parameters: [UInt8(Self.handle), 0], status: .unknownConnectionIdentifier)
            let f = try #require(try RuleTest.diagnose(b).of("BR-06").first)
            #expect(f.connection == 1 && f.severity == .info)
            if gone {
                #expect(
                    f.message.hasSuffix(
                        "(0x02 Unknown Connection Identifier at frame 6): the link had already ended (frame 4); the host asked for a link that was gone."
                    ), "\(f.message)")
                #expect(f.supporting.map(\.frame) == [4])
            } else {
                #expect(f.message.hasSuffix("at frame 5): the link went on as it was.") && f.supporting.isEmpty, "\(f.message)")
            }
        }

        /// A sniff request refused 0x24 by the peer while an eSCO link is up on the same link (the moto g04s call log:
        /// Mode Change 0x24 at 1547 during the call's eSCO 1522–1566): BR-06 says it came during the audio link and
        /// cites its start. The near miss: no audio link up (or it had ended), and the refusal is told as before.
        @Test(arguments: [0, 1, 2]) func aSniffRefusalDuringAnAudioLinkIsTiedToIt(_ audio: Int) throws {
            var b = Self.connected()
            if audio > 0 {
                b = b.at(2).declaredEvent(
                    SynchronousConnectionComplete {
                        $0.handle = 0x0100; $0.address = Self.peer; $0.linkType = 2; $0.airMode = .transparent
                    })  // 4
            }
            if audio == 2 { b = b.at(3).disconnect(handle: 0x0100, reason: .connectionTerminatedByLocalHost) }  // 5
            b = b.at(5).event(
                Self.event(
                    ModeChange {
                        $0.status = HCIStatus(rawValue: 0x24); $0.handle = Self.handle; $0.mode = 0
                    }))
            if audio == 1 { b = b.at(9).disconnect(handle: 0x0100, reason: .connectionTerminatedByLocalHost) }  // 6
            let f = try #require(try RuleTest.diagnose(b).of("BR-06").first)
            #expect(f.severity == .info && f.connection == 1)
            if audio == 1 {
                #expect(f.message.hasSuffix("at frame 5): the link went on as it was, during the eSCO link (4–6)."), "\(f.message)")
                #expect(f.supporting.map(\.frame) == [4])
            } else {
                #expect(f.message.hasSuffix("): the link went on as it was.") && f.supporting.isEmpty, "\(f.message)")
            }
        }

        /// Sniff Mode refused (0x0C) is info and not HH-04's; a Role Change refused 10 s later, then a supervision timeout 1 s after it, is
        /// a warning citing the loss.
        @Test func sniffAndRoleSwitchRefused() throws {
            let b = Self.connected()
                .commandRefusedByStatus(
                    HCICommand(rawValue: 0x0803), parameters: [UInt8(Self.handle), 0, 0x20, 0, 0x10, 0, 1, 0, 0, 0],
                    status: HCIStatus(rawValue: 0x0C)
                )
                .at(10).event(
                    Self.event(
                        RoleChange {
                            $0.status = HCIStatus(rawValue: 0x23); $0.address = Self.peer
                        })
                )
                .at(11).disconnect(handle: Self.handle, reason: HCIStatus(rawValue: 0x08))
            let r = try RuleTest.diagnose(b)
            let found = r.of("BR-06")
            #expect(Set(found.map(\.frame)) == [5, 6])
            let sniff = try #require(found.first { $0.frame == 5 })
            #expect(sniff.severity == .info && sniff.message.contains("sniff request"))
            let role = try #require(found.first { $0.frame == 6 })
            #expect(role.severity == .warning && role.supporting.map(\.frame) == [7])
            #expect(r.of("HH-04").isEmpty)
        }
    }
}
