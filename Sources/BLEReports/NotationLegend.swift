/// Notations an output uses where there is no room to spell them out: each is spelled out once, at the end of the
/// output that uses it (`docs/glossary.md` has them all).
public enum NotationLegend {
    /// `1M/27/≥208 at 30 ms` (``ThroughputVerdict/linkLabel(_:direction:)``).
    public static let linkSetting =
        "A link setting such as 1M/27/≥208 at 30 ms reads PHY / data length / ATT_MTU at the connection interval: the radio"
        + " PHY (1M, 2M, Coded), the most payload bytes per link-layer packet, the largest ATT packet (≥: at least that,"
        + " inferred from the largest ATT packet seen); a ceiling is the most data per second that setting allows."
    /// `3 link periods` (throughput).
    public static let linkPeriods =
        "N link periods: the stream's link setting changed N − 1 times while it ran; its verdict is for the busiest period."

    /// The explanations `text` needs: one per notation it uses.
    public static func entries(for text: String) -> [String] {
        var out: [String] = []
        if usesLinkSetting(text) { out.append(linkSetting) }
        if text.contains(" link periods") { out.append(linkPeriods) }
        return out
    }

    /// `Notation: …` lines (wrapped to `width`, none when `text` uses no notation), to end an output with.
    public static func note(for text: String, width: Int = 100) -> String {
        let entries = entries(for: text)
        guard !entries.isEmpty else { return "" }
        var lines: [String] = []
        for (i, e) in entries.enumerated() {
            lines += wrapWords(e, width: width, first: i == 0 ? "Notation: " : "          ", rest: "          ")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A PHY (`1M`, `2M`, `Coded…`), `/`, digits, `/`, an optional `≥`, digits: the link-setting notation.
    static func usesLinkSetting(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            defer { i += 1 }
            guard scalars[i] == "/" else { continue }
            // Before: a PHY name ending right at the slash.
            let before = String(String.UnicodeScalarView(scalars[max(0, i - 8)..<i]))
            guard before.hasSuffix("1M") || before.hasSuffix("2M") || before.contains("Coded") else { continue }
            var j = i + 1
            var digits = 0
            while j < scalars.count, ("0"..."9").contains(scalars[j]) { j += 1; digits += 1 }
            guard digits > 0, j < scalars.count, scalars[j] == "/" else { continue }
            j += 1
            if j < scalars.count, scalars[j] == "≥" { j += 1 }
            if j < scalars.count, ("0"..."9").contains(scalars[j]) { return true }
        }
        return false
    }
}

/// Words of `text` in lines of at most `width` columns; a word longer than a line (a path) stands whole on its line,
/// never cut.
func wrapWords(_ text: String, width: Int, first: String = "", rest: String = "") -> [String] {
    var lines: [String] = []
    var line = first
    var lineHasWord = false
    for word in text.split(separator: " ", omittingEmptySubsequences: true) {
        if lineHasWord && line.count + 1 + word.count > width {
            lines.append(line)
            line = rest + word
        } else {
            line += (lineHasWord ? " " : "") + word
        }
        lineHasWord = true
    }
    lines.append(line)
    return lines
}
