import BLEReports
import Testing

/// Lines fitted to a width: wrapped at spaces, continuation lines indented, a word wider than a line cut in its middle.
@Suite struct TextWidthTests {
    @Test func shortLinesAreUntouched() {
        let text = "a line\n  another\n"
        #expect(TextWidth.fit(text, width: 100) == text)
        #expect(TextWidth.fit(String(repeating: "x ", count: 200), width: nil) == String(repeating: "x ", count: 200))
    }

    @Test func longLinesWrapAtSpacesWithEveryWordKept() {
        let words = (1...40).map { "word\($0)" }
        let line = "  " + words.joined(separator: " ")
        let fitted = TextWidth.fit(line, width: 40, hang: 4)
        let lines = fitted.split(separator: "\n")
        #expect(lines.count > 1)
        for l in lines { #expect(l.count <= 40, "\(l)") }
        // The first line keeps its indent; the others are indented by it plus the hang.
        #expect(lines[0].hasPrefix("  word1 "))
        for l in lines.dropFirst() { #expect(l.hasPrefix("      w") && !l.hasPrefix("       ")) }
        // Nothing lost, nothing reordered.
        #expect(fitted.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init) == words)
    }

    /// A value longer than a line wraps (nothing cut out); a path longer than a line stays whole on the line that names it.
    @Test func aWordWiderThanALineWrapsAndAPathStaysWhole() {
        let hex = String(repeating: "0123456789abcdef", count: 20)  // 320 characters
        let fitted = TextWidth.fit("value=" + hex, width: 50)
        let lines = fitted.split(separator: "\n")
        #expect(lines.count == 8)  // 326 characters: 50, then 42 per continuation line (8 spaces of indent): 50 + 6 × 42 + 24
        #expect(lines.allSatisfy { TextWidth.columns($0) <= 50 })
        #expect(!fitted.contains("…"))
        #expect(fitted.replacingOccurrences(of: "\n", with: "").replacingOccurrences(of: " ", with: "") == "value=" + hex)
        let path = "/tmp/" + String(repeating: "long-folder-name/", count: 5) + "capture.log"  // 101 characters
        let line = TextWidth.fit("File:               " + path + " (btsnoop)", width: 60)
        #expect(line.hasPrefix("File:               " + path + "\n"))
        #expect(line.hasSuffix("(btsnoop)"))
        #expect(TextWidth.shortenMiddle("Secure DFU Control Point", to: 11) == "Secur…Point")
        #expect(TextWidth.shortenMiddle("short", to: 11) == "short")
    }

    @Test func colourSequencesTakeNoColumns() {
        let painted = Terminal(colors: true).paint("bold text", .bold)
        #expect(TextWidth.columns(painted) == 9)
        #expect(TextWidth.columns("→ µs ✓") == 6)
        let line = (0..<30).map { _ in painted }.joined(separator: " ")
        for l in TextWidth.fit(line, width: 60).split(separator: "\n") { #expect(TextWidth.columns(l) <= 60) }
    }

    @Test func anExplicitIndentAlignsContinuations() {
        let line = String(repeating: " ", count: 10) + "HEAD " + (1...30).map { "w\($0)" }.joined(separator: " ")
        let lines = TextWidth.fit(line, width: 40, indent: 15).split(separator: "\n")
        for l in lines.dropFirst() { #expect(l.prefix(15).allSatisfy { $0 == " " } && l.dropFirst(15).first != " ") }
    }
}
