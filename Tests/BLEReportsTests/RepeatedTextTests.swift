import Testing

@testable import BLEReports

/// ``RepeatedText``: a long parenthesis quoted twice in the page's text becomes a link the second time; inside
/// `<script>` and `<style>` (any case) nothing is text, up to the closing tag itself.
@Suite struct RepeatedTextTests {
    /// Twenty words: long enough to count as an explanation.
    static let why = "(" + (1...20).map { "w\($0)" }.joined(separator: " ") + ")"
    /// Another, only ever inside the script and the style: were they text, it would be linked too.
    static let code = "(" + (1...20).map { "s\($0)" }.joined(separator: " ") + ")"

    @Test func aScriptOrStyleIsNotTextUpToItsClosingTag() {
        // In the script: a long parenthesis twice, and `</scrip>` and `</SCRIPT`, which do not close it (the near misses:
        // one byte short, and upper case where the page writes lower case).
        let script = "<SCRIPT>var a=\"\(Self.code)\";var c=\"</scrip>\";var d=\"</SCRIPT \(Self.code)\";</script>"
        let style = "<Style>p::after{content:\"\(Self.code)\"}</style>"
        let page = "<p>first \(Self.why)</p>" + script + style + "<p>again \(Self.why)</p>"
        let expected =
            "<p>first <span id=\"n-1\">\(Self.why)</span></p>" + script + style
            + "<p>again (<a href=\"#n-1\">explained above</a>)</p>"
        #expect(RepeatedText.onceEach(page, anchorPrefix: "n") == expected)
    }

    /// The page's tags start with `<` followed by a name: `<scr` alone, at the very end, is no script.
    @Test func aTagCutShortAtTheEndIsNoScript() {
        #expect(RepeatedText.skipMarkup(Array("<scr".utf8), from: 0) == 4)
        #expect(RepeatedText.skipMarkup(Array("<b>x</b>".utf8), from: 0) == 3)
        #expect(RepeatedText.skipMarkup(Array("<script>x</script>".utf8), from: 0) == 9)
    }
}
