import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// `blescope diff` end to end: a capture against itself, and each Sample against its own conversions, say "no
/// differences" and exit 0; two real captures of the same glasses (Even G2, iOS PacketLogger) give differences that
/// tshark confirms; `--fail-on` exits 1 with one line per breach.
@Suite struct DiffTests {
    /// Runs `diff A B` for every pair at once; returns (pair, first line, status) of those that are not "no differences"
    /// with exit 0.
    static func notIdentical(_ pairs: [(String, String)]) throws -> [String] {
        let binary = try #require(TestEnvironment.blescopeBinary, "the blescope binary was not built")
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: pairs.count) { i in
            let (a, b) = pairs[i]
            let r = TestEnvironment.execute(binary, ["diff", "--quiet", a, b])
            let first = r?.stdout.split(separator: "\n").first.map(String.init) ?? "(did not run)"
            if r?.status != 0 || first != "no differences" {
                failures.withLock { $0.append("\(a) vs \(b): exit \(r?.status ?? -1): \(first) \(r?.stderr.prefix(200) ?? "")") }
            }
        }
        return failures.withLock { $0 }
    }

    @Test func everySampleAgainstItselfHasNoDifferences() throws {
        let samples = TestEnvironment.sampleNames.flatMap { n in ["btsnoop", "pcap", "pklg"].map { TestEnvironment.sample("\(n).\($0)") } }
        #expect(samples.count == 129)  // 43 Samples in three formats (`ls Samples/*.btsnoop`)
        let failures = try Self.notIdentical(samples.map { ($0, $0) })
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// Each Sample's btsnoop against its pcap and its PacketLogger conversion: the formats differ, the facts do not.
    @Test func everySampleAgainstItsConversionsHasNoDifferences() throws {
        var pairs: [(String, String)] = []
        for n in TestEnvironment.sampleNames {
            let snoop = TestEnvironment.sample("\(n).btsnoop")
            pairs.append((snoop, TestEnvironment.sample("\(n).pcap")))
            pairs.append((TestEnvironment.sample("\(n).pklg"), snoop))
        }
        let failures = try Self.notIdentical(pairs)
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// Every shared real capture, and every corpus capture when `BLESCOPE_CORPUS` is set.
    @Test func everyRealCaptureAgainstItselfHasNoDifferences() throws {
        let captures = TestEnvironment.realCaptures
        guard !captures.isEmpty else {
            print("DiffTests: no real captures (../shared/captures, BLESCOPE_CORPUS): skipped")
            return
        }
        if TestEnvironment.corpusDirectory == nil { print("DiffTests: BLESCOPE_CORPUS not set: the corpus is skipped") }
        let failures = try Self.notIdentical(captures.map { ($0, $0) })
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        print("DiffTests: \(captures.count) real captures against themselves: no differences")
    }

    /// Two directories: files paired by name (whatever their formats), one section each, the unpaired named.
    @Test func directoriesComparePairwiseByName() throws {
        let root = NSTemporaryDirectory() + "blescope-diff-dirs-\(UUID().uuidString)"
        let (a, b) = (root + "/a", root + "/b")
        for d in [a, b] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fm = FileManager.default
        try fm.copyItem(atPath: TestEnvironment.sample("bracelet.btsnoop"), toPath: a + "/bracelet.log")
        try fm.copyItem(atPath: TestEnvironment.sample("bracelet.pklg"), toPath: b + "/bracelet.log")
        try fm.copyItem(atPath: TestEnvironment.sample("diff-central-a.btsnoop"), toPath: a + "/central.log")
        try fm.copyItem(atPath: TestEnvironment.sample("diff-central-b.pcap"), toPath: b + "/central.log")
        try fm.copyItem(atPath: TestEnvironment.sample("eatt.btsnoop"), toPath: b + "/eatt.log")
        let r = try Blescope.run(["diff", "--wide", a, b])
        #expect(r.status == 0)
        // The lines that are neither indented nor a numbered difference: each comparison's answer, then the unpaired.
        let heads = r.stdout.split(separator: "\n").map(String.init).filter {
            !$0.isEmpty && !$0.hasPrefix(" ") && $0.range(of: #"^[0-9]+\. "#, options: .regularExpression) == nil
        }
        #expect(heads == ["no differences", "5 differences: 2 link, 3 behaviour", "only in B (no file of that name in A): eatt.log"])
    }

    /// LE Audio: the unicast Sample against the broadcast one. tshark (raw bytes, `bthci_evt.le_meta_subevent`): frame
    /// 153 of the unicast one is LE CIS Established (0x19) for CIS 0x0002, frame 93 of the broadcast one LE Create BIG
    /// Complete (0x1b) with BIS 0x0100 and 0x0101.
    @Test func audioStreamsOnlyOnOneSideAreNamedWithTheirFrames() throws {
        let c = try Self.comparison("le-audio-unicast.btsnoop", "le-audio-broadcast.pcap")
        let audio = try #require(c["differences"] as? [[String: Any]]).filter { $0["section"] as? String == "le-audio" }
        let seen = audio.map {
            "\($0["kind"]!) \($0["a"] as? String ?? "-") \($0["b"] as? String ?? "-") \($0["frame_a"] as? Int ?? 0) \($0["frame_b"] as? Int ?? 0)"
        }
        #expect(
            Set(seen) == [
                "stream-only-in-a CIS 0x0002 - 153 0", "stream-only-in-b - BIS 0x0100 0 93", "stream-only-in-b - BIS 0x0101 0 93",
            ])
    }

    /// `check --expect` with `baseline:`: the firmware 1.5.0 Sample against 1.4.2 as golden fails with each breach and
    /// both frames, in the line and in the JUnit case; the golden run against its own PacketLogger conversion passes.
    @Test func baselineExpectationNamesEachBreachAndBothFrames() throws {
        let directory = NSTemporaryDirectory() + "blescope-baseline-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: TestEnvironment.sample("diff-fw1.btsnoop"), toPath: directory + "/golden.btsnoop")
        let expect = directory + "/ci.yaml", junit = directory + "/junit.xml"
        try "expect:\n  - baseline: {capture: golden.btsnoop, fail_on: \"rate-drop=10%,gatt-changed\"}\n".write(
            toFile: expect, atomically: true, encoding: .utf8)
        let r = try Blescope.run([
            "check", "--wide", "--expect", expect, "--junit", junit, "Samples/diff-fw2.btsnoop", "Samples/diff-fw1.pklg",
        ])
        #expect(r.status == 1, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let fail = try #require(lines.first { $0.hasPrefix("FAIL") })
        #expect(fail.hasPrefix("FAIL  Samples/diff-fw2.btsnoop: no regression against golden.btsnoop (rate-drop=10%, gatt-changed): "))
        // The write commands of the update: 268.4 → 137.4 kbps (the truth file: 268,443.6 and 137,390.9 bit/s).
        #expect(
            fail.contains(
                "rate-drop=10%: #1↔#1 stream 7E5A0003-6F1C-4B8A-9D2E-3C4B5A6F7081 (0x001d) tx write-cmd rate: 268.4 kbps → 137.4 kbps (-49 %) (A #115, B #121)"
            ))
        #expect(
            fail.contains(
                "gatt-changed: characteristic 5A1E0004-8C2D-4F6B-A3E1-9B7C0D2E4F60 in service 5A1E0001-8C2D-4F6B-A3E1-9B7C0D2E4F60: only in B (0x0019) (A -, B #67)"
            ))
        #expect(
            lines.contains {
                $0.hasPrefix("PASS  Samples/diff-fw1.pklg: no regression against golden.btsnoop")
                    && $0.hasSuffix("no differences, no threshold crossed")
            })
        #expect(lines.last == "1 passed, 1 failed")
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(
            xml.contains(
                "name=\"no regression against golden.btsnoop (rate-drop=10%, gatt-changed)\"><failure message=\"rate-drop=10%: #1↔#1 stream"
            ))
        #expect(xml.contains("(-49 %) (A #115, B #121); gatt-changed:"))
        // A golden capture that is not there: exit 2, named.
        try "expect:\n  - baseline: missing.btsnoop\n".write(toFile: expect, atomically: true, encoding: .utf8)
        let missing = try Blescope.run(["check", "--expect", expect, "Samples/diff-fw2.btsnoop"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("baseline missing.btsnoop"))
    }

    /// `diff --json` of the bumble Samples made for it, held to the `diff` block of the second one's truth file (every
    /// entry there recomputed from tshark by `Samples/generate/verify_diff.py`), A and B in every mix of formats.
    @Test(arguments: ["btsnoop", "pcap", "pklg"])
    func firmwareSamplesHoldToTheirTruthFile(_ formatB: String) throws {
        let truth = try #require(try Blescope.truth("diff-fw2")["diff"] as? [String: Any])
        let c = try Self.comparison("diff-fw1.btsnoop", "diff-fw2.\(formatB)")
        let diffs = try #require(c["differences"] as? [[String: Any]])
        func find(_ kind: String, _ subject: String? = nil) -> [String: Any]? {
            diffs.first { d in d["kind"] as? String == kind && subject.map { (d["subject"] as? String)?.contains($0) == true } ?? true }
        }
        #expect((c["connections"] as? [[String: Any]])?.first?["peer"] as? String == truth["peer"] as? String)
        for g in try #require(truth["gatt"] as? [[String: Any]]) {
            let uuid = try #require(g["uuid"] as? String), service = try #require(g["service_uuid"] as? String)
            if g["change"] as? String == "added" {
                let d = try #require(find("characteristic-added", uuid), "\(uuid) added")
                #expect(d["subject"] as? String == "characteristic \(uuid) in service \(service)")
                #expect(d["b"] as? String == hex(UInt16(try #require(g["value_handle_b"] as? Int)), width: 4).lowercased())
                #expect(d["frame_b"] as? Int == g["frame_b"] as? Int)
            } else {
                let d = try #require(find("properties-changed", uuid), "\(uuid) properties")
                #expect(d["a"] as? String == (g["a"] as? [String])?.joined(separator: ","))
                #expect(d["b"] as? String == (g["b"] as? [String])?.joined(separator: ","))
                #expect(d["frame_a"] as? Int == g["frame_a"] as? Int && d["frame_b"] as? Int == g["frame_b"] as? Int)
            }
        }
        // The moved characteristics (the service holding them and a CCCD moved with them).
        let moved = try #require(truth["moved"] as? [[String: Any]])
        #expect((find("handles-moved")?["subject"] as? String)?.contains("\(moved.count) characteristics") == true)
        let link = try #require(truth["link"] as? [[String: Any]])
        let interval = try #require(link.first { $0["field"] as? String == "interval_ms" })
        let d = try #require(find("interval"))
        #expect(d["a"] as? String == String(format: "%.2f", try #require(interval["a"] as? Double)))
        #expect(d["b"] as? String == String(format: "%.2f", try #require(interval["b"] as? Double)))
        #expect(d["frame_a"] as? Int == interval["frame_a"] as? Int && d["frame_b"] as? Int == interval["frame_b"] as? Int)
        let request = try #require(link.first { $0["field"] as? String == "parameter_request" })
        let asked = try #require(request["b"] as? [String: Any])
        let r = try #require(find("parameter-requests"))
        #expect(r["a"] is NSNull && r["frame_b"] as? Int == request["frame_b"] as? Int)
        let ms = { (v: Any?) in (v as? Double).map { String(format: "%g", $0) } ?? "?" }
        #expect(
            r["b"] as? String
                == "peer: interval \(ms(asked["interval_min_ms"]))–\(ms(asked["interval_max_ms"])) ms, latency \(asked["latency"]!), timeout \(asked["supervision_timeout_ms"]!) ms"
        )
        let stream = try #require((truth["throughput"] as? [[String: Any]])?.first)
        let rate = try #require(find("rate", "\(stream["uuid"]!)"))
        let drop = try #require(stream["rate_drop_percent"] as? Double)
        #expect((rate["change"] as? Double).map { abs($0 * 100 + drop) < 0.1 } == true, "\(rate)")
        #expect(rate["frame_a"] as? Int == stream["first_frame_a"] as? Int && rate["frame_b"] as? Int == stream["first_frame_b"] as? Int)
        #expect(rate["impact"] as? String == "major")
        let ppe = try #require(find("packets-per-event", "\(stream["uuid"]!)"))
        #expect((ppe["a"] as? String).flatMap(Double.init).map { Int($0.rounded()) } == stream["packets_per_event_a"] as? Int)
        #expect((ppe["b"] as? String).flatMap(Double.init).map { Int($0.rounded()) } == stream["packets_per_event_b"] as? Int)
        // The update: the same image, half the rate.
        let ota = try #require(truth["ota"] as? [String: Any])
        let (oa, ob) = (try #require(ota["a"] as? [String: Any]), try #require(ota["b"] as? [String: Any]))
        let otaRate = try #require(find("rate", "vendor update 1"))
        #expect(otaRate["a"] as? String == "266.2 kbps" && String(format: "%.1f", (oa["image_rate_bps"] as? Double ?? 0) / 1000) == "266.2")
        #expect(otaRate["frame_a"] as? Int == oa["start_frame"] as? Int && otaRate["frame_b"] as? Int == ob["start_frame"] as? Int)
        #expect((otaRate["b"] as? String)?.hasPrefix(String(format: "%.1f kbps", (ob["image_rate_bps"] as? Double ?? 0) / 1000)) == true)
        // What the truth says is unchanged is not a difference.
        for kind in [
            "mtu", "data-length", "latency", "timeout", "phy-tx", "phy-rx", "pairing", "image-sha256", "result", "first-divergence",
        ] {
            #expect(find(kind) == nil, "\(kind) unchanged")
        }
        #expect(diffs.filter { $0["section"] as? String == "gatt" }.count == 3)
    }

    @Test(arguments: ["btsnoop", "pcap", "pklg"])
    func centralSamplesHoldToTheirTruthFile(_ formatB: String) throws {
        let truth = try #require(try Blescope.truth("diff-central-b")["diff"] as? [String: Any])
        let c = try Self.comparison("diff-central-a.pklg", "diff-central-b.\(formatB)")
        let diffs = try #require(c["differences"] as? [[String: Any]])
        #expect((truth["gatt"] as? [Any])?.isEmpty == true && !diffs.contains { $0["section"] as? String == "gatt" })
        let mtu = try #require((truth["link"] as? [[String: Any]])?.first)
        let d = try #require(diffs.first { $0["kind"] as? String == "mtu" })
        #expect(d["a"] as? String == "\(mtu["a"]!)" && d["b"] as? String == "\(mtu["b"]!)")
        #expect(d["frame_a"] as? Int == mtu["frame_a"] as? Int && d["frame_b"] as? Int == mtu["frame_b"] as? Int)
        // Who asked: the central both times, 247 then 185, the peripheral answering 247, at the requests' frames.
        let exchange = try #require(diffs.first { $0["kind"] as? String == "mtu-exchange" })
        let asked = { (client: Any?, server: Any?) in "\(mtu["requested_by"]!) asked \(client!), peripheral answered \(server!)" }
        #expect(exchange["a"] as? String == asked(mtu["client_mtu_a"], mtu["server_mtu_a"]))
        #expect(exchange["b"] as? String == asked(mtu["client_mtu_b"], mtu["server_mtu_b"]))
        #expect(
            exchange["frame_a"] as? Int == mtu["request_frame_a"] as? Int && exchange["frame_b"] as? Int == mtu["request_frame_b"] as? Int)
        // The first step where the centrals part: B writes the Command (5A1E0003) before discovery ends.
        let behaviour = try #require(truth["behaviour"] as? [String: Any])
        let step = try #require(behaviour["first_divergence_step"] as? Int)
        let first = try #require(diffs.first { $0["kind"] as? String == "first-divergence" })
        #expect((first["subject"] as? String)?.hasSuffix("procedures part at step \(step)") == true)
        let written = try #require((behaviour["b"] as? String)?.replacingOccurrences(of: "write ", with: "first write-req "))
        #expect(first["b"] as? String == written && first["frame_b"] as? Int == behaviour["frame_b"] as? Int)
        // A's step there is its descriptor discovery: the Find Information Request at frame 77.
        #expect(first["a"] as? String == behaviour["a"] as? String && first["frame_a"] as? Int == behaviour["frame_a"] as? Int)
        for kind in ["interval", "latency", "timeout", "data-length", "phy-tx", "phy-rx", "pairing", "rate"] {
            #expect(!diffs.contains { $0["kind"] as? String == kind }, "\(kind) unchanged")
        }
    }

    /// The one comparison of `diff --json --codec Samples/codecs A B` (Samples).
    static func comparison(_ a: String, _ b: String) throws -> [String: Any] {
        let r = try Blescope.run(["diff", "--json", "--quiet", "--codec", TestEnvironment.sample("codecs"), "Samples/" + a, "Samples/" + b])
        #expect(r.status == 0, "\(r.stderr)")
        let root = try #require(r.json as? [String: Any])
        return try #require((root["comparisons"] as? [[String: Any]])?.first)
    }

    /// Two public captures of the same Even G2 glasses through iOS (PacketLogger): the shared
    /// `discovery-indicate` (A) and the corpus `app-control` (B). tshark's fields: `bthci_acl.chandle`, `btatt.opcode`,
    /// `btatt.handle`, `btatt.server_rx_mtu`, `btl2cap.length`, `frame.time_epoch`.
    @Test func evenG2GlassesTwoSessionsAgreeWithTshark() throws {
        guard let shared = TestEnvironment.sharedCaptures, let corpus = TestEnvironment.corpusDirectory else {
            print("DiffTests: the Even G2 pair needs ../shared/captures and BLESCOPE_CORPUS: skipped")
            return
        }
        let a = shared + "/pklg-ios-le_even-g2-glasses-discovery-indicate.pklg"
        let b = corpus + "/pklg-ios-le_even-g2-glasses-app-control.pklg"
        guard FileManager.default.fileExists(atPath: a), FileManager.default.fileExists(atPath: b) else {
            print("DiffTests: an Even G2 capture is missing: skipped")
            return
        }
        let r = try Blescope.run(["diff", "--json", a, b])
        #expect(r.status == 0)
        let root = try #require(r.json as? [String: Any])
        let c = try #require((root["comparisons"] as? [[String: Any]])?.first)
        let pairs = try #require(c["connections"] as? [[String: Any]]).map { "\($0["a"]!)↔\($0["b"]!) \($0["matched_by"]!)" }
        // Neither log names the arms' addresses: A #3 (handle 0x0045) is B #3 (0x005a), both the only ones with
        // notifications on 0x0864; A #4 (0x005f) is B #2 (0x004e), write commands on 0x0842 and notifications on 0x0844.
        #expect(pairs.contains("3↔3 handles used") && pairs.contains("4↔2 handles used"))
        let diffs = try #require(c["differences"] as? [[String: Any]])
        func find(_ kind: String, _ subject: String) -> [String: Any]? {
            diffs.first { $0["kind"] as? String == kind && ($0["subject"] as? String)?.contains(subject) == true }
        }
        // ATT_MTU: A's Exchange MTU Response at frame 233 (server 247); B has no exchange, the largest ATT PDU on
        // 0x005a is 208 bytes (frame 147, the first of that size).
        // Who asked: in A the glasses (the peripheral) sent the Exchange MTU Request at frame 216 (Client Rx MTU 247,
        // PacketLogger type 0x03: received), the iPhone answered 247 at 233; B holds no exchange.
        let exchange = try #require(find("mtu-exchange", "#3↔#3"))
        #expect(exchange["a"] as? String == "peripheral asked 247, central answered 247" && exchange["frame_a"] as? Int == 216)
        #expect(exchange["b"] is NSNull)
        let mtu = try #require(find("mtu", "#3↔#3"))
        #expect(mtu["a"] as? String == "247" && mtu["frame_a"] as? Int == 233)
        #expect(mtu["b"] as? String == "208 (inferred)" && mtu["frame_b"] as? Int == 147)
        // Write commands to 0x0842: A #4 67 carrying 7,550 bytes over 24.577 s (2.46 kbps), B #2 93 carrying 17,410
        // bytes over 16.858 s (8.26 kbps): +236 %.
        let rate = try #require(find("rate", "#4↔#2 stream 00002760-08C2-11E1-9073-0E8AC72E5401 (0x0842) tx write-cmd"))
        #expect((rate["change"] as? Double).map { abs($0 - 2.362) < 0.01 } == true, "\(rate)")
        #expect(rate["frame_a"] as? Int == 465 && rate["frame_b"] as? Int == 84)
        // Notifications on 0x0864: 117 (23,985 bytes, 5.821 s: 32.96 kbps) against 303 (62,115 bytes, 15.152 s:
        // 32.80 kbps), under 1 %: no rate difference.
        #expect(find("rate", "(0x0864) rx notify") == nil)
        // Encryption on A #3 only: frame 224 is HCI event 0x59 (Encryption Change v2) for 0x0045, enabled.
        let encryption = try #require(find("encryption-attempts", "#3↔#3"))
        #expect(encryption["a"] as? String == "on" && encryption["frame_a"] as? Int == 224 && encryption["b"] is NSNull)
        // A's connection #2 (handle 0x005a, 10 ATT PDUs) has no partner in B.
        let unpaired = try #require(find("connection-only-in-a", "#2"))
        #expect(unpaired["a"] as? String == "10 ATT PDUs" && unpaired["frame_a"] as? Int == 186)
        try checkWithTshark(a, b)
    }

    /// The figures above, from tshark.
    func checkWithTshark(_ a: String, _ b: String) throws {
        guard TestEnvironment.tsharkPath != nil else {
            print("DiffTests: tshark missing: the Even G2 figures are not rechecked")
            return
        }
        func rows(_ file: String, _ filter: String, _ fields: [String]) throws -> [[String]] {
            try #require(TestEnvironment.tsharkFields(["-r", file, "-Y", filter, "-T", "fields"] + fields.flatMap { ["-e", $0] }))
        }
        let exchange = try rows(a, "btatt.opcode==0x03", ["frame.number", "btatt.server_rx_mtu"])
        #expect(exchange == [["233", "247"]])
        let request = try rows(a, "btatt.opcode==0x02", ["frame.number", "packetlogger.type", "btatt.client_rx_mtu"])
        #expect(request == [["216", "0x03", "247"]])
        #expect(try rows(b, "btatt.opcode==0x02 || btatt.opcode==0x03", ["frame.number"]).isEmpty)
        let largest = try rows(b, "btl2cap.cid==4 && bthci_acl.chandle==0x005a", ["frame.number", "btl2cap.length"])
        #expect(largest.compactMap { Int($0[1]) }.max() == 208)
        #expect(largest.first { $0[1] == "208" }?[0] == "147")
        func kbps(_ file: String, _ filter: String) throws -> (Int, Double) {
            let r = try rows(file, filter, ["frame.time_epoch", "btl2cap.length"])
            let times = r.compactMap { Double($0[0]) }, bytes = r.compactMap { Int($0[1]) }.reduce(0) { $0 + $1 - 3 }
            return (r.count, Double(bytes) * 8 / (times.max()! - times.min()!) / 1000)
        }
        let wa = try kbps(a, "bthci_acl.chandle==0x005f && btatt.opcode==0x52 && btatt.handle==0x0842")
        let wb = try kbps(b, "bthci_acl.chandle==0x004e && btatt.opcode==0x52 && btatt.handle==0x0842")
        #expect(wa.0 == 67 && wb.0 == 93)
        #expect(abs((wb.1 - wa.1) / wa.1 - 2.362) < 0.01)
        let na = try kbps(a, "bthci_acl.chandle==0x0045 && btatt.opcode==0x1b && btatt.handle==0x0864")
        let nb = try kbps(b, "bthci_acl.chandle==0x005a && btatt.opcode==0x1b && btatt.handle==0x0864")
        #expect(na.0 == 117 && nb.0 == 303)
        #expect(abs(nb.1 - na.1) / na.1 < 0.01)
        #expect(try rows(a, "btatt && bthci_acl.chandle==0x005a", ["frame.number"]).count == 10)
    }

    /// A built firmware N and N+1 through the binary: the three differences in text, and `--fail-on gatt-changed`
    /// exits 1 with one FAIL line per breach (two GATT changes) while `mtu-lower` passes.
    @Test func theGateExitsOneWithOneLinePerBreach() throws {
        let directory = NSTemporaryDirectory() + "blescope-diff-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let a = directory + "/n.btsnoop", b = directory + "/n1.btsnoop"
        try Data(DiffFixture.capture(interval: 24, properties: 0x10, added: false).btsnoopBytes()).write(to: URL(fileURLWithPath: a))
        try Data(DiffFixture.capture(interval: 48, properties: 0x12, added: true).btsnoopBytes()).write(to: URL(fileURLWithPath: b))
        let text = try Blescope.run(["diff", a, b])
        #expect(text.status == 0)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "3 differences: 2 gatt, 1 link")
        #expect(lines.allSatisfy { $0.count <= 100 })
        let wide = try Blescope.run(["diff", "--wide", a, b]).stdout.split(separator: "\n").map(String.init)
        #expect(wide.contains { $0.contains("characteristic 0x2A38 Body Sensor Location in service 0x180D: only in B (0x0017)") })
        #expect(wide.contains { $0.contains("#1↔#1 interval (ms): 30.00 → 60.00  [A #1, B #1]") })
        let gate = try Blescope.run(["diff", "--fail-on", "gatt-changed,mtu-lower", a, b])
        #expect(gate.status == 1)
        let fails = gate.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL ") }
        #expect(fails.count == 2)
        #expect(fails.allSatisfy { $0.hasPrefix("FAIL gatt-changed: ") })
        let pass = try Blescope.run(["diff", "--fail-on", "mtu-lower,new-error", a, b])
        #expect(pass.status == 0)
        #expect(pass.stdout.contains("--fail-on: no breach"))
        let bad = try Blescope.run(["diff", "--fail-on", "slower", a, b])
        #expect(bad.status == 2)
        // Markdown leads with the same answer; JSON carries the breaches with both frames.
        let md = try Blescope.run(["diff", "--format", "md", a, b])
        #expect(md.stdout.hasPrefix("## blescope diff: 3 differences: 2 gatt, 1 link\n"))
        let json = try Blescope.run(["diff", "--json", "--fail-on", "gatt-changed", a, b])
        let root = try #require(json.json as? [String: Any])
        let comparison = try #require((root["comparisons"] as? [[String: Any]])?.first)
        let breaches = try #require(comparison["breaches"] as? [[String: Any]])
        #expect(breaches.map { $0["frame_b"] as? Int } == [7, 7])
    }
}

