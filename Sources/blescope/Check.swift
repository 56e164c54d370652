import ArgumentParser
import BLEAnalysis
import BLECapture
import BLECore
import BLEReports

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Check captures against expectations (YAML): updates that succeed fast enough, transfers that complete, errors and disconnections that must not happen, latencies, link quality.",
        discussion: """
            One line per expectation and capture: PASS or FAIL, what decided it and at which frame. \
            Exit code 0 when every expectation holds, 1 when one fails, 2 when a capture or the \
            expectations file cannot be read. The file format is in the README ("Checks for CI").
            """)

    @Option(help: "The expectations file (YAML).")
    var expect: String

    @Argument(help: capturesHelp)
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
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        defer { analysis.sayUnusedCodecs(options, captures: inputs.files.count) }
        let out = OutputStream()
        // Each capture's results, by its place in the input (captures are checked in parallel, written in order).
        let byCapture = Locked([[ExpectationResult]](repeating: [], count: inputs.files.count))
        let index = Dictionary(inputs.files.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        let several = inputs.isBatch
        let quiet = analysis.quiet
        var unreadable: Error? = nil
        do {
            try runOverCaptures(inputs, arguments: files, jobs: batch.effectiveJobs, quiet: quiet, label: "check", out: out) {
                capture, _, out, _ in
                let file = capture.path
                let facts = CheckFacts.gather(capture, options: options)
                var results: [ExpectationResult] = []
                for e in expectations {
                    let r = facts.evaluate(e, file: file, images: expectedImages)
                    results.append(r)
                    let line = (r.passed ? "PASS" : "FAIL") + "  " + (several ? file + ": " : "") + e.title + ": " + r.detail
                    out.write(terminal.fit(line) + "\n")
                }
                if let i = index[file] { byCapture.withLock { $0[i] = results } }
            }
        } catch {
            unreadable = error  // the summary and the JUnit file still cover every capture that was read
        }
        let results = byCapture.withLock { $0.flatMap { $0 } }
        let failed = results.filter { !$0.passed }.count
        out.write("\(results.count - failed) passed, \(failed) failed\n")
        out.flush()
        if let junit, !BinaryFile.write(junit, Array(JUnitReport.xml(results).utf8)) {
            writeStandardError("blescope: cannot write \(junit)\n")
            throw Exit.badInput
        }
        if let unreadable { throw unreadable }
        if failed > 0 { throw Exit.checkFailed }
    }
}
