import BLEAnalysis
import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLECapture
@testable import BLEReports

/// The timeline the HTML page embeds (``EmbeddedTimeline``): every event, its columns rebuilt from the page's data as
/// the page's script rebuilds them.
@Suite struct EmbeddedTimelineTests {
    /// The page's data, inflated and parsed as the script does: (frames, seconds from the first record, names, document).
    static func decode(_ base64: String) throws -> (frames: [Int], seconds: [Double], names: [String], doc: [String: Any]) {
        let gz = try #require(Data(base64Encoded: base64))
        let json = try #require(zlibInflate(Array(gz), gzip: true))
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        let strings = try #require(doc["s"] as? [String])
        let df = try #require(doc["f"] as? [Int]), dt = try #require(doc["t"] as? [Int]), n = try #require(doc["n"] as? [Int])
        var frame = try #require(doc["f0"] as? Int), t = 0
        var frames: [Int] = [], seconds: [Double] = []
        for (a, b) in zip(df, dt) {
            frame += a
            t += b
            frames.append(frame)
            seconds.append(Double(t) / 1e6)
        }
        return (frames, seconds, n.map { strings[$0] }, doc)
    }

    /// The supervision-timeout Sample: tshark reads 237 frames, the last (1742031003.290615) the Disconnection Complete,
    /// 3.290615 s after the first (1742031000.000000); the page holds as many events as `timeline` prints (237 here).
    @Test func thePageHoldsEveryEventWithItsFrameAndTime() throws {
        var options = ReportOptions()
        options.embedTimeline = true
        let f = Report.analyze(path: samplePath("diag-supervision-timeout.btsnoop"), options: options)
        let t = try #require(f.timeline)
        #expect(t.count == 237 && t.cutAtFrame == nil)
        let page = try Self.decode(t.gzipBase64())
        #expect(page.frames.count == 237)
        let last = try #require(page.frames.lastIndex(of: 237))
        #expect(page.names[last] == "Disconnection Complete")
        #expect(abs(page.seconds[last] - 3.290615) < 1e-9)
        // The diagnosis's finding is marked on its frame with its severity.
        let marks = try #require(page.doc["x"] as? [[Any]])
        #expect(marks.contains { $0[0] as? Int == 237 && ($0[1] as? String == "error" || $0[1] as? String == "critical") })
        let html = HTMLReport.render(Report(files: [f], options: options))
        #expect(html.contains("<div class=\"tl\" id=\"tl1\" data-file=\"1\" data-events=\"237\">"))
        #expect(html.contains("href=\"#frame=237\""))
    }

    /// Past its limit the pass stops: the first events are kept whole and the page names the frame it stopped at.
    @Test func aFullTimelineStopsThePass() throws {
        let all = EmbeddedTimeline.build(path: samplePath("diag-supervision-timeout.btsnoop"), options: AnalyzerOptions())
        let cut = EmbeddedTimeline.build(path: samplePath("diag-supervision-timeout.btsnoop"), options: AnalyzerOptions(), limit: 100)
        let at = try #require(cut.cutAtFrame)
        #expect(cut.count == 100 && all.cutAtFrame == nil && all.count == 237)
        #expect(Array(all.frames.prefix(100)) == cut.frames && cut.frames.allSatisfy { $0 < at })
        #expect(at <= all.frames[100])
        let page = try Self.decode(cut.gzipBase64())
        #expect(page.doc["cut"] as? Int == at && page.frames == cut.frames)
    }

