import ArgumentParser
import BLEAnalysis
import BLECore
import BLEReports
#if canImport(Glibc)
import Glibc
#endif

struct OTA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ota",
        abstract: "Follow firmware updates (Nordic DFU, MCUmgr, Silicon Labs, vendor protocols from codec roles): result, speed, stalls, resends.",
        discussion: """
            Exit code 1 when a check fails: an update that did not succeed, a rate below --min-rate, \
            or an image that differs from --image; 0 otherwise. A CI pipeline can gate on it.
            """)

    @Argument(help: "Capture file.")
    var file: String

    @Flag(help: "JSON: {\"sessions\": [...]} (schema in the README).")
    var json = false

    @Option(help: "Gaps above this many milliseconds count as stalls.")
    var stallMs: Int = 200

    @Option(help: "Fail (exit 1) when a session's throughput is below this: 20kB/s, 160kbps, 2000B/s.")
    var minRate: String?

    @Option(help: "The expected firmware image: compare size, SHA-256, CRC-32, first differing offset.")
    var image: String?

    @Option(help: "Write each reconstructed image to this directory.")
    var extract: String?

    @OptionGroup var analysis: AnalysisOptions

    /// Parses a rate into bits per second.
    static func parseRate(_ text: String) -> Double? { Expectation.parseRate(text) }

    func validate() throws {
        if let minRate, OTA.parseRate(minRate) == nil { throw ValidationError("--min-rate '\(minRate)': e.g. 20kB/s or 160kbps") }
        if stallMs <= 0 { throw ValidationError("--stall-ms must be positive") }
    }

    func run() throws {
        let capture = try openCapture(file)
        var expected: [UInt8]? = nil
        if let image {
            guard let bytes = readBinaryFile(image) else {
                writeStandardError("blescope: \(image): cannot read the expected image\n")
                throw Exit.badInput
            }
            expected = bytes
        }
        let progress = analysis.progress(for: capture)
        let tracker = OTATracker(stallThreshold: Int64(stallMs) * 1000)
        let analyzer = Analyzer.analyze(capture, options: try analysis.analyzerOptions(timeline: false),
                                        progress: { progress?.update(records: $0, bytes: $1) },
                                        configure: { $0.observers = [tracker] })
        progress?.finish()
        let sessions = (analyzer.observers.first as? OTATracker)?.sessions ?? []
        let out = OutputStream()
        let terminal = Terminal.standardOutput
        out.write(json ? OTAReport.json(sessions) + "\n" : OTAReport.text(sessions, terminal: terminal))

        if let expected, !json {
            for s in sessions { out.write("image check, session on connection #\(s.connectionNumber) (\(s.protocolName.rawValue)): \(s.compare(expected: expected))\n") }
        }
        // The gate is the library's (`check` uses the same one).
        let failures = OTAGate.failures(sessions, minRateBitsPerSecond: minRate.flatMap(OTA.parseRate), rateLabel: minRate.map { "--min-rate \($0)" },
                                        expected: expected, requireSession: minRate != nil || expected != nil).map(\.text)
        if let extract {
            mkdir(extract, 0o755)
            for s in sessions where !s.image.isEmpty {
                let path = "\(extract)/conn\(s.connectionNumber)-\(s.protocolName.rawValue)-\(s.startFrame).bin"
                if !writeFile(path, s.image) { writeStandardError("blescope: cannot write \(path)\n"); throw Exit.badInput }
            }
        }
        out.flush()
        if !failures.isEmpty {
            for f in failures { writeStandardError("blescope: check failed: \(f)\n") }
            throw Exit.checkFailed
        }
    }
}
