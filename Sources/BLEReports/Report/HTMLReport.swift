import BLEAnalysis
import BLECodecs
import BLECore

/// The report as one self-contained HTML page: inline CSS, SVG and script, nothing fetched.
///
/// Sections per capture file: summary, connections with their parameters over time, throughput (table,
/// verdicts, a rate chart per stream with the ceiling drawn, an inter-packet gap histogram), transfers and OTA
/// sessions with verdicts, GATT databases, key events, findings grouped by code. Lists are capped
/// (``ReportOptions``) and charts downsampled, so the page stays small whatever the capture.
public enum HTMLReport {
    static let css = """
        body{font:14px/1.45 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;color:#1d232a;margin:0;background:#f4f6f8}
        main{max-width:1120px;margin:0 auto;padding:16px 24px 48px}
        h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:2px solid #d6dde4;padding-bottom:4px}
        h3{font-size:15px;margin:18px 0 6px}
        section.file{background:#fff;border:1px solid #d6dde4;border-radius:6px;padding:8px 20px 20px;margin:18px 0}
        table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
        th,td{border:1px solid #dfe4ea;padding:3px 7px;text-align:left;vertical-align:top}
        th{background:#eef2f6;font-weight:600}td.nw{white-space:nowrap}
        .scroll{max-width:100%;overflow-x:auto}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
        table.kv th{width:170px}
        .muted{color:#66717d}.mono,pre{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px}
        pre{background:#f7f9fb;border:1px solid #e3e8ee;padding:8px;overflow-x:auto;white-space:pre}
        .verdict{margin:2px 0 8px;padding:6px 10px;border-left:4px solid #d9822b;background:#fdf6ec}
        .verdict.ok{border-color:#2e8540;background:#eef8f0}.verdict.bad{border-color:#c23030;background:#fcefef}
        .finding{margin:6px 0;padding:6px 10px;border-left:4px solid #d9822b;background:#fdf6ec}
        .finding.failure{border-color:#c23030;background:#fcefef}.finding details{margin-top:4px}
        .sev-error{color:#c23030;font-weight:600}.sev-warning{color:#b36200;font-weight:600}.sev-info{color:#2b6cb0}
        .ok{color:#2e8540;font-weight:600}.bad{color:#c23030;font-weight:600}
        ul.summary{list-style:none;padding:0;margin:6px 0 12px}ul.summary li{margin:3px 0;padding:4px 10px;border-left:4px solid #8a96a3;background:#f7f9fb}
        ul.summary li.st-ok{border-color:#2e8540}ul.summary li.st-warning{border-color:#d9822b}ul.summary li.st-failure{border-color:#c23030;background:#fcefef}
        svg.chart{display:block;background:#fff;border:1px solid #e3e8ee;margin:6px 0 4px;max-width:100%;height:auto}
        svg .title{font-size:13px;font-weight:600;fill:#1d232a}
        svg .grid{stroke:#e6eaef;stroke-width:1}svg .axis{stroke:#5c6670;stroke-width:1}
        svg .ylabel{font-size:11px;fill:#46505a;text-anchor:end}svg .xlabel{font-size:11px;fill:#46505a;text-anchor:middle}
        svg .small{font-size:10px}svg .xtitle{font-size:11px;fill:#46505a;text-anchor:middle}
        svg .ytitle{font-size:11px;fill:#46505a;text-anchor:middle}
        svg .series{fill:none;stroke:#1f6feb;stroke-width:1.6;stroke-linejoin:round}
        svg .ceiling{stroke:#c23030;stroke-width:1.5;stroke-dasharray:6 4}
        svg .ceilinglabel{font-size:11px;fill:#c23030;text-anchor:end;paint-order:stroke;stroke:#fff;stroke-width:3px}
        svg .average{stroke:#2e8540;stroke-width:1;stroke-dasharray:2 3}svg .averagelabel{font-size:11px;fill:#2e8540;text-anchor:end;paint-order:stroke;stroke:#fff;stroke-width:3px}
        svg .bar{fill:#6f9fd8}svg .bar.lost{fill:#c0392b}svg .barlabel{font-size:10px;fill:#1d232a;text-anchor:middle}
        .legend span{margin-right:14px}.sw{display:inline-block;width:18px;height:0;border-top:2px solid;vertical-align:middle;margin-right:4px}
        svg .lanelabel{font-size:11px;fill:#1d232a}svg .bar-conn{fill:#6f9fd8}svg .endmark{font-size:12px;font-weight:700}
        svg .end-peer .bar-conn{fill:#a58fd6}svg .end-peer .endmark{fill:#6b3fa0}svg .end-link .bar-conn{fill:#e39a9a}
        svg .end-link .endmark{fill:#c23030}svg .end-unknown .bar-conn{fill:#b8c1cb}svg .end-open .bar-conn{fill:#8fcf9c}
        svg .end-local .endmark{fill:#1f4f99}svg .tick{stroke-width:2}svg .span-log{stroke:#d5dce3;stroke-width:4}
        svg .conn:hover .bar-conn{stroke:#1d232a}svg .marker path{fill:#d9822b}svg .marker.sev-error path{fill:#c23030}
        .k-encryption{stroke:#2e8540;border-color:#2e8540!important}.k-mtu{stroke:#1f6feb;border-color:#1f6feb!important}
        .k-phy{stroke:#8e44ad;border-color:#8e44ad!important}.k-data-length{stroke:#b36200;border-color:#b36200!important}
        .k-parameters{stroke:#46505a;border-color:#46505a!important}.span-ota{fill:#d9822b;border-color:#d9822b!important}
        .span-iso{fill:#0f9d9a;border-color:#0f9d9a!important}.span-sniff{fill:#9aa5b1;border-color:#9aa5b1!important}
        .span-a2dp{fill:#6f42c1;border-color:#6f42c1!important}.span-sco{fill:#c0392b;border-color:#c0392b!important}svg .rssi{fill:none;stroke:#2e8540;stroke-width:1}
        .sw.rssi{border-color:#2e8540!important}svg.links{cursor:crosshair}svg .brush{fill:#1f6feb;fill-opacity:.12;stroke:#1f6feb}
        footer{color:#66717d;font-size:12px;margin-top:24px}
        """