    /// The JSON Lines and Markdown reports build no timeline (the writer asks for it for HTML only).
    @Test func onlyThePageBuildsTheTimeline() throws {
        for (format, expected) in [(ReportFormat.md, false), (.json, false), (.html, true)] {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("blescope-tl-\(getpid()).\(format.rawValue)").path
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            defer { unlink(path) }
            let out = OutputStream(fd: fd)
            _ = ReportWriter.write(paths: [samplePath("diag-supervision-timeout.btsnoop")], format: format, to: out)
            out.flush()
            close(fd)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.contains("tl-data") == expected, "\(format)")
        }
    }

    /// The string table holds each text once, in the order of first use, however an event carries it: a value event's
    /// summary kept as its handle (`handle=0x002a` when rendered, as `timeline` prints it) and a summary given as that
    /// same text share one entry; the next handle (0x002b, the near miss) is a text of its own; a name seen again after
    /// another name is the first one's entry, not a new one.
    @Test func eachTextIsInTheTableOnceInTheOrderOfFirstUse() throws {
        func event(_ name: String, handle: UInt16? = nil, summary: String = "", layer: Layer = .att) -> TimelineEvent {
            if let handle {
                return TimelineEvent(
                    frame: 1, timestamp: Timestamp(microseconds: 0), connection: 64, direction: .rx, layer: layer, code: 0x1B,
                    name: name, summaryHandle: handle)
            }
            return TimelineEvent(
                frame: 1, timestamp: Timestamp(microseconds: 0), connection: 64, direction: .rx, layer: layer, code: nil,
                name: name, summary: summary)
        }
        let events = [
            event("Handle Value Notification", handle: 0x002A),
            event("Write Command", summary: "handle=0x002a"),
            event("Handle Value Notification", handle: 0x002B),
            event("Number Of Completed Packets", summary: "handle=0x0040 packets=1", layer: .hci),
            event("Handle Value Notification", handle: 0x002A),
        ]
        #expect(events[0].summary == "handle=0x002a" && events[2].summary == "handle=0x002b")
        var table = EmbeddedTimeline()
        for e in events { table.add(e) }
        #expect(
            table.strings == [
                "att", "Handle Value Notification", "handle=0x002a", "Write Command", "handle=0x002b", "hci",
                "Number Of Completed Packets", "handle=0x0040 packets=1",
            ])
        #expect(table.layers.map { table.strings[$0] } == events.map(\.layer.rawValue))
        #expect(table.names.map { table.strings[$0] } == events.map(\.name))
        #expect(table.summaries.map { table.strings[$0] } == events.map(\.summary))
    }

    /// The page's pass copies no value into its events (``AnalyzerOptions/eventValues`` off), and its rows are those of
    /// a pass that does. The bracelet Sample's first notification, as tshark reads it: frame 77, handle 0x0012, value
    /// a5 06 83 07 00 27; tshark counts 26 notifications and write commands.
    @Test func thePagesPassCopiesNoValueAndMakesTheSameRows() throws {
        func events(values: Bool) throws -> [TimelineEvent] {
            let capture = try CaptureFile.open(path: samplePath("bracelet.btsnoop"))
            var options = AnalyzerOptions(timeline: true)
            options.eventValues = values
            let analyzer = Analyzer(options: options)
            var out: [TimelineEvent] = []
            analyzer.onEvent = { out.append($0) }
            var record = CaptureRecord.empty
            while capture.next(into: &record) { analyzer.process(record) }
            analyzer.finish()
            return out
        }
        let with = try events(values: true), without = try events(values: false)
        let valueEvents = with.filter { $0.layer == .att && ($0.code == 0x1B || $0.code == 0x52) }
        #expect(valueEvents.count == 26)
        let first = try #require(valueEvents.first)
        #expect(first.frame == 77 && first.handle == 0x0012 && first.value == [0xA5, 0x06, 0x83, 0x07, 0x00, 0x27])
        // The near miss: every other event keeps its value; a notification's and a write command's go.
        let kept = without.filter { $0.value != nil }.map(\.frame)
        #expect(kept == with.filter { $0.value != nil && !($0.layer == .att && ($0.code == 0x1B || $0.code == 0x52)) }.map(\.frame))
        var a = EmbeddedTimeline(), b = EmbeddedTimeline()
        for e in with { a.add(e) }
        for e in without { b.add(e) }
        #expect(a.count == with.count && a.jsonBytes() == b.jsonBytes())
        let built = EmbeddedTimeline.build(path: samplePath("bracelet.btsnoop"), options: AnalyzerOptions())
        #expect(built.jsonBytes() == a.jsonBytes())
    }

    /// A Number Of Completed Packets event's row text is found by its one entry, and is the text `timeline` prints:
    /// handle 0x0040 with 3 packets (event bytes 13 05 01 40 00 03 00) is `handle=0x0040 completed=3` each time; 0x0040
    /// with 1 packet and 0x0041 with 3 (the near misses, one number apart) are texts of their own; an event of two
    /// entries (13 09 02 40 00 01 00 41 00 02 00) is both, joined, built the general way.
    @Test func completedPacketsRowsAreFoundByTheirEntry() throws {
        let capture = try CaptureBuilder().connect(handle: 0x40).connect(handle: 0x41)
            .completed(handle: 0x40, count: 3).completed(handle: 0x40, count: 1).completed(handle: 0x40, count: 3)
            .completed(handle: 0x41, count: 3)
            .event([0x13, 0x09, 0x02, 0x40, 0x00, 0x01, 0x00, 0x41, 0x00, 0x02, 0x00])
            .completed(handle: 0x41, count: 3).captureFile()
        let analyzer = Analyzer(options: AnalyzerOptions(timeline: true))
        var table = EmbeddedTimeline()
        var completed: [TimelineEvent] = []
        analyzer.onEvent = { e in
            table.add(e)
            if e.name == "Number Of Completed Packets" { completed.append(e) }
        }
        var record = CaptureRecord.empty
        while capture.next(into: &record) { analyzer.process(record) }
        analyzer.finish()
        let rows = table.names.indices.filter { table.strings[table.names[$0]] == "Number Of Completed Packets" }
        #expect(
            rows.map { table.strings[table.summaries[$0]] } == [
                "handle=0x0040 completed=3", "handle=0x0040 completed=1", "handle=0x0040 completed=3",
                "handle=0x0041 completed=3", "handle=0x0040 completed=1 handle=0x0041 completed=2", "handle=0x0041 completed=3",
            ])
        #expect(rows.map { table.strings[table.summaries[$0]] } == completed.map(\.summary))
        #expect(completed.map { $0.completedPacketsEntry == nil } == [false, false, false, false, true, false])
        #expect(Set(rows.map { table.summaries[$0] }).count == 4)
    }

    /// The integer columns as JSON: every value as Swift prints it (signs, one digit, the limits), and an empty column.
    @Test func integerColumnsAreWrittenAsSwiftPrintsThem() {
        let column = [0, 1, -1, 9, 10, -10, 99, 100, 101, 999, 1_000, -12_345, 4_294_967_296, Int.max, Int.min]
        var out: [UInt8] = []
        EmbeddedTimeline.append("t", column, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == ",\"t\":[" + column.map { "\($0)" }.joined(separator: ",") + "]")
        var empty: [UInt8] = Array("{".utf8)
        EmbeddedTimeline.append("c", [], to: &empty)
        #expect(String(decoding: empty, as: UTF8.self) == "{,\"c\":[]")
    }

    /// Ten names in turn, two more than the names compared before the string table's hash: each row still names its
    /// event, each name is in the table once, in the order of first use.
    @Test func namesInTurnKeepTheirIndexes() {
        let names = (0..<10).map { "Name \($0) of the turn" }
        var table = EmbeddedTimeline()
        var expected: [String] = [], summaries: [String] = []
        for round in 0..<3 {
            for (k, name) in names.enumerated() where round < 2 || k % 3 == 0 {
                table.add(
                    TimelineEvent(
                        frame: 1, timestamp: Timestamp(microseconds: 0), connection: 64, direction: .rx, layer: .att,
                        code: 0x1B, name: name, summaryHandle: UInt16(0x0012 + k % 2)))
                expected.append(name)
                summaries.append(k % 2 == 0 ? "handle=0x0012" : "handle=0x0013")
            }
        }
        #expect(table.names.map { table.strings[$0] } == expected)
        #expect(table.strings == ["att"] + [names[0], "handle=0x0012", names[1], "handle=0x0013"] + names[2...])
        #expect(table.summaries.map { table.strings[$0] } == summaries)
    }

    @Test func base64MatchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for n in [0, 1, 2, 3, 4, 5, 100, 1001] {
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(base64(bytes) == Data(bytes).base64EncodedString(), "\(n) bytes")
        }
    }
}
