import BLETestSupport
import Foundation
import Testing

/// `blescope convert --anonymize` on every Sample (all three formats) and every real capture, checked against tshark:
/// no device address tshark finds in the input (either byte order, or as text) and no device name it finds is left in
/// the output's bytes; tshark reads the output with the same ATT PDUs (frame, opcode, handles); blescope's timeline
/// has the same events (frame, layer, opcode, connection, handles, attribute types, pairing) with only values changed.
@Suite struct AnonymizeTests {
    /// tshark fields that hold a device address (FT_ETHER fields of the Bluetooth dissectors) or a device name.
    static let addressFields = [
        "bthci_cmd.bd_addr", "bthci_evt.bd_addr", "bthci_evt.le_local_rpa", "bthci_evt.le_peer_rpa",
        "bthci_evt.direct_bd_addr", "btcommon.eir_ad.entry.bd_addr", "btle.advertising_address",
        "btle.initiator_address", "btle.target_address", "btle.scanning_address", "btsmp.bd_addr",
        "hci_mon.bd_addr", "btatt.reconnection_address", "bluetooth.addr",
    ]
    static let nameFields = [
        "btcommon.eir_ad.entry.device_name", "bthci_cmd.device_name", "bthci_evt.remote_name",
        "bthci_evt.device_name", "btatt.device_name",
    ]

    /// Records whose layout names a device: BR/EDR and LE connection events, advertising reports, commands naming a
    /// peer or the local random address, link-layer advertising PDUs with a good CRC (Core Spec Vol 4 Part E 7.7,
    /// 7.8; Vol 6 Part B 2.3).
    static let addressCarriers =
        "bthci_evt.code in {0x03, 0x04, 0x12, 0x17, 0x18, 0x2f} || bthci_evt.le_meta_subevent in {0x01, 0x02, 0x0a, 0x0b, 0x0d, 0x29}"
        + " || bthci_cmd.opcode in {0x0405, 0x2005, 0x200d, 0x2011, 0x2027, 0x2043} || (btle.advertising_header"
        + " && !btle.crc.incorrect && !(nordic_ble.crcok == 0) && !(btle_rf.flags.crc_checked == 1 && btle_rf.flags.crc_valid == 0))"

    /// Key fields: zero in the output.
    static let keyFields = [
        "btsmp.long_term_key", "btsmp.id_resolving_key", "btsmp.signature_key", "bthci_evt.link_key",
        "bthci_cmd.link_key", "bthci_cmd.le_long_term_key", "bthci_cmd.le_peer_irk", "bthci_cmd.le_local_irk",
    ]

