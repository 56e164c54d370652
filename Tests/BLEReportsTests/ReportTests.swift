import BLEAnalysis
import BLECodecs
import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLEReports

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `Samples/` of this repository (found from this file's path).
let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Samples")

func samplePath(_ name: String) -> String { samples.appendingPathComponent(name).path }

let sampleFiles: [String] = {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: samples.path)) ?? []
    return names.filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") || $0.hasSuffix(".pklg") }.sorted().map(samplePath)
}()

let dfuSample = samplePath("nordic-dfu.btsnoop")
let hasDFUSample = FileManager.default.fileExists(atPath: dfuSample)

let chromium: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

/// Every `src="…"` / `href="…"` value in a page.
func linkTargets(_ html: String) -> [String] {
    var out: [String] = []
    for attribute in ["src=\"", "href=\"", "src='", "href='"] {
        var rest = Substring(html)
        while let r = rest.range(of: attribute) {
            let after = rest[r.upperBound...]
            let quote: Character = attribute.last!
            guard let end = after.firstIndex(of: quote) else { break }
            out.append(String(after[..<end]))
            rest = after[end...]
        }
    }
    return out
}

@Suite struct ReportTests {
    @Test(.enabled(if: hasDFUSample))
    func htmlIsSelfContainedAndSmall() throws {
        for path in sampleFiles {
            let html = HTMLReport.render(Report.build(paths: [path]))
            #expect(html.utf8.count < 2_000_000, "\(path)")
            let external = linkTargets(html).filter {
                $0.lowercased().hasPrefix("http:") || $0.lowercased().hasPrefix("https:") || $0.hasPrefix("//")
            }
            #expect(external.isEmpty, "\(path): \(external)")
            // One inline script (the timeline's), no script from elsewhere, nothing fetched.
            #expect(html.components(separatedBy: "<script").count - 1 <= 1 + 1, "\(path)")
            #expect(!html.contains("<script src") && !html.contains("fetch(") && !html.contains("XMLHttpRequest"), "\(path)")
            #expect(!html.lowercased().contains("http://") && !html.lowercased().contains("https://"), "\(path)")
            #expect(html.hasPrefix("<!DOCTYPE html>") && html.hasSuffix("</html>\n"))
        }
    }

    @Test(.enabled(if: hasDFUSample))
    func htmlShowsTheSectionsAndCharts() {
        let html = HTMLReport.render(Report.build(paths: [dfuSample]))
        for heading in [
            "Capture", "Devices and connections", "Throughput", "Transfers", "Firmware updates (OTA)", "GATT databases",
            "Key events", "Findings",
        ] {
            #expect(html.contains("<h3>\(SVGChart.escape(heading))</h3>"), "\(heading)")
        }
        // The DFU packet stream: a chart with its ceiling line, a gap histogram, the verdict.
        #expect(html.contains("class=\"ceiling\""))
        // The control point's notifications run at 0.2 % of their ceiling: it is named, not drawn.
        #expect(html.contains("(far above this scale)"))
        #expect(html.contains("class=\"bar\""))
        #expect(html.contains("178.6 kbps = 23 % of the 790.9 kbps ceiling for 1M/251/247 at 15 ms"))
        #expect(html.contains("nordic-secure-dfu on connection #1: SUCCESS"))
        #expect(html.contains("ATT_MTU 247"))
        #expect(html.contains("times in UTC"))
    }

