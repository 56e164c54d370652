import ArgumentParser
import BLECapture
import BLEReports

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Summarize capture files: format, records by type, time span, truncation, drops, findings.",
        discussion: """
            Several files, directories or globs are read in parallel (--jobs); output is in input order, \
            as a sequential run would give. A file found in a directory that is not a capture is skipped \
            with one line on stderr; a capture that cannot be read is reported on stderr and the others \
            go on; the exit code is then 2.
            """)

    @Argument(
        help:
            "Capture files, directories (every file below, recursively) or quoted glob patterns (format detected from content; .gz read transparently)."
    )
    var files: [String]

    @Flag(
        help:
            "One JSON object per file, one per line (schema in the README); with several files, unreadable ones give {\"file\", \"error\"}."
    )
    var json = false

    @Flag(help: "No progress on stderr.")
    var quiet = false

    @Flag(help: "Only read and count records (no decode health): as fast as a record walk.")
    var noDecode = false

    @OptionGroup var batch: BatchOptions

    @OptionGroup var display: DisplayOptions

    func run() throws {
        let terminal = display.terminal()
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        let out = OutputStream()
        let (json, batchJSON) = (self.json, self.json && inputs.isBatch)
        let jobs = inputs.files.count > 1 ? batch.effectiveJobs : 1
        // Several files: one line counting files, not a progress bar per file (parallel bars would overwrite each other).
        let quiet = self.quiet || inputs.files.count > 1
        let files = self.quiet ? nil : FilesProgress(label: "info", total: inputs.files.count)
        let failed = BatchRunner.forEachCapture(inputs.files, jobs: jobs, out: out, progress: files, jsonErrors: batchJSON) {
            i, path, capture, out in
            let progress = quiet ? nil : ProgressReporter(label: path, totalBytes: capture.fileSize)
            let info = CaptureInfo(reading: capture, progress: progress, decode: !noDecode)
            if json {
                out.write(info.json + "\n")
            } else {
                if i > 0 { out.write("\n") }
                out.write(terminal.fit(info.text(terminal: terminal), indent: 20))
            }
            return .init(ok: true)
        }
        out.flush()
        try finishBatch(inputs, failed: failed, arguments: self.files)
    }
}