    static var inputs: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: TestEnvironment.samplesDirectory)) ?? []
        return names.filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") || $0.hasSuffix(".pklg") }.sorted()
            .map(TestEnvironment.sample) + TestEnvironment.realCaptures
    }

    struct TsharkView {
        var att: [String]
        var addresses: Set<String>
        var names: Set<String>
        var keys: [String] = []
    }

    /// One tshark pass: the ATT tuple of every frame that has one, and every address and name field.
    static func tshark(_ path: String) -> TsharkView? {
        let fields =
            ["frame.number", "btatt.opcode", "btatt.handle"] + addressFields + nameFields + keyFields
            + ["_ws.malformed", "btle.access_address"]
            + ["btle.crc.incorrect", "nordic_ble.crcok", "btle_rf.flags.crc_checked", "btle_rf.flags.crc_valid"]
        guard
            let rows = TestEnvironment.tsharkFields(
                ClassicPcapHeaders.tsharkOptions(path) + ["-r", path, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|"]
                    + fields.flatMap { ["-e", $0] })
        else { return nil }
        var view = TsharkView(att: [], addresses: [], names: [])
        for row in rows where row.count == fields.count {
            // The PDU's own handle (the first): in vendor values tshark guesses more "handles", which change with the values.
            if !row[1].isEmpty { view.att.append("\(row[0]) \(row[1]) \(row[2].split(separator: "|").first ?? "")") }
            // A link-layer packet whose CRC fails (tshark's check, or the sniffer's flags) is noise: tshark reads
            // "addresses" in random bytes.
            let crc = Array(row[(row.count - 4)...])
            if !crc[0].isEmpty || crc[1] == "0" || (crc[2] == "1" && crc[3] == "0") { continue }
            // So is one tshark calls malformed whose CRC no one checked (PPI carries no CRC verdict): its length field
            // runs past its bytes, so no CRC can be read. The Ubertooth shaver capture has 584 such adverts: their
            // 557 "addresses" are in no packet with a whole PDU (each of its 95 addresses from whole packets is
            // replaced), and 335 of them are within 4 bits of one of those 95: bit errors of real adverts.
            let (malformed, air) = (row[row.count - 6], row[row.count - 5])
            if !malformed.isEmpty && !air.isEmpty && crc[1].isEmpty && crc[2] != "1" { continue }
            for a in row[3..<(3 + addressFields.count)] {
                for v in a.split(separator: "|") where v != "00:00:00:00:00:00" && v.lowercased() != "ff:ff:ff:ff:ff:ff" {
                    view.addresses.insert(v.lowercased())
                }
            }
            for k in row[(3 + addressFields.count + nameFields.count)..<(row.count - 6)] {
                view.keys += k.split(separator: "|").map(String.init)
            }
            for n in row[(3 + addressFields.count)..<(3 + addressFields.count + nameFields.count)] {
                for v in n.split(separator: "|") where v.count >= 3 && !v.contains("\\") { view.names.insert(String(v)) }
            }
        }
        return view
    }

    /// Every 6-byte window of `bytes` (as a little-endian number) and every `xx:xx:xx:xx:xx:xx` text in it (lowercased).
    static func windows(_ bytes: [UInt8]) -> (binary: Set<UInt64>, text: Set<String>) {
        var binary = Set<UInt64>()
        var text = Set<String>()
        bytes.withUnsafeBufferPointer { b in
            guard b.count >= 6 else { return }
            for i in 0...(b.count - 6) {
                var v: UInt64 = 0
                for k in 0..<6 { v |= UInt64(b[i + k]) << (8 * UInt64(k)) }
                binary.insert(v)
                if i + 17 <= b.count && b[i + 2] == 0x3A && b[i + 5] == 0x3A && b[i + 14] == 0x3A {
                    text.insert(String(decoding: b[i..<(i + 17)], as: UTF8.self).lowercased())
                }
            }
        }
        return (binary, text)
    }

    static func number(_ bytes: [UInt8]) -> UInt64 { bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) } }

    static func output(for input: String, in directory: String, _ index: Int) -> String {
        let lower = input.lowercased()
        // A pcapng stays pcapng: it may hold what pcap cannot (a second interface's Ethernet frames, a controller's LMP
        // trace as H4 type 0x07), which a pcap copy would leave out (said on stderr) and shift the frames after.
        let ext = lower.hasSuffix(".pklg") ? "pklg" : lower.hasSuffix(".pcapng") ? "pcapng" : lower.contains("pcap") ? "pcap" : "btsnoop"
        return directory + "/\(index).\(ext)"
    }

    /// The parts of a timeline line anonymization must not change.
    static func structure(_ line: [String: Any]) -> String {
        [
            "frame", "time", "conn", "conn_number", "dir", "layer", "opcode", "opcode_name", "handle", "handles", "uuid", "name",
            "request_frame", "response_frame", "latency_us", "status",
        ].map { "\(line[$0] ?? "-")" }.joined(separator: " ")
    }

    @Test func everySampleAndCaptureIsAnonymized() {
        #expect(Self.inputs.count >= 21 + (TestEnvironment.sharedCaptures == nil ? 0 : 16))
    }

    /// Runs in parallel over the captures (one test case each).
    @Test(arguments: inputs) func noAddressOrNameLeftAndTheSameDecode(_ input: String) throws {
        guard TestEnvironment.tsharkPath != nil else {
            print("AnonymizeTests: skipped, tshark is not installed")
            return
        }
        let binary = try #require(TestEnvironment.blescopeBinary)
        let directory = NSTemporaryDirectory() + "blescope-anonymize-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let start = Date()
        do {
            let name = (input as NSString).lastPathComponent
            let out = Self.output(for: input, in: directory, 0)
            // With --decrypt: air captures whose links blescope can decrypt are compared in the clear (without it they
            // stay encrypted, and a pairing in them can no longer be cracked, since c1 covers the replaced addresses).
            let r = try #require(
                TestEnvironment.execute(binary, ["convert", "--decrypt", "--anonymize", "--salt", "test", "--values", "hash", input, out]))
            #expect(r.status == 0, "\(name): \(r.stderr)")
            #expect(r.stderr.contains("anonymized"), "\(name): no replacement report on stderr: \(r.stderr)")
            let original = try #require(Self.tshark(input))
            let anonymized = try #require(Self.tshark(out))
            // What it is compared with: the input, or where records were decrypted, the input decrypted (not anonymized).
            var baselinePath = input
            var baseline = original
            if !r.stderr.contains("blescope: 0 record(s) decrypted") {
                baselinePath = Self.output(for: input, in: directory, 1)
                let d = try #require(TestEnvironment.execute(binary, ["convert", "--decrypt", input, baselinePath]))
                #expect(d.status == 0, "\(name): \(d.stderr)")
                baseline = try #require(Self.tshark(baselinePath))
            }
            let data = try Data(contentsOf: URL(fileURLWithPath: out))
            let windows = Self.windows([UInt8](data))

            // 1. No address (wire order, reversed, text) nor name of the input is left. A placeholder such as
            // 00:00:00:00:00:06 (fewer than 3 bytes other than 00 and FF) is also the bytes of lengths and statuses
            // followed by zeros: it must be gone from every address field tshark reads, not from every byte window.
            for a in original.addresses {
                let be = a.split(separator: ":").compactMap { UInt8($0, radix: 16) }
                #expect(be.count == 6, "\(name): tshark address \(a)")
                if be.filter({ $0 != 0 && $0 != 0xFF }).count < 3 {
                    #expect(!anonymized.addresses.contains(a), "\(name): placeholder address \(a) left in an address field")
                    continue
                }
                let wire = windows.binary.contains(Self.number(be.reversed()))
                let reversed = windows.binary.contains(Self.number(be))
                let text = windows.text.contains(a)
                #expect(!wire, "\(name): address \(a) left (wire byte order)")
                #expect(!reversed, "\(name): address \(a) left (reversed byte order)")
                #expect(!text, "\(name): address \(a) left as text")
            }
            for n in original.names {
                let found = data.range(of: Data(n.utf8)) != nil
                #expect(!found, "\(name): device name \"\(n)\" left")
            }
            // Keys: present where the input has them, all zero.
            #expect(anonymized.keys.count == baseline.keys.count, "\(name): \(baseline.keys.count) keys, \(anonymized.keys.count) after")
            for k in anonymized.keys {
                #expect(k.allSatisfy { $0 == "0" || $0 == ":" || $0 == "x" }, "\(name): key \(k) not zeroed")
            }
            // Not vacuous: every capture with a record whose layout names a device (a connection event or command, an
            // advertising report, a link-layer advertising PDU with a good CRC) names at least one. Captures without
            // one: ACL data alone (the two "acl-only" snoop logs of the public corpus), an iOS log of vendor commands,
            // completed-packet counts and ACL data (even-g2 app-control), air advertising whose every CRC failed.
            if original.addresses.isEmpty {
                let carriers = TestEnvironment.tshark(
                    ClassicPcapHeaders.tsharkOptions(input) + [
                        "-r", input, "-Y", Self.addressCarriers, "-T", "fields", "-e", "frame.number",
                    ])
                #expect(carriers?.isEmpty == true, "\(name): tshark found no address, yet the capture has records that name a device")
            }
            // 2. tshark: the same ATT PDUs (frame, opcode, handles).
            let differs = anonymized.att != baseline.att
            #expect(
                !differs,
                "\(name): tshark's ATT PDUs differ: \(zip(baseline.att, anonymized.att).first { $0 != $1 }.map { "\($0) → \($1)" } ?? "count \(baseline.att.count) → \(anonymized.att.count)")"
            )
            // 3. blescope: the same timeline apart from values (and the summaries and codec results that show them).
            // A pcapng packet comment is the input's free text (the BLUFFS captures' "SK: …" comments hold the session
            // key): the copy carries none (convert says how many it left out), so its note is no event of the copy.
            let baselineEvents = try Blescope.run(["timeline", "--format", "jsonl", baselinePath]).jsonLines.filter {
                $0["layer"] as? String != "finding"
            }
            let isComment = { (e: [String: Any]) in e["layer"] as? String == "note" && e["opcode_name"] as? String == "Comment" }
            let before = baselineEvents.filter { !isComment($0) }
            let comments = baselineEvents.count - before.count
            if comments > 0 {
                #expect(r.stderr.contains("\(comments) packet comment(s) of the input not written"), "\(name): \(r.stderr)")
            }
            let after = try Blescope.run(["timeline", "--format", "jsonl", out]).jsonLines.filter { $0["layer"] as? String != "finding" }
            #expect(before.count == after.count, "\(name): \(before.count) events, \(after.count) after anonymization")
            if let d = zip(before, after).first(where: { Self.structure($0) != Self.structure($1) }) {
                Issue.record("\(name): timeline differs:\n  \(Self.structure(d.0))\n  \(Self.structure(d.1))")
            }
            print(
                "AnonymizeTests: \(name): \(original.addresses.count) addresses and \(original.names.count) names absent, "
                    + "\(baseline.keys.count) keys zeroed, \(baseline.att.count) ATT PDUs"
                    + (baselinePath == input ? "" : " (decrypted)") + " and \(before.count) timeline events unchanged, "
                    + String(format: "%.1f s", Date().timeIntervalSince(start)))
        }
    }
}
