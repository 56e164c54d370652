import BLETestSupport
import Foundation
import Testing

/// Stories of the captures of `corpus/README.md` "Added 2026-11-29 (7)" (stories from tshark alone, committed before
/// blescope's first run; scores in corpus/stories/README.md), held point by point to `diagnose --json`. Needs the
/// corpus (BLESCOPE_CORPUS).
@Suite struct CorpusStoryTests1129e {
    static func of(_ capture: String) throws -> DiagnoseOutput? { try DiagnoseOutput.of(capture, corpus: true) }

    /// LE Secure Connections Passkey Entry (passkey 725522, 20 rounds) where the peripheral sends the debug public key
    /// (162). The LTK f5 gives with round 20's Randoms (489, 492) is `baebed47…` (`corpus/stories/tools/lesc_debugkey_check.py`,
    /// Python `cryptography`, its Ea equal to the DHKey Check on the air at 493) and decrypts every encrypted PDU with a
    /// good MIC: the key distribution from 512 and LL_TERMINATE_IND 0x13 from the central at 607. The first run kept
    /// round 1's Randoms: a false CQ-05 ("the key derived from it does not decrypt these PDUs") and a link "open at the end".
    @Test func passkeyEntryWithTheDebugKeyDecryptsToItsEnd() throws {
        guard let out = try Self.of("lell-rf-lt256_bsniffhub-lesc-passkey-725522-initiator-displays-enc.pcap") else { return }
        // Both sides' Identity Information (512, 517, decrypted) carry IRKs of zeros: no privacy, said at info.
        #expect(out.findings.map(\.rule) == ["SEC-11", "SEC-20"])
        #expect(out.findings("SEC-20").map(\.frames) == [[512, 517]])
        #expect(out.sentence("links", containing: ["1 LE link to 1 peripheral", "1 closed by the central (0x13)"]) != nil)
        #expect(
            out.sentence(
                "security",
                containing: [
                    "LE Secure Connections Passkey Entry, passkey shown by the central, typed on the peripheral, debug key, all-zero IRKs: no privacy",
                    "keys distributed at 512",
                ])
                != nil)
        #expect(out.text.contains("the central ended it: LL_TERMINATE_IND") && out.text.contains("(frame 607)"))
    }

    /// The Ph0wn H-Band watch air capture (corpus 2026-11-30-15; LINKTYPE 256, 301 packets, none empty): tshark counts
    /// 275 ATT PDUs, 130 notifications (29 with no direction in the pseudo-header, flags 0x0c03: 93-96 …), 68 Write
    /// Commands. The 29 are the watch's (ATT's server: it notified 0x000d at 92 with a direction); bd939b7 put 18 of them
    /// on the central's side from the connection events. The first run dropped 23 PDUs as retransmissions by SN and bytes, among them
    /// 31, the watch's answer to 30, and raised GATT-02 ("32 went out while 30 was still waiting"). The Log line says
    /// the file kept only packets with payload, and GATT-01 no longer counts connection events the sniffer "missed".
    @Test func anAirCaptureWithoutEmptyPDUsKeepsItsRepeats() throws {
        guard
            let out = try Self.of(
                "lell-rf-lt256-pcapng_ph0wn-picowatch-hband-smartwatch-aux-connect-req-both-sides-discover-gatt-chmap-x13.pcapng")
        else { return }
        #expect(out.findings("GATT-02").isEmpty)
        #expect(out.text.contains("the capture kept only packets with payload (no empty"))
        #expect(out.sentence("data", containing: ["275 ATT PDUs", "130 notifications received", "68 write commands sent"]) != nil)
        // The watch's Read By Group Type Request (9), unanswered in the file: not counted in connection events the sniffer
        // "missed" (1494 on the first run), since the file holds none of the link's empty packets.
        let unanswered = try #require(out.findings("GATT-01").first)
        #expect(
            !unanswered.atLeastWarning && unanswered.message.hasPrefix("Response not captured: the capture kept only packets with payload"))
    }

    /// The NimBLE door lock's LE SC capture (corpus 2026-11-30-15; tshark): LL_START_ENC_REQ at 4095, then nRF Sniffer
    /// flags ten PDUs encrypted with a bad MIC (4096-4129) and, from the empty PDU at 4130, none: nine non-empty PDUs
    /// follow "Encrypted: No" (4131-4148), 19 non-empty PDUs and 333 bytes from 4096 in all. Where the ciphertext is
    /// told, the flags' stop is said once.
    @Test func theSniffersStopFlaggingTheLinkIsSaid() throws {
        guard
            let out = try Self.of(
                "nrfsniffer-lt272-pcapng_esp32-nimble-doorlock-lesc-numcomp-dhkey-check-x2-notify-during-pairing-bad-mic-undecryptable-697-crc-bad.pcapng"
            )
        else { return }
        let cq05 = try #require(out.findings("CQ-05").first)
        #expect(cq05.message.contains("encrypted, no key: 19 PDUs, 333 bytes"))
        #expect(
            cq05.message.contains(
                "the sniffer stopped flagging the link as encrypted at 4130 after 10 bad MICs; its 9 later PDUs are counted as ciphertext"))
        // tshark: the lock's Handle Value Notification at 4053, between the Pairing Request (3980) and LL_START_ENC_REQ (4095).
        #expect(
            out.sentence("security", containing: ["1 notification went in the clear during the pairing, before encryption (4053)"]) != nil)
    }

    /// The NimBLE door lock's legacy capture (corpus 2026-11-30-15; tshark): the central's Pairing Request asks for
    /// bonding, MITM and SC (AuthReq 0x0d, 4670), the DisplayOnly lock answers 0x00 (4675); the lock notifies at 4741,
    /// 4807 and 4874, before the encryption (4888).
    @Test func whatTheLegacyPairingRefusedAndCarriedInTheClear() throws {
        guard
            let out = try Self.of(
                "nrfsniffer-lt272-pcapng_esp32-nimble-doorlock-legacy-passkey-displayonly-no-bonding-notify-in-clear-bad-mic-900-crc-bad.pcapng"
            )
        else { return }
        #expect(
            out.sentence(
                "security",
                containing: [
                    "the peripheral answered No Bonding: no keys stored",
                    "the central asked for Secure Connections: the peripheral's answer made it legacy",
                    "3 notifications went in the clear during the pairing, before encryption (4741, 4807, 4874)",
                ]) != nil)
    }

    /// The Ph0wn Nespresso log (a Galaxy S7 edge from HCI Reset; corpus 2026-11-30-15; tshark): the machine sends
    /// Encryption Information and Central Identification (654, 655), the phone Identity Information, Identity Address
    /// and Signing Information (656-660). The story said "keys distributed at 654" without whose. After reconnecting,
    /// the phone's LE Read Peer Resolvable Address is refused 0x0C (1937) and it encrypts from the bond 10 ms later
    /// (1947): HH-04 at info, where it warned of "a host state-machine bug". GATT-05 counts characteristics, not writes.
    @Test func theKeysAreToldBySideAndAnUnansweredAddressQueryIsContext() throws {
        guard
            let out = try Self.of(
                "android-btsnoop_ph0wn-nespresso-prodigio-from-reset-le-legacy-justworks-keydist-bredr-peer-pages-l2cap-echo-x20-disc-15.log"
            )
        else { return }
        #expect(
            out.sentence(
                "security", containing: ["LE legacy Just Works", "keys distributed at 654 (LTK from the peer; IRK, CSRK from this side)"])
                != nil)
        let hh04 = out.findings("HH-04").filter { $0.frames.contains(1937) }
        #expect(hh04.count == 1 && hh04.allSatisfy { !$0.atLeastWarning })
        // GATT-05 by characteristic (tshark, link #22): 0x001c, its CCCD 0x001d first enabled at 1977, is notified 13
        // times (2249-2317): not silent. 0x001f's CCCD 0x0020 is written 13 times (1972-2526), on for 70.3 s at the
        // longest (2018 to the disable at 2043), nothing notified. bd939b7 listed nine handles, 0x001c among them.
        // The 20 BR/EDR links from two BlueZ hosts: 60 L2CAP Echo Requests (3 a link), no Connection Request.
        #expect(
            out.sentence(
                "data",
                containing: [
                    "280 ACL packets on 20 BR/EDR links, each: 3 L2CAP echo requests, no profile (a presence probe such as l2ping)"
                ])
                != nil)
        let silent = out.findings("GATT-05")
        #expect(silent.count == 1 && silent.first?.frames == [1972])
        #expect(
            silent.first?.message.contains(
                "Subscribed to 0x001f on Prodigio_D2A74C76F3E0 (D2:A7:4C:76:F3:E0) (from frame 1972; its CCCD written 13 times), but nothing was notified there while it was on, 70.3 s at the longest (from frame 2018)"
            ) == true)
    }

    /// The blproject UE BOOM 2 log (corpus 2026-11-30-15; tshark): SDP names RFCOMM 11 the speaker's Headset record (36);
    /// its AT+XAPL (101) and ten AT+IPHONEACCEV get no answer; the link sniffs at 500 ms from 710 and the media stop
    /// 726-728 until the Mode Change to active at 729. The first run said "HFP … service level connection not
    /// completed" and gave BR-07 a phone-side cause only.
    @Test func aHeadsetProfileChannelAndASniffStall() throws {
        guard
            let out = try Self.of(
                "pcapng-lt201-h4phdr_blproject-bluez-laptop-a2dp-source-hsp-ag-ue-boom-2-stored-key-at-xapl-iphoneaccev-x10-unanswered-491s-silence.pcapng"
            )
        else { return }
        #expect(
            out.sentence(
                "classic",
                containing: [
                    "HSP with UE BOOM 2 on RFCOMM channel 11", "11 AT commands got no answer (the first AT+XAPL=0000-0000-0100,10 at 101)",
                ])
                != nil)
        #expect(!out.text.contains("service level connection not completed"))
        let stall = try #require(out.findings("BR-07").first)
        #expect(stall.message.contains("437 ms (frames 726–728)") && stall.frames.contains(710))
    }

    /// The listed LE legacy OOB capture (bsniffhub): the pairing at 229 says OOB data on both sides, so its TK is not
    /// searched (240 Pairing Confirm; before perf15 every passkey was tried, and none checked), the link encrypted from
    /// 251 stays closed. CQ-05's likely cause said "LE Secure Connections without the LTK given".
    @Test func anOutOfBandLegacyPairingIsTheCauseOfTheClosedLink() throws {
        guard let out = try Self.of("lell-rf-lt256_bsniffhub-legacy-oob-tk-enc.pcap") else { return }
        #expect(out.sentence("security", containing: ["1 LE pairing (LE legacy OOB)"]) != nil)
        #expect(out.text.contains("likely: LE legacy pairing out of band (frame 229): its TK never crossed the air"))
    }

    /// BlueZ 2006, legacy PIN (Thewbi/hci_bluetooth; corpus 2026-11-29-8, first run on d1dd0d7). tshark: PIN Code
    /// Request at 11, Connection Complete 0x05 at 14 (the PIN pairing failed); the second attempt makes a combination
    /// key (21) and comes up encrypted (Connection Complete at 22, Encryption_Enabled 1; 52 likewise, no Encryption
    /// Change); the phone closes both links (0x13 at 35 and 89) after bonding and an SDP search. The first run led with
    /// a CE-04 error ("rejecting this central"), said "no BR/EDR link encrypted" and blamed a missing link key.
    @Test func aLegacyPINBondingIsToldAsOne() throws {
        guard
            let out = try Self.of(
                "pcap-lt201-h4phdr_thewbi-bluez-2006-nec616-legacy-pin-auth-failure-05-then-combination-key-sdp-headset-none.pcap")
        else { return }
        #expect(out.findings("CE-04").isEmpty)
        #expect(out.sentence("security", containing: ["2 legacy PIN pairings (11, 18)", "2 BR/EDR encryptions on (22, 52)", "E0"]) != nil)
        let failed = try #require(out.findings("BR-02").first)
        #expect(failed.message.contains("the legacy PIN pairing (PIN Code Request at frame 11) failed"))
    }

    /// Controller refusals where nothing failed (corpus 2026-11-29-8; tshark): BlueZ 2006's Remote Name Request (41) and
    /// Inquiry (43, 111) refused 0x0C while an accepted name request still paged (37, answered 0x04 at 45; 107, answered
    /// at 113); Android's new address for advertising set 3 refused 0x0C at 7546, the set enabled before the log began
    /// (no command for it before; disabled among sets 0, 3, 4, 5 at 17292). The first run raised them as warnings ("a
    /// host state-machine bug"), the Android one leading a log where nothing failed.
    @Test func refusalsTheControllersStateExplainsAreContext() throws {
        let pin = "pcap-lt201-h4phdr_thewbi-bluez-2006-nec616-legacy-pin-auth-failure-05-then-combination-key-sdp-headset-none.pcap"
        guard let bluez = try Self.of(pin),
            let android = try Self.of("android-btsnoop_lightctl-midlink-whole-log-link-never-starts-or-ends-adv-set-addr-0c.log")
        else { return }
        #expect(bluez.findings("HH-04").map(\.occurrences).sorted { $0[0] < $1[0] } == [[42], [44, 112]])
        #expect(bluez.findings("HH-04").allSatisfy { $0.severity == "info" })
        #expect(android.findings("HH-04").map(\.occurrences) == [[7546]] && android.findings("HH-04")[0].severity == "info")
        #expect(android.findings.allSatisfy { !$0.atLeastWarning })
    }
}
