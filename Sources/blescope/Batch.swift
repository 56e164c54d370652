import ArgumentParser
import BLECapture
import BLECore
import BLEReports

/// Options of the commands that take many captures.
struct BatchOptions: ParsableArguments {
    @Option(name: .customLong("jobs"), help: "Captures processed at once when several are given (default: the number of cores).")
    var jobs: Int?

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs: at least 1") }
    }

    var effectiveJobs: Int { max(1, jobs ?? BatchRunner.cores) }
}

/// One line on standard error per glob that matched nothing.
func reportMissing(_ inputs: CaptureInputs) {
    for m in inputs.missing { writeStandardError("blescope: \(m): no such file (pattern matched nothing)\n") }
}

/// The captures named by `arguments` (files, directories, quoted globs), as every command that reads captures takes
/// them: files found in a directory or by a pattern that are not captures are left out, one line on standard error
/// each; a file named explicitly stays (opening it fails and says why).
func captureInputs(_ arguments: [String], jobs: Int) -> CaptureInputs {
    var inputs = CaptureInputs(arguments)
    inputs.separateNonCaptures(jobs: jobs)
    for s in inputs.skipped { writeStandardError("blescope: skipped \(s.path): \(s.reason)\n") }
    return inputs
}

/// `==> path <==`, the header of one capture's text among several (the path shortened in its middle to fit).
func fileHeader(_ path: String, terminal: Terminal) -> String {
    "==> " + terminal.shorten(path, to: max(20, (terminal.width ?? 0) - 8)) + " <==\n"
}

/// The end of a run over several captures: patterns that matched nothing are named, and the exit code is 2 when a
/// capture could not be read, a pattern matched nothing, or nothing was left to read.
func finishBatch(_ inputs: CaptureInputs, failed: Int, arguments: [String]? = nil) throws {
    reportMissing(inputs)
    if inputs.files.isEmpty && inputs.missing.isEmpty, let arguments {
        writeStandardError("blescope: no capture files in \(arguments.joined(separator: " "))\n")
    }
    if failed > 0 || !inputs.missing.isEmpty || inputs.files.isEmpty { throw Exit.badInput }
}

/// The help of a command's capture arguments (every command that reads captures takes them alike).
let capturesHelp = ArgumentHelp(
    "Capture files, directories (every file below, recursively) or quoted glob patterns.",
    discussion:
        "Several captures are read in parallel (--jobs) and written in input order; a file found in a directory that is not a capture is skipped with one line on stderr; exit 2 at the end if a capture could not be read."
)

/// Runs `work` over the captures of `inputs`, as every command that reads captures does: one capture straight to
/// the output with a progress line; several in parallel (``BatchRunner``), each output after `separator(index, path)`,
/// `work` told the capture's path (to tag JSON lines and CSV rows with it). A capture that cannot be read is named on
/// standard error (and, with `jsonErrors`, given a `{"file", "error"}` line); the exit code is then 2.
func runOverCaptures(
    _ inputs: CaptureInputs, arguments: [String], jobs: Int, quiet: Bool, label: String, out: OutputStream,
    jsonErrors: Bool = false, separator: @escaping @Sendable (Int, String) -> String = { _, _ in "" },
    work: @escaping @Sendable (_ capture: CaptureFile, _ file: String?, _ out: OutputStream, _ progress: ProgressReporter?) -> Void
) throws {
    guard inputs.isBatch else {
        let capture = try openCapture(inputs.files[0])
        let progress = quiet ? nil : ProgressReporter(label: capture.path, totalBytes: capture.fileSize)
        work(capture, nil, out, progress)
        progress?.finish()
        out.flush()
        return
    }
    let files = quiet ? nil : FilesProgress(label: label, total: inputs.files.count)
    let failed = BatchRunner.forEachCapture(inputs.files, jobs: jobs, out: out, progress: files, jsonErrors: jsonErrors) {
        i, path, capture, out in
        out.write(separator(i, path))
        work(capture, path, out, nil)
        return .init(ok: true)
    }
    out.flush()
    try finishBatch(inputs, failed: failed, arguments: arguments)
}

/// Writes one JSON document (one line) to `out`, with `"file": path` as its first key when `file` is given.
func writeJSONLine(_ json: String, file: String?, to out: OutputStream) {
    guard let file else {
        out.write(json + "\n")
        return
    }
    out.writeTagged(file: jsonFileKey(file), line: Array((json + "\n").utf8))
}

/// A CSV field, quoted (RFC 4180): the file column of CSV over several captures.
func csvQuoted(_ s: String) -> String { "\"" + s.replacingAll("\"", with: "\"\"") + "\"" }
