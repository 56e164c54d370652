import ArgumentParser
import BLEAnalysis
import BLECapture
import BLECore
import BLEReports

struct OTA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ota",
        abstract:
            "Follow firmware updates (Nordic Secure, legacy and buttonless DFU, MCUmgr, Silicon Labs, TI OAD, Dialog SUOTA, Espressif, Telink, Cypress/Infineon bootloader, vendor protocols from codec roles): result, speed, stalls, resends.",
        discussion: """
            Exit code 1 when a check fails: an update that did not succeed, a rate below --min-rate, \
            or an image that differs from --image; 0 otherwise. A CI pipeline can gate on it. Over several \
            captures (directories, globs) every capture is checked and each failing one is named on stderr; \
            exit 2 when a file could not be read.
            """)

    @Argument(help: capturesHelp)
    var files: [String]

    @Flag(
        help:
            "JSON: {\"sessions\": [...]} (schema in the README); with several files one object per line, {\"file\", \"sessions\"} or {\"file\", \"error\"}."
    )
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

    @OptionGroup var batch: BatchOptions

    @OptionGroup var display: DisplayOptions

    /// Parses a rate into bits per second.
    static func parseRate(_ text: String) -> Double? { RateUnit.parse(text)?.bitsPerSecond }

    func validate() throws {
        if let minRate, OTA.parseRate(minRate) == nil { throw ValidationError("--min-rate '\(minRate)': e.g. 20kB/s or 160kbps") }
        if stallMs <= 0 { throw ValidationError("--stall-ms must be positive") }
    }

    func run() throws {
        let terminal = display.terminal()
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        var expected: [UInt8]? = nil
        if let image {
            guard let bytes = BinaryFile.read(image) else {
                writeStandardError("blescope: \(image): cannot read the expected image\n")
                throw Exit.badInput
            }
            expected = bytes
        }
        let gate = OTAGate(
            minRateBitsPerSecond: minRate.flatMap(OTA.parseRate), rateLabel: minRate.map { "--min-rate \($0)" }, expectedImage: expected)
        let analyzerOptions = try analysis.analyzerOptions(timeline: false, diagnosis: false)
        defer { analysis.sayUnusedCodecs(analyzerOptions, captures: inputs.files.count) }
        let ota = OTARun(
            analyzerOptions: analyzerOptions, stallThreshold: Int64(stallMs) * 1000, gate: gate,
            json: json, extractDirectory: extract, terminal: terminal,
            showProgress: !analysis.quiet && inputs.files.count == 1)
        let out = OutputStream()
        let several = inputs.isBatch
        let progress = analysis.quiet || !several ? nil : FilesProgress(label: "ota", total: inputs.files.count)
        let outcome = ota.run(inputs.files, several: several, jobs: batch.effectiveJobs, out: out, progress: progress)
        out.flush()
        reportMissing(inputs)
        if inputs.files.isEmpty && inputs.missing.isEmpty {
            writeStandardError("blescope: no capture files in \(files.joined(separator: " "))\n")
        }
        if outcome.unreadable > 0 || !inputs.missing.isEmpty || inputs.files.isEmpty { throw Exit.badInput }
        if outcome.failing > 0 {
            if several { writeStandardError("blescope: \(outcome.failing) of \(inputs.files.count) captures failed the check\n") }
            throw Exit.checkFailed
        }
    }
}
