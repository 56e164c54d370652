import BLEAnalysis
import BLECore

extension LinksChart {
    static let laneHeight = 26.0
    static let labelWidth = 190.0
    /// Most lanes drawn (the peers with the earliest connections); the others are counted below the chart.
    static let maxLanes = 40

    private static func esc(_ s: String) -> String { SVGChart.escape(s) }

    /// The chart as inline SVG: each connection a `<g class="conn">` with `data-conn`, `data-end-reason` and
    /// `data-end-frame` (what the browser test and a reader's script read), a `<title>` on every mark, the findings
    /// below the axis linking to their diagnosis (`#file<index>-d<frame>`).
    public func svg(index: Int, width: Int = 1060) -> String {
        let shown = Array(lanes.prefix(Self.maxLanes))
        let top = 8.0, axis = 22.0, markerRow = 20.0
        let plotLeft = Self.labelWidth, plotWidth = Double(width) - plotLeft - 16
        let height = Int(top + Double(shown.count) * Self.laneHeight + axis + markerRow + 6)
        func x(_ t: Timestamp) -> Double { plotLeft + offset(t) / spanSeconds * plotWidth }
        var out =
            "<svg class=\"chart links\" id=\"file\(index)-links\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"Links over time\""
            + " data-plot-left=\"\(c(plotLeft))\" data-plot-width=\"\(c(plotWidth))\" data-span=\"\(SVGChart.number(spanSeconds))\">"
        for (i, lane) in shown.enumerated() {
            let y = top + Double(i) * Self.laneHeight
            out += lane.isController ? "<g class=\"lane controller\">" : "<g class=\"lane\">"
            let count = lane.bars.count
            let label = lane.isController ? "controller" : lane.label + (count > 1 ? " (\(count))" : "")
            out += "<text x=\"4\" y=\"\(c(y + 16))\" class=\"lanelabel\">\(Self.esc(label))</text>"
            out +=
                "<line x1=\"\(c(plotLeft))\" y1=\"\(c(y + Self.laneHeight))\" x2=\"\(c(plotLeft + plotWidth))\" y2=\"\(c(y + Self.laneHeight))\" class=\"grid\"/>"
            if lane.isController {
                out +=
                    "<line x1=\"\(c(plotLeft))\" y1=\"\(c(y + 13))\" x2=\"\(c(plotLeft + plotWidth))\" y2=\"\(c(y + 13))\" class=\"span-log\"><title>the log, from its first record to its last</title></line>"
            }
            for s in lane.spans { out += span(s, y: y + 17, x: x) }
            for b in lane.bars { out += bar(b, y: y, x: x) }
            out += "</g>"
        }
        let axisY = top + Double(shown.count) * Self.laneHeight
        out += axisMarks(y: axisY, left: plotLeft, width: plotWidth)
        out += findingMarks(y: axisY + axis, index: index, x: x)
        out += "</svg>"
        if lanes.count > shown.count {
            out += "<p class=\"muted\">… \(lanes.count - shown.count) more peers (their connections are in the table below).</p>"
        }
        return out
    }

    private func c(_ v: Double) -> String { SVGChart.coordinate(v) }

    private func bar(_ b: Bar, y: Double, x: (Timestamp) -> Double) -> String {
        let x0 = x(b.start), x1 = max(x0 + 2, x(b.end ?? end))
        let duration = formatDuration(microseconds: (b.end ?? end).microseconds(since: b.start))
        var title = "Connection #\(b.number), handle \(hex(b.handle, width: 4)): frames \(b.startFrame)–"
        title += b.endFrame.map { "\($0), \(duration); " } ?? "end of capture, \(duration); "
        title += Self.endWords(b.endedBy, onAir: b.onAir) + (b.reason.map { ": \($0)" } ?? "") + (b.endFrame.map { " (frame \($0))" } ?? "")
        var out = "<g class=\"conn end-\(b.endedBy ?? "open")\" data-conn=\"\(b.number)\" data-start-frame=\"\(b.startFrame)\""
        out += " data-end-reason=\"\(Self.esc(b.reason ?? ""))\" data-end-frame=\"\(b.endFrame.map(String.init) ?? "")\""
        out += " data-ended-by=\"\(b.endedBy ?? "open")\">"
        out += "<title>\(Self.esc(title))</title>"
        out += "<rect x=\"\(c(x0))\" y=\"\(c(y + 7))\" width=\"\(c(x1 - x0))\" height=\"10\" rx=\"2\" class=\"bar-conn\"/>"
        for t in b.ticks.prefix(60) {
            let tx = c(x(t.time))
            out += "<line x1=\"\(tx)\" y1=\"\(c(y + 2))\" x2=\"\(tx)\" y2=\"\(c(y + 7))\" class=\"tick k-\(t.kind)\">"
            out += "<title>\(Self.esc("#\(b.number) frame \(t.frame): \(t.text)"))</title></line>"
        }
        for s in b.spans { out += span(s, y: y + 19, x: x) }
        out += rssiLine(b, y: y + 18, x: x)
        out += "<text x=\"\(c(x1))\" y=\"\(c(y + 16.5))\" class=\"endmark\">\(Self.endGlyph(b.endedBy))</text>"
        return out + "</g>"
    }

