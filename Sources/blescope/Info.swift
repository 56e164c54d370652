import ArgumentParser
import BLECapture
import BLEReports
#if canImport(Glibc)
import Glibc
#endif

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Summarize capture files: format, records by type, time span, truncation, drops, findings.")

    @Argument(help: "Capture files (format detected from content; .gz read transparently).")
    var files: [String]

    @Flag(help: "One JSON object per file, one per line (schema in the README).")
    var json = false

    @Flag(help: "No progress on stderr.")
    var quiet = false

    func run() throws {
        let out = OutputStream()
        let terminal = Terminal.standardOutput
        var failed = false
        for (i, path) in files.enumerated() {
            let capture: CaptureFile
            do {
                capture = try CaptureFile.open(path: path)
            } catch {
                out.flush()
                writeStandardError("blescope: \(error)\n")
                failed = true
                continue
            }
            let progress = quiet ? nil : ProgressReporter(label: path, totalBytes: capture.fileSize)
            let info = CaptureInfo(reading: capture, progress: progress)
            if json {
                out.write(info.json + "\n")
            } else {
                if i > 0 { out.write("\n") }
                out.write(info.text(terminal: terminal))
            }
        }
        out.flush()
        if failed { throw Exit.badInput }
    }
}
