import BLETestSupport
import Foundation
import Testing

/// `diff`'s pairing method on real air captures of the bsniffhub set (corpus), each pairing's association model held
/// to what tshark's `btsmp` fields imply (`scripts/smp_method.py`, Core Spec Vol 3, Part H, 2.3.5.1 and Table 2.8, run
/// on 2026-11-28; the file names say the method their authors used).
@Suite struct DiffPairingTests {
    /// capture → (Pairing Request frame, the IO capabilities and flags tshark gives for request and response, model).
    static let pairings: [String: (frame: Int, fields: [[String]], model: String)] = [
        "lell-rf-lt256_bsniffhub-lesc-numcomp-380717-enc.pcap": (
            141, [["141", "0x04", "0x00", "0", "1"], ["144", "0x04", "0x00", "1", "1"]],
            "LE Secure Connections, Numeric Comparison, no bonding"
        ),
        "lell-rf-lt256_bsniffhub-legacy-passkey-123456-enc.pcap": (127, [], "LE legacy, Passkey Entry, no bonding"),
        "lell-rf-lt256_bsniffhub-lesc-oob-enc.pcap": (183, [], "LE Secure Connections, OOB, no bonding"),
        "lell-rf-lt256_bsniffhub-legacy-oob-tk-enc.pcap": (229, [], "LE legacy, OOB, no bonding"),
        "lell-rf-lt256_bsniffhub-lesc-passkey-123456-enc.pcap": (134, [], "LE Secure Connections, Passkey Entry, no bonding"),
        "lell-rf-lt256_bsniffhub-lesc-justworks-ll-fragments-enc-ltk.pcap": (
            116, [], "LE Secure Connections, Just Works, no bonding"
        ),
        // One device (C0:48:FF:F5:9D:B8, the tesi-ble "lv4" lock) paired twice: NoInputNoOutput, then DisplayOnly.
        "nrfsniffer-lt272-pcapng_tesi-ble-lv4-lesc-justworks-att-05.pcapng": (
            1307, [], "LE Secure Connections, Just Works, bonding"
        ),
        "nrfsniffer-lt272-pcapng_tesi-ble-lv4-lesc-passkey-dle251-enc.pcapng": (
            3239, [], "LE Secure Connections, Passkey Entry, bonding"
        ),
    ]

    /// Two captures of different methods compared: each side's pairing method, at its Pairing Request.
    @Test(arguments: [
        ("lell-rf-lt256_bsniffhub-lesc-numcomp-380717-enc.pcap", "lell-rf-lt256_bsniffhub-legacy-passkey-123456-enc.pcap"),
        ("lell-rf-lt256_bsniffhub-lesc-oob-enc.pcap", "lell-rf-lt256_bsniffhub-legacy-oob-tk-enc.pcap"),
        ("lell-rf-lt256_bsniffhub-lesc-passkey-123456-enc.pcap", "lell-rf-lt256_bsniffhub-lesc-justworks-ll-fragments-enc-ltk.pcap"),
        (
            "nrfsniffer-lt272-pcapng_tesi-ble-lv4-lesc-justworks-att-05.pcapng",
            "nrfsniffer-lt272-pcapng_tesi-ble-lv4-lesc-passkey-dle251-enc.pcapng"
        ),
    ])
    func pairingMethodsAgreeWithTshark(_ names: (String, String)) throws {
        guard let corpus = TestEnvironment.corpusDirectory else {
            print("DiffPairingTests: the bsniffhub captures need BLESCOPE_CORPUS: skipped")
            return
        }
        let (a, b) = (corpus + "/" + names.0, corpus + "/" + names.1)
        let r = try Blescope.run(["diff", "--json", "--quiet", a, b])
        #expect(r.status == 0, "\(r.stderr)")
        let root = try #require(r.json as? [String: Any])
        let c = try #require((root["comparisons"] as? [[String: Any]])?.first)
        let diffs = try #require(c["differences"] as? [[String: Any]])
        let method = try #require(diffs.first { $0["kind"] as? String == "pairing-method" }, "\(diffs.map { $0["kind"]! })")
        let (ta, tb) = (try #require(Self.pairings[names.0]), try #require(Self.pairings[names.1]))
        #expect((method["a"] as? String)?.hasPrefix(ta.model + " (") == true, "\(method)")
        #expect((method["b"] as? String)?.hasPrefix(tb.model + " (") == true, "\(method)")
        #expect(method["frame_a"] as? Int == ta.frame && method["frame_b"] as? Int == tb.frame)
        #expect(method["impact"] as? String == "major")
        // The numeric comparison's fields as tshark reads them: KeyboardDisplay both, no OOB, MITM from the
        // responder, SC from both.
        guard !ta.fields.isEmpty, TestEnvironment.tsharkPath != nil else { return }
        let fields = ["frame.number", "btsmp.io_capability", "btsmp.oob_data_flags", "btsmp.mitm_flag", "btsmp.sc_flag"]
        let rows = try #require(
            TestEnvironment.tsharkFields(
                ["-r", a, "-Y", "btsmp.opcode==0x01 || btsmp.opcode==0x02", "-T", "fields"] + fields.flatMap { ["-e", $0] }))
        #expect(rows == ta.fields)
        #expect(method["a"] as? String == ta.model + " (central KeyboardDisplay, peripheral KeyboardDisplay MITM)")
    }
}