    /// RSSI under the bar: -100 dBm at its foot, -30 dBm at the bar (6 px), one point per quality report.
    private func rssiLine(_ b: Bar, y: Double, x: (Timestamp) -> Double) -> String {
        guard !b.rssi.isEmpty else { return "" }
        let points = b.rssi.prefix(2_000).map { p in
            "\(c(x(p.time))),\(c(y + 6 - Double(min(70, max(0, p.dBm + 100))) / 70 * 6))"
        }
        let values = b.rssi.map(\.dBm)
        var out = "<polyline points=\"\(points.joined(separator: " "))\" class=\"rssi\">"
        out +=
            "<title>\(Self.esc("#\(b.number) RSSI from \(b.rssi.count) quality reports: \(values.min()!) to \(values.max()!) dBm, last \(values.last!) dBm"))</title>"
        return out + "</polyline>"
    }

    private func span(_ s: Span, y: Double, x: (Timestamp) -> Double) -> String {
        let x0 = x(s.start), x1 = max(x0 + 2, x(s.end))
        return
            "<rect x=\"\(c(x0))\" y=\"\(c(y))\" width=\"\(c(x1 - x0))\" height=\"4\" class=\"span-\(s.kind)\"><title>\(Self.esc(s.text))</title></rect>"
    }

    private func axisMarks(y: Double, left: Double, width: Double) -> String {
        var out = "<line x1=\"\(c(left))\" y1=\"\(c(y))\" x2=\"\(c(left + width))\" y2=\"\(c(y))\" class=\"axis\"/>"
        let ticks = SVGChart.ticks(max: spanSeconds, count: 8).filter { $0 <= spanSeconds * 1.0001 }
        for t in ticks {
            let tx = c(left + t / spanSeconds * width)
            out += "<line x1=\"\(tx)\" y1=\"\(c(y))\" x2=\"\(tx)\" y2=\"\(c(y + 4))\" class=\"axis\"/>"
            out += "<text x=\"\(tx)\" y=\"\(c(y + 15))\" class=\"xlabel\">\(SVGChart.number(t)) s</text>"
        }
        return out
    }

    private func findingMarks(y: Double, index: Int, x: (Timestamp) -> Double) -> String {
        guard !markers.isEmpty else { return "" }
        var out = "<text x=\"4\" y=\"\(c(y + 12))\" class=\"lanelabel\">findings</text>"
        // Errors drawn last: on top of a warning at the same place, and the one a click reaches.
        for m in markers.enumerated().sorted(by: { ($0.element.severity, $0.offset) < ($1.element.severity, $1.offset) }).map(\.element) {
            let mx = x(m.time)
            let sev = m.severity >= .error ? "error" : "warning"
            out += "<a href=\"#file\(index)-d\(m.frame)\" class=\"marker sev-\(sev)\" data-frame=\"\(m.frame)\">"
            out += "<title>\(Self.esc("\(m.severity.rawValue) \(m.rule) at frame \(m.frame): \(m.text)"))</title>"
            out += "<path d=\"M\(c(mx)) \(c(y + 2))l5 10h-10z\"/></a>"
        }
        return out
    }

    /// The chart's section: heading, the SVG, a legend.
    public func html(index: Int) -> String {
        var out = "<span id=\"file\(index)-links-over-time\"></span><h3>Links over time</h3>"
        out += svg(index: index)
        out += "<p class=\"legend muted\"><span>▬ connection</span><span>end: "
        out += onAir ? "■ the central · ◆ the peripheral · " : "■ this side · ◆ the peer · "
        out += "<b class=\"bad\">✕</b> the link was lost · ? unknown · ▸ open at the end</span>"
        out += "<span>ticks: <i class=\"sw k-encryption\"></i>encryption <i class=\"sw k-mtu\"></i>MTU <i class=\"sw k-phy\"></i>PHY "
        out += "<i class=\"sw k-data-length\"></i>data length <i class=\"sw k-parameters\"></i>parameters</span>"
        out +=
            "<span><i class=\"sw span-ota\"></i>OTA <i class=\"sw span-iso\"></i>LE Audio <i class=\"sw span-sniff\"></i>sniff <i class=\"sw span-a2dp\"></i>A2DP <i class=\"sw span-sco\"></i>SCO/eSCO <i class=\"sw rssi\"></i>RSSI ▲ finding</span></p>"
        return out
    }
}
