import BLETestSupport
import Foundation
import Testing

/// The fourteen stories of 2026-11-29 (`corpus/stories/`, written from tshark alone before blescope's first run on these
/// captures; scores in corpus/stories/README.md), held point by point to `diagnose --json`. What the first run got right
/// is expected; what it missed or got wrong is a known issue (issue 45: the BR/EDR key size, 46: BR/EDR audio, 48: routine
/// events raised, 49: edges), so fixing one makes its `withKnownIssue` fail and the expectation moves out of it.
/// Needs the corpus (BLESCOPE_CORPUS); each test is skipped without its file.
@Suite struct CorpusStoryTests1129 {
    static func of(_ capture: String) throws -> DiagnoseOutput? { try DiagnoseOutput.of(capture, corpus: true) }

    /// No finding at warning or above of `rule`.
    static func quiet(_ out: DiagnoseOutput, _ rule: String) -> Bool { !out.findings.contains { $0.rule == rule && $0.atLeastWarning } }

    @Test(arguments: [
        ("pcapng-lt201-h4phdr-diag07_bluffs-pixelbuds-lsc-a2dp-sbc-avrcp.pcapng", 7, [883, 1261, 1665, 2077, 2542, 2919]),
        ("pcapng-lt201-h4phdr-diag07_bluffs-pixelbuds-sc-a2dp-sbc-avrcp.pcapng", 5, [858, 1237, 1627, 2065, 2070]),
    ])
    func bluffsPixelBudsKeySizeFallsFrom16To7(capture: String, links: Int, seven: [Int]) throws {
        guard let out = try Self.of(capture) else { return }
        // Links to the buds 0c:c4:13:f7:67:95, one Secure Simple Pairing, the stored key on every later link (tshark:
        // Link Key Request Negative Reply once, Link Key Request Reply on each reconnection).
        #expect(
            out.sentence("classic", containing: ["\(links) BR/EDR links with Pixel Buds A-Series di Daniele (0C:C4:13:F7:67:95) ×\(links)"])
                != nil)
        #expect(out.sentence("security", containing: ["1 Secure Simple Pairing started", "1 new link key"]) != nil)
        // Read Encryption Key Size: 16 at the first link (202; 166), 7 at every later one (tshark -V "Encryption Key Size: 7").
        #expect(out.findings("SEC-09").contains { !Set($0.occurrences).isDisjoint(with: seven) })
        // The buds close each link after AVDTP Close: routine, not a warning, not flapping.
        #expect(Self.quiet(out, "DC-02") && Self.quiet(out, "DC-09"))
        // A2DP: this side streams SBC (tshark: SetConfiguration SBC, bitpool 2..52; hundreds of SBC media packets, every
        // one sent, direction 0x00: 905 and 644). One A2DP line for the buds' streams, folded over the links (the
        // Security: line stays on the first screen).
        #expect(
            out.story.filter {
                $0.text.hasPrefix("A2DP with Pixel Buds A-Series di Daniele, this side the source (Discover answer, ")
                    && $0.text.contains("streams of SBC 44.1 kHz") && $0.text.contains("from this side's source; none from the peer")
            }.count
                == 1)
    }

    @Test func sonyAndBoseHeadphonesOverNineteenHours() throws {
        guard let out = try Self.of("android-btsnoop-cfa_sony-headphones-bugreport-19h-a2dp-hfp-avrcp-obex.cfa") else { return }
        // 15 links (12 Sony, 3 Bose), 14 ended by the device, the last open; 8 page timeouts (tshark status 0x04).
        #expect(
            out.sentence(
                "classic",
                containing: [
                    "15 BR/EDR links with 2 devices", "WH-1000XM4 (94:DB:56:5F:D3:62) ×12: 11 ended by the peer (0x13",
                    "1 still open when the log ends; Silence (4C:87:5D:54:95:7F) ×3, Headphones (class at 2188): 3 ended by the peer (0x13)",
                    "8 BR/EDR connection attempts to 2 devices failed, all Page Timeout (0x04): WH-1000XM4 ×6, Silence ×2",
                ]) != nil)
        #expect(Set(out.findings("BR-01").flatMap(\.occurrences)) == [188, 224, 234, 1988, 1998, 2014, 4503, 30271])
        // Each device connected after its last timeout (tshark: Connection Complete 0x00 with 4c:87:… at 2193, with 94:db:… at
        // 30321): background reconnects to headphones that were away, nothing lost in the end (info, citing the connection).
        for (timedOut, connected) in [(188, 2193), (224, 30321)] {
            let f = try #require(out.findings("BR-01").filter { $0.occurrences.first == timedOut }.first)
            #expect(f.severity == "info" && f.frames.contains(connected) && f.message.contains("it connected at frame \(connected)"))
        }
        // Sniff refusals (Mode Change 0x24 at 2934, 3859, 4189) stay info.
        #expect(out.findings("BR-06").allSatisfy { $0.severity == "info" })
        // Each link ends after its channels closed (tshark: the headphones' L2CAP Disconnection Requests 1963–1972
        // before the 0x13 at 1980): routine.
        #expect(Self.quiet(out, "DC-02"))
        #expect(out.story.contains { $0.text.contains("AAC") })
    }

    @Test func lgHeadsetStreamThenBluetoothOff() throws {
        guard let out = try Self.of("android-btsnoop_lghbs730-motog-a2dp-sbc-hfp-avrcp.log") else { return }
        #expect(
            out.sentence("classic", containing: ["1 BR/EDR link with LG HBS730 (00:18:6B:64:BC:A5) ×1", "1 closed by this side (0x16)"])
                != nil)
        // tshark: at 3608 the host has sent 1,670 ACL packets on 0x0002 and 1,670 are reported completed; the Suspend of
        // 3605 is answered at 3609. Nothing waited through the 82.8 s without records. (The log writes two packets after
        // the Number Of Completed Packets that reports them, 251 → 253 and 2715 → 2716: the count resynchronises.)
        #expect(out.findings("TP-01").isEmpty)
    }

    @Test func oppoEarbudsHfpAndAacNeverStarted() throws {
        guard let out = try Self.of("android-btsnoop_oppo-enco-hfp-avrcp-sdp-rfcomm.log") else { return }
        #expect(
            out.sentence(
                "classic", containing: ["1 BR/EDR link with OPPO Enco Buds3 Pro (60:55:56:00:00:00) ×1", "1 still open when the log ends"])
                != nil)
        #expect(out.sentence("security", containing: ["stored link key given 1 time (322)", "1 BR/EDR encryption on (327)"]) != nil)
        // Write Link Supervision Timeout refused 0x0C (276) while the link goes on 131 s: not a host bug but Android's
        // declared link tuning (the platform table), context.
        #expect(Self.quiet(out, "HH-04"))
        #expect(out.findings("HH-04").contains { $0.occurrences == [276] && $0.message.contains("Android tunes links with it") })
    }

    @Test(arguments: [
        ("pklg-btstack-be_hfp-hf-ssp-cvsd-esco-16k-sco.pklg", 89, 39077, "CVSD"),
        ("pklg-btstack-be_hfp-hf-ssp-msbc-esco-14k-sco.pklg", 96, 50007, "mSBC"),
    ])
    func btstackHandsFreeWithESCO(capture: String, flowControl: Int, voiceEnd: Int, codec: String) throws {
        guard let out = try Self.of(capture) else { return }
        #expect(out.sentence("classic", containing: ["1 BR/EDR link with 00:1A:7D:DA:71:01 ×1", "1 closed by this side (0x16)"]) != nil)
        #expect(out.sentence("security", containing: ["1 Secure Simple Pairing started", "1 BR/EDR encryption on"]) != nil)
        // Write Synchronous Flow Control Enable answered 0x11 during BTstack's initialisation: start-up probing (info).
        #expect(!out.findings.contains { $0.rule == "HH-04" && $0.atLeastWarning && $0.occurrences == [flowControl] })
        // The eSCO handle 0x0040 ends (0x13); the ACL link goes on until this side closes it.
        #expect(!out.findings.contains { $0.rule == "DC-02" && $0.occurrences == [voiceEnd] })
        // The eSCO link with its air mode (mSBC rides a transparent link), and the codec +BCS chose on the HFP line.
        let air = codec == "CVSD" ? "CVSD" : "transparent"
        #expect(out.story.contains { $0.text.contains("eSCO link up") && $0.text.contains("(\(air), every 7.50 ms)") })
        #expect(out.story.contains { $0.text.hasPrefix("HFP with 00:1A:7D:DA:71:01") && $0.text.contains(codec) })
    }

    @Test func btstackPeripheralBondsAfterALinkFromBeforeTheLog() throws {
        guard let out = try Self.of("pklg-btstack-be_le-sm-pairing-2014.pklg") else { return }
        // One link to the central (its identity address, distributed at 189), ended once by the central (0x13 at 191;
        // BTstack's second report, 0x16 at 193, is not a second end).
        let links = try #require(out.sentence("links", containing: ["1 LE link to 1 central", "1 ended by the peer (0x13"]))
        #expect(links.frames == [99, 191])
        #expect(
            out.sentence(
                "security",
                containing: [
                    "1 LE pairing (LE legacy Just Works, all-zero IRK from this side: no privacy): keys distributed at 176",
                    "encrypted (from 163)",
                ])
                != nil)
        // tshark: BTstack's Identity Information at 178 carries an IRK of zeros, the iPhone's at 188 a real one.
        #expect(out.findings("SEC-20").map(\.frames) == [[178]])
        // The Disconnection Complete at 23 ends a link the log never opened, during the host's Reset.
        withKnownIssue("issue 49: a log that starts mid-session is not said; its link's end is a DC-02 warning") {
            #expect(!out.findings.contains { $0.rule == "DC-02" && $0.occurrences == [23] })
            #expect(out.findings("CQ-01").contains { $0.occurrences.contains(23) })
        }
        // The central's 720 ms (an Apple-range central's usual 30 ms / 720 ms) on a link it closed orderly: context.
        #expect(
            Self.quiet(out, "LP-02")
                && out.findings("LP-02").first?.message.contains("The link was not lost to it: it ended at frame 191") == true)
    }

    @Test func crackleJustWorksWithoutConfirmsIsDecrypted() throws {
        guard let out = try Self.of("ppi-btle-lt192_crackle-legacy-pairing-missing-confirms.pcap") else { return }
        // crackle's expected output for this file: TK 000000, LTK 7f62c053f104a5bbe68b1d896a2ed49c (byte-reversed in SMP),
        // 3 packets decrypted: blescope decrypts the same three (583, 587, 711).
        #expect(out.sentence("security", containing: ["1 LE pairing (LE legacy", "keys distributed at 587"]) != nil)
        #expect(
            out.sentence("links", containing: ["1 LE link to 1 peripheral (78:C5:E5:6E:DD:E8 ×1)", "1 closed by the central (0x13)"]) != nil
        )
        // The central's 420 ms on a link it ended with LL_TERMINATE_IND (0x13): context, not a warning.
        #expect(Self.quiet(out, "LP-02"))
    }

    @Test func meshProvisioningHasNoLink() throws {
        guard let out = try Self.of("lell-rf-lt256_whad-btmesh-pb-adv-provisioning.pcap") else { return }
        #expect(out.sentence("links", containing: ["No link in the log", "257 records"]) != nil)
        #expect(!out.findings.contains { $0.atLeastWarning })
    }

    @Test(arguments: [
        ("nrfsniffer-lt272-pcapng_sweyntooth-nxp-invalid-hop-interval.pcapng", 518, 519),
        ("nrfsniffer-lt272-pcapng_sweyntooth-telink-version-ping-pong.pcapng", 690, 691),
    ])
    func sweynToothLinkEndsSilentThenReadvertising(capture: String, last: Int, advertising: Int) throws {
        guard let out = try Self.of(capture) else { return }
        // The last link's last packet, then the peripheral advertising again (tshark ADV_IND at `advertising`).
        let end = try #require(out.findings("DC-10").first)
        #expect(end.occurrences == [last] && end.message.contains("frame \(advertising)"))
        // The tester's 500 ms: no link was lost to a supervision timeout (0x08), so context.
        #expect(Self.quiet(out, "LP-02") && !out.findings("LP-02").isEmpty)
    }

    @Test func latencyTenLinkIsHealthy() throws {
        guard let out = try Self.of("lell-rf-lt256_bsniffhub-legacy-justworks-latency-10.pcap") else { return }
        // The LL_ENC_REQ resent for ten events (180-190) while the peripheral uses its latency: no alarm. The one warning
        // is the true risk: legacy Just Works (TK 0), which blescope itself cracked to read the link (SEC-10).
        #expect(out.sentence("security", containing: ["1 LE pairing (LE legacy", "encrypted (from 201)"]) != nil)
        #expect(out.findings.filter { $0.atLeastWarning }.map(\.rule) == ["SEC-10"])
    }

    @Test func heartStrapAfterItsParameterUpdate() throws {
        guard let out = try Self.of("nrfsniffer-lt272-pcapng_tesi-ble-cardio-strap.pcapng") else { return }
        #expect(out.sentence("data", containing: ["20 notifications received", "handle 0x0012"]) != nil)
        #expect(
            out.sentence(
                "links", containing: ["1 LE link to 1 peripheral (Cardiosport HRM (00:18:31:E4:FE:31) ×1)", "1 with no end in the capture"])
                != nil)
        // tshark: LL_CONNECTION_UPDATE_IND 2082 sets timeout 600 (6 s); Read Request 2122 is answered at 2125, before 2128.
        #expect(Self.quiet(out, "LP-02"))
        withKnownIssue("GATT-02 on a request answered before the next one") { #expect(out.findings("GATT-02").isEmpty) }
    }
}
