import BLETestSupport
import Foundation
import Testing

/// The text outputs people read (`info`, `timeline`, `gatt`, `ota`, `throughput`, `transfers`, `diagnose`, `diff`), compared byte for
/// byte with files under `Tests/EndToEndTests/Golden/`.
///
/// A change to any of these outputs shows here as a diff to review. When the change is meant, rewrite the files with
/// `BLESCOPE_UPDATE_GOLDEN=1 swift test --filter GoldenTests` and read the diff before committing it (README, "Testing").
/// The golden files are checked in turn: ``GoldenTruthTests`` reads them (not the binary) and asserts their key figures
/// against the Samples' truth files, so a golden file cannot quietly record a wrong answer.
@Suite struct GoldenTests {
    /// One golden file: the arguments before the capture, the capture, and the file it is compared with.
    struct Case: CustomStringConvertible, Sendable {
        var command: [String]
        var capture: String
        var description: String { command[0] + "-" + capture }
        var goldenPath: String { GoldenTests.directory + "/" + description + ".txt" }
    }

    static let directory = TestEnvironment.repositoryRoot + "/Tests/EndToEndTests/Golden"
    static let codecs = ["--codec", "Samples/codecs"]

    /// A handful of Samples in each of the three formats: a Nordic DFU (btsnoop), the BTLE Transfer messages (pcap),
    /// a vendor headset OTA described by a codec's roles (pklg), the bracelet with its codec (btsnoop), an MCUmgr upload.
    static let cases: [Case] =
        [
            Case(command: ["info"], capture: "nordic-dfu.btsnoop"),
            Case(command: ["info"], capture: "eom-transfer.pcap"),
            Case(command: ["info"], capture: "headset-ota.pklg"),
            Case(command: ["timeline"] + codecs, capture: "bracelet.btsnoop"),
            Case(command: ["timeline"] + codecs, capture: "eom-transfer.pcap"),
            Case(command: ["gatt"], capture: "nordic-dfu.btsnoop"),
            Case(command: ["gatt"], capture: "headset-ota.pklg"),
            Case(command: ["ota"] + codecs, capture: "nordic-dfu.btsnoop"),
            Case(command: ["ota"] + codecs, capture: "headset-ota.pklg"),
            Case(command: ["ota"] + codecs, capture: "mcumgr-upload.btsnoop"),
            Case(command: ["throughput"], capture: "nordic-dfu.btsnoop"),
            Case(command: ["throughput"], capture: "eom-transfer.pcap"),
            Case(command: ["transfers"] + codecs, capture: "eom-transfer.pcap"),
            // `diff` of the firmware 1.4.2 Sample (btsnoop) with 1.5.0 (pklg), and of the two centrals (pklg, pcap).
            Case(command: ["diff"] + codecs + ["Samples/diff-fw1.btsnoop"], capture: "diff-fw2.pklg"),
            Case(command: ["diff"] + codecs + ["Samples/diff-central-a.pklg"], capture: "diff-central-b.pcap"),
        ] + diagnosisCases

    /// `diagnose` on every diagnosis Sample (bumble-made failures, each in one of the three formats in turn).
    static let diagnosisCases: [Case] = [
        "diag-connect-timeout.btsnoop", "diag-bond-lost.pcap", "diag-pairing-failed.pklg", "diag-insufficient-encryption.btsnoop",
        "diag-cccd-never-written.pcap", "diag-att-timeout.pklg", "diag-stale-handle.btsnoop", "diag-param-rejected.pcap",
        "diag-mtu-23.pklg", "diag-supervision-timeout.btsnoop",
    ].map { Case(command: ["diagnose"], capture: $0) }

    static var updating: Bool { ProcessInfo.processInfo.environment["BLESCOPE_UPDATE_GOLDEN"] == "1" }