    @Test(.enabled(if: hasDFUSample && chromium != nil))
    func chromiumRendersTheDFUReport() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("blescope-render-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let html = dir.appendingPathComponent("report.html")
        let png = dir.appendingPathComponent("report.png")
        try HTMLReport.render(Report.build(paths: [dfuSample])).write(to: html, atomically: true, encoding: .utf8)
        let run = try #require(
            TestEnvironment.execute(
                chromium!,
                [
                    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--proxy-server=127.0.0.1:9",
                    "--user-data-dir=\(dir.appendingPathComponent("profile").path)",
                    "--screenshot=\(png.path)", "--window-size=1280,4000", html.absoluteString,
                ]))
        #expect(run.status == 0)
        let size = (try? FileManager.default.attributesOfItem(atPath: png.path)[.size] as? Int) ?? 0
        #expect(size > 10_000)
        // A PNG: the signature.
        let head = try Data(contentsOf: png).prefix(8)
        #expect(Array(head) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    @Test(.enabled(if: sampleFiles.count > 1))
    func parallelEqualsSequential() {
        let parallel = Report.build(paths: sampleFiles, parallel: true)
        let sequential = Report.build(paths: sampleFiles, parallel: false)
        #expect(parallel.files.map(\.path) == sampleFiles)
        #expect(JSONReport.render(parallel) == JSONReport.render(sequential))
        #expect(HTMLReport.render(parallel) == HTMLReport.render(sequential))
        #expect(MarkdownReport.render(parallel) == MarkdownReport.render(sequential))
    }

    /// What ``ReportWriter`` writes for `paths`, read back from the temporary file it wrote to.
    static func written(
        _ paths: [String], _ format: ReportFormat, jobs: Int,
        analyzerOptions: AnalyzerOptions = AnalyzerOptions(timeline: false)
    ) throws -> (text: String, failed: Int) {
        let file = try #require(tmpfile())
        defer { fclose(file) }
        let out = OutputStream(fd: fileno(file))
        let failed = ReportWriter.write(paths: paths, format: format, to: out, analyzerOptions: analyzerOptions, jobs: jobs)
        out.flush()
        var bytes: [UInt8] = []
        rewind(file)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while case let n = fread(&chunk, 1, chunk.count, file), n > 0 { bytes += chunk[0..<n] }
        return (String(decoding: bytes, as: UTF8.self), failed)
    }

    /// The streaming writer (one file's analysis at a time, sections spooled) gives byte for byte the
    /// in-memory report, for one file and for many, with an unreadable file among them, at any job count.
    @Test(.enabled(if: sampleFiles.count > 1), arguments: [1, 3])
    func streamingWriterEqualsInMemoryRender(jobs: Int) throws {
        let many = Array(sampleFiles.prefix(5)) + ["/nonexistent/file.btsnoop"] + Array(sampleFiles.suffix(2))
        for paths in [[sampleFiles[0]], many] {
            let report = Report.build(paths: paths)
            let unreadable = paths.count > 1 ? 1 : 0
            let html = try Self.written(paths, .html, jobs: jobs)
            // The page has the searchable timeline, which the writer builds for HTML only.
            var withTimeline = ReportOptions()
            withTimeline.embedTimeline = true
            #expect(html.text == HTMLReport.render(Report.build(paths: paths, options: withTimeline)))
            #expect(html.failed == unreadable)
            #expect(try Self.written(paths, .md, jobs: jobs).text == MarkdownReport.render(report))
            #expect(try Self.written(paths, .json, jobs: jobs).text == JSONReport.render(report) + "\n")
            // JSON Lines: a line per file, each exactly the JSON document's element.
            let lines = try Self.written(paths, .jsonl, jobs: jobs).text.split(separator: "\n").map(String.init)
            #expect(lines == report.files.map(JSONReport.file))
            #expect(lines.count == paths.count)
        }
    }

    /// One codec registry serves every worker: decoding the vendor protocols of the Samples on three threads
    /// gives what one thread gives (and the headset's vendor OTA session is found in each of its formats).
    @Test(.enabled(if: sampleFiles.count > 1))
    func sharedCodecRegistryAcrossWorkers() throws {
        let registry = CodecRegistry()
        _ = try registry.load(directory: samples.appendingPathComponent("codecs").path)
        let options = AnalyzerOptions(timeline: false, codecs: registry)
        let parallel = try Self.written(sampleFiles, .jsonl, jobs: 3, analyzerOptions: options)
        #expect(parallel.failed == 0)
        #expect(parallel.text == (try Self.written(sampleFiles, .jsonl, jobs: 1, analyzerOptions: options)).text)
        let headset = parallel.text.split(separator: "\n").filter { $0.contains("\"file\":\"\(samples.path)/headset-ota.") }
        #expect(headset.count == 3)
        #expect(headset.allSatisfy { $0.contains("\"protocol\":\"vendor\"") && $0.contains("\"codec\":\"headset\"") })
    }

