import BLEAnalysis
import BLECapture
import BLECore

/// What `blescope info` says about one capture file: a capinfos for Bluetooth.
public struct CaptureInfo: Sendable {
    public var file: String
    public var format: String
    public var compressed: Bool
    public var datalink: UInt32
    public var datalinkName: String
    public var fileSize: Int64?
    public var statistics: CaptureStatistics
    public var findings: [Finding]
    /// What the log can and cannot show.
    public var completeness: CaptureCompleteness
    /// What was carried against what was decoded (L2CAP and above), from a statistics-only analysis in the same pass.
    public var decodeHealth: DecodeHealth?

    /// Reads the whole capture once, counting records and decoding them without building events (for the decode
    /// health); `progress` is called with (records, bytes).
    public init(reading capture: CaptureFile, progress: ProgressReporter? = nil, decode: Bool = true) {
        var stats = CaptureStatistics()
        var tracker = CompletenessTracker()
        let analyzer = decode ? Analyzer(options: AnalyzerOptions(timeline: false)) : nil
        while let record = capture.next() {
            stats.add(record)
            tracker.add(record)
            analyzer?.process(record)
            progress?.update(records: stats.records, bytes: capture.bytesConsumed)
        }
        analyzer?.finish()
        decodeHealth = analyzer?.decodeHealth
        progress?.finish()
        file = capture.path
        format = capture.format.name
        compressed = capture.compressed
        datalink = capture.datalink
        datalinkName = capture.datalinkName
        fileSize = capture.fileSize
        statistics = stats
        findings = capture.findings
        completeness = tracker.result(format: capture.format.name)
    }

    public var span: Int64? {
        guard let first = statistics.firstTimestamp, let last = statistics.lastTimestamp else { return nil }
        return last.microseconds(since: first)
    }

    /// The human-readable block, aligned.
    public func text(terminal: Terminal) -> String {
        let s = statistics
        var rows: [(String, String)] = []
        rows.append(("File", file))
        let n = completeness.items.count
        let completenessRow: String = n == 0 ? completeness.headline : "\(completeness.verdict) (\(n == 1 ? "1 item" : "\(n) items") below)"
        rows.append(("Completeness", completenessRow))
        rows.append(("Format", format + (compressed ? " (gzip)" : "")))
        rows.append(("Datalink", "\(datalink) (\(datalinkName))"))
        if let fileSize { rows.append(("Size", formatBytes(fileSize))) }
        rows.append(("Records", formatCount(s.records)))
        rows.append(("First record", s.firstTimestamp.map { $0.description + " UTC" } ?? "—"))
        rows.append(("Last record", s.lastTimestamp.map { $0.description + " UTC" } ?? "—"))
        rows.append(("Span", span.map { formatDuration(microseconds: $0) } ?? "—"))
        var kinds: [String] = []
        func add(_ name: String, _ n: Int) { if n > 0 { kinds.append("\(name) \(formatCount(n))") } }
        add("commands", s.commands)
        add("events", s.events)
        add("ACL tx", s.aclTx)
        add("ACL rx", s.aclRx)
        add("SCO tx", s.scoTx)
        add("SCO rx", s.scoRx)
        add("ISO tx", s.isoTx)
        add("ISO rx", s.isoRx)
        add("text notes", s.text)
        add("monitor", s.monitor)
        add("link-layer", s.linkLayer)
        add("other", s.other)
        rows.append(("By type", kinds.isEmpty ? "—" : kinds.joined(separator: ", ")))
        rows.append(("Truncated records", formatCount(s.truncatedRecords)))
        rows.append(("Dropped (capturer)", formatCount(Int(s.maxDrops))))
        rows.append(("Controllers", s.controllers.isEmpty ? "—" : s.controllers.sorted().map(String.init).joined(separator: ", ")))
        if let h = decodeHealth { rows.append(("Decoded", h.headline)) }
        rows.append(("Findings", findings.isEmpty ? "none" : "\(findings.count)"))
        let width = rows.map(\.0.count).max() ?? 0
        var out = rows.map { terminal.paint(($0.0 + ":").padding(to: width + 2), .bold) + $0.1 }.joined(separator: "\n")
        if let h = decodeHealth {
            for c in h.warnings {
                out += "\n  " + terminal.severity(.warning) + ": " + (c.warning ?? "") + (c.warningFrame.map { " (frame \($0))" } ?? "")
            }
            if let v = h.vendorTraceSummary { out += "\n  " + terminal.severity(.info) + ": " + v }
        }
        if !completeness.items.isEmpty {
            out += "\n" + terminal.paint("What the log cannot show:", .bold)
            for item in completeness.items {
                let frame: String = item.frame.map { " (frame \($0))" } ?? ""
                out += "\n  " + terminal.severity(item.severity) + ": " + item.message + frame
            }
        }
        if !completeness.items.isEmpty && !findings.isEmpty { out += "\n" + terminal.paint("Findings:", .bold) }
        for f in findings {
            var location: [String] = []
            if let frame = f.frame { location.append("frame \(frame)") }
            if let offset = f.offset { location.append("offset \(offset)") }
            out += "\n  " + terminal.severity(f.severity) + ": " + f.message
            if !location.isEmpty { out += " (" + location.joined(separator: ", ") + ")" }
        }
        return out + "\n"
    }