    @Test(arguments: cases)
    func outputMatchesTheGoldenFile(_ c: Case) throws {
        let r = try Blescope.run(c.command + ["--quiet", "Samples/" + c.capture])
        #expect(r.status == 0, "\(r.stderr)")
        if GoldenTests.updating {
            try FileManager.default.createDirectory(atPath: GoldenTests.directory, withIntermediateDirectories: true)
            try Data(r.stdout.utf8).write(to: URL(fileURLWithPath: c.goldenPath))
            return
        }
        let golden = try #require(
            FileManager.default.contents(atPath: c.goldenPath),
            "no golden file \(c.goldenPath): write it with BLESCOPE_UPDATE_GOLDEN=1 swift test --filter GoldenTests")
        let expected = String(decoding: golden, as: UTF8.self)
        guard r.stdout != expected else { return }
        // The first differing line says more than two whole outputs.
        let got = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let want = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let line = (0..<min(got.count, want.count)).first { got[$0] != want[$0] } ?? min(got.count, want.count)
        Issue.record(
            """
            \(c) differs from \(c.description).txt at line \(line + 1) \
            (\(got.count) lines against \(want.count)); if the change is meant: BLESCOPE_UPDATE_GOLDEN=1 swift test --filter GoldenTests
              golden: \(line < want.count ? String(want[line]) : "<end>")
              output: \(line < got.count ? String(got[line]) : "<end>")
            """)
    }

    @Test func everyGoldenFileHasACase() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: GoldenTests.directory).filter { $0.hasSuffix(".txt") }
        #expect(Set(names) == Set(GoldenTests.cases.map { $0.description + ".txt" }))
    }
}

