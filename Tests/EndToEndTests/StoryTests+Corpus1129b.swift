import BLETestSupport
import Foundation
import Testing

/// Stories of captures found on 2026-11-29 after the first fourteen (`corpus/README.md` "Added 2026-11-29 (2)" and
/// "(3)"; stories written from tshark alone and committed before blescope's first run; scores in
/// corpus/stories/README.md), held point by point to `diagnose --json`. What blescope now says right is expected; what
/// it still misses is a known issue, so fixing one makes its `withKnownIssue` fail and the expectation moves out of it.
/// The points other engineers are fixing this session (the Windows log's millisecond clock, the macOS and WinUSB scan
/// refusals, the platform line's notes) are held by their own tests. Needs the corpus (BLESCOPE_CORPUS).
@Suite struct CorpusStoryTests1129b {
    static func of(_ capture: String) throws -> DiagnoseOutput? { try DiagnoseOutput.of(capture, corpus: true) }

    /// BTstack's libusb port, the same dongle and phone as the Windows log with a right clock: one bonding link, one
    /// reconnection with the stored key, each ended by the phone after it closed its channels.
    @Test func btstackLibusbBondThenStoredKeyReconnect() throws {
        guard let out = try Self.of("pklg-btstack-be_thewbi-libusb-bt400-spp-ssp-bond-no-enc-then-stored-key-reconnect.pklg") else {
            return
        }
        // tshark: Connection Complete 0x00 at 116 and 239, Disconnection Complete 0x13 at 228 and 467.
        #expect(
            out.sentence("classic", containing: ["2 BR/EDR links with 70:5F:A3:0F:8A:AB ×2", "2 ended by the peer (0x13"]) != nil)
        // IO Capability Response 131 (DisplayYesNo both sides): Numeric Comparison; the key stored at 147 given at 302;
        // Encryption Change 305; no Read Encryption Key Size in the log.
        #expect(
            out.sentence(
                "security",
                containing: [
                    "stored link key given 1 time (302)", "Secure Simple Pairing Numeric Comparison", "1 new link key (147)",
                    "1 BR/EDR encryption on (305), key size not in the log",
                ]) != nil)
        // The phone closed RFCOMM and L2CAP (437-465) before each 0x13: routine, not a warning.
        #expect(!out.findings.contains { $0.rule == "DC-02" && $0.atLeastWarning })
        // The control for the Windows log: with a right clock, no command waits, no gap, no stall.
        #expect(out.findings("HH-01").isEmpty && out.findings("CQ-04").isEmpty && out.findings("TP-01").isEmpty)
        withKnownIssue("issue 45: the bonding link (116-228) stayed unencrypted; the Security line sums both links") {
            #expect(out.story.contains { $0.topic == "security" && $0.text.contains("never encrypted") })
        }
    }

    /// A home-made host whose PacketLogger writer stamps every record 0 and logged five receive buffers it never filled.
    @Test func homeMadeHostDamagedRecordsAndNoTiming() throws {
        guard let out = try Self.of("pklg-be-zero-ts_thewbi-diy-host-spp-sdp-unanswered-acl-cc-filler.pklg") else { return }
        // tshark marks 29 and 31 malformed (Change Local Name and Write Extended Inquiry Response: 248 and 241 parameter
        // bytes stated, 29 and 32 held, the name whole: cut by the logger) and 49, 55, 58, 62, 66 are 0xCC filler (handle
        // 0x0ccc, length 52428): five damaged records, their frames named.
        #expect(out.text.contains("Log: incomplete: 2 non-ACL records (frame 29, …) cut before the log was written"))
        #expect(out.text.contains("5 records are shorter than their own header says"))
        #expect(out.text.contains("(frames 49, 55, 58, 62, 66)"))
        // The filler's handle makes no link (before: a phantom "link whose transport the log does not show").
        #expect(!out.story.contains { $0.text.contains("0x0ccc") } && out.findings("CQ-01").isEmpty)
        #expect(out.sentence("classic", containing: ["1 BR/EDR link with 70:5F:A3:0F:8A:AB ×1", "1 still open when the log ends"]) != nil)
        // The unknown opcode 0x0011 refused 0x01 (53): the controller does not know it, context.
        #expect(out.findings("HH-04").map(\.occurrences) == [[53]] && !out.findings("HH-04")[0].atLeastWarning)
        withKnownIssue("issue 48: an SDP channel opened, configured and closed by the phone with no SDP PDU is not told") {
            #expect(out.story.contains { $0.text.contains("SDP") && $0.text.contains("no request") })
        }
    }

    /// An Android phone (Qualcomm) pairs Just Works with a PeriPage printer and prints over SPP; sniff refused twice.
    @Test func periPageAndroidPrintOverSerialPort() throws {
        guard let out = try Self.of("android-btsnoop_peripage-redmi4x-bredr-ssp-spp-print-sniff-rejected-24.log") else { return }
        #expect(out.text.hasPrefix("Diagnosis: nothing wrong found"))
        #expect(
            out.sentence(
                "classic", containing: ["1 BR/EDR link with PeriPage+754F (00:00:00:05:75:4F) ×1", "1 still open when the log ends"]) != nil
        )
        // IO capabilities DisplayYesNo and NoInputNoOutput, MITM asked: Just Works, unauthenticated key (tshark: 0x04).
        #expect(
            out.sentence("security", containing: ["Secure Simple Pairing Just Works, unauthenticated combination key (P-192)", "(134)"])
                != nil)
        #expect(out.findings("SEC-13").count == 1 && !out.findings("SEC-13")[0].atLeastWarning)
        // SDP: the printer's Serial Port record on RFCOMM channel 1.
        #expect(out.story.contains { $0.text.hasPrefix("SDP with PeriPage+754F") && $0.text.contains("Serial Port (RFCOMM 1)") })
        // Mode Change 0x24 at 203 and 662, the link going on: context.
        #expect(out.findings("BR-06").flatMap(\.occurrences) == [203, 662] && out.findings("BR-06").allSatisfy { !$0.atLeastWarning })
        withKnownIssue("issue 48: the Remote Name Request that failed Page Timeout (0x04) at frame 9 leaves no trace") {
            #expect(out.findings.contains { $0.occurrences.contains(9) })
        }
    }

    /// The same printer from an iPhone logged live by PacketLogger: 248 Write Commands, 133 notifications, the log
    /// ending when PacketLogger lost the phone, two handles from before the log.
    @Test func periPageIPhonePrintWithWriteCommands() throws {
        guard let out = try Self.of("pklg-ios-le_peripage-iphone-ext-connect-accept-list-print-writecmd-capture-lost.pklg") else {
            return
        }
        #expect(!out.findings.contains { $0.atLeastWarning })
        #expect(
            out.sentence(
                "links",
                containing: ["1 LE link to 1 peripheral (PeriPage+754F_BLE (00:00:00:05:75:4F) ×1)", "1 still open when the log ends"])
                != nil
        )
        // tshark: 248 ATT Write Commands to 0x0012 and 133 Handle Value Notifications.
        #expect(
            out.sentence("data", containing: ["133 notifications received", "248 write commands sent", "248 packets", "on handle 0x0012"])
                != nil)
        #expect(out.findings("CQ-01").first?.message.contains("0x0041 (first seen at frame 901), 0x0043 (first seen at frame 903)") == true)
        #expect(out.text.contains("Platform: iOS (seen: PacketLogger note \"iOS Device connection has been lost\" at frame 905)"))
    }

    /// Android from power-on, two direct connects cancelled, three links to one LED controller: the first closed 0x08
    /// 1.13 s after this side's Disconnect, the second 0x22 never acknowledged, the third lost 0x08.
    @Test func zenggeLEDThreeLinksTwoLost() throws {
        guard let out = try Self.of("android-btsnoop_bletools-zengge-led-le-3conn-disconnect-13-completes-08-and-22-then-lost-08.log")
        else { return }
        #expect(out.text.hasPrefix("Diagnosis: 1 critical"))
        // Link 1's 0x08 came 1.13 s after this side's Disconnect (446) under an 8 s timeout: lost before it, as DC-01 says.
        #expect(
            out.sentence(
                "links",
                containing: [
                    "3 LE links to 1 peripheral (LEDBLE-78634D50 (F8:1D:78:63:4D:50) ×3)", "2 lost by supervision timeout (0x08)",
                    "1 closed by this side (0x22)",
                ]) != nil)
        #expect(out.sentence("links", containing: ["2 cancelled by this side (LE Create Connection Cancel, 0x02)"]) != nil)
        // Disconnection Complete 0x08 at 527 and 1328 (tshark), each past the 8 s supervision timeout set at 385.
        let lost = try #require(out.findings("DC-01").first)
        #expect(lost.severity == "critical" && lost.occurrences == [527, 1328])
        // 0x22 at 615 after this side's Disconnect at 613: the termination never acknowledged, explained.
        #expect(out.findings("DC-04").contains { $0.occurrences == [615] && $0.message.contains("frame 613") })
        #expect(out.sentence("data", containing: ["429 packets", "2975 bytes on handle 0x000b"]) != nil)
    }

    /// BTstack's Windows port as a central: a link idle 30 s, then a Read By Type on 0x0000-0x0000 that the peer
    /// rightly refuses, then this side disconnects.
    @Test func btstackWinUSBReadByTypeOnHandleZero() throws {
        guard let out = try Self.of("pklg-btstack-be_tangxinlou-winusb-csr8510-le-central-gatt-idle-30s-read-by-type-handle-0.pklg")
        else { return }
        #expect(
            out.sentence("links", containing: ["1 LE link to 1 peripheral (100 (7D:76:81:09:4A:CF) ×1)", "1 closed by this side (0x16)"])
                != nil)
        // tshark 466: Read By Type Request, Starting Handle 0x0000, Ending Handle 0x0000; 470: Error Response 0x01.
        // Not a stale cache (GATT-06) but this side's own request naming the reserved handle.
        #expect(out.findings("GATT-06").isEmpty)
        let refused = try #require(out.findings("GATT-08").first)
        #expect(refused.occurrences == [470] && refused.message.contains("The request was this side's and named handle 0x0000"))
        // LE Set Scan Parameters refused 0x0C (246) while scanning was on (241/243): the spec's answer, context.
        #expect(out.findings("HH-04").contains { $0.occurrences == [246] && !$0.atLeastWarning })
        // BTstack's 720 ms on a link this side closed: context.
        #expect(!out.findings.contains { $0.rule == "LP-02" && $0.atLeastWarning })
    }

    /// A MacBook's log over 2.5 h of sleep and wake: 66 background connection attempts, none completed.
    @Test func macOSBackgroundConnectsNeverComplete() throws {
        guard let out = try Self.of("pklg-macos-le_hciparse-broadcom-2.5h-sleep-wake-bg-connect-create-cancel-x64.pklg") else {
            return
        }
        #expect(out.sentence("links", containing: ["No link in the log: none of its 66 connection attempts succeeded"]) != nil)
        #expect(
            out.sentence(
                "links",
                containing: [
                    "62 cancelled by this side while connecting in the background by accept list (LE Create Connection Cancel, 0x02)"
                ]) != nil)
        // The PacketLogger note "[IOBluetoothHCIUserClient]…" (29) names macOS; the second Create Connection of each pair
        // was refused 0x0C while the background connect before it was pending (132/129, 633/622, 2031/2020): the spec's
        // answer; the 68 Set Scan Enable refusals asked for the state in force.
        #expect(out.text.contains("Platform: macOS (seen: PacketLogger note"))
        #expect(out.findings("CE-03").map(\.occurrences) == [[132, 633, 2031]] && !out.findings("CE-03")[0].atLeastWarning)
        #expect(!out.findings.contains { $0.rule == "HH-04" && $0.atLeastWarning })
    }
    /// Found later the same day ("Added 2026-11-29 (4)"): an Android phone with a Honda car kit (HFP, PBAP, A2DP) and
    /// ROSE EarFeel earbuds that are set LDAC, then AAC, twice, never streaming.
    @Test func hondaCarKitAndEarbudsLDACThenAAC() throws {
        guard let out = try Self.of("android-btsnoop_btagent-honda-hfp-pbap-a2dp-earfeel-ssp-ldac-then-aac.log") else { return }
        // tshark names the peers by Remote Name Request: ROSE EarFeel i5 (d2:02:03:04:a2:61, 3178), Honda HFT-7266
        // (8c:7a:b3:aa:e2:9b, 4808).
        // tshark: AVDTP Set Configuration LDAC at 4086 and 4535 (Close accepted at 4140 and 4587, no Start), AAC at 4142
        // and 4590; no AVDTP Start to the earbuds. One event: the phone fell back from LDAC to AAC, twice. The earbuds'
        // Discover answer (4074) lists three Audio Sink end points: the phone is the source.
        #expect(
            out.story.contains {
                $0.text.hasPrefix(
                    "A2DP with ROSE EarFeel i5, this side the source (Discover answer, 4074): codec fell back from LDAC 96 kHz stereo to AAC MPEG-2 LC 44.1 kHz 2 ch VBR 192 kbps 2 times"
                )
                    && $0.text.contains("(LDAC set at 4086, 4535, closed with no Start at 4140, 4587; AAC set at 4142, 4590)")
                    && $0.text.hasSuffix("; the stream never started.")
            })
        #expect(!out.story.contains { $0.text.contains("(set at frame 4086)") || $0.text.contains("(set at frame 4142)") })
        #expect(
            out.story.contains {
                $0.text.hasPrefix("HFP with Honda HFT-7266 on RFCOMM channel 4 (this side the audio gateway)")
                    && $0.text.contains("service level connection up at frame 2671")
            })
        #expect(
            out.sentence(
                "security", containing: ["1 Secure Simple Pairing with ROSE EarFeel i5 started (3264; Secure Simple Pairing Just Works"])
                != nil)
        // The car kit's 0x15 Power Off at 4843, 4.3 s after it reconnected: the car switched off, context.
        #expect(out.findings("DC-02").contains { $0.occurrences == [4843] && !$0.atLeastWarning })
        // tshark: OBEX Connect PBAP 2776 on RFCOMM channel 19, 10 Gets 2795-3209 all Success, Phonebook Size 2, 1, 9,
        // 91, 45 (2796, 2841, 2947, 3024, 3163), End Of Body 275 - 3 bytes at 2811; no OBEX Disconnect.
        #expect(
            out.story.contains {
                $0.text.hasPrefix(
                    "PBAP with Honda HFT-7266: the peer pulled the phone book and call history from this side in 10 Gets (2795–3209), all Success (200): telecom/pb.vcf 272 bytes (size 2), SIM1/telecom/pb.vcf 98 bytes (size 1), telecom/mch.vcf 1329 bytes (size 9)"
                ) && $0.text.hasSuffix("connected at 2776 on RFCOMM channel 19, no Disconnect in the log.")
            })
        // The cover art channel (PSM 0x1001, ERTM, 3088-3092) is OBEX (BIP): Connect with Target 7163dd54-… at 3119, one Get
        // of a thumbnail answered by Continue responses, then Success at 3847 (tshark with `-d btl2cap.psm==0x1001,obex`).
        #expect(
            out.story.contains {
                $0.text.hasPrefix(
                    "cover art (BIP) with Honda HFT-7266: the peer pulled cover art thumbnails from this side in 1 Get (3169–3847), all Success (200): x-bt/img-thm 32368 bytes; connected at 3119 on L2CAP PSM 0x1001"
                )
            })
    }

    /// A Galaxy S23 with a Beurer blood-pressure cuff (CCCD refused 0x05, Passkey Entry pairing, 14 indications) and a
    /// JBL headset streaming AAC.
    @Test func galaxyS23CuffPairsThenIndicatesAndHeadsetStreamsAAC() throws {
        guard let out = try Self.of("android-btsnoop-cfa_sh3pi-s23-beurer-bm54-le-att-05-legacy-passkey-indications-jbl-a2dp-aac.cfa")
        else { return }
        // CCCD 0x0013 refused 0x05 at 9601, paired at 9603, written again at 9945, indications 9989-10070. The phone's
        // Pairing Request asks for SC (AuthReq 0x0d, 9603), the cuff's response does not (0x05, 9614): legacy.
        let refused = try #require(out.findings("GATT-04").first)
        #expect(!refused.atLeastWarning && refused.occurrences == [9601] && refused.message.contains("The same write at frame 9945"))
        #expect(out.findings("SEC-10").contains { $0.atLeastWarning && $0.message.contains("LE legacy Passkey Entry") })
        #expect(
            out.sentence(
                "security",
                containing: [
                    "1 LE pairing (LE legacy Passkey Entry, passkey shown by the peer, typed on this side, this side asked for Secure Connections: the peer's answer made it legacy): keys distributed at 9888"
                ]) != nil)
        #expect(
            out.sentence(
                "links",
                containing: [
                    "6 cancelled by this side while connecting in the background by accept list (LE Create Connection Cancel, 0x02)",
                    "1 cancelled by this side (LE Create Connection Cancel, 0x02)",
                ]) != nil)
        // tshark: 2740 RTP packets to the headset (all direction 0x00, sent), whose Discover answer (11724) lists sinks.
        #expect(
            out.story.contains {
                $0.text.contains("this side the source (Discover answer, 11724): AAC MPEG-2 LC 44.1 kHz")
                    && $0.text.contains("(2740 media packets, from this side's source; none from the peer), 1 suspend")
            })
        // The cuff's 0x13 1.94 s after its last confirmed measurement (10070, confirmed 10071), nothing outstanding: its
        // routine end of session.
        #expect(!out.findings.contains { $0.rule == "DC-02" && $0.atLeastWarning })
        #expect(out.findings("DC-02").contains { $0.occurrences == [10132] && $0.message.hasSuffix("a routine close.") })
    }

    /// A car head unit's own log (Marvell): Hands-Free and PBAP client to a Huawei phone, a No Bonding pairing, then a
    /// re-pairing by Numeric Comparison.
    @Test func headUnitHandsFreeTwoPairings() throws {
        guard let out = try Self.of("btsnoop-h4-headunit_btagent-marvell-carkit-hf-pbap-client-huawei-nobond-then-bond-autoconfirm.log")
        else { return }
        // The Numeric Comparison its host confirmed in 6.6 ms is MITM protection claimed, not had (SEC-22); the Just Works
        // one it confirmed in 0.4 ms claimed none (both sides asked for no MITM protection).
        #expect(out.text.hasPrefix("Diagnosis: nothing failed; 1 weakness: 1 warning"))
        #expect(out.findings("SEC-22").map(\.occurrences) == [[302]] && out.findings("SEC-22").first?.severity == "warning")
        #expect(
            out.sentence(
                "security",
                containing: [
                    "2 Secure Simple Pairings started (145, 298; ",
                    // tshark: User Confirmation Request 148 and 301, this side's Reply 149 and 302, 0.4 and 6.6 ms later: the
                    // head unit confirms by itself (the capture's name: autoconfirm).
                    "Just Works, unauthenticated combination key (P-192), this side confirmed at once (0 ms, 148 → 149: its host, no user) ×1",
                    "Numeric Comparison, authenticated combination key (P-192), this side confirmed at once (7 ms, 301 → 302: its host, no user) ×1",
                ]) != nil)
        #expect(
            out.story.contains { $0.text.hasPrefix("SDP with nova 14") && $0.text.contains("Phonebook Access 1.1 (RFCOMM 19)") })
        #expect(
            out.story.contains {
                $0.text.contains("(this side the hands-free unit): service level connection up at frame 444")
            })
        // tshark: this side's OBEX Connect PBAP at 499, 7 Gets 509-531 all Success; Phonebook Size 1 (511), an empty End Of
        // Body for telecom/pb.vcf (514), ich.vcf's 345 body bytes at 531.
        #expect(
            out.story.contains {
                $0.text.hasPrefix(
                    "PBAP with nova 14: this side pulled the phone book and call history from the peer in 7 Gets (509–531), all Success (200): telecom/pb.vcf 0 bytes (size 1)"
                )
                    && $0.text.contains("telecom/ich.vcf 345 bytes (size 3); connected at 499 on RFCOMM channel 19")
            })
    }

    /// The same S23 with its S Pen and an Omron monitor that asks for security and gets its stored LTK.
    @Test func galaxyS23SPenAndOmronStoredKeys() throws {
        guard let out = try Self.of("android-btsnoop-cfa_sh3pi-s23-spen-omron-bp-le-security-request-stored-ltk-rpa-read-02.cfa")
        else { return }
        #expect(out.text.hasPrefix("Diagnosis: nothing wrong found"))
        // 702: Encryption Change v2 (event 0x59, its Key_Size 16; tshark 4.0 names it "Unknown (0x59)").
        #expect(
            out.sentence("security", containing: ["3 of 3 LE links encrypted (from 702, 1999, 2918)", "16-byte key (stated at 702)"]) != nil
        )
        #expect(out.sentence("links", containing: ["2 closed by this side (0x16)", "1 still open when the log ends"]) != nil)
        // LE Read Peer Resolvable Address answered 0x02 for a peer not in the resolving list: the spec's answer, context.
        #expect(out.findings("HH-04").contains { $0.occurrences == [1974, 2891] && !$0.atLeastWarning })
    }
}
