import ArgumentParser
import BLEAnalysis
import BLECapture
import BLECore
import BLEReports

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract:
            "One report over one or more captures: summary, connections, GATT, key events, transfers, OTA, throughput charts, findings.",
        discussion: """
            HTML (the default) is one self-contained file (inline CSS, SVG and script; nothing fetched) to attach to a \
            bug; md is Markdown for issue trackers; json is everything with a stable schema (see the README); jsonl \
            is one line per capture (each an element of json's "files") for data engines. Several files, or a \
            directory, make one report; files are analysed in parallel (--jobs), each by its own analyzer, and \
            written as they finish, so memory does not grow with the number of files.
            """)

    @Argument(
        help:
            "Capture files, directories (every regular file below, sorted by path) or quoted globs; exit 2 after the report if any could not be read."
    )
    var inputs: [String]

    @Option(
        name: .shortAndLong,
        help:
            "Output file. Without it: standard output when that is a file or a pipe; on a terminal, NAME.html (.md, .json) beside the one capture or directory given."
    )
    var output: String?

    @Option(help: "Output format: html, md, json, jsonl (default: from the output's extension, else html).")
    var format: ReportFormat?

    @Flag(help: "Times in local time instead of UTC.")
    var local = false

    @Option(help: "Throughput sliding window in seconds (default 1).")
    var window: Double = 1

    @Flag(help: "Analyse the files one after the other (the same as --jobs 1).")
    var sequential = false

    @OptionGroup var batch: BatchOptions

    @OptionGroup var analysis: AnalysisOptions

    @OptionGroup var display: DisplayOptions

    func validate() throws {
        if !(window >= 0.001 && window <= 86_400) { throw ValidationError("--window: seconds between 0.001 and 86400") }
        _ = try analysis.analyzerOptions(timeline: false, announce: false)
    }

    var chosenFormat: ReportFormat { format(for: output) }

    func format(for output: String?) -> ReportFormat {
        if let format { return format }
        let lower = output?.lowercased() ?? ""
        if lower.hasSuffix(".md") || lower.hasSuffix(".markdown") { return .md }
        if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") { return .jsonl }
        if lower.hasSuffix(".json") { return .json }
        return .html
    }

    /// Where a report asked for on a terminal without `-o` goes: `NAME.html` beside the one capture or directory
    /// given (`logs/run1.btsnoop` → `logs/run1.html`, `logs/` → `logs.html`); nil for several inputs or a pattern.
    func pathBesideInput() -> String? {
        guard self.inputs.count == 1 else { return nil }
        var input = self.inputs[0]
        while input.count > 1 && input.hasSuffix("/") { input.removeLast() }
        guard CaptureInputs.exists(input), input != "/" else { return nil }
        let ext: String =
            switch format ?? .html {
            case .html: "html"
            case .md: "md"
            case .json: "json"
            case .jsonl: "jsonl"
            }
        if CaptureInputs.isDirectory(input) { return (input == "." ? "report" : input) + "." + ext }
        let slash = input.lastIndex(of: "/")
        let name = slash.map { input[input.index(after: $0)...] } ?? input[...]
        let stem = name.firstIndex(of: ".").map { name[..<$0] }.flatMap { $0.isEmpty ? nil : $0 } ?? name
        return (slash.map { String(input[...$0]) } ?? "") + stem + "." + ext
    }

    func run() throws {
        var output = self.output
        if output == nil && isatty(STDOUT_FILENO) == 1 {
            // A report is a file to open or attach, not text for a terminal.
            guard let beside = pathBesideInput() else {
                writeStandardError("blescope: report: give -o FILE (several inputs; standard output is a terminal)\n")
                throw Exit.badInput
            }
            output = beside
        }
        let chosenFormat = format(for: output)
        RateUnit.display = display.units
        var inputs = captureInputs(self.inputs, jobs: batch.effectiveJobs)
        if let output { inputs.exclude(sameFileAs: output) }
        reportMissing(inputs)
        let paths = inputs.files
        guard !paths.isEmpty else {
            if inputs.missing.isEmpty { writeStandardError("blescope: no capture files in \(self.inputs.joined(separator: " "))\n") }
            throw Exit.badInput
        }
        let analyzerOptions = try analysis.analyzerOptions(timeline: false)
        defer { analysis.sayUnusedCodecs(analyzerOptions, captures: paths.count) }
        let clock: ReportClock = local ? .local(offsetSeconds: localUTCOffset()) : .utc
        let options = ReportOptions(throughput: ThroughputOptions(window: Int64((window * 1_000_000).rounded())), clock: clock)
        let quiet = analysis.quiet
        var fd = STDOUT_FILENO
        if let output {
            fd = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else {
                writeStandardError("blescope: cannot write \(output): \(String(cString: strerror(errno)))\n")
                throw Exit.badInput
            }
        }
        defer { if fd != STDOUT_FILENO { close(fd) } }
        let out = OutputStream(fd: fd)
        let single = paths.count == 1
        let failed = ReportWriter.write(
            paths: paths, format: chosenFormat, to: out, options: options,
            analyzerOptions: analyzerOptions, jobs: sequential ? 1 : batch.effectiveJobs,
            filesProgress: quiet ? nil : FilesProgress(label: "report", total: paths.count),
            fileProgress: { path in quiet || !single ? nil : ProgressReporter(label: path, totalBytes: fileSize(path)) })
        out.flush()
        // Always where blescope chose the file itself; for -o only on a terminal, unless --quiet.
        if let output, self.output == nil || (!quiet && Terminal.standardErrorIsTTY) {
            writeStandardError("blescope: wrote \(output) (\(formatBytes(fileSize(output) ?? 0)))\n")
        }
        // As `info` and `timeline`: the report covers every readable capture, and the exit code says some were not.
        if failed > 0 || !inputs.missing.isEmpty { throw Exit.badInput }
    }
}

extension ReportFormat: ExpressibleByArgument {}

func fileSize(_ path: String) -> Int64? {
    var st = stat()
    return stat(path, &st) == 0 ? Int64(st.st_size) : nil
}
