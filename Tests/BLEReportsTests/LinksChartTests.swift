import BLEAnalysis
import BLECore
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
}
