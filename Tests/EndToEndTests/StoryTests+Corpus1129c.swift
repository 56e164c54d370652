import BLETestSupport
import Foundation
import Testing

/// Stories of the captures of `corpus/README.md` "Added 2026-11-29 (5)" (stories from tshark alone, committed before
/// blescope's first run; scores in corpus/stories/README.md), held point by point to `diagnose --json`. What blescope
/// says right is expected; what it still misses is a known issue. Needs the corpus (BLESCOPE_CORPUS).
@Suite struct CorpusStoryTests1129c {
    static func of(_ capture: String) throws -> DiagnoseOutput? { try DiagnoseOutput.of(capture, corpus: true) }

    static let btvsRadioReset = "pcapng-lt201-btvs-win11_opensnek-radio-reset-bg-reconnect-secreq-stored-ltk-razer-hogp.pcapng"
    static let btvsForty = "pcapng-lt201-btvs-win11_opensnek-40min-midlink-start-disc-13-reconnect-razer-hogp.pcapng"

    /// Windows 11's BTVS logs HID input reports with their headers and no value (tshark 142: ACL length 15, L2CAP 11,
    /// 12 bytes held) and LE Start Encryption without its 28 parameter bytes (129): the logger's cut, not damage, and
    /// not Android's filtered mode.
    @Test(arguments: [(btvsRadioReset, 1585, 1606, 129), (btvsForty, 28843, 40315, 26524)])
    func btvsLeavesPayloadsOut(_ capture: String, cut: Int, acl: Int, startEncryption: Int) throws {
        guard let out = try Self.of(capture) else { return }
        // The story's sentences (unwrapped; the text wraps at 100 columns).
        let told = out.story.map(\.text).joined(separator: "\n")
        #expect(told.contains("ACL payloads cut to at most 7 bytes in \(cut) of \(acl) ACL records (cut before the log was written"))
        #expect(!told.contains("damaged in the log") && !told.contains("Android filtered snoop log"))
        #expect(told.contains("1 non-ACL record (frame \(startEncryption)) cut before the log was written"))
        let cq02 = try #require(out.findings("CQ-02").first)
        #expect(cq02.message.contains("cut before the log was written") && !cq02.message.contains("filtered"))
        // BTVS logs the Security Request (125, 26520) 3 ms before the LE Enhanced Connection Complete (126, 26521):
        // no link is made of it, and nothing says data came on a closed handle.
        #expect(out.findings("HH-06").isEmpty)
        #expect(!out.story.contains { $0.text.contains("whose transport the log does not show") })
    }

    /// The 40-minute log: the mouse's link from before the log (handle 0x0010, 0x13 at 26506), then a new link at 26521.
    @Test func btvsFortyMinutesTwoLinks() throws {
        guard let out = try Self.of(Self.btvsForty) else { return }
        #expect(out.sentence("links", containing: ["2 LE links to 2 peripherals", "1 ended by the peer (0x13"]) != nil)
        // tshark: 32,245 Handle Value Notifications (`btatt.opcode == 0x1b`), 28,842 of them cut to opcode and handle.
        // A cut notification counts as one received, and a cut record names its link: link #1 is in the log from frame 1
        // (cut notifications on 0x0010; tshark `bthci_acl.chandle == 0x0010` from frame 1), not from 586, its first whole
        // record.
        #expect(out.sentence("data", containing: ["32245 notifications received (28842 cut by the capturer"]) != nil)
        #expect(out.findings("CQ-01").first?.message.contains("0x0010 (first seen at frame 1)") == true)
    }

    /// The radio-reset log's mouse reports: tshark counts 1,593 notifications, 1,584 of them cut to opcode and handle;
    /// each is a notification received (the first run told 9).
    @Test func btvsCutNotificationsAreNotificationsReceived() throws {
        guard let out = try Self.of(Self.btvsRadioReset) else { return }
        #expect(out.sentence("data", containing: ["1593 notifications received (1584 cut by the capturer"]) != nil)
    }

    /// BlueZ (Linux monitor pcapng): Secure Simple Pairing Just Works although the host asked for MITM (20, 22), the
    /// number accepted 47 µs later (23, 24); key 0x04 (27), encrypted at 16 bytes (31, 33); the host disconnects (91).
    @Test func bluezBuds2PairingOnly() throws {
        guard let out = try Self.of("pcapng-lt254-linux-monitor_bsam-bluez-galaxy-buds2-ssp-pairing-sdp-then-host-disconnect.pcapng")
        else { return }
        #expect(
            out.sentence(
                "classic", containing: ["1 BR/EDR link with Galaxy Buds2 (45CA) (84:5F:04:F1:45:CA) ×1", "1 closed by this side (0x16)"])
                != nil)
        #expect(out.sentence("security", containing: ["Secure Simple Pairing Just Works", "16-byte key"]) != nil)
        let mitm = try #require(out.findings("SEC-13").first)
        #expect(mitm.severity == "info")
        #expect(!out.findings.contains { $0.atLeastWarning })
    }

    /// A btsnoop whose record 1 cannot be read (kept 56 of 55 bytes at byte 16): not "nothing wrong", but cannot tell.
    @Test func misframedBtsnoopCannotTell() throws {
        guard let out = try Self.of("btsnoop-misconverted_air5-fixpcap-le-fields-read-as-be-19-records.pcap") else { return }
        #expect(out.text.hasPrefix("Diagnosis: cannot tell: not one record of the file could be read"))
        #expect(out.story.contains { $0.text.contains("record 1 at offset 16: included length 56 exceeds original length 55") })
        #expect(out.story.contains { $0.text == "No link can be told: not one record of the file could be read." })
    }
}