/// The built captures of `theGateExitsOneWithOneLinePerBreach` (the engine's tests build the same in BLEReportsTests).
enum DiffFixture {
    static func capture(interval: UInt16, properties: UInt8, added: Bool) -> CaptureBuilder {
        let notFound = { (op: ATTOpcode, h: UInt16) in
            ATTPDU.errorResponse(ATTErrorResponse(requestOpcode: op, handle: h, error: .attributeNotFound))
        }
        var declarations = [
            ATTHandleValue(handle: 0x0011, value: [properties, 0x12, 0x00, 0x37, 0x2A]),
            ATTHandleValue(handle: 0x0014, value: [0x08, 0x15, 0x00, 0x39, 0x2A]),
        ]
        if added { declarations.append(ATTHandleValue(handle: 0x0016, value: [0x02, 0x17, 0x00, 0x38, 0x2A])) }
        let services = ATTTypeRequest(range: ATTHandleRange(start: 0x0001, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))
        let more = ATTTypeRequest(range: ATTHandleRange(start: 0x0031, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))
        let chars = ATTTypeRequest(range: ATTHandleRange(start: 0x0010, end: 0x0030), type: BluetoothUUID(uuid16: 0x2803))
        let moreChars = ATTTypeRequest(range: ATTHandleRange(start: 0x0029, end: 0x0030), type: BluetoothUUID(uuid16: 0x2803))
        return CaptureBuilder().connect(handle: 0x40, peer: BDAddress(0xC0_11_22_33_44_55), interval: interval)
            .att(.readByGroupTypeRequest(services), handle: 0x40, .tx)
            .att(.readByGroupTypeResponse([ATTGroupValue(start: 0x0010, end: 0x0030, value: [0x0D, 0x18])]), handle: 0x40, .rx)
            .att(.readByGroupTypeRequest(more), handle: 0x40, .tx)
            .att(notFound(.readByGroupTypeRequest, 0x0031), handle: 0x40, .rx)
            .att(.readByTypeRequest(chars), handle: 0x40, .tx)
            .att(.readByTypeResponse(declarations), handle: 0x40, .rx)
            .att(.readByTypeRequest(moreChars), handle: 0x40, .tx)
            .att(notFound(.readByTypeRequest, 0x0029), handle: 0x40, .rx)
            .completed(handle: 0x40, count: 8)
    }
}