    public static func render(_ report: Report) -> String {
        var out = head(paths: report.files.map(\.path), options: report.options)
        out += overview(report.files.map(FileOverview.init))
        for (i, f) in report.files.enumerated() { out += file(f, index: i + 1, options: report.options) }
        return out + tail
    }

    /// The page up to the file sections: title (the first file names), style, heading, how to read the rates.
    public static func head(paths: [String], options: ReportOptions) -> String {
        var out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        // A fleet of captures would make a title longer than any tab shows.
        var names = paths.prefix(5).map(basename).joined(separator: ", ")
        if paths.count > 5 { names += " and \(formatCount(paths.count - 5)) more" }
        out += "<title>blescope report: \(esc(names))</title><style>\(css)\(timelineCSS)\(sequenceCSS)</style></head><body><main>"
        out += "<h1>blescope report</h1>"
        out += "<p class=\"muted\">\(paths.count) capture file\(paths.count == 1 ? "" : "s"); times in \(esc(options.clock.zoneName)). "
        out += "Rates are attribute value bits per second from a stream's first to its last packet; the ceiling is the "
        out += "notification / write-without-response maximum for the PHY, data length and MTU in force (no other traffic, "
        out += "the peer acknowledging each packet with an empty one).</p>"
        return out
    }

    /// The table of files, linking to their sections (nothing for a single file).
    public static func overview(_ files: [FileOverview]) -> String {
        guard files.count > 1 else { return "" }
        var out = "<table><tr><th>#</th><th>file</th><th>records</th><th>connections</th><th>streams</th><th>findings</th></tr>"
        for (i, f) in files.enumerated() {
            out += "<tr><td class=\"n\">\(i + 1)</td><td><a href=\"#file\(i + 1)\">\(esc(f.path))</a></td>"
            if let error = f.error {
                out += "<td colspan=\"4\" class=\"bad\">\(esc(error))</td></tr>"
                continue
            }
            out += "<td class=\"n\">\(formatCount(f.records))</td><td class=\"n\">\(f.connections)</td>"
            out += "<td class=\"n\">\(f.streams)</td><td class=\"n\">\(f.findings)</td></tr>"
        }
        return out + "</table>"
    }

    public static let tail =
        "<footer>Generated by blescope. Self-contained: one inline script, nothing fetched, no external resources.</footer></main>"
        + "<script>\(timelineScript)</script></body></html>\n"

    static func esc(_ s: String) -> String { SVGChart.escape(s) }

