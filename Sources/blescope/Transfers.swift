import ArgumentParser
import BLEAnalysis
import BLECore
import BLEReports

struct Transfers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reassemble chunked messages (BTLE Transfer EOM framing, codec roles, MCUmgr SMP) and check they arrived whole.")

    @Argument(help: capturesHelp)
    var files: [String]

    @Flag(help: "JSON: {\"transfers\": [...]} (schema in the README); with several captures one object per line, its \"file\" first.")
    var json = false

    @Option(
        help:
            "Write each reassembled message to this directory (conn<N>-handle<H>-<first frame>.bin; with several captures, each capture's file name first)."
    )
    var extract: String?

    @Option(help: "End-of-message marker: text (EOM) or hex (0x454f4d).")
    var terminator: String?

    @Option(help: "Only this characteristic UUID (repeatable; default: the Apple BTLE Transfer characteristic plus auto-detection).")
    var uuid: [String] = []

    @Option(help: "Only this attribute handle (repeatable).")
    var handle: [String] = []

    @Option(help: "Only values going this way: tx (sent by the capturing side) or rx.")
    var direction: String?

    @OptionGroup var analysis: AnalysisOptions

    @OptionGroup var display: DisplayOptions

    @OptionGroup var batch: BatchOptions

    func transferOptions() throws -> TransferOptions {
        var o = TransferOptions()
        if let terminator {
            guard let t = TransferOptions.terminator(parsing: terminator) else {
                throw ValidationError("--terminator '\(terminator)': give text or 0x-prefixed hex")
            }
            o.terminator = t
        }
        if !uuid.isEmpty {
            o.characteristics = []
            for u in uuid {
                guard let v = BluetoothUUID(u) else { throw ValidationError("--uuid '\(u)' is not a UUID") }
                o.characteristics.insert(v)
            }
            o.autoDetect = false
        }
        for h in handle {
            guard let v = parseInteger16(h) else { throw ValidationError("--handle '\(h)' is not an attribute handle") }
            o.handles.insert(v)
            o.autoDetect = false
        }
        if let direction {
            switch direction {
            case "tx": o.direction = .tx
            case "rx": o.direction = .rx
            default: throw ValidationError("--direction: tx or rx")
            }
        }
        return o
    }

    func validate() throws { _ = try transferOptions() }

    func run() throws {
        let terminal = display.terminal()
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        let options = try transferOptions()
        let analyzerOptions = try analysis.analyzerOptions(timeline: false, diagnosis: false)
        defer { analysis.sayUnusedCodecs(analyzerOptions, captures: inputs.files.count) }
        let (json, extract) = (self.json, self.extract)
        if let extract { BinaryFile.makeDirectory(extract) }
        let written = Locked(0), unwritable = Locked<[String]>([])
        try runOverCaptures(
            inputs, arguments: files, jobs: batch.effectiveJobs, quiet: analysis.quiet, label: "transfers", out: OutputStream(),
            jsonErrors: json, separator: { i, path in json ? "" : (i > 0 ? "\n" : "") + fileHeader(path, terminal: terminal) },
            work: { capture, file, out, progress in
                let (result, log) = LogScope.analyze(
                    capture, options: analyzerOptions, observing: Observing(transfers: options),
                    progress: { progress?.update(records: $0, bytes: $1) })
                let (transfers, transferFindings) = result.transfers ?? ([], [])
                let findings = capture.findings + result.findings + transferFindings
                if json {
                    writeJSONLine(TransfersReport.json(transfers, findings: findings, log: log), file: file, to: out)
                } else {
                    out.write(log.text(terminal: terminal))
                    out.write(terminal.fit(TransfersReport.text(transfers, findings: findings, terminal: terminal)))
                }
                guard let extract else { return }
                // Several captures: each one's messages are named after it, so that two captures' first messages differ.
                let prefix = file.map { basename($0) + "-" } ?? ""
                for t in transfers {
                    let path = "\(extract)/\(prefix)conn\(t.connectionNumber)-handle\(hex(t.handle, width: 4))-\(t.firstFrame).bin"
                    if BinaryFile.write(path, t.data) { written.withLock { $0 += 1 } } else { unwritable.withLock { $0.append(path) } }
                }
            })
        if let extract {
            for path in unwritable.withLock({ $0 }) { writeStandardError("blescope: cannot write \(path)\n") }
            writeStandardError("blescope: wrote \(written.withLock { $0 }) message(s) to \(extract)\n")
            if !unwritable.withLock({ $0.isEmpty }) { throw Exit.badInput }
        }
    }
}

/// The last component of a path.
func basename(_ path: String) -> String {
    String(path.split(separator: "/", omittingEmptySubsequences: true).last ?? Substring(path))
}
