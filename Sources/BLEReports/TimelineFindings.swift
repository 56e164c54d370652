import BLEAnalysis
import BLECore

extension TimelineFilter {
    /// Whether a finding shows with the events: findings outside a `--from`/`--to` frame window are left out with them;
    /// a finding without a frame always shows.
    public func keeps(_ finding: Finding) -> Bool {
        guard let frame = finding.frame else { return true }
        if case .frame(let first)? = from, frame < first { return false }
        if case .frame(let last)? = to, frame > last { return false }
        return true
    }
}

/// The findings that close a timeline (`blescope timeline`): a titled list in text, one line each in JSON Lines.
public enum TimelineFindings {
    /// `Findings (n)` and one indented line per finding; empty when there are none.
    public static func text(_ findings: [Finding], terminal: Terminal) -> String {
        guard !findings.isEmpty else { return "" }
        var out = "\n" + terminal.paint("Findings (\(findings.count))", .bold) + "\n"
        for f in findings { out += "  " + line(f, terminal: terminal) + "\n" }
        return out
    }

    /// `warning: message (frame 93, offset 4)`.
    public static func line(_ f: Finding, terminal: Terminal) -> String {
        var location: [String] = []
        if let frame = f.frame { location.append("frame \(frame)") }
        if let offset = f.offset { location.append("offset \(offset)") }
        return terminal.severity(f.severity) + ": " + f.message + (location.isEmpty ? "" : " (" + location.joined(separator: ", ") + ")")
    }

    /// One JSON object per finding and line, `layer` "finding" (schema in the README); `file` tags each line when
    /// several captures share the output.
    public static func jsonLines(_ findings: [Finding], file: String?) -> String {
        var out = ""
        for f in findings {
            var w = JSONWriter()
            w.beginObject()
            if let file { w.field("file", file) }
            w.field("frame", f.frame)
            w.field("layer", "finding")
            w.field("severity", f.severity.rawValue)
            w.field("code", f.kind.code.id)
            w.field("message", f.message)
            w.field("offset", f.offset)
            w.endObject()
            out += w.string + "\n"
        }
        return out
    }
}
