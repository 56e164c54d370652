import ArgumentParser
import BLECapture
import BLEReports
#if canImport(Glibc)
import Glibc
#endif

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Summarize capture files: format, records by type, time span, truncation, drops, findings.")

    @Argument(help: "Capture files or directories (format detected from content; .gz read transparently).")
    var files: [String]

    @Flag(help: "One JSON object per file, one per line (schema in the README): JSON Lines a data engine can load.")
    var json = false

    @Flag(help: "Descend into subdirectories.")
    var recursive = false

    @Flag(help: "Read the files one after the other instead of in parallel.")
    var sequential = false

    @Flag(help: "No progress on stderr.")
    var quiet = false

    func run() throws {
        let out = OutputStream()
        let terminal = Terminal.standardOutput
        let (paths, problems) = CaptureInputs.expand(files, recursive: recursive)
        for p in problems { writeStandardError("blescope: \(p)\n") }
        var failed = !problems.isEmpty
        if paths.count == 1 {
            // One file: read it here, with progress on a terminal.
            do {
                let capture = try CaptureFile.open(path: paths[0])
                let info = CaptureInfo(reading: capture, progress: quiet ? nil : ProgressReporter(label: paths[0], totalBytes: capture.fileSize))
                out.write(json ? info.json + "\n" : info.text(terminal: terminal))
            } catch {
                writeStandardError("blescope: \(error)\n")
                failed = true
            }
        } else {
            for (i, result) in CaptureInfo.collect(paths: paths, parallel: !sequential).enumerated() {
                switch result {
                case .success(let info):
                    if json {
                        out.write(info.json + "\n")
                    } else {
                        if i > 0 { out.write("\n") }
                        out.write(info.text(terminal: terminal))
                    }
                case .failure(let error):
                    out.flush()
                    writeStandardError("blescope: \(error)\n")
                    failed = true
                }
            }
        }
        out.flush()
        if failed { throw Exit.badInput }
    }
}
