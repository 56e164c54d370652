import BLETestSupport
import Foundation
import Testing

/// Eleven more stories written from tshark alone (`Tests/EndToEndTests/Stories/*.story.md`, from `corpus/stories/`, each
/// point re-read with `tshark -V`), held point by point to `diagnose --json`: BR/EDR pages that time out, a BR/EDR link
/// with a stored key and a refused sniff request, air captures (legacy bonding, GATT discovery, LE Secure Connections
/// passkey), two iOS PacketLogger logs with links that started before them, Linux HCI logs as central and as peripheral, and a log with
/// no Bluetooth traffic. Corpus captures need BLESCOPE_CORPUS; shared ones ../shared/captures.
@Suite struct CorpusStoryTests {
    static func noAlarm(_ out: DiagnoseOutput, at frames: [Int]) -> Bool { StoryPointTests.noAlarm(out, at: frames) }

    /// Every finding at warning or above is one of `rules`.
    static func onlyAlarms(_ out: DiagnoseOutput, _ rules: Set<String>) -> Bool {
        out.findings.filter(\.atLeastWarning).allSatisfy { rules.contains($0.rule) }
    }

    @Test func aploadfilePagesOneDeviceTwice() throws {
        guard let out = try DiagnoseOutput.of("android-btsnoop_aploadfile-bredr-page-timeout-04-x2-hci-only.log", corpus: true)
        else { return }
        // P1: no link; the two Create Connection (tshark: 203, 214) are the attempts.
        let none = try #require(out.sentence("links", containing: ["No link in the log", "none of its 2 connection attempts succeeded"]))
        #expect(none.frames == [203, 214])
        // P2: 2 × 0x04 to 31:4c:27:ab:aa:0b (tshark bthci_evt.status at 213, 276), one folded BR-01 citing the first page.
        let classic = try #require(
            out.sentence(
                "classic", containing: ["2 BR/EDR connection attempts to 1 device failed, all Page Timeout (0x04)", "31:4C:27:AB:AA:0B ×2"])
        )
        #expect(classic.frames == [213, 276])
        let pages = out.findings("BR-01")
        #expect(pages.count == 1 && pages.first?.occurrences == [213, 276] && pages.first?.frames.contains(203) == true)
        // P3: the resets at 1 and 351, no link open: no alarm.
        #expect(Self.noAlarm(out, at: [1, 2, 351, 352]))
        // P4: the Android APCF (0xFD57) refusals, status 0x17 at 206, 249, 280 (tshark -x): info, a vendor feature declined.
        let apcf = try #require(out.findings("HH-04").first { $0.occurrences == [206, 249, 280] })
        #expect(apcf.severity == "info")
        #expect(Self.onlyAlarms(out, ["BR-01"]) && !out.findings.contains { $0.serious })
    }

    @Test func shri09PagesTwoDevicesOnceThenScans() throws {
        guard let out = try DiagnoseOutput.of("android-btsnoop_shri09-bredr-page-timeout-04-x2-35h-hci-only.log", corpus: true)
        else { return }
        // P1: no link (tshark: Create Connection 183, 186; no status 0x00 connection complete).
        let none = try #require(out.sentence("links", containing: ["No link in the log", "none of its 2 connection attempts succeeded"]))
        #expect(none.frames == [183, 186])
        // P2: one Page Timeout per device, 185 and 188, each citing its Create Connection.
        #expect(
            out.sentence(
                "classic",
                containing: [
                    "2 BR/EDR connection attempts to 2 devices failed, all Page Timeout (0x04)", "B7:BA:35:34:9D:E7 ×1",
                    "CD:A9:B2:F2:ED:81 ×1",
                ])?.frames == [185, 188])
        for (create, complete) in [(183, 185), (186, 188)] {
            #expect(out.findings("BR-01").contains { $0.occurrences == [complete] && $0.frames.contains(create) })
        }
        // P3, P4: 35 hours of scanning and vendor commands, one reset at frame 1: nothing else alarms.
        #expect(Self.noAlarm(out, at: [1, 2]) && Self.onlyAlarms(out, ["BR-01"]))
    }

    @Test func happyleafStoredKeySniffRefusedAndProbing() throws {
        guard let out = try DiagnoseOutput.of("android-btsnoop_happyleaf-elm327-bredr-linkkey-auth-sniff-rejected-24.log", corpus: true)
        else { return }
        // P1, P2: two links to 00:1d:a5:00:12:4a (Connection Complete 214, 333), both ended 0x16 (330, 526), each
        // opened by this side's Create Connection (212, 331).
        let links = try #require(
            out.sentence(
                "classic",
                containing: [
                    "2 BR/EDR links with OBDII (00:1D:A5:00:12:4A) ×2, 2 opened by this side (Create Connection 212, 331)",
                    "2 closed by this side (0x16)",
                ]))
        #expect(Set(links.frames) == [212, 214, 330, 331, 333, 526])
        // P3: Link Key Request Reply 281, 391; Encryption Change 0x00 on at 286, 396; this host's Authentication Requested
        // 278, 388 before each Link Key Request (280, 390).
        let security = try #require(
            out.sentence(
                "security",
                containing: [
                    "this side authenticated (Authentication Requested at 278, 388)", "stored link key given 2 times (281, 391)",
                    "2 BR/EDR encryptions on (286, 396)",
                ]))
        #expect(Set(security.frames) == [278, 281, 286, 388, 391, 396])
        // P4: Mode Change 0x24 at 318, 434: info.
        let sniff = try #require(out.findings("BR-06").first)
        #expect(sniff.severity == "info" && sniff.occurrences == [318, 434])
        // P5: 105 ACL packets on handle 0x0032 (tshark), SDP then RFCOMM.
        #expect(out.sentence("data", containing: ["105 ACL packets on 2 BR/EDR links", "SDP, RFCOMM"]) != nil)
        // P6: Read Local Extended Features page 2 refused 0x30 (30), LE Set Event Mask refused 0x20 (48, 54): probing, info.
        let probes = out.findings("HH-04")
        #expect(Set(probes.map(\.occurrences)) == [[30], [48, 54]] && probes.allSatisfy { $0.severity == "info" })
        #expect(!out.findings.contains { $0.atLeastWarning })
    }

    @Test func bsniffhubLegacyBondingThenTwoEncryptedReconnections() throws {
        guard let out = try DiagnoseOutput.of("lell-rf-lt256_bsniffhub-legacy-bonding-3enc-known-ltk.pcap") else { return }
        // P1, P5: CONNECT_IND 50, 394, 738; each ended by the central's encrypted 6-byte control PDU (361, 697, 1077).
        let links = try #require(
            out.sentence(
                "links", containing: ["3 LE links to 1 peripheral (PairingTest (04:EE:03:4A:8B:38) ×3)", "3 closed by the central (0x13)"]))
        #expect(Set(links.frames) == [50, 361, 394, 697, 738, 1077])
        // P2, P3: one legacy pairing (Pairing Request 125 without the SC bit), three links encrypted, the first done at 150.
        let security = try #require(
            out.sentence("security", containing: ["1 LE pairing (LE legacy", "3 of 3 LE links encrypted (from 150, 456, 834)"]))
        #expect(Set(security.frames).isSuperset(of: [125, 150, 456, 834]))
        // P5, P6: nothing lost, nothing failed; the one warning is the legacy Just Works pairing (TK 0) whose keys
        // blescope recovered (issue 45: legacy pairing is passively crackable).
        #expect(!out.story.contains { $0.text.contains("lost") })
        #expect(out.findings.filter { $0.atLeastWarning }.map(\.rule) == ["SEC-10"])
        #expect(out.findings("SEC-10").first?.message.contains("blescope recovered it from this capture (TK 0)") == true)
    }

    @Test func whadDiscoveryEndedByTheCentral() throws {
        guard let out = try DiagnoseOutput.of("lell-rf-lt256-pcapng-named-pcap_whad-gatt-discovery.pcap") else { return }
        // P1, P4: CONNECT_IND 21 to cc:5f:f0:e5:81:75; LL_TERMINATE_IND 0x13 at 175, not a loss.
        let links = try #require(
            out.sentence(
                "links", containing: ["1 LE link to 1 peripheral (Loqed Outside (CC:5F:F0:E5:81:75) ×1)", "1 closed by the central (0x13)"])
        )
        #expect(links.frames == [21, 175])
        // P2: 39 ATT PDUs, 158 a retransmission: 38; the 0x0A at 69, 109, 160 end discovery ranges.
        #expect(out.sentence("data", containing: ["38 ATT PDUs"]) != nil)
        #expect(Self.noAlarm(out, at: [69, 109, 160]))
        // P3: no SMP, no LL_ENC_REQ.
        #expect(out.sentence("security", containing: ["No LE pairing", "never encrypted"]) != nil)
        // P5: nothing failed.
        #expect(!out.findings.contains { $0.atLeastWarning })
    }

    @Test func lv4PasskeyPairingAfterInsufficientAuthentication() throws {
        guard let out = try DiagnoseOutput.of("nrfsniffer-lt272-pcapng_tesi-ble-lv4-lesc-passkey-dle251-enc.pcapng", corpus: true)
        else { return }
        // P1: CONNECT_IND 2725, still up when the capture ends.
        let links = try #require(
            out.sentence(
                "links",
                containing: ["1 LE link to 1 peripheral (Nordic_LBS (C0:48:FF:F5:9D:B8, random) ×1)", "1 with no end in the capture"]))
        #expect(links.frames.first == 2725)
        // P2: discovery's 0x0A at 2775 is no alarm; 4 notifications on 0x0012 in clear (2980, 3028, 3080, 3112).
        #expect(Self.noAlarm(out, at: [2775]) && out.sentence("data", containing: ["4 notifications received"]) != nil)
        // P3: the peripheral asked for 420 ms (L2CAP request 3049); CONNECT_IND had 720 ms.
        let short = try #require(out.findings("LP-02").first)
        #expect(short.message.contains("only 420 ms") && short.message.contains("The peripheral asked for it at frame 3049"))
        #expect(short.message.contains("Before that it was 720 ms (frame 2725)") && Set(short.frames).isSuperset(of: [2725, 3049]))
        // P4: 0x05 at 3238 answering the write 3235, then LE Secure Connections pairing (Pairing Request 3239).
        let authentication = try #require(out.findings("SEC-05").first)
        #expect(authentication.severity == "info" && authentication.occurrences == [3238] && authentication.frames.contains(3235))
        let security = try #require(
            out.sentence(
                "security",
                containing: [
                    "1 LE pairing (LE Secure Connections Passkey Entry, passkey shown by the peripheral, typed on the central)",
                    "encrypted (from 3724)",
                ]))
        #expect(security.frames.contains(3239))
        // P5: from 3724 the sniffer has no key: said, and not an error.
        #expect(out.sentence("unseen", containing: ["encrypted from frame 3724 and the sniffer had no key"]) != nil)
        #expect(out.findings("CQ-05").allSatisfy { $0.severity == "warning" } && !out.findings.contains { $0.serious })
    }

    @Test func peripageStartsMidLinkWithABurstOfWrites() throws {
        guard let out = try DiagnoseOutput.of("pklg-ios-le_peripage-printer-writecmd-burst.pklg") else { return }
        // P1: handle 0x004e, opened before the log (first ACL at 19), open at its end.
        #expect(out.sentence("links", containing: ["1 LE link", "handle 0x004e", "still open when the log ends"])?.frames.first == 19)
        #expect(out.sentence("unseen", containing: ["1 link started before the log"]) != nil)
        // P2: 341 Write Commands to 0x0012, 33,808 value bytes; 173 notifications (tshark btatt.opcode 0x52, 0x1b).
        #expect(
            out.sentence(
                "data", containing: ["173 notifications received", "341 write commands sent", "341 packets, 33808 bytes on handle 0x0012"])
                != nil)
        // P3: whether it was encrypted before the log began cannot be seen; not "never encrypted".
        let security = try #require(out.sentence("security", containing: ["started before the log was encrypted cannot be seen"]))
        #expect(!security.text.contains("never encrypted"))
        // P4, P5: the logger's note at 721 is not a Bluetooth event; nothing failed.
        #expect(!out.story.contains { $0.text.contains("lost") } && !out.findings.contains { $0.atLeastWarning })
    }

    @Test func nestCamSetupClosedByThisSide() throws {
        guard let out = try DiagnoseOutput.of("pcap-lt201-h4phdr_nest-cam-ble-wifi-setup-att.pcap", corpus: true) else { return }
        // P1, P2: LE Connection Complete 593 to 18:b4:30:63:8d:4d, Disconnection Complete 0x16 at 1545.
        let links = try #require(
            out.sentence(
                "links", containing: ["1 LE link to 1 peripheral (Nest Cam… (18:B4:30:63:8D:4D) ×1)", "1 closed by this side (0x16)"]))
        #expect(links.frames == [593, 1545])
        // P3: no SMP, no Encryption Change.
        #expect(out.sentence("security", containing: ["No LE pairing", "never encrypted"]) != nil)
        // P4: 746 ATT PDUs; 300 reads of 0xffff with 2139 value bytes answered (tshark btatt.opcode 0x0b).
        #expect(out.sentence("data", containing: ["746 ATT PDUs", "300 packets, 2139 bytes on handle 0xffff"]) != nil)
        // P5, P6: discovery's 0x0A (604 … 619) and the resets (1, 303): no alarm; nothing serious.
        #expect(Self.noAlarm(out, at: [604, 606, 611, 614, 616, 619, 1, 303]) && !out.findings.contains { $0.serious })
    }

    @Test func openGuardianLegacyPairingAsPeripheral() throws {
        guard let out = try DiagnoseOutput.of("pcapng-lt201-h4phdr_openguardian-780g-legacy-pairing-keydist.pcapng") else { return }
        // P1: this side peripheral; the central 00:23:f7:c5:07:4f connects at 31; open at the end.
        let links = try #require(
            out.sentence(
                "links", containing: ["1 LE link to 1 central (Pump 3671504H (00:23:F7:C5:07:4F) ×1)", "1 still open when the log ends"]))
        #expect(links.frames.first == 31)
        // P2: legacy pairing (Pairing Request 41, AuthReq 0x05), Encryption Change 0x00 at 65, keys from 70.
        let security = try #require(
            out.sentence(
                "security", containing: ["1 LE pairing (LE legacy", "keys distributed at 70", "1 of 1 LE links encrypted (from 65)"]))
        #expect(Set(security.frames).isSuperset(of: [41, 65, 70, 80]))
        // P3: the ten 0x0A of discovery are no alarm.
        #expect(Self.noAlarm(out, at: [89, 101, 102, 111, 120, 150, 249, 261, 267, 273]))
        // P4: Read Not Permitted at 410, 484, 493 answering this side's reads 408, 481, 490: info.
        let refused = out.findings("GATT-08").filter { $0.message.contains("Read Not Permitted") }
        #expect(refused.map(\.occurrences) == [[410], [484], [493]] && refused.allSatisfy { $0.severity == "info" })
        #expect(Set(refused.flatMap(\.frames)).isSuperset(of: [408, 481, 490]))
        // P5: 84 notifications received (82 on 0x0030 the busiest).
        #expect(out.sentence("data", containing: ["376 ATT PDUs", "84 notifications received", "82 packets", "0x0030"]) != nil)
        // The one warning: the legacy Just Works pairing at 41 (issue 45: passively crackable).
        #expect(out.findings.filter { $0.atLeastWarning }.map(\.rule) == ["SEC-10"])
    }

    @Test func evenG2FourLinksOneOpenedInTheLog() throws {
        guard let out = try DiagnoseOutput.of("pklg-ios-le_even-g2-glasses-discovery-indicate.pklg") else { return }
        // P1: 0x001b, 0x005a, 0x005f before the log (first ACL 42, 186, 404); 0x0045 opened at 207 (subevent 0x29, tshark -x).
        // 0x005a and 0x005f carry ATT on the LE fixed channel; 0x001b only K-frames of a channel opened before the log:
        // its transport is not in the log (issue 49: no longer counted as LE, nor as BR/EDR).
        let links = try #require(
            out.sentence(
                "links", containing: ["3 LE links", "Even G2_32_L_C76E30 (E4:64:CC:C7:6E:30) ×1", "3 still open when the log ends"]))
        #expect(Set(links.frames).isSuperset(of: [186, 207, 404]))
        #expect(out.sentence("links", containing: ["1 link whose transport the log does not show", "0x001b"])?.frames == [42, 1134])
        #expect(out.sentence("classic", containing: ["BR/EDR"]) == nil)
        #expect(out.sentence("unseen", containing: ["3 links started before the log"])?.frames == [42, 186, 404])
        // P2: Encryption Change v2 at 224 (59 05 00 45 00 01 10); the other two LE links: cannot be seen.
        let security = try #require(
            out.sentence(
                "security",
                containing: ["No LE pairing", "1 of 3 LE links encrypted (from 224)", "whether the 2 links that started before the log"]))
        #expect(security.frames == [224])
        // P3: 183 notifications, 69 write commands; 117 on 0x0864 with 23,985 value bytes.
        #expect(
            out.sentence(
                "data", containing: ["183 notifications received", "69 write commands sent", "117 packets, 23985 bytes on handle 0x0864"])
                != nil)
        // P4, P5: Service Changed (0x0012, CCCD 268) staying silent is normal; 0x0824 and 0x0884 (CCCDs 336, 363) are not.
        let silent = try #require(out.findings("GATT-05").first)
        #expect(silent.occurrences == [336] && silent.frames == [336, 363] && !silent.message.contains("0x0012"))
        #expect(silent.message.contains("0x0824, 0x0884"))
        // P6: 720 ms at 207.
        #expect(out.findings("LP-02").first?.occurrences == [207])
        #expect(!out.findings.contains { $0.serious })
    }

    @Test func batteReadHoldsOnlyMonitorNotes() throws {
        guard let out = try DiagnoseOutput.of("btmon-w-dl2001_batteread-rpi-notes-only.btsnoop") else { return }
        // P1, P2: 6 monitor records (notes, New Index hci0, Control Open on index 0xFFFF): no link, one adapter.
        #expect(out.sentence("links", containing: ["No link in the log", "made or attempted in its 6 records"]) != nil)
        #expect(out.findings("HH-07").isEmpty)
        // P3: nothing at warning or above.
        #expect(!out.findings.contains { $0.atLeastWarning })
    }
}
