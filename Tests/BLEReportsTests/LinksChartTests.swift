import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

@testable import BLEReports

/// The links-over-time chart (``LinksChart``): a bar per connection ending where and how the capture says.
@Suite struct LinksChartTests {
    static let pongbot = TestEnvironment.sharedCaptures.map {
        $0 + "/android-btsnoop_pixel8-pongbot-14conn-prepwrite-indicate.log.last"
    }

    /// Every value of `attribute="…"` in `html`, in order.
    static func attributeValues(_ attribute: String, in html: String) -> [String] {
        html.components(separatedBy: " \(attribute)=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }

    /// The supervision-timeout Sample: one connection, lost at frame 237 (tshark: Disconnection Complete, reason 0x08).
    @Test func theSampleLinkEndsLostAtItsDisconnection() throws {
        let f = Report.analyze(path: samplePath("diag-supervision-timeout.btsnoop"))
        let chart = try #require(LinksChart(f))
        let bars = chart.lanes.flatMap(\.bars)
        #expect(bars.count == 1 && bars.first?.endFrame == 237 && bars.first?.endedBy == "link")
        #expect(bars.first?.reason == "Connection Timeout")
        // An HCI log: the controller's lane first.
        #expect(chart.lanes.first?.isController == true)
        let svg = chart.svg(index: 1)
        #expect(Self.attributeValues("data-end-frame", in: svg) == ["237"])
        #expect(Self.attributeValues("data-end-reason", in: svg) == ["Connection Timeout"])
        #expect(svg.contains("<title>Connection #1, handle 0x"))
        let lines = chart.textLines()
        #expect(lines.count == 1)
        #expect(lines.first?.hasSuffix("the link was lost (Connection Timeout)") == true, "\(lines)")
        #expect(lines.first?.contains("✕") == true, "\(lines)")
        // The terminal's form (diagnose): tshark's frame 237 ends it, 3.290615 s after the first record.
        let rows = chart.compactRows()
        #expect(rows.count == 1 && rows.first?.ending == "lost: Connection Timeout (frame 237)")
        #expect(rows.first?.head.hasSuffix("✕| 0.4–3.3 s") == true, "\(rows)")
        // Placed in the Markdown report and at the top of the HTML one.
        let report = Report(files: [f], options: ReportOptions())
        #expect(MarkdownReport.render(report).contains("### Links over time\n\n```\n0 → "))
        let html = HTMLReport.render(report)
        let links = try #require(html.range(of: "<h3>Links over time</h3>"))
        let summary = try #require(html.range(of: "<h3>Summary</h3>"))
        #expect(links.lowerBound < summary.lowerBound)
    }

    /// A BR/EDR link up at 0 s, in sniff mode (Mode Change, mode 2, 500 ms) from 1 s to 3 s, then active until its end at
    /// 4 s: the sniff columns are drawn ▒ (each column's middle inside the sniff period), the rest █.
    static func sniffLink(sniff: Bool) throws -> LinksChart? { LinksChart(Report.analyze(capture: try sniffCapture(sniff: sniff))) }

    static func sniffCapture(sniff: Bool) throws -> CaptureFile {
        try CaptureBuilder().connectBREDR(handle: 0x000B)
            .at(microsecondsFromStart: 1_000_000).declaredEvent(
                ModeChange {
                    $0.handle = 0x000B; $0.mode = sniff ? 2 : 0; $0.interval = 800
                }
            )
            .at(microsecondsFromStart: 3_000_000).declaredEvent(
                ModeChange {
                    $0.handle = 0x000B; $0.mode = 0
                }
            )
            .at(microsecondsFromStart: 4_000_000).disconnect(handle: 0x000B).captureFile()
    }

    static func diagnosed(sniff: Bool) throws -> String {
        DiagnosisReport.analyze(try sniffCapture(sniff: sniff)).text(terminal: Terminal(colors: false))
    }

    @Test func aBREDRLinkInSniffModeIsDrawnSo() throws {
        let chart = try #require(try Self.sniffLink(sniff: true))
        #expect(chart.hasSniff)
        // 20 columns over 4 s: column i's middle at (i + 0.5) × 4/19 s; 1 ≤ middle < 3 for columns 5 to 13.
        let head = try #require(chart.compactRows().first?.head)
        #expect(head.contains("|█████▒▒▒▒▒▒▒▒▒█████◆|"), "\(head)")
        #expect(chart.legendText.hasSuffix("· ▒ sniff mode (BR/EDR)"))
        let out = try Self.diagnosed(sniff: true)
        #expect(out.contains("(seconds from the first record; █ up, ▒ sniff mode, ■ this side ended it"), "\(out)")
    }

    /// Near miss: Mode Change events that leave the link active draw no sniff.
    @Test func nearMissAnActiveLinkHasNoSniff() throws {
        let chart = try #require(try Self.sniffLink(sniff: false))
        #expect(!chart.hasSniff)
        #expect(chart.compactRows().first?.head.contains("▒") == false)
        #expect(try !Self.diagnosed(sniff: false).contains("▒"))
    }

    /// A PacketLogger log opening with the logger's note stamped 10 s before its first HCI record (the iPhone radar log:
    /// 'BTC Logging Started' 14.45 s before the HCI Reset at frame 2): the axis starts at frame 2 and its header says so,
    /// where "from the first record" named the note. The near miss, the same log without the note, keeps the words.
    @Test(arguments: [true, false]) func anAxisAfterTheLoggersNoteSaysItsFrame(_ note: Bool) throws {
        var b = CaptureBuilder()
        if note { b = b.record(.text, .rx, Array("BTC Logging Started".utf8)) }
        let built = b.at(microsecondsFromStart: note ? 10_000_000 : 0).connectBREDR(handle: 0x000B)
            .at(microsecondsFromStart: note ? 14_000_000 : 4_000_000).disconnect(handle: 0x000B)
        let file = try CaptureFile.open(bytes: CaptureWriter.packetLogger(built.records, bigEndian: true), name: "notes.pklg")
        let report = DiagnosisReport.analyze(file)
        #expect(report.links?.originAfterNotes == (note ? 2 : nil))
        let out = report.text(terminal: Terminal(colors: false))
        #expect(
            out.contains(note ? "(seconds from frame 2, after the logger's notes; █ up" : "(seconds from the first record; █ up"), "\(out)")
        // The bar spans the link's 4 s from the axis' start, not 10 s after it.
        #expect(
            report.links?.compactRows().first?.head.hasSuffix(" 0.0–4.0 s") == true, "\(String(describing: report.links?.compactRows()))")
    }

