import BLETestSupport
import Foundation
import Testing

/// `check` through the binary: the diagnosis expectations of `Samples/expect/no-errors.yaml` on clean updates and on
/// a lost link and a failed pairing (frames from tshark's truth, `Tests/Truth/diagnosis/*.jsonl`), the JUnit file read
/// by Python's xml.etree, directories, globs and unreadable captures.
@Suite struct CheckEndToEndTests {
    static let expect = "Samples/expect/no-errors.yaml"

    /// The frame of the one truth event of `kind` at critical severity in `capture`.
    static func criticalFrame(_ capture: String, _ kind: String) throws -> Int {
        let path = TestEnvironment.repositoryRoot + "/Tests/Truth/diagnosis/\(capture).jsonl"
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let events = try #require(object["events"] as? [[String: Any]])
        let critical = events.filter { $0["severity"] as? String == "critical" }
        #expect(critical.count == 1 && critical.first?["class"] as? String == kind, "\(capture): \(critical)")
        return try #require(critical.first?["frame"] as? Int)
    }

    /// The JUnit file as Python's xml.etree reads it: the root's counts, and per case its suite, name, failure message
    /// and error message.
    static func junit(_ path: String) throws -> [String: Any] {
        let script = """
            import json, sys, xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            def message(c, tag):
                e = c.find(tag)
                return e.get("message") if e is not None else None
            cases = [{"suite": s.get("name"), "name": c.get("name"), "failure": message(c, "failure"), "error": message(c, "error"),
                      "text": (c.find("failure").text if c.find("failure") is not None else None)}
                     for s in root.iter("testsuite") for c in s.iter("testcase")]
            print(json.dumps({"tests": root.get("tests"), "failures": root.get("failures"), "errors": root.get("errors"), "cases": cases}))
            """
        let p = try #require(TestEnvironment.execute("/usr/bin/env", ["python3", "-c", script, path]))
        #expect(p.status == 0, "\(p.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(p.stdout.utf8)) as? [String: Any])
    }

