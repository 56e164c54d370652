import BLECore
import BLETestSupport
import Foundation
import Testing

/// Text fits 100 columns unless `--wide`; every rate is in one unit (kbps, or `--units`), each number with it.
@Suite struct WidthAndUnitsTests {
    static var samples: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: TestEnvironment.samplesDirectory)) ?? []
        return names.filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") || $0.hasSuffix(".pklg") }.sorted()
            .map { "Samples/" + $0 }
    }

    static let textCommands: [[String]] = [
        ["info"], ["timeline", "--codec", "Samples/codecs"], ["gatt"], ["transfers", "--codec", "Samples/codecs"], ["adverts"],
        ["ota", "--codec", "Samples/codecs"], ["throughput"], ["check", "--expect", "Samples/expect/nordic-dfu-ok.yaml"], ["iso"],
    ]

    /// Every line of every text output of every Sample is at most 100 characters. One format each: the three formats
    /// of a Sample decode to the same events (SampleTruthTests), and fitting is a matter of the text alone.
    @Test(arguments: textCommands)
    func everyLineOfEverySampleFits100Columns(_ command: [String]) throws {
        let binary = try #require(TestEnvironment.blescopeBinary)
        let samples = Self.samples.filter { $0.hasSuffix(".btsnoop") }
        #expect(samples.count >= TestEnvironment.sampleNames.count)
        let results = Locked([String: String]())
        DispatchQueue.concurrentPerform(iterations: samples.count) { i in
            let out = TestEnvironment.execute(binary, command + ["--quiet", samples[i]])?.stdout ?? ""
            results.withLock { $0[samples[i]] = out }
        }
        for (sample, out) in results.withLock({ $0 }) {
            #expect(!out.isEmpty, "\(command) \(sample): no output")
            for line in out.split(separator: "\n") where line.count > 100 {
                Issue.record("\(command) \(sample): \(line.count) columns: \(line)")
            }
        }
    }

    /// `--wide` leaves lines whole; fitted, the same text is there once continuation lines are joined back (a hex value
    /// longer than a line wraps in pieces: compared without the spaces, nothing is cut out).
    @Test func wideKeepsLinesWholeAndFittingLosesNoWord() throws {
        let args = ["timeline", "--codec", "Samples/codecs", "--quiet", "Samples/bracelet.btsnoop"]
        let wide = try Blescope.run(args + ["--wide"]).stdout.split(separator: "\n")
        let fitted = try Blescope.run(args).stdout
        #expect(wide.contains { $0.count > 100 })
        let joined = GoldenTruthTests.unwrapped(fitted).split(separator: "\n")
        #expect(joined.count == wide.count)
        for (a, b) in zip(joined, wide) {
            #expect(a.filter { $0 != " " } == b.filter { $0 != " " }, "\(a)\n\(b)")
        }
    }

    /// The JSON of `ota` (bits per second) against its text and the gate's message: one unit, both numbers in it.
    @Test func minRateComparesAndPrintsInOneUnit() throws {
        let json = try #require(try Blescope.run(["ota", "--json", "Samples/nordic-dfu.btsnoop"]).json as? [String: Any])
        let session = try #require((json["sessions"] as? [[String: Any]])?.first)
        let bps = try #require(session["throughput_bps"] as? Double)
        // 30 kB/s = 30 × 1,000 bytes × 8 = 240,000 bit/s.
        let kbps = try Blescope.run(["ota", "--min-rate", "30kB/s", "Samples/nordic-dfu.btsnoop"])
        #expect(kbps.status == 1)
        #expect(kbps.stderr.contains(String(format: "%.1f kbps is below 240.0 kbps (--min-rate 30kB/s)", bps / 1000)), "\(kbps.stderr)")
        #expect(kbps.stdout.contains(String(format: "throughput %.1f kbps", bps / 1000)))
        let bytes = try Blescope.run(["ota", "--units", "kB/s", "--min-rate", "30kB/s", "Samples/nordic-dfu.btsnoop"])
        #expect(bytes.stderr.contains(String(format: "%.1f kB/s is below 30.0 kB/s (--min-rate 30kB/s)", bps / 8000)), "\(bytes.stderr)")
        #expect(bytes.stdout.contains(String(format: "throughput %.1f kB/s", bps / 8000)))
        #expect(!bytes.stdout.contains("kbps"))
    }

    /// Each stream's rate and its windows' median / p95 / max, in the table, are the JSON's figures in the unit asked
    /// (kbps by default), never two units on one line.
    @Test(arguments: [("kbps", 1000.0), ("bps", 1.0), ("kB/s", 8000.0)])
    func throughputTableIsInOneUnit(_ unit: String, _ divisor: Double) throws {
        let json = try #require(try Blescope.run(["throughput", "--json", "Samples/nordic-dfu.btsnoop"]).json as? [String: Any])
        let streams = try #require(json["streams"] as? [[String: Any]])
        let text = try Blescope.run(["throughput", "--units", unit, "Samples/nordic-dfu.btsnoop"]).stdout
        func shown(_ bps: Double) -> String { Self.shown(bps / divisor) }
        for s in streams {
            guard let rate = s["rate_bps"] as? Double, let window = s["window"] as? [String: Any] else { continue }
            let handle = String(format: "0x%04x", s["handle"] as! Int)
            let row = try #require(
                text.split(separator: "\n").first { $0.hasPrefix("\(s["dir"] as! String)  \(handle) \(s["kind"] as! String) ") },
                "\(handle)")
            #expect(row.contains(shown(rate) + " " + unit), "\(row)")
            let cell = [window["median_bps"], window["p95_bps"], window["max_bps"]].map { shown($0 as! Double) }.joined(separator: " / ")
            #expect(row.contains(cell + " " + unit), "\(row) lacks \(cell) \(unit)")
            for other in ["bps", "kbps", "Mbps", "kB/s", "B/s"] where other != unit {
                #expect(!row.contains(" " + other), "\(row)")
            }
        }
    }

    /// `v` as a rate's number is printed: thousands grouped with commas (by hand, no locale), one decimal from 1, two
    /// significant digits below.
    static func shown(_ v: Double) -> String {
        if v >= 999.95 {
            let digits = Array(String(Int(v.rounded())))
            return String(digits.enumerated().flatMap { i, d in i > 0 && (digits.count - i) % 3 == 0 ? [",", d] : [d] })
        }
        return v >= 0.995 ? String(format: "%.1f", v) : String(format: "%.2g", v)
    }

    /// Each ISO stream direction's bitrate and configured bitrate, in `iso` and in `throughput`'s ISO part, are the
    /// JSON's figures in the unit asked; no other unit on those lines.
    @Test(arguments: [("kbps", 1000.0), ("B/s", 8.0), ("Mbps", 1e6)])
    func isoBitratesAreInOneUnit(_ unit: String, _ divisor: Double) throws {
        let sample = "Samples/le-audio-unicast.btsnoop"
        let json = try #require(try Blescope.run(["iso", "--json", sample]).json as? [String: Any])
        let health = try #require(json["health"] as? [[String: Any]])
        #expect(health.count == 2)
        for command in ["iso", "throughput"] {
            let text = try Blescope.run([command, "--units", unit, sample]).stdout
            let lines = text.split(separator: "\n").filter { $0.contains("bitrate ") }
            #expect(lines.count == health.count, "\(command): \(text)")
            for (line, h) in zip(lines, health) {
                let rate = try #require(h["bitrate_bps"] as? Double), configured = try #require(h["configured_bitrate_bps"] as? Double)
                #expect(line.contains("bitrate " + Self.shown(rate / divisor) + " " + unit), "\(line)")
                #expect(line.contains("(configured " + Self.shown(configured / divisor) + " " + unit + ")"), "\(line)")
                for other in ["bps", "kbps", "Mbps", "kB/s", "B/s"] where other != unit { #expect(!line.contains(" " + other), "\(line)") }
            }
        }
    }

    /// `--from` counts from the first record, and so does the time column under it: the first line shown has the time
    /// that frame has in the whole timeline, not +0.
    @Test(arguments: ["1.5", "#74"])
    func filteredTimesCountFromTheFirstRecord(_ from: String) throws {
        let all = try Blescope.run(["timeline", "--wide", "Samples/bracelet.btsnoop"]).stdout.split(separator: "\n").dropFirst()
        let filtered = try Blescope.run(["timeline", "--wide", "--from", from, "Samples/bracelet.btsnoop"]).stdout
        let first = try #require(filtered.split(separator: "\n").dropFirst().first)
        let fields = first.split(separator: " ")
        let frame = String(fields[0]), time = String(fields[1])
        let same = try #require(all.first { $0.split(separator: " ").first.map(String.init) == frame })
        #expect(same.split(separator: " ")[1] == time)
        #expect(time != "+0.000000")
        if from == "1.5" { #expect(Double(time.dropFirst())! >= 1.5) } else { #expect(frame == "74") }
    }

    @Test func infoSaysFindingsOnceAndNamesControllersByIndex() throws {
        for sample in Self.samples {
            let text = try Blescope.run(["info", sample]).stdout
            let findingsRow = try #require(text.split(separator: "\n").first { $0.hasPrefix("Reader findings:") })
            let listed = text.split(separator: "\n").filter { $0.hasPrefix("  warning:") || $0.hasPrefix("  error:") }
            if findingsRow.hasSuffix("none") { #expect(listed.isEmpty, "\(sample)") }
            let controllers = try #require(text.split(separator: "\n").first { $0.hasPrefix("Controllers:") })
            #expect(controllers.hasSuffix("—") || controllers.contains("index "), "\(controllers)")
        }
    }
}