    /// Many files: the overview table names each file, links to its section, and shows a file's error.
    @Test(.enabled(if: hasDFUSample))
    func htmlOverviewLinksEachFile() throws {
        let paths = [dfuSample, "/nonexistent/file.btsnoop", samplePath("bracelet.pcap")]
        let html = try Self.written(paths, .html, jobs: 2).text
        #expect(html.contains("<title>blescope report: nordic-dfu.btsnoop, file.btsnoop, bracelet.pcap</title>"))
        #expect(html.contains("<a href=\"#file2\">/nonexistent/file.btsnoop</a></td><td colspan=\"4\" class=\"bad\">"))
        #expect(html.contains("<section class=\"file\" id=\"file3\"><h2>bracelet.pcap</h2>"))
        // bracelet.pcap: 111 records (capinfos), 1 connection.
        #expect(html.contains("<a href=\"#file3\">\(samplePath("bracelet.pcap"))</a></td><td class=\"n\">111</td><td class=\"n\">1</td>"))
        let long = HTMLReport.head(paths: (1...12).map { "/d/c\($0).btsnoop" }, options: ReportOptions())
        #expect(long.contains("<title>blescope report: c1.btsnoop, c2.btsnoop, c3.btsnoop, c4.btsnoop, c5.btsnoop and 7 more</title>"))
    }

    /// Who ended each connection (``ConnectionLifecycle``): the supervision timeout of frame 237 (tshark: Disconnection
    /// Complete, reason 0x08) was the link's loss, in the JSON and in the connection table.
    @Test func eachConnectionSaysWhoEndedIt() throws {
        let report = Report.build(paths: [samplePath("diag-supervision-timeout.btsnoop")])
        let text = JSONReport.render(report)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let files = try #require(object["files"] as? [[String: Any]])
        let connection = try #require((files.first?["connections"] as? [[String: Any]])?.first)
        #expect(connection["end_frame"] as? Int == 237 && connection["ended_by"] as? String == "link")
        #expect(connection["disconnect_reason"] as? String == "Connection Timeout")
        #expect(MarkdownReport.render(report).contains("| Connection Timeout (the link was lost) |"))
    }