    /// nordic-dfu and mcumgr-confirm: updates without a critical or error event in tshark's truth but mcumgr-confirm's
    /// loss of the link when the device resets into its image (0x08 at frame 233, after the reset the update sent).
    @Test func cleanUpdatesPassTheDiagnosisExpectations() throws {
        let r = try Blescope.run(["check", "--expect", Self.expect, "Samples/nordic-dfu.btsnoop", "Samples/mcumgr-confirm.btsnoop"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let lines = GoldenTruthTests.unwrapped(r.stdout).split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        for (i, file) in ["Samples/nordic-dfu.btsnoop", "Samples/mcumgr-confirm.btsnoop"].enumerated() {
            #expect(lines[2 * i].hasPrefix("PASS  \(file): the diagnosis finds nothing at error or above: "))
            #expect(lines[2 * i + 1].hasPrefix("PASS  \(file): no CE-01, CE-02, SEC-01, SEC-03 finding: none fired ("))
        }
        #expect(lines[4] == "4 passed, 0 failed")
        #expect(try FieldLogEndToEndTests.checksPage().contains(r.stdout))
    }

    /// diag-supervision-timeout (0x08 at frame 237) and diag-pairing-failed (Pairing Failed at frame 75): the lines and
    /// the JUnit failures carry the rule and the frame.
    @Test func aLostLinkAndAFailedPairingFailWithRuleAndFrameInTheLineAndTheJUnit() throws {
        let lost = try Self.criticalFrame("diag-supervision-timeout.btsnoop", "disconnection")
        let pairing = try Self.criticalFrame("diag-pairing-failed.btsnoop", "pairing-failed")
        let junit = NSTemporaryDirectory() + "blescope-junit-\(UUID().uuidString).xml"
        defer { try? FileManager.default.removeItem(atPath: junit) }
        let (a, b) = ("Samples/diag-supervision-timeout.btsnoop", "Samples/diag-pairing-failed.btsnoop")
        let r = try Blescope.run(["check", "--expect", Self.expect, a, b, "--junit", junit])
        #expect(r.status == 1)
        let lines = GoldenTruthTests.unwrapped(r.stdout).split(separator: "\n").map(String.init)
        #expect(lines.count == 5 && lines[4] == "1 passed, 3 failed")
        #expect(lines[0].hasPrefix("FAIL  \(a): the diagnosis finds nothing at error or above: critical DC-01 at frame \(lost): Link to "))
        #expect(lines[0].contains("lost: supervision timeout (0x08) at frame \(lost)"))
        #expect(lines[1].hasPrefix("PASS  \(a): no CE-01, CE-02, SEC-01, SEC-03 finding: none fired ("))
        #expect(lines[2].hasPrefix("FAIL  \(b): the diagnosis finds nothing at error or above: critical SEC-03 at frame \(pairing): "))
        #expect(lines[3].hasPrefix("FAIL  \(b): no CE-01, CE-02, SEC-01, SEC-03 finding: critical SEC-03 at frame \(pairing): "))
        #expect(try FieldLogEndToEndTests.checksPage().contains(r.stdout))

        let parsed = try Self.junit(junit)
        #expect(parsed["tests"] as? String == "4" && parsed["failures"] as? String == "3" && parsed["errors"] is NSNull)
        let cases = try #require(parsed["cases"] as? [[String: Any]])
        #expect(cases.map { $0["suite"] as? String } == [a, a, b, b])
        let failures = cases.compactMap { c in (c["failure"] as? String).map { ($0, c["text"] as? String ?? "") } }
        #expect(failures.count == 3)
        #expect(failures[0].0.contains("DC-01 at frame \(lost): Link to ") && failures[0].1.contains("#\(lost) decides"))
        for (message, _) in failures.dropFirst() { #expect(message.contains("SEC-03 at frame \(pairing): Pairing with "), "\(message)") }
    }

    /// The strict example on diag-supervision-timeout: the 0x08 disconnection and the quality report are each followed
    /// by the finding at their frame, frames from the generator's truth (`Samples/diag-supervision-timeout.truth.json`:
    /// the report at `bqr.report.frame`, the loss as its DC-01 finding).
    @Test func failingLinesEndWithTheFindingThatExplainsThem() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample("diag-supervision-timeout.truth.json")))
        let truth = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let report = try #require(((truth["bqr"] as? [String: Any])?["report"] as? [String: Any])?["frame"] as? Int)
        let findings = try #require((truth["diagnosis"] as? [String: Any])?["findings"] as? [[String: Any]])
        let lost = try #require(findings.first { $0["rule"] as? String == "DC-01" }?["frame"] as? Int)
        let r = try Blescope.run(["check", "--expect", "Samples/expect/nordic-dfu-strict.yaml", "Samples/diag-supervision-timeout.btsnoop"])
        #expect(r.status == 1)
        let lines = GoldenTruthTests.unwrapped(r.stdout).split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        // Nothing explains a missing update: the line says only that.
        #expect(
            lines[0] == "FAIL  ota nordic-secure-dfu succeeds at ≥ 50kB/s: no nordic-secure-dfu update in the capture (0 other sessions)")
        #expect(
            lines[1].hasPrefix(
                "FAIL  no disconnection: connection #1 disconnected at frame \(lost): Connection Timeout — DC-01 at frame \(lost): "))
        #expect(lines[2].contains(" at frame \(report) — HH-05 at frame \(report): "), "\(lines[2])")
        #expect(try FieldLogEndToEndTests.checksPage().contains(r.stdout))
    }

    /// A directory: every capture below it, each line named; a file found there that is not a capture is skipped with
    /// one line on stderr; a capture that cannot be read (its header cut) is named on stderr, counted as unreadable, an
    /// `<error>` in the JUnit, exit 2 after the others were checked. A quoted glob: the same, for the files it
    /// matches; a glob matching nothing is named.
    @Test func directoriesGlobsAndUnreadableCaptures() throws {
        let dir = NSTemporaryDirectory() + "blescope-check-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["diag-pairing-failed.btsnoop", "nordic-dfu.btsnoop"] {
            try FileManager.default.copyItem(atPath: TestEnvironment.sample(name), toPath: dir + "/" + name)
        }
        try Data("not a capture".utf8).write(to: URL(fileURLWithPath: dir + "/notes.txt"))
        try Data("btsnoop\0\0\0".utf8).write(to: URL(fileURLWithPath: dir + "/z-cut.btsnoop"))
        let junit = dir + ".xml"
        defer { try? FileManager.default.removeItem(atPath: junit) }

        let r = try Blescope.run(["check", "--expect", Self.expect, dir, "--junit", junit])
        #expect(r.status == 2)
        let lines = GoldenTruthTests.unwrapped(r.stdout).split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines.prefix(2).allSatisfy { $0.hasPrefix("FAIL  \(dir)/diag-pairing-failed.btsnoop: ") })
        #expect(lines[2...3].allSatisfy { $0.hasPrefix("PASS  \(dir)/nordic-dfu.btsnoop: ") })
        #expect(lines[4] == "2 passed, 2 failed, 1 unreadable")
        #expect(r.stderr.contains("blescope: skipped \(dir)/notes.txt: not a capture"))
        #expect(r.stderr.contains("blescope: \(dir)/z-cut.btsnoop: btsnoop file header cut short (10 bytes)"))
        let parsed = try Self.junit(junit)
        #expect(parsed["tests"] as? String == "5" && parsed["failures"] as? String == "2" && parsed["errors"] as? String == "1")
        let cases = try #require(parsed["cases"] as? [[String: Any]])
        let error = try #require(cases.last)
        #expect(error["suite"] as? String == dir + "/z-cut.btsnoop" && error["name"] as? String == "read the capture")
        #expect((error["error"] as? String)?.hasPrefix("\(dir)/z-cut.btsnoop: btsnoop file header cut short") == true)

        let glob = try Blescope.run(["check", "--expect", Self.expect, dir + "/*.btsnoop"])
        #expect(glob.status == 2)  // z-cut.btsnoop matches too
        #expect(glob.stdout.hasSuffix("2 passed, 2 failed, 1 unreadable\n") && glob.stdout.contains("PASS  \(dir)/nordic-dfu.btsnoop: "))
        let none = try Blescope.run(["check", "--expect", Self.expect, dir + "/*.pklg"])
        #expect(none.status == 2)
        #expect(none.stderr.contains("\(dir)/*.pklg: no such file (pattern matched nothing)"))
    }
}
