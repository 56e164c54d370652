import BLETestSupport
import Foundation
import Testing

/// `blescope convert --annotate FILE out.pcapng` on every Sample (all three formats) and every real capture tshark
/// reads, checked with tshark: each finding of `diagnose --json` is a comment on its deciding frame (and every folded
/// occurrence on its own), no other frame has one, the file's comment lists the findings, and every frame keeps its
/// number, length and time (`frame.len`, `frame.time_epoch`) and its protocol; only a time the sniffer's own clock
/// corrects differs (AnnotateTests+SnifferClock.swift).
@Suite struct AnnotateTests {
    static var inputs: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: TestEnvironment.samplesDirectory)) ?? []
        return names.filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") || $0.hasSuffix(".pklg") }.sorted()
            .map(TestEnvironment.sample) + TestEnvironment.realCaptures
    }

    /// Unit separator: no finding's sentence holds it, so tshark's occurrences of `frame.comment` split on it.
    static let aggregator = "\u{1F}"

    /// `frame.number → comments` of a pcapng, as tshark reads them.
    static func comments(_ path: String) -> [Int: [String]]? {
        guard
            let rows = TestEnvironment.tsharkFields(
                ["-r", path, "-Y", "frame.comment", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=\(aggregator)"]
                    + ["-e", "frame.number", "-e", "frame.comment"])
        else { return nil }
        var out: [Int: [String]] = [:]
        for row in rows where row.count == 2 {
            guard let frame = Int(row[0]) else { continue }
            out[frame] = row[1].components(separatedBy: aggregator)
        }
        return out
    }

    /// `frame.len frame.time_epoch` of every frame, and the protocol tshark gives it.
    static func frames(_ path: String, options: [String]) -> [String]? {
        TestEnvironment.tsharkFields(
            options
                + ["-r", path, "-T", "fields", "-e", "frame.number", "-e", "frame.len", "-e", "frame.time_epoch", "-e", "_ws.col.Protocol"]
        )?.map { $0.joined(separator: " ") }
    }

    /// What the comments must be, from `diagnose --json`: the first occurrence's sentence, then each folded repeat.
    static func expectedComments(_ findings: [[String: Any]]) -> [Int: [String]] {
        var out: [Int: [String]] = [:]
        for f in findings {
            let rule = f["rule"] as? String ?? "?", severity = f["severity"] as? String ?? "?"
            let frame = f["frame"] as? Int ?? 0
            let occurrences = f["occurrences"] as? [Int] ?? []
            for (k, at) in occurrences.enumerated() where at > 0 {
                let text =
                    k == 0
                    ? "\(rule) \(severity): \(f["message"] as? String ?? "")"
                    : "\(rule) \(severity): \(f["headline"] as? String ?? "") (\(k + 1) of \(occurrences.count), first at frame \(frame))"
                out[at, default: []].append(text)
            }
        }
        return out
    }

    @Test func everySampleAndCaptureIsAnnotated() {
        #expect(Self.inputs.count >= 21 + (TestEnvironment.sharedCaptures == nil ? 0 : 16))
    }

    /// Runs in parallel over the captures (one test case each).
    @Test(arguments: inputs) func findingsAreCommentsOnTheirFrames(_ input: String) throws {
        guard TestEnvironment.tsharkPath != nil else {
            print("AnnotateTests: skipped, tshark is not installed")
            return
        }
        let name = (input as NSString).lastPathComponent
        // tshark cannot read an Android bug report (btsnooz): nothing to compare with.
        // The input's decoding options for both (PPI: its DLT 147 as BTLE).
        let options = ClassicPcapHeaders.tsharkOptions(input)
        guard let before = Self.frames(input, options: options), !before.isEmpty else {
            print("AnnotateTests: \(name) skipped, tshark does not read it")
            return
        }
        let binary = try #require(TestEnvironment.blescopeBinary)
        let out = NSTemporaryDirectory() + "blescope-annotate-\(UUID().uuidString).pcapng"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try #require(TestEnvironment.execute(binary, ["convert", "--annotate", input, out]))
        #expect(r.status == 0, "\(name): \(r.stderr)")
        let diagnosis = try #require(Blescope.run(["diagnose", "--json", input]).jsonLines.first)
        let findings = try #require(diagnosis["findings"] as? [[String: Any]])

        // A file whose first record says it holds more bytes than the packet had (pcap: caplen <= len) is read by tshark
        // anyway; blescope reads nothing of it by design (the air5 btsnoop misconverted to pcap: its fields were read in
        // the wrong byte order, so tshark's 19 "records" are misframed bytes). Nothing to annotate; said on stderr.
        if Self.unreadableFromTheFirstRecord(convertStandardError: r.stderr) {
            #expect(Self.frames(out, options: options)?.isEmpty == true, "\(name): frames written from an unreadable file")
            print("AnnotateTests: \(name) skipped, blescope reads none of it (its first record's lengths contradict)")
            return
        }
        let after = try #require(Self.frames(out, options: options))
        // Times the pcapng cannot hold as tshark reads the input: before 1970 (pcapng timestamps are unsigned), and a
        // classic pcap's sub-second field out of range, which tshark overflows and blescope reads as the format
        // defines (ClassicPcapHeaders.outOfRangeFractions); their number, length and protocol are still compared.
        let timeMayDiffer = ClassicPcapHeaders.outOfRangeFractions(input) > 0
        #expect(after.count == before.count, "\(name): \(after.count) frames in the pcapng, \(before.count) in the input")
        // Only a PacketLogger record Wireshark shows as PKTLOG (a note, syslog, an ISO packet tshark 4.0 does not know
        // there) may change protocol: a note becomes a system note, ISO an H4 ISO packet, the others USER0.
        // A btsnoop H1 record (datalink 1001) is the HCI packet without its H4 type, which the record's flags give: under
        // LINKTYPE 201 that type is the packet's first byte, so each frame is one byte longer (the Roko AirTag log's
        // frame 1, an ACL packet: 19 bytes in the log, 02 and the same 19 bytes in the pcapng).
        let grown = Self.isBTSnoopH1(input) ? 1 : 0
        let firstDifference = zip(before, after).first { a, b in
            let (x, y) = (a.split(separator: " "), b.split(separator: " "))
            return x.count < 3 || y.count < 3 || x.first != y.first || Int(x[1]).map({ $0 + grown }) != Int(y[1])
                || (x.dropFirst(3) != y.dropFirst(3) && !(name.hasSuffix(".pklg") && x.last == "PKTLOG"))
        }
        #expect(
            firstDifference == nil, "\(name): frame (number len protocol) differs: \(firstDifference.map { "\($0) → \($1)" } ?? "")")
        // Times: the input's, but where the sniffer's own clock shows the file misdated a record by whole wraps of its
        // counter (AnnotateTests+SnifferClock.swift), and in milliseconds where the seconds field counts them
        // (AnnotateTests+MillisecondClock.swift).
        if Self.readAsMilliseconds(convertStandardError: r.stderr) {
            let broken = Self.offTheMillisecondClock(before: before, after: after)
            #expect(broken == nil, "\(name): a frame's time is off the millisecond clock: \(broken ?? "")")
        } else if !timeMayDiffer,
            zip(before, after).contains(where: {
                $0.split(separator: " ").dropFirst(2).first != $1.split(separator: " ").dropFirst(2).first
            })
        {
            let times = Self.unexplainedTimes(before: before, after: after, clock: Self.snifferClock(input, options: options))
            #expect(times.firstBroken == nil, "\(name): a frame's time differs off the sniffer's clock: \(times.firstBroken ?? "")")
            if times.moved > 0 { print("AnnotateTests: \(name): \(times.moved) frame(s) put back on the sniffer's clock") }
        }

        let expected = Self.expectedComments(findings)
        let got = try #require(Self.comments(out))
        #expect(
            got == expected, "\(name): comments differ: \(got.filter { expected[$0.key] != $0.value }.sorted { $0.key < $1.key }.prefix(3))"
        )

        // The file's comment: the tally line and one line per finding with its frame.
        let properties = TestEnvironment.run("/usr/bin/capinfos", ["-k", out]) ?? ""
        #expect(properties.contains("blescope diagnose \(name): "), "\(name): no summary in the section comment: \(properties.prefix(300))")
        for f in findings {
            let line = "frame \(f["frame"] as? Int ?? 0): \(f["rule"] as? String ?? "") \(f["severity"] as? String ?? "")"
            #expect(properties.contains(line), "\(name): '\(line)' is not in the section comment")
        }
    }

    /// A btsnoop file of datalink 1001 (HCI without the H4 type byte: the btsnoop header's last 4 bytes, big-endian).
    static func isBTSnoopH1(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let header = [UInt8](handle.readData(ofLength: 16))
        return header.count == 16 && header.starts(with: Array("btsnoop\0".utf8)) && header[12..<16].elementsEqual([0, 0, 0x03, 0xE9])
    }

    /// `convert` read nothing: the first record's header is impossible (included length over original length).
    static func unreadableFromTheFirstRecord(convertStandardError stderr: String) -> Bool {
        stderr.contains("record 1 at offset ") && stderr.contains("exceeds original length") && stderr.contains("reading stopped here")
    }

    /// A capture without findings gets no packet comment, and both cases occur among the Samples.
    @Test func aCaptureWithoutFindingsHasNoComment() throws {
        let clean = TestEnvironment.sample("eom-transfer.btsnoop")
        let diagnosis = try #require(Blescope.run(["diagnose", "--json", clean]).jsonLines.first)
        try #require((diagnosis["findings"] as? [Any])?.isEmpty == true, "eom-transfer has findings now: pick another clean Sample")
        guard TestEnvironment.tsharkPath != nil else { return }
        let out = NSTemporaryDirectory() + "blescope-annotate-\(UUID().uuidString).pcapng"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let binary = try #require(TestEnvironment.blescopeBinary)
        let r = try #require(TestEnvironment.execute(binary, ["convert", "--annotate", clean, out]))
        #expect(r.status == 0)
        #expect(Self.comments(out) == [:])
    }

    /// A known finding on a known frame: the supervision-timeout Sample's link is lost at frame 237 (tshark: reason 0x08).
    @Test func supervisionTimeoutIsOnFrame237() throws {
        guard TestEnvironment.tsharkPath != nil else { return }
        let out = NSTemporaryDirectory() + "blescope-annotate-\(UUID().uuidString).pcapng"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let input = TestEnvironment.sample("diag-supervision-timeout.btsnoop")
        let binary = try #require(TestEnvironment.blescopeBinary)
        _ = try #require(TestEnvironment.execute(binary, ["convert", "--annotate", input, out]))
        let reason = TestEnvironment.tsharkFields(["-r", out, "-Y", "frame.number == 237", "-T", "fields", "-e", "bthci_evt.reason"])
        #expect(reason?.first?.first == "0x08")
        let comments = try #require(Self.comments(out))
        #expect(comments[237]?.contains { $0.hasPrefix("DC-01 critical: ") } == true, "\(comments)")
    }

    @Test func annotateNeedsPcapngAndRefusesAnonymize() throws {
        let input = TestEnvironment.sample("bracelet.btsnoop")
        let pcap = try Blescope.run(["convert", "--annotate", input, "/tmp/x.pcap"])
        #expect(pcap.status == 2 && pcap.stderr.contains("--annotate writes pcapng"), "\(pcap.stderr)")
        let anonymized = try Blescope.run(["convert", "--annotate", "--anonymize", input, "/tmp/x.pcapng"])
        #expect(anonymized.status == 2 && anonymized.stderr.contains("real addresses"), "\(anonymized.stderr)")
    }
}