    @Test(.enabled(if: hasDFUSample))
    func jsonIsValidWithStableKeys() throws {
        let report = Report.build(paths: [dfuSample, "/nonexistent/file.btsnoop"])
        let text = JSONReport.render(report)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["schema"] as? String == "blescope-report/1")
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.count == 2)
        #expect(files[1]["error"] is String)
        let f = files[0]
        for key in ["file", "capture", "counters", "connections", "gatt", "throughput", "transfers", "ota", "key_events", "findings"] {
            #expect(f[key] != nil, "\(key)")
        }
        let streams = try #require((f["throughput"] as? [String: Any])?["streams"] as? [[String: Any]])
        for s in streams {
            for key in [
                "conn", "dir", "handle", "uuid", "kind", "packets", "value_bytes", "first_time", "last_time", "rate_bps",
                "ceiling_bps", "window", "link", "periods", "verdict", "series",
            ] {
                #expect(s.keys.contains(key), "\(key)")
            }
        }
        let packet = try #require(streams.first { $0["handle"] as? Int == 0x13 })
        #expect(packet["kind"] as? String == "write-cmd")
        #expect(packet["packets"] as? Int == 416)
        #expect(packet["value_bytes"] as? Int == 100_135)
        #expect((packet["series"] as? [String: Any]).flatMap { $0["points"] as? [Any] }.map { $0.count <= 500 } == true)
        // Key order is part of the schema.
        #expect(text.range(of: "\"file\":")!.lowerBound < text.range(of: "\"capture\":")!.lowerBound)
    }

    @Test(.enabled(if: hasDFUSample))
    func markdownHasTablesAndVerdicts() {
        let md = MarkdownReport.render(Report.build(paths: [dfuSample]))
        #expect(md.hasPrefix("# blescope report"))
        #expect(md.contains("| conn | dir | handle | kind |"))
        #expect(md.contains("limited by"))
        #expect(md.contains("### Key events"))
    }

    @Test func localClockShiftsTimes() {
        let t = Timestamp(microseconds: 1_710_408_413_000_000)  // 2024-03-14 09:26:53 UTC
        #expect(ReportClock.utc.format(t) == "2024-03-14 09:26:53.000000")
        #expect(ReportClock.local(offsetSeconds: 5400).format(t) == "2024-03-14 10:56:53.000000")
        #expect(ReportClock.local(offsetSeconds: 5400).zoneName == "local time (UTC+01:30)")
        #expect(ReportClock.local(offsetSeconds: -18000).zoneName == "local time (UTC−05:00)")
    }

    @Test func findingsAreGroupedByCode() {
        let a = FindingKind(.l2capFrameTooLong, message: "A")
        let b = FindingKind(.l2capNoCredit, message: "B")
        let findings = [
            Finding(.info, a, frame: 3), Finding(.warning, b, frame: 5), Finding(.info, a, frame: 9), Finding(.info, a, frame: 12),
        ]
        let groups = Report.groupFindings(findings)
        #expect(groups.map(\.code) == ["l2cap.no-credit", "l2cap.frame-too-long"])
        #expect(groups[1].count == 3 && groups[1].firstFrames == [3, 9, 12])
    }

    @Test func chartsAreLabelledAndEscaped() {
        let svg = SVGChart.gapHistogram([0, 1, 5, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 9], title: "gaps <&>")
        #expect(svg.contains("gaps &lt;&amp;&gt;"))
        #expect(svg.contains(">≥10s<") && svg.contains("><100µs<".replacingOccurrences(of: "<1", with: "&lt;1")))
        #expect(SVGChart.ticks(max: 1402) == [0, 500, 1000, 1500])
        #expect(SVGChart.ticks(max: 0.8) == [0, 0.2, 0.4, 0.6000000000000001, 0.8])
    }

    /// The ISO loss line: a dot for a bucket without loss, so the line never ends in a blank.
    @Test func isoLossSparklineMarksBucketsWithoutLoss() {
        #expect(ISOReport.sparkline([8, 0, 0]) == "█··")
        #expect(ISOReport.sparkline([0, 1, 8]) == "·▁█")
    }

    @Test func sparklineScales() {
        #expect(MarkdownReport.sparkline([0, 1, 2, 4]) == "▁▂▄█")
        #expect(MarkdownReport.sparkline([]) == "")
    }
}

@Suite struct ThroughputReportTests {
    @Test(.enabled(if: hasDFUSample))
    func jsonHasTheDocumentedKeysAndCSVOneRowPerStream() throws {
        let a = Report.analyze(path: dfuSample)
        let report = a.throughputReport
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let streams = try #require(object["streams"] as? [[String: Any]])
        #expect(streams.count == report.streams.count)
        let csv = report.csv().split(separator: "\n")
        #expect(csv.count == report.streams.count + 1)
        // The columns in ThroughputColumns' order (the JSON's): the handle first, then the connection's number.
        #expect(csv[0].hasPrefix("connection_handle,conn,dir,handle,uuid,kind,packets,value_bytes"))
        let text = report.text()
        #expect(text.contains("→ 178.6 kbps = 23 % of the 790.9 kbps ceiling"))
        #expect(text.contains("no credit-based flow-control stall"))
        // Filters.
        #expect(report.filtered(connectionNumbers: [2]).streams.isEmpty)
        let packetUUID = BluetoothUUID("8EC90002-F315-4F60-9FB8-838830DAEA50")!
        #expect(report.filtered(uuids: [packetUUID]).streams.map(\.key.handle) == [0x13])
    }
}
