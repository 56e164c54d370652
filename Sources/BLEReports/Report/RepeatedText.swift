/// Explanations a page would otherwise repeat: a long parenthesis (a finding's "why", such as why an LE Secure
/// Connections link cannot be decrypted) that the summary, the diagnosis, the capture table, the timeline and the
/// findings table each quote. The first stays, under an anchor; each later one becomes a link to it.
enum RepeatedText {
    /// Words a parenthesis must have to count as an explanation (shorter ones cost less than a link).
    static let minimumWords = 20

    /// `html` with each repeated long parenthesis (text only, outside tags, `<script>` and `<style>`) given once; the
    /// anchors are `<prefix>-1`, `<prefix>-2`…
    static func onceEach(_ html: String, anchorPrefix: String) -> String {
        // Bytes: every character looked at is ASCII, and a page can be megabytes.
        let chars = Array(html.utf8)
        var count: [String: Int] = [:]
        walk(chars) { clause in count[clause, default: 0] += 1 }
        guard count.values.contains(where: { $0 > 1 }) else { return html }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count)
        var anchors: [String: String] = [:]
        func replace(_ clause: String) {
            guard count[clause, default: 0] > 1 else { return out.append(contentsOf: clause.utf8) }
            if let anchor = anchors[clause] {
                out.append(contentsOf: "(<a href=\"#\(anchor)\">explained above</a>)".utf8)
            } else {
                let anchor = "\(anchorPrefix)-\(anchors.count + 1)"
                anchors[clause] = anchor
                out.append(contentsOf: "<span id=\"\(anchor)\">\(clause)</span>".utf8)
            }
        }
        walk(chars, copy: { out.append(contentsOf: $0) }, clause: replace)
        var page = String(decoding: out, as: UTF8.self)
        // The same explanation quoted without its parentheses (a timeline row's text): linked too, after the first.
        for (clause, anchor) in anchors {
            page = linkLaterQuotes(of: String(clause.dropFirst().dropLast()), in: page, after: "<span id=\"\(anchor)\">", anchor: anchor)
        }
        return page
    }

    /// `page` with each occurrence of `text` in the page's text (not inside a tag) after `marker` replaced by a link.
    static func linkLaterQuotes(of text: String, in page: String, after marker: String, anchor: String) -> String {
        guard let start = page.firstRange(of: marker) else { return page }
        var out = String(page[..<start.upperBound])
        var rest = page[start.upperBound...]
        // Past the first quote itself (inside the marker's span).
        guard let first = rest.firstRange(of: text) else { return page }
        out += rest[..<first.upperBound]
        rest = rest[first.upperBound...]
        while let r = rest.firstRange(of: text) {
            let before = rest[..<r.lowerBound]
            let insideTag = (before.lastIndex(of: "<") ?? before.startIndex) > (before.lastIndex(of: ">") ?? before.startIndex)
            out += before + (insideTag ? rest[r] : "<a href=\"#\(anchor)\">explained above</a>")
            rest = rest[r.upperBound...]
        }
        return out + rest
    }

    /// Calls `clause` with each long parenthesis of the text (outside markup) and `copy` with everything else.
    static func walk(_ chars: [UInt8], copy: (ArraySlice<UInt8>) -> Void = { _ in }, clause: (String) -> Void) {
        var i = 0
        var copied = 0
        while i < chars.count {
            if chars[i] == UInt8(ascii: "<") {
                i = skipMarkup(chars, from: i)
                continue
            }
            if chars[i] == UInt8(ascii: "("), let close = matchingParenthesis(chars, from: i),
                chars[i...close].lazy.filter({ $0 == UInt8(ascii: " ") }).count + 1 >= minimumWords
            {
                copy(chars[copied..<i])
                clause(String(decoding: chars[i...close], as: UTF8.self))
                i = close + 1
                copied = i
                continue
            }
            i += 1
        }
        copy(chars[copied..<chars.count])
    }

    /// The index of the `)` closing the `(` at `start`, nil when markup comes first or it is never closed.
    static func matchingParenthesis(_ chars: [UInt8], from start: Int) -> Int? {
        var depth = 0
        var j = start
        while j < chars.count {
            switch chars[j] {
            case UInt8(ascii: "("): depth += 1
            case UInt8(ascii: ")"):
                depth -= 1
                if depth == 0 { return j }
            case UInt8(ascii: "<"), UInt8(ascii: "\n"): return nil
            default: break
            }
            j += 1
        }
        return nil
    }

    /// Past the tag at `start`; past the closing tag for `<script` and `<style`.
    ///
    /// Compares bytes in place: a slice copied into an Array per byte of the page's script was 881,149 mallocs and
    /// 3.5 % of `report -o` on the benchmark (docs/performance.md#repeated-text).
    static func skipMarkup(_ chars: [UInt8], from start: Int) -> Int {
        var j = start
        while j < chars.count && chars[j] != UInt8(ascii: ">") { j += 1 }
        j = min(j + 1, chars.count)
        for (opening, closing) in rawTextTags where startsWithASCIILowercased(chars, at: start, opening) {
            while j + closing.count <= chars.count {
                if chars[j..<(j + closing.count)].elementsEqual(closing) { return j }
                j += 1
            }
            return chars.count
        }
        return j
    }

    /// The elements whose content is not markup: `<script` and `<style`, and what closes them (as written, lower case).
    static let rawTextTags: [(opening: [UInt8], closing: [UInt8])] = ["script", "style"].map {
        (Array("<\($0)".utf8), Array("</\($0)".utf8))
    }

    /// Whether `chars` at `start` begins with `prefix` (lower case ASCII), ignoring the case of ASCII letters.
    static func startsWithASCIILowercased(_ chars: [UInt8], at start: Int, _ prefix: [UInt8]) -> Bool {
        guard start + prefix.count <= chars.count else { return false }
        for (k, expected) in prefix.enumerated() {
            let c = chars[start + k]
            let lower = c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c | 0x20 : c
            if lower != expected { return false }
        }
        return true
    }
}
