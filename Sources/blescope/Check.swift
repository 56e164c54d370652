import ArgumentParser
import BLEAnalysis
import BLECapture
import BLECore
import BLEReports

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Check captures against expectations (YAML): updates that succeed fast enough, transfers that complete, errors and disconnections that must not happen, latencies, link quality, diagnosis findings.",
        discussion: """
            One line per expectation and capture: PASS or FAIL, what decided it and at which frame; a failure \
            also names the diagnosis finding that explains it (rule id and deciding frame, as `diagnose`). \
            Exit code 0 when every expectation holds, 1 when one fails, 2 when a capture cannot be read or \
            the expectations file has a mistake (named as file:line:column: key: what is wrong). The file \
            format is in docs/ci-checks.md.
            """)

    @Option(help: "The expectations file (YAML).")
    var expect: String

    @Argument(
        help: ArgumentHelp(
            "Capture files, directories (every file below, recursively) or quoted glob patterns; each checked against every expectation.",
            discussion:
                "Captures are checked one after another; a file found in a directory that is not a capture is skipped with one line on stderr; a capture that cannot be read is named, counted as unreadable (and a JUnit test case), and the exit code is 2."
        ))
    var files: [String]

    @Option(help: "Also write the results as JUnit XML to this file (one testsuite per capture).")
    var junit: String?

    @OptionGroup var analysis: AnalysisOptions

    @OptionGroup var display: DisplayOptions

    @OptionGroup var batch: BatchOptions

    func run() throws {
        guard let text = readTextFile(expect) else {
            writeStandardError("blescope: \(expect): cannot read the expectations file\n")
            throw Exit.badInput
        }
        let expectations: [Expectation]
        do { expectations = try Expectation.parse(yaml: text, path: expect) } catch {
            writeStandardError("blescope: \(error)\n")
            throw Exit.badInput
        }
        var images: [String: [UInt8]] = [:]
        for case let .ota(_, _, _, path?) in expectations where images[path] == nil {
            guard let bytes = BinaryFile.read(path) else {
                writeStandardError("blescope: \(path): cannot read the expected image\n")
                throw Exit.badInput
            }
            images[path] = bytes
        }
        let terminal = display.terminal()
        let expectedImages = images
        let options = try analysis.analyzerOptions(timeline: true)
        let baselines = try analyseBaselines(Expectation.baselinePaths(expectations), options: options)
        // Captures are checked one after another: each result line is written as soon as it is known, and a capture
        // that cannot be read becomes a JUnit test case of its own.
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        defer { analysis.sayUnusedCodecs(options, captures: inputs.files.count) }
        let out = OutputStream()
        var results: [ExpectationResult] = []
        var unreadable: [JUnitReport.Unreadable] = []
        for file in inputs.files {
            let capture: CaptureFile
            do { capture = try CaptureFile.open(path: file) } catch {
                out.flush()
                writeStandardError("blescope: \(error)\n")
                unreadable.append(.init(file: file, message: "\(error)"))
                continue
            }
            var facts = CheckFacts.gather(capture, options: options)
            if !baselines.isEmpty {
                // `baseline:` compares analyses as `diff` makes them: a second pass, only when one is asked for.
                facts.baselineAnalyses = BaselineAnalyses(
                    current: BLEReports.Report.analyze(path: file, analyzerOptions: options), baselines: baselines)
            }
            for e in expectations {
                let r = facts.evaluate(e, file: file, images: expectedImages)
                results.append(r)
                out.write(terminal.fit(r.line(showingFile: inputs.isBatch)) + "\n")
            }
        }
        reportMissing(inputs)
        let failed = results.filter { !$0.passed }.count
        out.write(
            "\(results.count - failed) passed, \(failed) failed" + (unreadable.isEmpty ? "" : ", \(unreadable.count) unreadable") + "\n")
        out.flush()
        if let junit, !BinaryFile.write(junit, Array(JUnitReport.xml(results, unreadable: unreadable).utf8)) {
            writeStandardError("blescope: cannot write \(junit)\n")
            throw Exit.badInput
        }
        if !unreadable.isEmpty || !inputs.missing.isEmpty { throw Exit.badInput }
        if failed > 0 { throw Exit.checkFailed }
    }

    /// Each golden capture of a `baseline:` expectation analysed once, by the path written: as given, else beside the
    /// expectations file. Exit 2 when one cannot be read.
    func analyseBaselines(_ paths: [String], options: AnalyzerOptions) throws -> [String: FileAnalysis] {
        var out: [String: FileAnalysis] = [:]
        for path in paths {
            let directory = expect.lastIndex(of: "/").map { String(expect[..<$0]) } ?? "."
            let found = access(path, F_OK) == 0 || path.hasPrefix("/") ? path : directory + "/" + path
            let f = BLEReports.Report.analyze(path: found, analyzerOptions: options)
            if let error = f.error {
                writeStandardError("blescope: \(expect): baseline \(path): \(error)\n")
                throw Exit.badInput
            }
            out[path] = f
        }
        return out
    }
}
