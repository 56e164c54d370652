import BLECore

/// `diff`'s outputs: text for people (the answer first, then the differences ranked, each with its frames on both
/// sides), JSON (`schemas/diff.schema.json`) and Markdown for a ticket.
public enum DiffWriter {
    /// `no differences`, or `7 differences: 2 gatt, 3 link, 1 behaviour, 1 diagnosis`.
    public static func headline(_ d: CaptureDiff) -> String {
        guard !d.isEmpty else { return "no differences" }
        let n = d.differences.count
        let parts = d.countsBySection.map { "\($1) \($0.rawValue)" }.joined(separator: ", ")
        return "\(n) difference\(n == 1 ? "" : "s"): \(parts)"
    }

    public static func text(_ d: CaptureDiff, breaches: [DiffGate.Breach]?, terminal: Terminal) -> String {
        var out = headline(d) + "\n"
        out += "  A " + d.pathA + "\n  B " + d.pathB + "\n"
        for p in d.pairs {
            out += "  connection A #\(p.a) ↔ B #\(p.b)  \(p.peer) (matched by \(p.matchedByText))\n"
        }
        if !d.isEmpty { out += "\n" }
        let width = String(d.differences.count).count
        for (i, x) in d.differences.enumerated() {
            let rank = String(i + 1).leftPadding(to: width)
            let line = "\(rank). \(x.impact.rawValue.padding(to: 5)) \(x.section.rawValue.padding(to: 11)) \(x.sentence)  [\(x.framesText)]"
            out += terminal.fit(line, indent: width + 20) + "\n"
        }
        for n in d.notes { out += terminal.fit("note: " + n, hang: 6) + "\n" }
        if let breaches {
            out += breaches.isEmpty ? "--fail-on: no breach\n" : ""
            for b in breaches { out += terminal.fit("FAIL " + b.line, hang: 5) + "\n" }
        }
        return out
    }

    public static func markdown(_ d: CaptureDiff, breaches: [DiffGate.Breach]?) -> String {
        var out = "## blescope diff: \(headline(d))\n\n"
        out += "- A: `\(d.pathA)`\n- B: `\(d.pathB)`\n"
        for p in d.pairs { out += "- connection A #\(p.a) ↔ B #\(p.b): \(p.peer) (matched by \(p.matchedByText))\n" }
        if !d.isEmpty {
            out += "\n| # | impact | section | what | A | B | frames |\n|---|---|---|---|---|---|---|\n"
            for (i, x) in d.differences.enumerated() {
                let cells = [
                    "\(i + 1)", x.impact.rawValue, x.section.rawValue, x.subject, x.a ?? "—", x.b ?? "—", x.framesText,
                ]
                out += "| " + cells.map(markdownCell).joined(separator: " | ") + " |\n"
            }
        }
        if !d.notes.isEmpty { out += "\n" + d.notes.map { "- note: \($0)\n" }.joined() }
        if let breaches, !breaches.isEmpty {
            out += "\n**--fail-on breaches**\n\n" + breaches.map { "- \(markdownCell($0.line))\n" }.joined()
        }
        return out
    }

    /// `|` escaped, every line feed a space (also the one of a CR LF pair, which is one Character to Swift's `replacing`).
    static func markdownCell(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        for c in s.unicodeScalars {
            if c == "|" {
                out.append("\\")
                out.append("|")
            } else {
                out.append(c == "\n" ? " " : c)
            }
        }
        return String(out)
    }

    /// One comparison as a JSON object (the `comparisons` items of the schema).
    public static func writeJSON(_ d: CaptureDiff, breaches: [DiffGate.Breach]?, to w: inout JSONWriter) {
        w.beginObject()
        w.field("a", d.pathA)
        w.field("b", d.pathB)
        w.field("identical", d.isEmpty)
        w.field("headline", headline(d))
        w.beginObject("counts")
        for (s, n) in d.countsBySection { w.field(s.rawValue, n) }
        w.endObject()
        w.beginArray("connections")
        for p in d.pairs {
            w.beginObject()
            w.field("a", p.a)
            w.field("b", p.b)
            w.field("peer", p.peer)
            w.field("matched_by", p.matchedBy)
            if let name = p.name { w.field("name", name) }
            w.endObject()
        }
        w.endArray()
        w.beginArray("differences")
        for (i, x) in d.differences.enumerated() { writeDifference(x, rank: i + 1, to: &w) }
        w.endArray()
        w.beginArray("notes")
        for n in d.notes { w.value(n) }
        w.endArray()
        if let breaches {
            w.beginArray("breaches")
            for b in breaches {
                w.beginObject()
                w.field("threshold", b.threshold)
                w.field("kind", b.difference.kind)
                w.field("text", b.line)
                w.field("frame_a", b.difference.frameA)
                w.field("frame_b", b.difference.frameB)
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
    }

    static func writeDifference(_ x: Difference, rank: Int, to w: inout JSONWriter) {
        w.beginObject()
        w.field("rank", rank)
        w.field("section", x.section.rawValue)
        w.field("kind", x.kind)
        w.field("impact", x.impact.rawValue)
        w.field("subject", x.subject)
        w.field("a", x.a)
        w.field("b", x.b)
        w.field("frame_a", x.frameA)
        w.field("frame_b", x.frameB)
        w.field("connection_a", x.connectionA)
        w.field("connection_b", x.connectionB)
        w.field("change", x.change, decimals: 4)
        w.field("text", x.sentence)
        w.endObject()
    }
}
