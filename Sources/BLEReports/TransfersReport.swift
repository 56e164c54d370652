import BLEAnalysis
import BLECore

/// Renders rebuilt chunked transfers (``Transfer``) as a text table or JSON.
///
/// JSON: `{"transfers": [{"conn" (connection handle), "conn_number" (1-based connection in the capture), "handle", "uuid", "direction", "framing", "first_frame",
/// "last_frame", "first_time", "last_time", "duration_s", "chunks", "length", "complete", "rate_bps", "text",
/// "data", "missing", "duplicates", "findings"}], "findings": [...]}` with `data` in lowercase hex.
public enum TransfersReport {
    /// One line per message, then its findings.
    public static func text(
        _ transfers: [Transfer], findings: [Finding] = [], terminal: Terminal = Terminal(colors: false),
        previewLength: Int = 60
    ) -> String {
        var out = ""
        if transfers.isEmpty {
            out += "No chunked transfers found.\n"
        } else {
            out +=
                terminal.paint("conn  handle  dir  framing  frames          chunks   bytes  duration    rate         status", .bold) + "\n"
            for t in transfers {
                var line = "#\(t.connectionNumber)".padding(to: 6)
                line += "\(hex(t.handle))".padding(to: 8)
                line += t.direction.description.padding(to: 5)
                line += t.framing.rawValue.padding(to: 9)
                line += "\(t.firstFrame)-\(t.lastFrame)".padding(to: 16)
                line += String(t.chunks).leftPadding(to: 6)
                line += String(t.length).leftPadding(to: 8) + "  "
                line += formatDuration(microseconds: t.durationMicroseconds).padding(to: 12)
                line += (t.rateBitsPerSecond.map(formatBitRate) ?? "-").padding(to: 13)
                line += t.complete ? terminal.paint("complete", .green) : terminal.paint("INCOMPLETE", .red)
                out += line + "\n"
                var detail: [String] = []
                if let uuid = t.characteristic { detail.append(uuid.description) }
                if let codec = t.codec { detail.append("codec \(codec)") }
                if let n = t.expectedCount { detail.append("\(n) announced") }
                if let smp = t.smp { detail.append(smp.description) }
                if !detail.isEmpty { out += "      " + terminal.paint(detail.joined(separator: ", "), .dim) + "\n" }
                if let text = t.textPreview(limit: previewLength) {
                    out += "      \"" + text.replacingNewlines() + "\"\n"
                } else if !t.data.isEmpty {
                    out +=
                        "      " + hexString(t.data.prefix(previewLength / 2), separator: " ")
                        + (t.data.count > previewLength / 2 ? " …" : "") + "\n"
                }
                for f in t.findings {
                    out += "      \(terminal.severity(f.severity)): \(f.message)\(f.frame.map { " (frame \($0))" } ?? "")\n"
                }
            }
        }
        for f in findings { out += "\(terminal.severity(f.severity)): \(f.message)\(f.frame.map { " (frame \($0))" } ?? "")\n" }
        return out
    }

    /// The JSON document `{"transfers": [...], "findings": [...]}`.
    /// `{"transfers": [...], "findings": [...], "completeness"?}`: `log` when the command read the capture itself.
    public static func json(_ transfers: [Transfer], findings: [Finding] = [], log: LogScope? = nil) -> String {
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.beginArray("transfers")
        for t in transfers { write(t, to: &w) }
        w.endArray()
        w.beginArray("findings")
        for f in findings { writeFinding(f, to: &w) }
        w.endArray()
        if let log { writeCompleteness(log.completeness, into: &w) }
        w.endObject()
        return w.string
    }

    /// One transfer as a JSON object (for JSON Lines output too).
    public static func write(_ t: Transfer, to w: inout JSONWriter) {
        w.beginObject()
        w.field("conn", t.connection)
        w.field("conn_number", t.connectionNumber)
        w.field("handle", t.handle)
        w.field("uuid", t.characteristic?.uuidString)
        w.field("direction", t.direction.description)
        w.field("framing", t.framing.rawValue)
        w.field("codec", t.codec)
        w.field("first_frame", t.firstFrame)
        w.field("last_frame", t.lastFrame)
        w.field("first_time", t.firstTime)
        w.field("last_time", t.lastTime)
        w.field("duration_s", Double(t.durationMicroseconds) / 1e6, decimals: 6)
        w.field("chunks", t.chunks)
        w.field("length", t.length)
        w.field("complete", t.complete)
        w.field("rate_bps", t.rateBitsPerSecond, decimals: 0)
        w.field("expected_count", t.expectedCount)
        if let smp = t.smp {
            w.beginObject("smp")
            w.field("op", smp.op)
            w.field("group", smp.group)
            w.field("id", smp.id)
            w.field("seq", smp.sequence)
            w.endObject()
        }
        w.field("text", t.textPreview(limit: 200))
        w.fieldHex("data", t.data)
        w.beginArray("missing")
        for i in t.missingIndices { w.value(i) }
        w.endArray()
        w.beginArray("duplicates")
        for i in t.duplicateIndices { w.value(i) }
        w.endArray()
        w.beginArray("findings")
        for f in t.findings { writeFinding(f, to: &w) }
        w.endArray()
        w.endObject()
    }

    static func writeFinding(_ f: Finding, to w: inout JSONWriter) {
        w.beginObject()
        w.field("severity", f.severity.rawValue)
        w.field("code", f.kind.code.id)
        w.field("message", f.message)
        w.field("frame", f.frame)
        w.endObject()
    }
}

extension String {
    func replacingNewlines() -> String {
        String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