    /// One JSON object (one line), keys as documented in the README.
    public var json: String {
        let s = statistics
        var w = JSONWriter()
        w.beginObject()
        w.field("file", file)
        w.field("format", format)
        w.field("compressed", compressed)
        w.field("datalink", datalink)
        w.field("datalink_name", datalinkName)
        w.field("file_size", fileSize)
        w.field("records", s.records)
        w.field("first_time", s.firstTimestamp)
        w.field("last_time", s.lastTimestamp)
        w.field("span_s", span.map { Double($0) / 1e6 }, decimals: 6)
        w.beginObject("by_type")
        w.field("command", s.commands)
        w.field("event", s.events)
        w.field("acl_tx", s.aclTx)
        w.field("acl_rx", s.aclRx)
        w.field("sco_tx", s.scoTx)
        w.field("sco_rx", s.scoRx)
        w.field("iso_tx", s.isoTx)
        w.field("iso_rx", s.isoRx)
        w.field("text", s.text)
        w.field("monitor", s.monitor)
        w.field("link_layer", s.linkLayer)
        w.field("other", s.other)
        w.endObject()
        w.field("original_bytes", s.originalBytes)
        w.field("truncated_records", s.truncatedRecords)
        w.field("drops", s.maxDrops)
        w.beginArray("controllers")
        for c in s.controllers.sorted() { w.value(c) }
        w.endArray()
        writeCompleteness(completeness, into: &w)
        writeFindings(findings, into: &w)
        if let h = decodeHealth { writeDecodeHealth(h, into: &w) } else { w.fieldNull("decode_health") }
        w.endObject()
        return w.string
    }
}

/// `"completeness": {"verdict", "headline", "items": [{"code", "severity", "message", "frame", "count"}]}`.
public func writeCompleteness(_ c: CaptureCompleteness, into w: inout JSONWriter, key: String = "completeness") {
    w.beginObject(key)
    w.field("verdict", c.verdict)
    w.field("headline", c.headline)
    w.beginArray("items")
    for i in c.items {
        w.beginObject()
        w.field("code", i.code)
        w.field("severity", i.severity.rawValue)
        w.field("message", i.message)
        w.field("frame", i.frame)
        w.field("count", i.count)
        w.endObject()
    }
    w.endArray()
    w.endObject()
}

/// `"findings": [{"severity", "code", "message", "frame", "offset"}]`, shared by every JSON output.
public func writeFindings(_ findings: [Finding], into w: inout JSONWriter, key: String = "findings") {
    w.beginArray(key)
    for f in findings {
        w.beginObject()
        w.field("severity", f.severity.rawValue)
        w.field("code", f.kind.code)
        w.field("message", f.message)
        w.field("frame", f.frame)
        w.field("offset", f.offset)
        w.endObject()
    }
    w.endArray()
}
