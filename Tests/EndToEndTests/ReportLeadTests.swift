import BLETestSupport
import Foundation
import Testing

/// What a person reads first (issue 27): the report's summary leads with the diagnosis, cites the frames tshark's
/// truth holds, never reads the bottom of the RSSI scale as a measurement and never calls the busiest stream slowest.
@Suite struct ReportLeadTests {
    static func markdown(_ capture: String) throws -> String {
        let out = NSTemporaryDirectory() + "blescope-lead-\(UUID().uuidString).md"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try Blescope.run(["report", "--quiet", "--format", "md", "-o", out, capture])
        #expect(r.status == 0, "\(r.stderr)")
        // Items whole again: the report wraps its lines at 120 columns.
        return MarkdownText.unwrapped(try String(contentsOfFile: out, encoding: .utf8))
    }

    /// The summary's bullets (`- ✗ **DC-01**: …`), in order.
    static func summary(_ markdown: String) -> [String] {
        guard let start = markdown.range(of: "### Summary\n") else { return [] }
        return markdown[start.upperBound...].split(separator: "\n").drop { $0.isEmpty }.prefix { $0.hasPrefix("- ") }.map(String.init)
    }

    /// The pongbot log: tshark's truth (Tests/Truth/diagnosis) holds six links lost by supervision timeout (0x08) and
    /// five connections that failed to be established (0x3E, Android's completes followed by Disconnection Complete
    /// 0x3E). The summary opens with them, each frame cited once; no connection gets a link-quality bullet; the
    /// -127 dBm of links that never received a packet is never read as a measurement.
    @Test func theAndroidFieldLogOpensWithWhatWentWrong() throws {
        guard let dir = TestEnvironment.sharedCaptures else { return }
        let name = "android-btsnoop_pixel8-pongbot-14conn-prepwrite-indicate.log.last"
        guard FileManager.default.fileExists(atPath: dir + "/" + name) else { return }
        let truthData = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.repositoryRoot + "/Tests/Truth/diagnosis/\(name).jsonl"))
        let truth = try #require(try JSONSerialization.jsonObject(with: truthData) as? [String: Any])
        let events = try #require(truth["events"] as? [[String: Any]])
        let lost = Set(
            events.filter { $0["class"] as? String == "disconnection" && $0["reason"] as? Int == 0x08 }.compactMap { $0["frame"] as? Int })
        let failed = Set(events.filter { $0["class"] as? String == "establishment-failed" }.compactMap { $0["frame"] as? Int })
        #expect(lost.count == 6 && failed.count == 5)

        let text = try Self.markdown(dir + "/" + name)
        // The story opens it (the links and how each ended), then the first verdict is a failure.
        let story = Self.summary(text).filter { $0.contains("**story**") }
        #expect(story.first?.contains("6 lost by supervision timeout (0x08), 5 failed to be established (0x3E)") == true)
        let bullets = Self.summary(text).filter { !$0.contains("**story**") }
        #expect(bullets.first?.hasPrefix("- ✗ **") == true, "\(bullets.first ?? "no summary")")
        func frames(_ rule: String) -> Set<Int> {
            var all = Set<Int>()
            for b in bullets where b.hasPrefix("- ✗ **\(rule)**") {
                let cited = b.split(separator: "(frame ").first ?? Substring(b)
                let numbers = cited.split { !$0.isNumber }.compactMap { Int($0) }
                all.formUnion(numbers.filter { lost.contains($0) || failed.contains($0) })
            }
            return all
        }
        #expect(frames("DC-01") == lost)
        #expect(frames("CE-02") == failed)
        #expect(!bullets.contains { $0.contains("link quality") || $0.contains("limited by the radio") })
        // -127 dBm is said only as what it is (the quality reports' table shows the raw values).
        for line in text.split(separator: "\n") where line.contains("-127") && !line.hasPrefix("|") {
            #expect(line.contains("the bottom of the scale") && !line.contains("limited by the radio"), "\(line)")
        }
    }

    /// nordic-dfu: the DFU packet characteristic carries most bytes (counted here with tshark: Write Commands by
    /// handle); the summary calls that stream the busiest, and nothing "slowest".
    @Test func theDFUsPacketStreamIsTheBusiest() throws {
        let sample = TestEnvironment.sample("nordic-dfu.btsnoop")
        guard
            let fields = TestEnvironment.run(
                "/usr/bin/env", ["tshark", "-r", sample, "-Y", "btatt.opcode == 0x52", "-T", "fields", "-e", "btatt.handle"])
        else { return }
        var writes: [String: Int] = [:]
        for h in fields.split(separator: "\n") { writes[String(h), default: 0] += 1 }
        let busiest = try #require(writes.max { $0.value < $1.value }?.key)  // "0x0013"
        let text = try Self.markdown(sample)
        let bullets = Self.summary(text)
        let throughput = try #require(bullets.first { $0.contains("**throughput**") })
        #expect(throughput.contains("busiest stream #1 tx \(busiest) write-cmd"), "\(throughput)")
        #expect(!text.lowercased().contains("slowest"))
    }
}

/// `info` and `report` open with the diagnosis `diagnose` gives: the same findings (rule, severity, frame) on every
/// Sample, LE Audio included (info said "nothing wrong found" on the broadcast receiver, whose BIG sync loss
/// `diagnose` reports as LA-05: its pass did not hand the ISO streams to the rules).
@Suite struct DiagnosisEverywhereTests {
    static func findings(_ object: Any?) -> [String] {
        let list = (object as? [String: Any])?["findings"] as? [[String: Any]] ?? []
        return list.map { "\($0["rule"] ?? "?") \($0["severity"] ?? "?") \($0["frame"] ?? "?")" }
    }

    @Test(arguments: TestEnvironment.sampleNames)
    func infoSaysWhatDiagnoseSays(_ name: String) throws {
        let path = TestEnvironment.sample(name + ".btsnoop")
        guard FileManager.default.fileExists(atPath: path) else { return }
        let diagnose = try Blescope.run(["diagnose", "--json", "--quiet", path])
        let info = try Blescope.run(["info", "--json", "--quiet", path])
        let fromInfo = (info.json as? [String: Any])?["diagnosis"]
        #expect(Self.findings(fromInfo) == Self.findings(diagnose.json), "\(name)")
    }
}
