import ArgumentParser
import BLEAnalysis
import BLECapture
import BLECore
import BLEReports

#if canImport(Glibc)
import Glibc
#endif

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

    @Argument(help: "Capture files, directories (every file below, recursively) or quoted glob patterns.")
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

    /// Parses a rate into bits per second.
    static func parseRate(_ text: String) -> Double? { Expectation.parseRate(text) }

    func validate() throws {
        if let minRate, OTA.parseRate(minRate) == nil { throw ValidationError("--min-rate '\(minRate)': e.g. 20kB/s or 160kbps") }
        if stallMs <= 0 { throw ValidationError("--stall-ms must be positive") }
    }

    func run() throws {
        let inputs = CaptureInputs(files)
        var expected: [UInt8]? = nil
        if let image {
            guard let bytes = readBinaryFile(image) else {
                writeStandardError("blescope: \(image): cannot read the expected image\n")
                throw Exit.badInput
            }
            expected = bytes
        }
        let (minRate, rateLabel, requireSession) = (
            self.minRate.flatMap(OTA.parseRate), self.minRate.map { "--min-rate \($0)" },
            self.minRate != nil || expected != nil
        )
        let expectedImage = expected
        let options = try analysis.analyzerOptions(timeline: false)
        if let extract { mkdir(extract, 0o755) }
        let several = inputs.isBatch
        let (json, quiet, stall, extract) = (self.json, analysis.quiet || inputs.files.count > 1, Int64(stallMs) * 1000, self.extract)
        let terminal = Terminal.standardOutput
        let failedChecks = Locked(0)
        let out = OutputStream()
        let progressLine = analysis.quiet || !several ? nil : FilesProgress(label: "ota", total: inputs.files.count)
        let failed = BatchRunner.run(inputs.files, jobs: several ? batch.effectiveJobs : 1, out: out, progress: progressLine) {
            i, path, out in
            let capture: CaptureFile
            do {
                capture = try CaptureFile.open(path: path)
            } catch {
                if json && several {
                    var w = JSONWriter()
                    w.beginObject()
                    w.field("file", path)
                    w.field("error", (error as? CaptureOpenError)?.message ?? "\(error)")
                    w.endObject()
                    out.write(w.string + "\n")
                }
                return .init(ok: false, message: "blescope: \(error)\n")
            }
            let progress = quiet ? nil : ProgressReporter(label: path, totalBytes: capture.fileSize)
            let sessions = OTAReport.sessions(
                capture, options: options, stallThreshold: stall,
                progress: { progress?.update(records: $0, bytes: $1) })
            progress?.finish()
            if json {
                out.write(OTAReport.json(sessions, file: several ? path : nil) + "\n")
            } else {
                if several { out.write((i > 0 ? "\n" : "") + terminal.paint("== \(path)", .bold) + "\n") }
                out.write(OTAReport.text(sessions, terminal: terminal))
                if let expected = expectedImage {
                    for s in sessions {
                        out.write(
                            "image check, session on connection #\(s.connectionNumber) (\(s.protocolName.rawValue)): \(s.compare(expected: expected))\n"
                        )
                    }
                }
            }
            var messages: [String] = []
            if let extract {
                let prefix = several ? fileStem(path) + "-" : ""
                for s in sessions where !s.image.isEmpty {
                    let file = "\(extract)/\(prefix)conn\(s.connectionNumber)-\(s.protocolName.rawValue)-\(s.startFrame).bin"
                    if !writeFile(file, s.image) { messages.append("blescope: cannot write \(file)\n") }
                }
            }
            // The gate is the library's (`check` uses the same one).
            let failures = OTAGate.failures(
                sessions, minRateBitsPerSecond: minRate, rateLabel: rateLabel, expected: expectedImage,
                requireSession: requireSession
            ).map(\.text)
            if !failures.isEmpty { failedChecks.withLock { $0 += 1 } }
            for f in failures { messages.append("blescope: check failed: \(several ? path + ": " : "")\(f)\n") }
            return .init(
                ok: messages.allSatisfy { !$0.hasPrefix("blescope: cannot write") },
                message: messages.isEmpty ? nil : messages.joined())
        }
        out.flush()
        for m in inputs.missing { writeStandardError("blescope: \(m): no such file (pattern matched nothing)\n") }
        if inputs.files.isEmpty && inputs.missing.isEmpty {
            writeStandardError("blescope: no capture files in \(files.joined(separator: " "))\n")
        }
        if failed > 0 || !inputs.missing.isEmpty || inputs.files.isEmpty { throw Exit.badInput }
        let failing = failedChecks.withLock { $0 }
        if failing > 0 {
            if several { writeStandardError("blescope: \(failing) of \(inputs.files.count) captures failed the check\n") }
            throw Exit.checkFailed
        }
    }

    /// `dir/name.btsnoop` → `name` (extracted images of several captures are told apart by it).
    func fileStem(_ path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name.split(separator: ".").first.map(String.init) ?? name
    }
}