    /// The OPPO Enco dual-mode log (corpus): tshark's Mode Change events put link #1 (3.2–639.5 s) in sniff (798 slots)
    /// from 178.854 to 306.072 s (3946 → 4780), 336.581 to 433.745 s (4982 → 5421), 477.749 to 605.326 s (6031 → 6540)
    /// among shorter periods; before 96.127 s (2671) it is active.
    @Test func theOppoDualModeLogsSniffIsDrawn() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let path = dir + "/android-btsnoop_oppo-enco-dualmode-sniff-subrating-1a-x6.log"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let chart = try #require(LinksChart(Report.analyze(path: path)))
        let head = try #require(chart.compactRows().first { $0.head.hasPrefix("#1 ") }?.head)
        // Columns of 639.5/19 s: 0–2 (middles 16.8–84.2 s) active, 5–8 and 10–12 (185–286, 353–421 s) in sniff.
        let track = Array(head.split(separator: "|")[1])
        #expect(
            track[0...2].allSatisfy { $0 == "█" } && track[5...8].allSatisfy { $0 == "▒" } && track[10...12].allSatisfy { $0 == "▒" },
            "\(head)")
    }

    static let whadAir = TestEnvironment.sharedCaptures.map { $0 + "/lell-rf-lt256-pcapng-named-pcap_whad-gatt-discovery.pcap" }

    /// An air capture has no "this side": the WHAD GATT discovery's LL_TERMINATE_IND at frame 175 is the central's
    /// (tshark: "PDU Type: Data, Master to Slave", error 0x13), so its end reads "the central ended it", in the legend
    /// too. The near miss is the HCI Sample above and here: its host's Disconnect stays "this side".
    @Test(.enabled(if: whadAir.map { FileManager.default.fileExists(atPath: $0) } ?? false))
    func anAirLinkIsEndedByTheCentralNotThisSide() throws {
        let path = try #require(Self.whadAir)
        let chart = try #require(LinksChart(Report.analyze(path: path)))
        let bar = try #require(chart.lanes.flatMap(\.bars).first)
        #expect(bar.onAir && bar.endedBy == "local" && bar.endFrame == 175)
        #expect(
            chart.compactRows().first?.ending == "the central ended it: LL_TERMINATE_IND: Remote User Terminated Connection (frame 175)")
        #expect(chart.endKey == "■ the central ended it, ◆ the peripheral" && chart.legendText == LinksChart.airLegend)
        #expect(chart.textLines().first?.contains(": ended by the central (LL_TERMINATE_IND") == true, "\(chart.textLines())")
        let hci = try #require(LinksChart(Report.analyze(path: samplePath("diag-pairing-failed.btsnoop"))))
        #expect(!hci.onAir && hci.endKey == "■ this side ended it, ◆ the peer")
        #expect(hci.compactRows().first?.ending.hasPrefix("this side ended it: Connection Terminated By Local Host") == true)
    }

    /// The 14-connection Android log: 14 bars, each ending at one of tshark's 14 Disconnection Complete events, ended by
    /// this side where the reason is 0x16 (Connection Terminated By Local Host) and lost otherwise (0x08, 0x3E).
    @Test(.enabled(if: pongbot.map { FileManager.default.fileExists(atPath: $0) } ?? false && TestEnvironment.tsharkPath != nil))
    func pongbotBarsEndWhereTsharkSeesTheDisconnections() throws {
        let path = try #require(Self.pongbot)
        let rows = try #require(
            TestEnvironment.tsharkFields([
                "-r", path, "-Y", "bthci_evt.code == 0x05", "-T", "fields", "-e", "frame.number", "-e", "bthci_evt.reason",
            ]))
        let expected = Dictionary(uniqueKeysWithValues: rows.map { (Int($0[0])!, $0[1] == "0x16" ? "local" : "link") })
        #expect(expected.count == 14)
        let f = Report.analyze(path: path)
        let chart = try #require(LinksChart(f))
        let bars = chart.lanes.flatMap(\.bars)
        #expect(bars.count == 14 && bars.count == f.connections.count)
        #expect(Dictionary(uniqueKeysWithValues: bars.map { ($0.endFrame ?? -1, $0.endedBy ?? "open") }) == expected)
        // Four peers and the controller.
        #expect(chart.lanes.count == 5)
        let svg = chart.svg(index: 1)
        #expect(Self.attributeValues("data-conn", in: svg).count == 14)
        #expect(Set(Self.attributeValues("data-end-frame", in: svg).compactMap { Int($0) }) == Set(expected.keys))
        #expect(chart.textLines().count == 14)
        // RSSI under each bar whose link has quality reports, one point per report.
        let reported = f.connections.filter { !$0.linkQuality.isEmpty }
        let lines: Int = svg.components(separatedBy: "class=\"rssi\"").count - 1
        #expect(!reported.isEmpty && lines == reported.count)
        #expect(bars.filter { !$0.rssi.isEmpty }.map(\.number).sorted() == reported.map(\.number).sorted())
        let drawn: Int = bars.map(\.rssi.count).reduce(0, +)
        let reports: Int = f.connections.map(\.linkQuality.count).reduce(0, +)
        #expect(drawn == reports)
        // The brush maps the axis to seconds from the first record: the page's script reads these.
        #expect(svg.contains("data-plot-left=\"190.0\" data-plot-width=\"854.0\" data-span=\"\(SVGChart.number(chart.spanSeconds))\""))
        // The findings are on the axis at their frame, each a link to its diagnosis.
        #expect(svg.contains("href=\"#file1-d1558\""))
        #expect(chart.markers.count == f.diagnosis.atLeast(.warning).count)
    }

    /// Frames to times: exact on sampled records and the last, interpolated between, clamped outside.
    @Test func frameClockInterpolates() {
        var clock = FrameClock()
        for frame in 1...600 { clock.add(frame: frame, timestamp: Timestamp(microseconds: 1_000_000 + Int64(frame) * 10)) }
        #expect(clock.time(ofFrame: 1)?.microseconds == 1_000_010)
        #expect(clock.time(ofFrame: 257)?.microseconds == 1_002_570)
        #expect(clock.time(ofFrame: 300)?.microseconds == 1_003_000)
        #expect(clock.time(ofFrame: 600)?.microseconds == 1_006_000)
        #expect(clock.time(ofFrame: 9_999)?.microseconds == 1_006_000)
        #expect(FrameClock().time(ofFrame: 3) == nil)
    }

    /// A silence inside a sampling stride: the frame after it keeps its own time (the Cobra iPhone log: 5.4 s of
    /// silence before the loss at 740, then sparse scanning; the marker had been drawn 62.6 s late). The near miss,
    /// records 10 µs apart, is the test above: interpolated as before.
    @Test func frameClockKeepsTheEdgesOfASilence() {
        var clock = FrameClock()
        for frame in 1...100 { clock.add(frame: frame, timestamp: Timestamp(microseconds: Int64(frame) * 1_000)) }
        for frame in 101...300 { clock.add(frame: frame, timestamp: Timestamp(microseconds: 60_000_000 + Int64(frame) * 1_000_000)) }
        #expect(clock.time(ofFrame: 100)?.microseconds == 100_000)
        #expect(clock.time(ofFrame: 101)?.microseconds == 161_000_000)
        #expect(clock.time(ofFrame: 200)?.microseconds == 260_000_000)
        #expect(clock.time(ofFrame: 50)?.microseconds == 50_000)
    }
}
