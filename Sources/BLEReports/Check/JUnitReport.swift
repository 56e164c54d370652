import BLEAnalysis

/// JUnit XML for CI systems: one `<testsuite>` per capture, one `<testcase>` per expectation. A failure's `message` is
/// the result line's reason with the finding that explains it (`… — DC-01 at frame 905: link to … lost …`); its text
/// adds that finding in full (sentence, evidence frames, likely causes, confidence). A capture that could not be read
/// is a testsuite with one `<error>`.
public enum JUnitReport {
    /// A capture that could not be read, and why.
    public struct Unreadable: Hashable, Sendable {
        public var file: String
        public var message: String
        public init(file: String, message: String) {
            self.file = file
            self.message = message
        }
    }

    public static func xml(_ results: [ExpectationResult], unreadable: [Unreadable] = []) -> String {
        var files: [String] = []
        for r in results where !files.contains(r.file) { files.append(r.file) }
        let failures = results.filter { !$0.passed }.count
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"blescope check\" tests=\"\(results.count + unreadable.count)\" failures=\"\(failures)\""
        out += (unreadable.isEmpty ? "" : " errors=\"\(unreadable.count)\"") + ">\n"
        for f in files {
            let rs = results.filter { $0.file == f }
            out += "  <testsuite name=\"\(escape(f))\" tests=\"\(rs.count)\" failures=\"\(rs.filter { !$0.passed }.count)\" errors=\"0\">\n"
            for r in rs {
                out += "    <testcase classname=\"\(escape(f))\" name=\"\(escape(r.expectation.title))\""
                if r.passed {
                    out += "><system-out>\(escape(r.detail))</system-out></testcase>\n"
                } else {
                    out +=
                        "><failure message=\"\(escape(r.explanation))\" type=\"expectation\">\(escape(failureText(r)))</failure></testcase>\n"
                }
            }
            out += "  </testsuite>\n"
        }
        for u in unreadable {
            out += "  <testsuite name=\"\(escape(u.file))\" tests=\"1\" failures=\"0\" errors=\"1\">\n"
            out += "    <testcase classname=\"\(escape(u.file))\" name=\"read the capture\">"
            out += "<error message=\"\(escape(u.message))\" type=\"unreadable\">\(escape(u.message))</error></testcase>\n"
            out += "  </testsuite>\n"
        }
        return out + "</testsuites>\n"
    }

    /// The failure's text: the reason, then the finding in full.
    static func failureText(_ r: ExpectationResult) -> String {
        var lines = [r.explanation]
        if let d = r.finding {
            lines.append("")
            if !r.findingIsSubject { lines.append("\(d.severity.rawValue) \(d.rule) at frame \(d.frame): \(d.message)") }
            if d.count > 1 { lines.append("occurrences: frames " + d.occurrences.map(String.init).joined(separator: ", ")) }
            let chain = (d.supporting + [CitedFrame(d.frame, "decides")]).sorted { $0.frame < $1.frame }
            if chain.count > 1 { lines.append("evidence: " + chain.map { "#\($0.frame) \($0.text)" }.joined(separator: " → ")) }
            if !d.causes.isEmpty { lines.append("likely: " + d.causes.joined(separator: "; ")) }
            if case .lowered(let reason) = d.confidence { lines.append("confidence lowered: " + reason) }
        }
        return lines.joined(separator: "\n")
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // XML 1.0 forbids most control characters.
                if c.value < 0x20 && c != "\n" && c != "\t" && c != "\r" { out += "?" } else { out.unicodeScalars.append(c) }
            }
        }
        return out
    }
}
