#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How wide text output may be, and how lines wider than that are fitted.
///
/// The default is 100 columns, the terminal's width when standard output is one, and no limit with `--wide` (nil).
/// A line over the width is wrapped at spaces, its continuation lines indented; a word wider than a whole line (a long
/// hex value, a path) is shortened in the middle (`1284010a…e140a78e`), so what starts and ends it stays readable.
/// Columns are counted as characters outside ANSI colour sequences (every character blescope prints is one column).
public enum TextWidth {
    /// Columns when standard output is not a terminal (and no `--wide`).
    public static let standard = 100

    /// The width for standard output: nil when `wide`, else the terminal's columns, else ``standard``.
    public static func forStandardOutput(wide: Bool) -> Int? {
        if wide { return nil }
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, windowSizeRequest, &size) == 0, size.ws_col >= 40 {
            return Int(size.ws_col)
        }
        return standard
    }

    /// The ioctl that reads a terminal's size. Darwin's `TIOCGWINSZ` is a macro Swift does not import:
    /// `_IOR('t', 104, struct winsize)` is 0x40087468 there.
    private static var windowSizeRequest: UInt {
        #if os(Linux)
        UInt(TIOCGWINSZ)
        #else
        0x4008_7468
        #endif
    }

    /// Visible columns of `text`: characters, not counting ANSI escape sequences (`ESC [ … m`).
    public static func columns(_ text: some StringProtocol) -> Int {
        var n = 0
        var escape = false
        for b in text.utf8 {
            if escape {
                if b >= 0x40 && b <= 0x7E && b != UInt8(ascii: "[") { escape = false }
                continue
            }
            if b == 0x1B {
                escape = true
                continue
            }
            if b & 0xC0 != 0x80 { n += 1 }  // not a UTF-8 continuation byte
        }
        return n
    }

    /// `text` with every line fitted to `width` (unchanged when `width` is nil). Continuation lines are indented by
    /// the line's own leading spaces plus `hang`, or to `indent` columns when given.
    public static func fit(_ text: String, width: Int?, hang: Int = 8, indent: Int? = nil) -> String {
        guard let width, text.utf8.count > width else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 64)
        var first = true
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !first { out += "\n" }
            first = false
            fitLine(line, width: width, hang: hang, indent: indent, into: &out)
        }
        return out
    }

    /// One line (no newline) fitted to `width`, appended to `out`: broken between words; a word longer than a line is
    /// never cut: a path stays whole, a value (hex) goes on over the next lines.
    public static func fitLine(_ line: Substring, width: Int, hang: Int = 8, indent: Int? = nil, into out: inout String) {
        if line.utf8.count <= width || columns(line) <= width {
            out += line
            return
        }
        let lead = line.prefix { $0 == " " }.count
        let continuation = min(max(0, indent ?? (lead + hang)), width / 2)
        let pad = String(repeating: " ", count: continuation)
        var used = 0
        var lineStart = true
        for (spaces, word) in words(of: line) {
            let w = columns(word)
            if lineStart && used == 0 {
                // The first word of the line keeps its indent.
                out += spaces
                used = spaces.count
            } else if used + spaces.count + w <= width || (word.contains("/") && w > width - continuation) {
                // (A path longer than any line stays beside what names it: a new line would not make it fit.)
                out += spaces
                used += spaces.count
            } else {
                out += "\n" + pad
                used = continuation
            }
            lineStart = false
            let room = width - used
            if w <= room || word.contains("/") {
                // A path is never cut (it could not be copied): it stands whole, past the width if it must.
                out += word
                used += w
            } else if word.utf8.contains(0x1B) {
                let short = shortenMiddle(word, to: max(room, 8))
                out += short
                used += columns(short)
            } else {
                // A long value (hex bytes) wraps: its pieces go on the following lines, nothing left out.
                var rest = Substring(word)
                var space = max(room, 8)
                while columns(rest) > space {
                    out += rest.prefix(space) + "\n" + pad
                    rest = rest.dropFirst(space)
                    space = max(width - continuation, 8)
                    used = continuation
                }
                out += rest
                used += columns(rest)
            }
        }
    }

    /// The words of a line, each with the spaces before it (runs of spaces inside a line are kept: they align
    /// columns). A number and its unit are one word (`1.080 s`, `184.5 kbps`, `23 %`), so a line never breaks between them.
    static func words(of line: Substring) -> [(spaces: Substring, word: Substring)] {
        var out: [(spaces: Substring, word: Substring)] = []
        var rest = line[...]
        while !rest.isEmpty {
            let spaces = rest.prefix { $0 == " " }
            rest = rest.dropFirst(spaces.count)
            let word = rest.prefix { $0 != " " }
            rest = rest.dropFirst(word.count)
            if word.isEmpty { break }  // trailing spaces
            if spaces.count == 1, let last = out.last, last.word.last?.isNumber == true, isUnit(word) {
                out[out.count - 1].word = line[last.word.startIndex..<word.endIndex]
            } else {
                out.append((spaces, word))
            }
        }
        return out
    }

    private static let units: Set<Substring> = [
        "µs", "ms", "s", "min", "h", "d", "bps", "kbps", "Mbps", "B/s", "kB/s", "MB/s", "%", "B", "kB", "MB", "GB", "bytes",
        "dBm",
    ]

    /// A unit, with the punctuation that may follow it (`s)`, `kbps;`, `%,`).
    static func isUnit(_ word: Substring) -> Bool {
        var w = word
        while let c = w.last, ",;:.)]".contains(c) { w = w.dropLast() }
        return units.contains(w)
    }

    /// `text` shortened to `width` columns by cutting out its middle (`Secure DFU C…AEA50`); unchanged when it fits.
    /// Text with colour sequences is cut at its end instead, keeping the sequences.
    public static func shortenMiddle(_ text: some StringProtocol, to width: Int) -> String {
        let n = columns(text)
        guard n > width else { return String(text) }
        guard width > 1 else { return "…" }
        if text.utf8.contains(0x1B) { return cutEnd(text, to: width) }
        let characters = Array(text)
        let head = (width - 1 + 1) / 2
        let tail = width - 1 - head
        return String(characters[..<head]) + "…" + String(characters[(characters.count - tail)...])
    }

    /// The first `width - 1` visible columns and `…`, colour sequences kept and reset at the end.
    static func cutEnd(_ text: some StringProtocol, to width: Int) -> String {
        var out = ""
        var n = 0
        var escape = false
        var painted = false
        for c in text {
            if escape {
                out.append(c)
                if let a = c.asciiValue, a >= 0x40 && a <= 0x7E && c != "[" { escape = false }
                continue
            }
            if c == "\u{1B}" {
                escape = true
                painted = true
                out.append(c)
                continue
            }
            if n == width - 1 { break }
            out.append(c)
            n += 1
        }
        return out + "…" + (painted ? "\u{1B}[0m" : "")
    }
}

extension Terminal {
    /// `text` fitted to this terminal's width (``TextWidth/fit(_:width:hang:indent:)``).
    public func fit(_ text: String, hang: Int = 8, indent: Int? = nil) -> String {
        TextWidth.fit(text, width: width, hang: hang, indent: indent)
    }

    /// `name` shortened in the middle to `columns` when the width is limited; whole with `--wide`.
    public func shorten(_ name: String, to columns: Int) -> String {
        width == nil ? name : TextWidth.shortenMiddle(name, to: columns)
    }
}
