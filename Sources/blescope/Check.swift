import ArgumentParser
import BLEAnalysis
import BLECapture
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

    @Argument(help: "Capture files (each checked against every expectation).")
    var files: [String]

    @Option(help: "Also write the results as JUnit XML to this file (one testsuite per capture).")
    var junit: String?

    @OptionGroup var analysis: AnalysisOptions

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
        let options = try analysis.analyzerOptions(timeline: true)
        let out = OutputStream()
        var results: [ExpectationResult] = []
        for file in files {
            let capture = try openCapture(file)
            let facts = CheckFacts.gather(capture, options: options)
            for e in expectations {
                let r = facts.evaluate(e, file: file, images: images)
                results.append(r)
                out.write((r.passed ? "PASS" : "FAIL") + "  " + (files.count > 1 ? file + ": " : "") + e.title + ": " + r.detail + "\n")
            }
        }
        let failed = results.filter { !$0.passed }.count
        out.write("\(results.count - failed) passed, \(failed) failed\n")
        out.flush()
        if let junit, !BinaryFile.write(junit, Array(JUnitReport.xml(results).utf8)) {
            writeStandardError("blescope: cannot write \(junit)\n")
            throw Exit.badInput
        }
        if failed > 0 { throw Exit.checkFailed }
    }
}
