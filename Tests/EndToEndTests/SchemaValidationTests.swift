import BLECore
import BLETestSupport
import Foundation
import Testing

/// Every JSON output of every Sample (all three formats) and every real capture, validated against the published
/// schemas (`schemas/*.schema.json`, JSON Schema draft 2020-12) by a real validator: Python `jsonschema` through
/// `scripts/validate_json.py`, one process per schema over all files (its start-up, not the documents, is the cost).
///
/// A failure prints one line per violation: the capture and command, the line, the output, the JSON pointer of the
/// offending value and the schema rule (pointer, keyword, value). When an output changes on purpose, update the
/// schema it names (and bump the output's version if the change breaks readers: README "Output for programs").
@Suite(.serialized) struct SchemaValidationTests {
    /// Whether `python3` with `jsonschema` is available.
    static let validatorAvailable: Bool = {
        TestEnvironment.execute("/usr/bin/env", ["python3", "-c", "import jsonschema"])?.status == 0
    }()

    /// CI sets `BLESCOPE_REQUIRE_JSONSCHEMA=1`: there a missing validator is a failure, not a skip.
    static let validatorRequired = ProcessInfo.processInfo.environment["BLESCOPE_REQUIRE_JSONSCHEMA"] == "1"

    static var samples: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: TestEnvironment.samplesDirectory)) ?? []
        return names.filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") || $0.hasSuffix(".pklg") }.sorted()
            .map(TestEnvironment.sample)
    }

    struct Validation {
        var stdout: String
        var stderr: String
        var status: Int32
        /// The document count the validator printed (`OUTPUT: N document(s) in …`).
        var documents: Int? {
            stderr.split(separator: "\n").last.flatMap { line in
                line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            }
        }
    }

    /// Runs the validator for `output` over `files` (`LABEL=PATH` each).
    static func validate(_ output: String, _ files: [String]) throws -> Validation {
        let script = TestEnvironment.repositoryRoot + "/scripts/validate_json.py"
        let r = try #require(TestEnvironment.execute("/usr/bin/env", ["python3", script, output] + files))
        return Validation(stdout: r.stdout, stderr: r.stderr, status: r.status)
    }

    static func checkAvailable() -> Bool {
        if validatorAvailable { return true }
        if validatorRequired {
            Issue.record("python3 jsonschema is missing: apt-get install python3-jsonschema (scripts/install-deps.sh does)")
        } else {
            print("SchemaValidationTests: skipped, python3 jsonschema is missing (apt-get install python3-jsonschema)")
        }
        return false
    }

    @Test func everyJSONOutputOfEverySampleAndCaptureMatchesItsSchema() throws {
        guard Self.checkAvailable() else { return }
        let binary = try #require(TestEnvironment.blescopeBinary, "the blescope binary was not built")
        let inputs = Self.samples + TestEnvironment.realCaptures
        #expect(inputs.count >= 21, "the Samples are missing")
        let directory = NSTemporaryDirectory() + "blescope-schemas-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let codecs = TestEnvironment.sample("codecs")
        // Not a capture: `info --json` and `report` write an {"file", "error"} object for it.
        let notCapture = TestEnvironment.sample("README.md")

        struct Job { var output: String; var label: String; var path: String; var arguments: [String]; var expectedStatus: Set<Int32> }
        var jobs: [Job] = []
        jobs.append(
            Job(
                output: "info", label: "info --json over \(inputs.count + 1) files (line N = file N)",
                path: directory + "/info.jsonl", arguments: ["info", "--json"] + inputs + [notCapture],
                expectedStatus: [2]))
        jobs.append(
            Job(
                output: "report", label: "report --format json over \(inputs.count + 1) files (files/N = file N)",
                path: directory + "/report.json",
                arguments: ["report", "--format", "json", "--quiet", "--codec", codecs] + inputs + [
                    notCapture,
                    "-o", directory + "/report.json",
                ], expectedStatus: [2]))
        // Several captures at once (the Samples folder, its notes skipped): one object per line, its "file" first.
        for command in ["gatt", "transfers", "ota", "throughput", "adverts", "iso"] {
            var arguments = [command, "--json", "--quiet", TestEnvironment.samplesDirectory]
            if command != "adverts" { arguments += ["--codec", codecs] }
            jobs.append(
                Job(
                    output: command, label: "\(command) --json over the Samples folder (line N = capture N)",
                    path: directory + "/folder.\(command).jsonl", arguments: arguments, expectedStatus: command == "ota" ? [0, 1] : [0]))
        }
        // `diff --json`: the Samples folder against itself (every Sample paired by name), two different Samples with
        // the gate (differences in every section they have, breaches), and the two Even G2 sessions when present.
        jobs.append(
            Job(
                output: "diff", label: "diff --json Samples Samples", path: directory + "/samples.diff.json",
                arguments: ["diff", "--json", "--quiet", TestEnvironment.samplesDirectory, TestEnvironment.samplesDirectory],
                expectedStatus: [0]))
        let gated = ["--fail-on", "rate-drop=10%,new-error,gatt-changed,mtu-lower"]
        for (a, b) in [("nordic-dfu.btsnoop", "buttonless-dfu.pklg"), ("diag-mtu-23.pcap", "bracelet.btsnoop")] {
            jobs.append(
                Job(
                    output: "diff", label: "diff --json \(a) \(b)", path: directory + "/\(a)-\(b).diff.json",
                    arguments: ["diff", "--json", "--quiet"] + gated + [TestEnvironment.sample(a), TestEnvironment.sample(b)],
                    expectedStatus: [0, 1]))
        }
        let evenG2 = inputs.filter { $0.contains("even-g2") }
        if evenG2.count >= 2 {
            jobs.append(
                Job(
                    output: "diff", label: "diff --json (the Even G2 sessions)", path: directory + "/even-g2.diff.json",
                    arguments: ["diff", "--json", "--quiet"] + gated + [evenG2[0], evenG2[1]], expectedStatus: [0, 1]))
        }
        for (i, input) in inputs.enumerated() {
            let name = (input as NSString).lastPathComponent
            jobs.append(
                Job(
                    output: "timeline", label: "\(name) [timeline --format jsonl]", path: directory + "/\(i).timeline.jsonl",
                    arguments: ["timeline", "--format", "jsonl", "--quiet", "--codec", codecs, input], expectedStatus: [0]))
            jobs.append(
                Job(
                    output: "diagnose", label: "\(name) [diagnose --json]", path: directory + "/\(i).diagnose.json",
                    arguments: ["diagnose", "--json", "--quiet", input], expectedStatus: [0]))
            for command in ["gatt", "transfers", "ota", "throughput", "adverts", "iso"] {
                var arguments = [command, "--json", "--quiet", input]
                if command != "adverts" { arguments += ["--codec", codecs] }
                // `ota` exits 1 when an update did not succeed: the JSON is written all the same.
                jobs.append(
                    Job(
                        output: command, label: "\(name) [\(command) --json]", path: directory + "/\(i).\(command).json",
                        arguments: arguments, expectedStatus: command == "ota" ? [0, 1] : [0]))
            }
        }

        let start = Date()
        let results = Locked([Int: TestEnvironment.ProcessResult?]())
        let allJobs = jobs
        DispatchQueue.concurrentPerform(iterations: allJobs.count) { i in
            let r = TestEnvironment.execute(binary, allJobs[i].arguments)
            if let r, allJobs[i].output != "report" {
                _ = FileManager.default.createFile(atPath: allJobs[i].path, contents: Data(r.stdout.utf8))
            }
            results.withLock { $0[i] = r }
        }
        let ran = Date().timeIntervalSince(start)
        var byOutput: [String: [String]] = [:]
        var lines: [String: Int] = [:]
        for (i, job) in jobs.enumerated() {
            let r = try #require(results.withLock { $0[i] } ?? nil, "blescope did not start for \(job.label)")
            #expect(job.expectedStatus.contains(r.status), "\(job.label): exit \(r.status): \(r.stderr.prefix(300))")
            let text = try String(contentsOfFile: job.path, encoding: .utf8)
            #expect(!text.isEmpty, "\(job.label): no output")
            lines[job.output, default: 0] += job.path.hasSuffix(".jsonl") ? text.split(separator: "\n").count : 1
            byOutput[job.output, default: []].append("\(job.label)=\(job.path)")
        }

        let validationStart = Date()
        var documents = 0
        for output in ["info", "timeline", "gatt", "transfers", "ota", "throughput", "adverts", "report", "diagnose", "iso", "diff"] {
            let files = try #require(byOutput[output])
            let v = try Self.validate(output, files)
            #expect(
                v.status == 0,
                "\(output) output does not match schemas/\(output).schema.json:\n\(v.stdout.split(separator: "\n").prefix(40).joined(separator: "\n"))\n\(v.stderr.suffix(500))"
            )
            // The validator saw every document blescope wrote (an empty or skipped file would pass vacuously).
            #expect(v.documents == lines[output], "\(output): validated \(v.documents ?? -1) documents of \(lines[output] ?? 0)")
            documents += v.documents ?? 0
        }
        let validated = Date().timeIntervalSince(validationStart)
        print(
            String(
                format:
                    "SchemaValidationTests: %d inputs, %d outputs, %d documents; blescope %.1f s, validation %.1f s (11 python processes)",
                inputs.count, jobs.count, documents, ran, validated))
    }

    /// The validator fails on drift and says where: file, output, JSON pointer and schema rule.
    @Test(arguments: [
        // (what changed, mutation of a valid `info --json` line, expected pointer, expected rule)
        ("a key removed", #"{"file":"x","format":"btsnoop"}"#, "(document root)", "required"),
        ("a key added", "ADD", "(document root)", "additionalProperties"),
        ("a type changed", "TYPE", "/records", "type"),
        ("an enum value", "ENUM", "/format", "enum"),
        ("a finding without offset", "FINDING", "/findings/0", "required"),
    ])
    func validatorNamesFileOutputPointerAndRule(_ change: String, _ mutation: String, _ pointer: String, _ rule: String) throws {
        guard Self.checkAvailable() else { return }
        let r = try Blescope.run(["info", "--json", "Samples/bracelet.btsnoop"])
        let valid = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let line: String =
            switch mutation {
            case "ADD": valid.replacingOccurrences(of: #""drops":"#, with: #""summary":{},"drops":"#)
            case "TYPE": valid.replacingOccurrences(of: #""records":111"#, with: #""records":"111""#)
            case "ENUM": valid.replacingOccurrences(of: #""format":"btsnoop""#, with: #""format":"snoop""#)
            case "FINDING":
                // The reader's findings, the last array of that name (the diagnosis, which leads, has its own).
                valid.range(of: #""findings":[]"#, options: .backwards).map {
                    valid.replacingCharacters(
                        in: $0, with: #""findings":[{"severity":"warning","code":"a.b","message":"m","frame":1}]"#)
                } ?? valid
            default: mutation
            }
        #expect(line != valid, "the mutation did not apply: \(change)")
        let path = NSTemporaryDirectory() + "blescope-schema-drift-\(UUID().uuidString).jsonl"
        try (valid + "\n" + line + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let v = try Self.validate("info", ["drifted capture [info --json]=\(path)"])
        #expect(v.status == 1, "\(change): not caught")
        let first = String(v.stdout.split(separator: "\n").first ?? "")
        // Line 2 (the first line is valid), the output, the pointer, the schema file and keyword.
        #expect(first.hasPrefix("drifted capture [info --json]:2: info: at \(pointer): info.schema.json"), "\(change): \(first)")
        #expect(first.contains("(\(rule) = "), "\(change): \(first)")
    }
}