/// The golden files read against the Samples' truth files (what the generator sent, Samples/generate): each figure
/// below comes from the truth file and is looked for in the golden text, so the goldens are checked, not just recorded.
@Suite struct GoldenTruthTests {
    /// The golden file with every line fitted to 100 columns joined back into one (``unwrapped(_:)``).
    func golden(_ name: String) throws -> String {
        let path = GoldenTests.directory + "/" + name + ".txt"
        return Self.unwrapped(String(decoding: try #require(FileManager.default.contents(atPath: path), "missing \(path)"), as: UTF8.self))
    }

    /// Text outputs are fitted to 100 columns: a line too long goes on in lines indented at least 8 more than it
    /// (TextWidth). Joined back with one space, a line reads as it did unfitted (a hex value longer than a whole line
    /// is shortened in its middle; none of the figures read here is).
    static func unwrapped(_ text: String) -> String {
        var out: [String] = []
        var lead = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let indent = line.prefix { $0 == " " }.count
            if let last = out.last, !line.isEmpty, !last.isEmpty, indent >= lead + 8 {
                out[out.count - 1] = last + " " + line.dropFirst(indent)
            } else {
                out.append(String(line))
                lead = indent
            }
        }
        return out.joined(separator: "\n")
    }

    /// The line that starts with `prefix` (after leading spaces), or nil.
    func line(_ text: String, startingWith prefix: String) -> String? {
        text.split(separator: "\n").map { $0.drop { $0 == " " } }.first { $0.hasPrefix(prefix) }.map(String.init)
    }

    /// 100000 → "100,000", as blescope groups digits.
    func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(d)
        }
        return out
    }

    /// The OTA report's image line for a truth file's `image`: whole, with its digests.
    func imageLine(_ image: [String: Any]) -> String {
        let size = grouped(image["size"] as! Int)
        return "image \(size) bytes of \(size) announced, SHA-256 \(image["sha256"] as! String), CRC-32 0x\(image["crc32"] as! String)"
    }

    @Test(arguments: ["nordic-dfu.btsnoop", "eom-transfer.pcap", "headset-ota.pklg"])
    func infoCountsAreTheGenerators(_ capture: String) throws {
        let sample = String(capture.split(separator: ".")[0])
        let facts = try #require(try Blescope.truth(sample)["capture"] as? [String: Any])
        let text = try golden("info-" + capture)
        let frames = try #require(facts["frames"] as? Int)
        #expect(line(text, startingWith: "Records:") == "Records:            " + grouped(frames))
        let byType = try #require(line(text, startingWith: "By type:"))
        #expect(byType.contains("commands \(facts["hci_commands"] as! Int), events \(facts["hci_events"] as! Int),"))
        // ACL tx + rx = the generator's ACL packets.
        let acl = byType.split(separator: ",").filter { $0.contains("ACL") }.compactMap { Int($0.split(separator: " ").last!) }
        #expect(acl.reduce(0, +) == facts["acl_packets"] as? Int)
        let span = Double(try #require(facts["duration_us"] as? Int)) / 1_000_000
        #expect(line(text, startingWith: "Span:") == "Span:               " + String(format: "%.3f s", span))
        #expect(line(text, startingWith: "Reader findings:") == "Reader findings:    none")
    }

    @Test func nordicDFUSessionIsTheGenerators() throws {
        let truth = try Blescope.truth("nordic-dfu")
        let image = try #require(truth["image"] as? [String: Any])
        let text = try golden("ota-nordic-dfu.btsnoop")
        #expect(text.hasPrefix("nordic-secure-dfu on connection #1: SUCCESS\n"))
        let size = grouped(image["size"] as! Int)
        #expect(line(text, startingWith: "image ") == imageLine(image))
        #expect(
            line(
                text,
                startingWith:
                    "\(truth["packet_count_total"] as! Int) packets, \(truth["prn_receipt_count"] as! Int) receipts (PRN \(truth["prn"] as! Int))"
            ) != nil)
        #expect(
            text.contains(
                "data length \(truth["data_length_octets"] as! Int)/\(truth["data_length_octets"] as! Int), ATT_MTU \(truth["att_mtu"] as! Int)"
            ))
        // The init packet, then the data objects: their packets and bytes.
        #expect(
            line(text, startingWith: "phase init packet")?.hasSuffix(
                "\(truth["init_packet_packet_count"] as! Int) packets, \(truth["init_packet_size"] as! Int) bytes") == true)
        #expect(line(text, startingWith: "phase data")?.hasSuffix("\(truth["data_packet_count"] as! Int) packets, \(size) bytes") == true)
        // The first control step and the last response bound the session.
        let steps = try #require(truth["control_steps"] as? [[String: Any]])
        #expect(
            line(text, startingWith: "frames ")?.hasPrefix(
                "frames \(steps.first!["request_frame"] as! Int)-\(steps.last!["response_frame"] as! Int),") == true)
    }

    @Test func headsetOTASessionIsTheGenerators() throws {
        let truth = try Blescope.truth("headset-ota")
        let text = try golden("ota-headset-ota.pklg")
        #expect(text.hasPrefix("vendor (headset) on connection #1: SUCCESS\n"))
        let resent = try #require(truth["resent_indices"] as? [Int])
        #expect(
            line(
                text,
                startingWith:
                    "\(truth["data_packets_sent"] as! Int) packets (\(truth["total_packets"] as! Int) announced), \(resent.count) resent (index \(resent.map(String.init).joined(separator: ", ")))"
            ) != nil)
        #expect(text.contains("MTU \(truth["att_mtu"] as! Int),"))
    }

    @Test func mcumgrUploadIsTheGenerators() throws {
        let truth = try Blescope.truth("mcumgr-upload")
        let image = try #require(truth["image"] as? [String: Any])
        let text = try golden("ota-mcumgr-upload.btsnoop")
        #expect(text.hasPrefix("mcumgr-smp on connection #1: SUCCESS\n"))
        #expect(line(text, startingWith: "image ") == imageLine(image))
        #expect(line(text, startingWith: "\(truth["requests"] as! Int) packets") != nil)
    }

    @Test func gattUsageIsTheGenerators() throws {
        let dfu = try Blescope.truth("nordic-dfu")
        let text = try golden("gatt-nordic-dfu.btsnoop")
        #expect(text.hasPrefix("Connection #1  handle 0x0001  peer \(dfu["device_address"] as! String) (random)"))
        // The MTU with where it came from: the generator's Exchange MTU (tshark: frame 34, Exchange MTU Response).
        #expect(text.contains("database: discovery, ATT_MTU \(dfu["att_mtu"] as! Int) (observed at frame 34)\n"))
        let cp = try #require(line(text, startingWith: String(format: "0x%04x  ", dfu["control_point_value_handle"] as! Int)))
        #expect(cp.contains(dfu["control_point_uuid"] as! String))
        // Write requests: every one the generator sent but the CCCD's.
        let writes =
            try #require((dfu["capture"] as? [String: Any])?["att_pdus_by_opcode"] as? [String: [String: Int]])["0x12 write_req"]?["sent"]
            ?? 0
        #expect(cp.hasSuffix("[\(writes - 1) writes, \(dfu["control_point_notification_count"] as! Int) notif.]"))
        let packet = try #require(line(text, startingWith: String(format: "0x%04x  ", dfu["packet_value_handle"] as! Int)))
        #expect(packet.contains(dfu["packet_uuid"] as! String) && packet.hasSuffix("[\(dfu["packet_count_total"] as! Int) write-cmd]"))

        let headset = try Blescope.truth("headset-ota")
        let hs = try golden("gatt-headset-ota.pklg")
        let data = try #require(line(hs, startingWith: String(format: "0x%04x  ", headset["ota_data_value_handle"] as! Int)))
        #expect(data.contains(headset["ota_data_uuid"] as! String) && data.hasSuffix("[\(headset["data_packets_sent"] as! Int) write-cmd]"))
    }

    @Test func eomTransfersAndThroughputAreTheGenerators() throws {
        let truth = try Blescope.truth("eom-transfer")
        let messages = try #require(truth["messages"] as? [[String: Any]])
        let rows = try golden("transfers-eom-transfer.pcap").split(separator: "\n").filter { $0.hasPrefix("#1") }
        #expect(rows.count == messages.count)
        for (row, m) in zip(rows, messages) {
            let fields = row.split(separator: " ")
            let frames = m["chunk_frames"] as! [Int]
            // conn handle dir framing frames chunks bytes … status
            #expect(fields[1] == String(format: "0x%04x", truth["value_handle"] as! Int))
            #expect(fields[4] == "\(frames.first!)-\(m["eom_frame"] as! Int)")
            #expect(fields[5] == "\(m["chunk_count"] as! Int)" && fields[6] == grouped(m["length"] as! Int))
            #expect(fields.last == "complete")
        }
        // Throughput counts every notification, the EOM markers too. Columns: dir handle kind packets bytes …
        let notify = try #require(golden("throughput-eom-transfer.pcap").split(separator: "\n").first { $0.contains(" notify ") })
        let fields = notify.split(separator: " ")
        #expect(fields[3] == "\(messages.reduce(0) { $0 + ($1["notifications_with_eom"] as! Int) })")
        #expect(fields[4] == grouped(messages.reduce(0) { $0 + ($1["length"] as! Int) + 3 }))

        let dfu = try Blescope.truth("nordic-dfu")
        let image = try #require(dfu["image"] as? [String: Any])
        let packet = try #require(golden("throughput-nordic-dfu.btsnoop").split(separator: "\n").first { $0.contains(" write-cmd ") })
        let p = packet.split(separator: " ")
        // Every packet of the init packet and the image, and their bytes.
        #expect(p[1] == String(format: "0x%04x", dfu["packet_value_handle"] as! Int))
        #expect(
            p[3] == "\(dfu["packet_count_total"] as! Int)" && p[4] == grouped((image["size"] as! Int) + (dfu["init_packet_size"] as! Int)))
    }

    @Test func braceletTimelineShowsEveryFrameAndTheBadChecksum() throws {
        let truth = try Blescope.truth("bracelet")
        let text = try golden("timeline-bracelet.btsnoop")
        let lines = text.split(separator: "\n")
        // One line per record, each starting with its frame number.
        #expect(
            lines.filter { Int($0.split(separator: " ").first ?? "") != nil }.count == (truth["capture"] as? [String: Any])?["frames"]
                as? Int)
        let byFrame = Dictionary(
            lines.compactMap { l -> (Int, Substring)? in
                guard let n = Int(l.split(separator: " ").first ?? "") else { return nil }
                return (n, l)
            }, uniquingKeysWith: { a, _ in a })
        for f in try #require(truth["frames"] as? [[String: Any]]) {
            let l = try #require(byFrame[f["frame"] as! Int])
            // The value, then the codec's reading (one space or two: a fitted line may break between them).
            #expect(l.split(separator: " ").joined(separator: " ").contains("value=\(f["hex"] as! String) bracelet."))
            // ✓ a checksum that holds, ✗ one that does not.
            #expect(l.contains(" ✓") == (f["checksum_ok"] as! Bool) && l.contains(" ✗") != (f["checksum_ok"] as! Bool))
        }
        #expect(
            text.contains(
                "bad checksum (xor8): stored 0x\((truth["bad_frame_hex"] as! String).suffix(2)), computed 0x\(truth["bad_frame_correct_checksum"] as! String) (frame \(truth["bad_frame_number"] as! Int))"
            ))
    }
}
