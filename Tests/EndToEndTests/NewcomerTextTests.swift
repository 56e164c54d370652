import BLETestSupport
import Foundation
import Testing

/// What a newcomer reads: a mistyped command named, every rule explained, notations spelled out once, paths never cut,
/// Markdown within 120 columns, an explanation given once per report.
@Suite struct NewcomerTextTests {
    @Test func anUnknownCommandNamesItselfAndListsTheCommands() throws {
        let r = try Blescope.run(["foo", "x"])
        #expect(r.status == 2)
        #expect(r.stderr.hasPrefix("blescope: unknown command 'foo'\ncommands:\n"), "\(r.stderr)")
        for command in ["info", "timeline", "diagnose", "convert", "report", "throughput", "check", "iso"] {
            #expect(r.stderr.contains("\n  \(command) "), "\(command) is not listed")
        }
        // A real command and --help still work.
        #expect(try Blescope.run(["diagnose", "--list-rules"]).status == 0)
        #expect(try Blescope.run(["--help"]).status == 0)
    }

    /// `blescope FILE` is the diagnosis, the command a first-time user tries first; a path to no file is said to be
    /// missing; a word that is no path and no command is still a mistyped command (above).
    @Test func aFileAloneIsDiagnosed() throws {
        let bare = try Blescope.run(["Samples/diag-supervision-timeout.btsnoop"])
        let diagnose = try Blescope.run(["diagnose", "Samples/diag-supervision-timeout.btsnoop"])
        #expect(bare.status == 0 && bare.stdout.hasPrefix("Diagnosis: ") && bare.stdout == diagnose.stdout)
        let json = try Blescope.run(["Samples/diag-supervision-timeout.btsnoop", "--json"])
        #expect(json.status == 0 && json.jsonLines.first?["findings"] != nil)
        let missing = try Blescope.run(["Samples/no-such-capture.btsnoop"])
        #expect(missing.status == 2 && missing.stderr == "blescope: Samples/no-such-capture.btsnoop: No such file or directory\n")
    }

    @Test func explainPrintsTheRulePage() throws {
        let r = try Blescope.run(["diagnose", "--explain", "sec-01"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("SEC-01 critical: The peripheral lost the bond"), "\(r.stdout)")
        for part in ["What it means: ", "Evidence it reads: LE Enable Encryption", "What to do: ", "Page: docs/diagnosis.md#sec-01"] {
            #expect(r.stdout.contains(part), "no '\(part)'")
        }
        let unknown = try Blescope.run(["diagnose", "--explain", "XX-99"])
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown rule 'XX-99'"))
    }

    /// The link-setting notation (`1M/27/23 at 30 ms`) is spelled out once, at the end, where an output uses it.
    @Test func theCeilingNotationIsSpelledOutOnce() throws {
        let throughput = try Blescope.run(["throughput", "Samples/nordic-dfu.btsnoop"]).stdout
        #expect(throughput.contains("ceiling for 2M/") || throughput.contains("ceiling for 1M/"))
        #expect(throughput.components(separatedBy: "Notation: ").count == 2, "\(throughput)")
        let clean = try Blescope.run(["diagnose", "Samples/eom-transfer.btsnoop"]).stdout
        #expect(!clean.contains("Notation:"))
    }

    /// A path longer than the line is printed whole by `info` and `adverts`, never cut in its middle.
    @Test func pathsAreNeverCut() throws {
        let directory = NSTemporaryDirectory() + "blescope-a-folder-with-a-long-name-\(UUID().uuidString)/and-another-level-of-folders"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }
        let path = directory + "/bracelet-captured-on-the-bench-with-a-long-descriptive-name.btsnoop"
        try FileManager.default.copyItem(atPath: TestEnvironment.sample("bracelet.btsnoop"), toPath: path)
        #expect(path.count > 100)
        for command in ["info", "adverts"] {
            let out = try Blescope.run([command, path]).stdout
            #expect(out.contains(path), "\(command) cut the path: \(out.prefix(400))")
        }
    }

    /// `report --format md`: lines within 120 columns, except tables, headings and a single word longer than that.
    @Test func markdownLinesFit120Columns() throws {
        let inputs =
            [TestEnvironment.sample("nordic-dfu.btsnoop"), TestEnvironment.sample("diag-supervision-timeout.pklg")]
            + TestEnvironment.realCaptures.filter { $0.hasPrefix(TestEnvironment.sharedCaptures ?? "-") }
        for input in inputs {
            let md = try Blescope.run(["report", "--format", "md", input]).stdout
            var inCode = false
            for line in md.split(separator: "\n") {
                if line.hasPrefix("```") { inCode.toggle() }
                guard !inCode, line.count > 120, !line.hasPrefix("|"), !line.hasPrefix("#") else { continue }
                let words = line.split(separator: " ")
                #expect(words.contains { $0.count > 120 - 4 }, "\((input as NSString).lastPathComponent): \(line.count) columns: \(line)")
            }
        }
    }

    /// The shared LE Secure Connections capture: the explanation of why its link cannot be decrypted was quoted 7 times
    /// in the HTML report (summary, diagnosis, capture table, timeline, findings); it is given once, then linked.
    @Test func anExplanationIsGivenOncePerReport() throws {
        guard let shared = TestEnvironment.sharedCaptures else {
            print("NewcomerTextTests: ../shared/captures absent, the repeated-explanation check skipped")
            return
        }
        let out = NSTemporaryDirectory() + "blescope-report-\(UUID().uuidString).html"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let r = try Blescope.run(["report", shared + "/lell-rf-lt256_crackle-lesc-pairing.pcapng", "-o", out])
        #expect(r.status == 0)
        let html = try String(contentsOfFile: out, encoding: .utf8)
        #expect(html.components(separatedBy: "its LTK comes from an ECDH key exchange").count == 2)
        #expect(html.contains("<span id=\"file1-note-1\">(the pairing at frame 148 is LE Secure Connections"))
        #expect(html.components(separatedBy: "<a href=\"#file1-note-1\">explained above</a>").count >= 4)
        // Rule ids link to their page.
        #expect(html.contains("<a href=\"docs/diagnosis.md#cq-05\" title=\""))
    }
}

/// The Markdown report with the lines it wraps at 120 columns joined back (a paragraph's or a list item's continuation
/// lines), so that a test reads one item per line. A line that opens something (a list item, a table row, a heading, a
/// code span such as a sparkline, a fence) stays a line of its own.
enum MarkdownText {
    static func unwrapped(_ markdown: String) -> String {
        var out: [String] = []
        var inCode = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") { inCode.toggle() }
            let body = line.drop { $0 == " " }
            let opens = ["- ", "* ", "|", "#", "`"].contains { body.hasPrefix($0) } || body.isEmpty || line.hasPrefix("```")
            if !inCode, !opens, let last = out.last, !last.isEmpty, !last.hasPrefix("|"), !last.hasPrefix("#"), !last.hasPrefix("```") {
                out[out.count - 1] = last + " " + body
            } else {
                out.append(line)
            }
        }
        return out.joined(separator: "\n")
    }
}