    static func basename(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// One capture's section (`id="file<index>"`, which the overview links to).
    public static func file(_ f: FileAnalysis, index: Int, options: ReportOptions) -> String {
        let clock = options.clock
        var out = "<section class=\"file\" id=\"file\(index)\"><h2>\(esc(basename(f.path)))</h2>"
        if let error = f.error {
            return out + "<p class=\"bad\">Cannot read this file: \(esc(error))</p></section>"
        }
        if let links = LinksChart(f) { out += links.html(index: index) }
        out += summary(f.summary, index: index)
        out += diagnosis(f, index: index)
        // Decode health first: when a connection lost a large share, everything below is partial.
        if let h = f.info?.decodeHealth, !h.warnings.isEmpty {
            out += "<div class=\"bad\"><p><b>Not everything was decoded:</b> \(esc(h.headline))</p><ul>"
            for c in h.warnings { out += "<li>\(esc(c.warning ?? ""))</li>" }
            out += "</ul></div>"
        }
        if let info = f.info {
            let s = info.statistics
            var rows: [(String, String)] = [
                ("File", f.path), ("Format", info.format + (info.compressed ? " (gzip)" : "")),
                ("Datalink", "\(info.datalink) (\(info.datalinkName))"),
            ]
            if let size = info.fileSize { rows.append(("Size", formatBytes(size))) }
            rows.append(("Records", formatCount(s.records)))
            rows.append(("First record", s.firstTimestamp.map(clock.format) ?? "—"))
            rows.append(("Last record", s.lastTimestamp.map(clock.format) ?? "—"))
            rows.append(("Span", info.span.map { formatDuration(microseconds: $0) } ?? "—"))
            var kinds: [String] = []
            for (name, n) in [
                ("commands", s.commands), ("events", s.events), ("ACL tx", s.aclTx), ("ACL rx", s.aclRx),
                ("SCO", s.sco), ("empty SCO", s.scoEmpty), ("ISO", s.iso), ("notes", s.text), ("link-layer", s.linkLayer),
                ("other", s.other),
            ] where n > 0 {
                kinds.append("\(name) \(formatCount(n))")
            }
            rows.append(("By type", kinds.isEmpty ? "—" : kinds.joined(separator: ", ")))
            rows.append(
                (
                    "Decoded",
                    "\(formatCount(f.counters.l2capPDUs)) L2CAP PDUs, \(formatCount(f.counters.attPDUs)) ATT PDUs, \(formatCount(f.counters.smpPDUs)) SMP PDUs"
                ))
            if let h = info.decodeHealth { rows.append(("Decode health", h.headline)) }
            if let h = info.decodeHealth, !h.decryptions.isEmpty { rows.append(("Link decryption", h.decryptions.joined(separator: "; "))) }
            rows.append(("Truncated records", formatCount(s.truncatedRecords)))
            rows.append(("Dropped (capturer)", s.nordicSkips.skipped > 0 ? s.droppedText : formatCount(Int(s.maxDrops))))
            if let b = f.aclBuffers { rows.append(("Controller ACL buffers", "\(b.packets) × \(b.length) bytes")) }
            // Two kinds of findings: the decoder's (malformed or odd records, the Findings section) and the diagnosis's
            // (what went wrong on the links): one "none" beside the other's warnings would read as "nothing wrong".
            rows.append(("Decode findings", f.findingCount == 0 ? "none" : formatCount(f.findingCount)))
            rows.append(("Diagnosis", diagnosisTally(f)))
            rows.insert(("Completeness", info.completeness.verdict), at: 1)
            out += "<span id=\"file\(index)-capture\"></span><h3>Capture</h3><table class=\"kv\">"
            for (k, v) in rows { out += "<tr><th>\(esc(k))</th><td>\(esc(v))</td></tr>" }
            out += "</table>"
            if !info.completeness.items.isEmpty {
                out += "<table><tr><th>what the log cannot show</th><th>frame</th></tr>"
                for item in info.completeness.items {
                    out +=
                        "<tr><td class=\"sev-\(item.severity.rawValue)\">\(esc(item.message))</td><td class=\"n\">\(item.frame.map(String.init) ?? "")</td></tr>"
                }
                out += "</table>"
            }
        }
        out += anchored(connections(f, options: options), "file\(index)-connections")
        out += anchored(ReportSecurity.html(f), "file\(index)-security")
        out += anchored(throughput(f, options: options), "file\(index)-throughput")
        out += anchored(
            anchored(transfersAndOTA(f, options: options), "file\(index)-transfers"), "file\(index)-ota",
            heading: "<h3>Firmware updates (OTA)</h3>")
        out += anchored(iso(f, options: options), "file\(index)-iso")
        out += gatt(f)
        out += timeline(f, options: options)
        out += searchableTimeline(f, index: index)
        out += anchored(findings(f, options: options), "file\(index)-findings")
        return RepeatedText.onceEach(out + "</section>", anchorPrefix: "file\(index)-note")
    }

    /// The opening verdicts: one line each, linking to the section with the detail.
    static func summary(_ items: [VerdictItem], index: Int) -> String {
        var out = "<span id=\"file\(index)-summary\"></span><h3>Summary</h3>"
        guard !items.isEmpty else { return out + "<p class=\"muted\">Nothing to report: no connection, transfer or update found.</p>" }
        out += "<ul class=\"summary\">"
        for i in items {
            out += "<li class=\"st-\(i.status.rawValue)\"><b>\(esc(i.topic))</b>: \(esc(i.text))"
            if let frame = i.frame { out += " <span class=\"muted\">(frame \(frame))</span>" }
            let anchor = i.section == "diagnosis" && i.frame != nil ? "d\(i.frame!)" : i.section
            out += " <a href=\"#file\(index)-\(anchor)\">details</a></li>"
        }
        return out + "</ul>"
    }

    /// `html` with an empty anchor `<span id>` before its first `heading` (by default its first `<h3>`): the
    /// summary links there, the headings stay as they are.
    static func anchored(_ html: String, _ id: String, heading: String = "<h3>") -> String {
        guard let r = html.firstRange(of: heading) else { return html }
        var out = html
        out.replaceSubrange(r, with: "<span id=\"\(id)\"></span>" + heading)
        return out
    }

    static func connections(_ f: FileAnalysis, options: ReportOptions) -> String {
        var out = "<h3>Devices and connections</h3>"
        guard !f.connections.isEmpty else { return out + "<p class=\"muted\">No connections.</p>" }
        out +=
            "<div class=\"scroll\"><table><tr><th>#</th><th>handle</th><th>peer</th><th>role</th><th>start</th><th>duration</th><th>interval / latency / timeout</th>"
        out += "<th>link (PHY, data length tx/rx, MTU)</th><th>ACL tx / rx</th><th>max in flight</th><th>end</th></tr>"
        for c in f.connections.prefix(options.maxRows) {
            let end = c.endTime ?? c.startTime
            out += "<tr><td class=\"n\">\(c.number)</td><td class=\"mono\">\(hex(c.handle, width: 4))</td>"
            out +=
                "<td class=\"mono\">\(esc(c.peerAddress ?? "—"))\(c.peerAddressType.map { " <span class=\"muted\">(\(esc($0)))</span>" } ?? "")\(c.inferred ? " <span class=\"muted\">(inferred)</span>" : "")</td>"
            out +=
                "<td>\(esc(ConnectionColumns.role.textCell(c) ?? "—"))</td><td class=\"mono nw\">\(esc(options.clock.format(c.startTime)))<br><span class=\"muted\">frame \(c.startFrame)</span></td>"
            out +=
                "<td class=\"n\">\(c.endTime == nil ? "open at end" : esc(formatDuration(microseconds: end.microseconds(since: c.startTime))))</td>"
            let cell = { (name: String) in esc(ConnectionColumns.link(name).textCell(c) ?? "") }
            out += "<td>\(cell("interval / latency / timeout"))</td>"
            out += "<td>\(cell("phy")), \(cell("data_length")), MTU \(cell("mtu"))\(c.isEncrypted ? ", encrypted" : "")</td>"
            out +=
                "<td class=\"n\">\(formatCount(c.aclPackets[.tx])) / \(formatCount(c.aclPackets[.rx]))</td><td class=\"n\">\(c.maxInFlight)</td>"
            out += "<td>\(esc(c.lifecycle.ending?.text ?? c.disconnectReason ?? (c.endFrame == nil ? "—" : "disconnected")))</td></tr>"
        }
        out += "</table></div>"
        if f.connections.count > options.maxRows {
            out += "<p class=\"muted\">… \(f.connections.count - options.maxRows) more connections.</p>"
        }
        out += "<p class=\"muted\">Values shown are the last in force; their history is below and in the key events.</p>"
        // Link quality from the controller's Bluetooth Quality Reports.
        for c in f.connections.prefix(options.maxRows) {
            guard let q = LinkQualitySummary(c.linkQuality) else { continue }
            out += "<p><b>Connection #\(c.number)</b> link quality (Bluetooth Quality Reports):</p>"
            out += "<div class=\"verdict \(q.isRadioLimited ? "bad" : "ok")\">\(esc(q.verdict))</div>"
            out += SVGChart.linkQualityChart(c.linkQuality, title: "RSSI and retransmissions per report, connection #\(c.number)")
            out +=
                "<table><tr><th>frame</th><th>time</th><th>report</th><th>RSSI dBm</th><th>SNR dB</th><th>retransmissions</th><th>NAK</th><th>no-RX</th><th>flow-off</th></tr>"
            for s in c.linkQuality.prefix(options.maxRows) {
                let v = s.quality
                out +=
                    "<tr><td class=\"n\">\(s.frame)</td><td class=\"mono\">\(esc(options.clock.format(s.timestamp)))</td><td>\(esc(s.reportID.description))</td>"
                out += "<td class=\"n\">\(v.rssi)</td><td class=\"n\">\(v.snr)</td><td class=\"n\">\(v.retransmissionCount)</td>"
                out += "<td class=\"n\">\(v.nakCount)</td><td class=\"n\">\(v.noRxCount)</td><td class=\"n\">\(v.flowOffCount)</td></tr>"
            }
            out += "</table>"
        }
        // Parameter history per connection (when anything changed).
        for c in f.connections.prefix(options.maxRows) {
            var changes = LinkColumns.changes(of: c.link).map { ($0.frame, $0.time, $0.text) }
            guard !changes.isEmpty else { continue }
            changes.sort { $0.0 < $1.0 }
            out +=
                "<p><b>Connection #\(c.number)</b> parameters over time:</p><table><tr><th>frame</th><th>time</th><th>+s</th><th>change</th></tr>"
            for (frame, t, text) in changes.prefix(20) {
                out += "<tr><td class=\"n\">\(frame)</td><td class=\"mono\">\(esc(options.clock.format(t)))</td>"
                out +=
                    "<td class=\"n\">\(String(fractionDigits: 3, Double(t.microseconds(since: c.startTime)) / 1e6))</td><td>\(esc(text))</td></tr>"
            }
            out += "</table>"
            if changes.count > 20 { out += "<p class=\"muted\">… \(changes.count - 20) more changes.</p>" }
            if let ll = c.linkLayer {
                out +=
                    "<p>Air: \(formatCount(ll.events)) connection events, \(String(fractionDigits: 2, ll.averagePacketsPerEvent)) packets per event (max \(ll.maxPacketsPerEvent)), "
                out +=
                    "\(formatCount(ll.emptyPDUs)) empty PDUs, \(formatCount(ll.retransmissions)) retransmissions, \(formatCount(ll.crcErrors)) CRC errors.</p>"
            }
        }
        return out
    }

    static func transfersAndOTA(_ f: FileAnalysis, options: ReportOptions) -> String {
        var out = "<h3>Transfers</h3>"
        if f.transfers.isEmpty {
            out += "<p class=\"muted\">No chunked transfers found.</p>"
        } else {
            out +=
                "<table><tr><th>conn</th><th>handle</th><th>dir</th><th>framing</th><th>frames</th><th>chunks</th><th>bytes</th><th>duration</th><th>rate</th><th>status</th><th>preview</th></tr>"
            for t in f.transfers.prefix(options.maxRows) {
                out +=
                    "<tr><td class=\"n\">#\(t.connectionNumber)</td><td class=\"mono\">\(hex(t.handle, width: 4))</td><td>\(t.direction)</td>"
                out +=
                    "<td>\(esc(t.framing.rawValue))</td><td class=\"n\">\(t.firstFrame)–\(t.lastFrame)</td><td class=\"n\">\(t.chunks)</td>"
                out +=
                    "<td class=\"n\">\(formatCount(t.length))</td><td class=\"n\">\(esc(formatDuration(microseconds: t.durationMicroseconds)))</td>"
                out += "<td class=\"n\">\(esc(t.rateBitsPerSecond.map(formatBitRate) ?? "—"))</td>"
                out += t.complete ? "<td class=\"ok\">complete</td>" : "<td class=\"bad\">INCOMPLETE</td>"
                let preview =
                    t.textPreview(limit: 48).map { "\"" + $0.replacingNewlines() + "\"" }
                    ?? hexString(t.data.prefix(16), separator: " ") + (t.data.count > 16 ? " …" : "")
                out += "<td class=\"mono\">\(esc(preview))</td></tr>"
            }
            out += "</table>"
            if f.transfers.count > options.maxRows {
                out += "<p class=\"muted\">… \(f.transfers.count - options.maxRows) more transfers.</p>"
            }
        }
        out += "<h3>Firmware updates (OTA)</h3>"
        if f.otaSessions.isEmpty { return out + "<p class=\"muted\">No firmware update found.</p>" }
        for s in f.otaSessions.prefix(options.maxRows) {
            let ok = s.result == .success
            out +=
                "<div class=\"verdict \(ok ? "ok" : "bad")\"><b>\(esc(s.protocolName.rawValue))</b> on connection #\(s.connectionNumber): "
            out += "<b>\(esc(s.result.label.uppercased()))</b>\(s.result.detail.map { " — " + esc($0) } ?? "")</div>"
            // The text renderer's lines, as they are (one place decides what an OTA verdict says).
            out += "<pre>\(esc(OTAReport.text([s])))</pre>"
        }
        return out
    }

    static func gatt(_ f: FileAnalysis) -> String {
        let out = "<h3>GATT databases</h3>"
        var text = GATTReport(connections: f.connections, usage: f.usage).text(terminal: Terminal(colors: false))
        let limit = 60_000
        if text.utf8.count > limit {
            text = String(decoding: Array(text.utf8.prefix(limit)), as: UTF8.self) + "\n… (cut: see blescope gatt)\n"
        }
        return out + "<pre>\(esc(text))</pre>"
    }

    static func timeline(_ f: FileAnalysis, options: ReportOptions) -> String {
        var out = "<h3>Key events</h3>"
        guard !f.keyEvents.isEmpty else { return out + "<p class=\"muted\">None.</p>" }
        out += "<table><tr><th>frame</th><th>time</th><th>conn</th><th>event</th></tr>"
        for e in f.keyEvents {
            let cls = e.kind == "error" ? "sev-error" : e.kind == "warning" ? "sev-warning" : ""
            out += "<tr><td class=\"n\">\(e.frame)</td><td class=\"mono\">\(esc(e.timestamp.map(options.clock.format) ?? ""))</td>"
            out +=
                "<td class=\"n\">\(e.connectionNumber.map { "#\($0)" } ?? "")</td><td class=\"\(cls)\">\(esc(e.kind)): \(esc(e.text))</td></tr>"
        }
        out += "</table>"
        if f.keyEventsOmitted > 0 { out += "<p class=\"muted\">… \(f.keyEventsOmitted) more key events not shown.</p>" }
        return out
    }

    /// `1 error, 4 warnings (64 rules)`, `nothing wrong found (64 rules)`, or `not run`.
    static func diagnosisTally(_ f: FileAnalysis) -> String {
        let rules = f.diagnosis.rulesEvaluated
        guard rules > 0 else { return "not run" }
        let tally = f.diagnosis.tally
        return (tally.isEmpty ? "nothing wrong found" : tally) + " (\(rules) rules)"
    }

    static func findings(_ f: FileAnalysis, options: ReportOptions) -> String {
        var out = "<h3>Findings</h3>"
        guard !f.findingGroups.isEmpty else { return out + "<p class=\"muted\">None.</p>" }
        out += "<table><tr><th>severity</th><th>code</th><th>count</th><th>first frames</th><th>message (first)</th></tr>"
        for g in f.findingGroups.prefix(options.maxRows) {
            out += "<tr><td class=\"sev-\(g.severity.rawValue)\">\(g.severity.rawValue)</td><td class=\"mono\">\(esc(g.code))</td>"
            out +=
                "<td class=\"n\">\(formatCount(g.count))</td><td class=\"mono\">\(g.firstFrames.map(String.init).joined(separator: ", "))\(g.count > g.firstFrames.count ? ", …" : "")</td>"
            out += "<td>\(esc(g.message))</td></tr>"
        }
        out += "</table>"
        if f.findingGroups.count > options.maxRows {
            out += "<p class=\"muted\">… \(f.findingGroups.count - options.maxRows) more codes.</p>"
        }
        return out
    }
}
