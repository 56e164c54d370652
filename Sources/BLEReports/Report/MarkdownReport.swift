import BLEAnalysis
import BLECodecs
import BLECore

/// The report as Markdown for issue trackers: the same sections as the HTML page, tables instead of charts
/// (each stream's rate over time as a text sparkline), lists capped the same way.
public enum MarkdownReport {
    public static func render(_ report: Report) -> String {
        var out = head(fileCount: report.files.count, options: report.options)
        for f in report.files { out += file(f, options: report.options) }
        return out
    }

    /// Lines longer than `width` broken between words, except tables (`|`), headings, code blocks and a word longer
    /// than a line (a path stays whole); a list item's continuation is indented under its text, so the Markdown means
    /// the same.
    static func wrapParagraphs(_ text: String, width: Int) -> String {
        var out: [String] = []
        var inCode = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") { inCode.toggle() }
            guard !inCode, line.count > width, !line.hasPrefix("|"), !line.hasPrefix("#"), !line.hasPrefix("    ") else {
                out.append(line)
                continue
            }
            let indent = line.prefix { $0 == " " }
            let body = line.dropFirst(indent.count)
            let marker = body.hasPrefix("- ") || body.hasPrefix("* ") ? "  " : ""
            out += wrapWords(String(body), width: width, first: String(indent), rest: String(indent) + marker)
        }
        return out.joined(separator: "\n")
    }

    /// The heading and how to read the rates; each file's section follows.
    public static func head(fileCount: Int, options: ReportOptions) -> String {
        var out = "# blescope report\n\n"
        out += "\(fileCount) capture file\(fileCount == 1 ? "" : "s"); times in \(options.clock.zoneName). "
        out += "Rates are attribute value bits per second from a stream's first to its last packet; the ceiling is the "
        out += "notification / write-without-response maximum for the link in force.\n\n"
        out += "Notation: " + NotationLegend.linkSetting + " " + NotationLegend.linkPeriods + "\n"
        return wrapParagraphs(out, width: 120)
    }

    /// `### Link quality`: per connection with Bluetooth Quality Reports, the verdict and the series.
    static func linkQuality(_ connections: [Connection], clock: ReportClock) -> String {
        let reported = connections.filter { !$0.linkQuality.isEmpty }
        guard !reported.isEmpty else { return "" }
        var out = "\n### Link quality\n\n"
        for c in reported {
            guard let q = LinkQualitySummary(c.linkQuality) else { continue }
            out += "Connection #\(c.number): \(q.verdict)\n\n"
            out += "RSSI `" + sparkline(c.linkQuality.map { Double(Int($0.quality.rssi) + 128) }) + "`\n\n"
            out += header(["frame", "time", "report", "RSSI dBm", "SNR dB", "retransmissions", "NAK", "no-RX", "flow-off"])
            for s in c.linkQuality.prefix(50) {
                let v = s.quality
                out += row([
                    "\(s.frame)", clock.format(s.timestamp), s.reportID.description, "\(v.rssi)", "\(v.snr)",
                    "\(v.retransmissionCount)", "\(v.nakCount)", "\(v.noRxCount)", "\(v.flowOffCount)",
                ])
            }
            if c.linkQuality.count > 50 { out += "\n… \(c.linkQuality.count - 50) more reports.\n" }
            out += "\n"
        }
        return out
    }

    /// Escapes table cell text (pipes, newlines).
    static func cell(_ s: String) -> String {
        s.replacingAll("|", with: "\\|").replacingNewlines()
    }

    static func row(_ cells: [String]) -> String { "| " + cells.map(cell).joined(separator: " | ") + " |\n" }

    static func header(_ cells: [String]) -> String {
        row(cells) + "|" + String(repeating: "---|", count: cells.count) + "\n"
    }

    /// `▁▂▅█▇` from a series (at most `width` characters, max-pooled).
    public static func sparkline(_ values: [Double], width: Int = 60) -> String {
        guard let top = values.max(), top > 0 else { return "" }
        let bars = Array("▁▂▃▄▅▆▇█")
        let n = values.count
        let cols = min(width, n)
        var out = ""
        for c in 0..<cols {
            let lo = c * n / cols, hi = max(lo + 1, (c + 1) * n / cols)
            let v = values[lo..<hi].max() ?? 0
            out.append(bars[min(7, Int(v / top * 7.999))])
        }
        return out
    }

    /// `### Summary` and one bullet per verdict, naming the section below with the detail.
    static func summary(_ items: [VerdictItem]) -> String {
        var out = "### Summary\n\n"
        if items.isEmpty { return out + "Nothing to report: no connection, transfer or update found.\n\n" }
        let sections = [
            "ota": "Transfers and firmware updates", "transfers": "Transfers and firmware updates", "throughput": "Throughput",
            "connections": "Link quality", "capture": "Capture", "findings": "Findings", "diagnosis": "Diagnosis",
            "iso": "LE Audio (isochronous streams)",
        ]
        for i in items {
            let mark = i.status == .ok ? "✓" : i.status == .failure ? "✗" : i.status == .warning ? "!" : "·"
            out += "- \(mark) **\(i.topic)**: \(i.text)"
            if let frame = i.frame { out += " (frame \(frame))" }
            out += " → *\(sections[i.section] ?? i.section)*\n"
        }
        return out + "\n"
    }

    /// One capture's section: summary, diagnosis, then one subsection per topic.
    public static func file(_ f: FileAnalysis, options: ReportOptions) -> String {
        let clock = options.clock
        var out = "\n## \(f.path)\n\n"
        if let error = f.error { return out + "**Cannot read:** \(error)\n" }
        out += summary(f.summary)
        out += linksOverTime(f)
        out += diagnosis(f)
        out += decodeWarnings(f)
        out += captureTable(f, clock: clock)
        out += connections(f, options: options)
        out += ReportSecurity.markdown(f)
        out += linkQuality(f.connections, clock: clock)
        out += throughput(f, options: options)
        out += transfers(f, options: options)
        out += iso(f)
        out += gattDatabases(f)
        out += keyEvents(f, clock: clock)
        out += findings(f, options: options)
        return wrapParagraphs(out, width: 120)
    }

    /// `### Links over time`: the chart's text form, one line per connection, in a code block (the tracks align).
    static func linksOverTime(_ f: FileAnalysis) -> String {
        guard let chart = LinksChart(f) else { return "" }
        var out = "### Links over time\n\n```\n"
        out += "0 → \(String(fractionDigits: 3, chart.spanSeconds)) s; \(chart.legendText)\n"
        for line in chart.textLines() { out += line + "\n" }
        return out + "```\n\n"
    }

    /// The quoted block listing what was not decoded, when anything was not.
    static func decodeWarnings(_ f: FileAnalysis) -> String {
        guard let h = f.info?.decodeHealth, !h.warnings.isEmpty else { return "" }
        var out = "> **Not everything was decoded:** \(h.headline)\n"
        for c in h.warnings { out += ">\n> - \(c.warning ?? "")\n" }
        return out + "\n"
    }

    /// The two-column table describing the capture file.
    static func captureTable(_ f: FileAnalysis, clock: ReportClock) -> String {
        guard let info = f.info else { return "" }
        let s = info.statistics
        var out = header(["Capture", ""])
        out += row(["Format", info.format + (info.compressed ? " (gzip)" : "") + ", datalink \(info.datalink) (\(info.datalinkName))"])
        out += row(["Records", formatCount(s.records)])
        out += row([
            "First / last record", "\(s.firstTimestamp.map(clock.format) ?? "—") / \(s.lastTimestamp.map(clock.format) ?? "—")",
        ])
        out += row(["Span", info.span.map { formatDuration(microseconds: $0) } ?? "—"])
        out += row(["Completeness", info.completeness.headline])
        if let h = info.decodeHealth { out += row(["Decode health", h.headline]) }
        if let h = info.decodeHealth, !h.decryptions.isEmpty { out += row(["Link decryption", h.decryptions.joined(separator: "; ")]) }
        out += row(["Truncated / dropped", "\(formatCount(s.truncatedRecords)) / \(formatCount(Int(s.maxDrops)))"])
        out += row(["Decode findings", "\(f.findingCount)"])
        out += row(["Diagnosis", HTMLReport.diagnosisTally(f)])
        return out
    }

    /// The link columns of the connections table: the shared link fields' text (``LinkColumns``).
    static let linkCells = ["interval / latency / timeout", "phy", "data_length", "mtu", "encrypted"].map(ConnectionColumns.link)

    /// `### Connections`: one row per connection with the link parameters in force at its end.
    static func connections(_ f: FileAnalysis, options: ReportOptions) -> String {
        var out = "\n### Connections\n\n"
        guard !f.connections.isEmpty else { return out + "No connections.\n" }
        out += header(["#", "handle", "peer", "start"] + linkCells.compactMap { $0.text?.title } + ["end"])
        for c in f.connections.prefix(options.maxRows) {
            out += row(
                [
                    "\(c.number)", hex(c.handle, width: 4), (ConnectionColumns.peerText(c) ?? "—") + (c.inferred ? " (inferred)" : ""),
                    options.clock.format(c.startTime),
                ] + Self.linkCells.map { $0.textCell(c) ?? "" } + [
                    c.lifecycle.ending?.text ?? c.disconnectReason ?? (c.endFrame == nil ? "open" : "disconnected")
                ])
        }
        return out
    }

    /// `### Throughput`: the stream table, then each stream's verdict and rate sparkline.
    static func throughput(_ f: FileAnalysis, options: ReportOptions) -> String {
        var out = "\n### Throughput\n\n"
        guard !f.throughput.isEmpty else { return out + "No attribute values.\n" }
        out += header(["conn", "dir", "handle", "kind", "packets", "bytes", "duration", "rate", "window p95", "ceiling", "share"])
        for s in f.throughput.prefix(options.maxRows) {
            let share = s.rateBitsPerSecond.flatMap { r in s.ceilingBitsPerSecond.map { r / $0 } }
            out += row([
                "#\(s.key.connectionNumber)", s.key.direction.description, hex(s.key.handle, width: 4), s.key.kind.name,
                formatCount(s.packets), formatCount(s.valueBytes), formatDuration(microseconds: s.durationMicroseconds),
                s.rateBitsPerSecond.map(formatBitRate) ?? "—", s.windows.map { formatBitRate($0.p95) } ?? "—",
                s.ceilingBitsPerSecond.map(formatBitRate) ?? "—", share.map { String(fractionDigits: 0, $0 * 100) + " %" } ?? "—",
            ])
        }
        out += "\n"
        for s in f.throughput.prefix(options.maxRows) {
            out += "- `#\(s.key.connectionNumber) \(s.key.direction) \(hex(s.key.handle, width: 4)) \(s.key.kind)`: \(s.verdict.text)\n"
            let spark = sparkline(s.series.map(\.bitsPerSecond))
            if !spark.isEmpty { out += "  `\(spark)` (rate over \(formatDuration(microseconds: s.durationMicroseconds)))\n" }
        }
        return out
    }

    /// `### Transfers and firmware updates`: the chunked-transfer table, then the OTA sessions as text.
    static func transfers(_ f: FileAnalysis, options: ReportOptions) -> String {
        var out = "\n### Transfers and firmware updates\n\n"
        if f.transfers.isEmpty {
            out += "No chunked transfers found.\n"
        } else {
            out += header(["conn", "handle", "dir", "framing", "frames", "chunks", "bytes", "rate", "status"])
            for t in f.transfers.prefix(options.maxRows) {
                out += row([
                    "#\(t.connectionNumber)", hex(t.handle, width: 4), t.direction.description, t.framing.rawValue,
                    "\(t.firstFrame)–\(t.lastFrame)", "\(t.chunks)", formatCount(t.length),
                    t.rateBitsPerSecond.map(formatBitRate) ?? "—", t.complete ? "complete" : "**INCOMPLETE**",
                ])
            }
        }
        out += "\n"
        if f.otaSessions.isEmpty {
            out += "No firmware update found.\n"
        } else {
            out += "```\n" + OTAReport.text(Array(f.otaSessions.prefix(options.maxRows))) + "```\n"
        }
        return out
    }

    /// `### GATT databases`: the `gatt` command's text, cut at 30,000 bytes.
    static func gattDatabases(_ f: FileAnalysis) -> String {
        var out = "\n### GATT databases\n\n```\n"
        var gatt = GATTReport(connections: f.connections, usage: f.usage).text(terminal: Terminal(colors: false))
        if gatt.utf8.count > 30_000 { gatt = String(decoding: Array(gatt.utf8.prefix(30_000)), as: UTF8.self) + "\n… (cut)\n" }
        out += gatt + "```\n"
        return out
    }

    /// `### Key events`.
    static func keyEvents(_ f: FileAnalysis, clock: ReportClock) -> String {
        var out = "\n### Key events\n\n"
        guard !f.keyEvents.isEmpty else { return out + "None.\n" }
        out += header(["frame", "time", "conn", "event"])
        for e in f.keyEvents {
            out += row([
                "\(e.frame)", e.timestamp.map(clock.format) ?? "", e.connectionNumber.map { "#\($0)" } ?? "", "\(e.kind): \(e.text)",
            ])
        }
        if f.keyEventsOmitted > 0 { out += "\n… \(f.keyEventsOmitted) more key events not shown.\n" }
        return out
    }

    /// `### Findings`: one row per finding group.
    static func findings(_ f: FileAnalysis, options: ReportOptions) -> String {
        var out = "\n### Findings\n\n"
        guard !f.findingGroups.isEmpty else { return out + "None.\n" }
        out += header(["severity", "code", "count", "first frames", "message"])
        for g in f.findingGroups.prefix(options.maxRows) {
            out += row([
                g.severity.rawValue, "`\(g.code)`", formatCount(g.count),
                g.firstFrames.map(String.init).joined(separator: ", ") + (g.count > g.firstFrames.count ? ", …" : ""), g.message,
            ])
        }
        return out
    }
}
