import ArgumentParser
import BLEAnalysis
import BLECapture
import BLECore
import BLEReports
#if canImport(Glibc)
import Glibc
#endif

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "One report over one or more captures: summary, connections, GATT, key events, transfers, OTA, throughput charts, findings.",
        discussion: """
            HTML (the default) is one self-contained file (inline CSS and SVG, no script, no network) to attach to a \
            bug; md is Markdown for issue trackers; json is everything with a stable schema (see the README). Several \
            files, or a directory, make one report; files are analysed in parallel, each by its own analyzer.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case html, md, json }

    @Argument(help: "Capture files, directories (every regular file below, sorted by path) or quoted globs; exit 2 after the report if any could not be read.")
    var inputs: [String]

    @Option(name: .shortAndLong, help: "Output file (default: standard output).")
    var output: String?

    @Option(help: "Output format: html, md, json (default: from the output's extension, else html).")
    var format: Format?

    @Flag(help: "Times in local time instead of UTC.")
    var local = false

    @Option(help: "Throughput sliding window in seconds (default 1).")
    var window: Double = 1

    @Flag(help: "Analyse the files one after the other (same results, one core).")
    var sequential = false

    @OptionGroup var analysis: AnalysisOptions

    func validate() throws {
        if !(window >= 0.001 && window <= 86_400) { throw ValidationError("--window: seconds between 0.001 and 86400") }
        _ = try analysis.analyzerOptions(timeline: false)
    }

    var chosenFormat: Format {
        if let format { return format }
        let lower = output?.lowercased() ?? ""
        if lower.hasSuffix(".md") || lower.hasSuffix(".markdown") { return .md }
        if lower.hasSuffix(".json") { return .json }
        return .html
    }

    func run() throws {
        let inputs = CaptureInputs(self.inputs)
        for m in inputs.missing { writeStandardError("blescope: \(m): no such file (pattern matched nothing)\n") }
        let paths = inputs.files
        guard !paths.isEmpty else {
            if inputs.missing.isEmpty { writeStandardError("blescope: no capture files in \(self.inputs.joined(separator: " "))\n") }
            throw Exit.badInput
        }
        let clock: ReportClock = local ? .local(offsetSeconds: localUTCOffset()) : .utc
        let options = ReportOptions(throughput: ThroughputOptions(window: Int64((window * 1_000_000).rounded())), clock: clock)
        let analysis = self.analysis
        let quiet = analysis.quiet
        let single = paths.count == 1
        let report = BLEReports.Report.build(
            paths: paths, options: options, parallel: !sequential,
            analyzerOptions: { (try? analysis.analyzerOptions(timeline: false)) ?? AnalyzerOptions(timeline: false) },
            progress: { path in quiet || !single ? nil : ProgressReporter(label: path, totalBytes: fileSize(path)) })
        let text: String
        switch chosenFormat {
        case .html: text = HTMLReport.render(report)
        case .md: text = MarkdownReport.render(report)
        case .json: text = JSONReport.render(report) + "\n"
        }
        if let output {
            guard writeFile(output, Array(text.utf8)) else {
                writeStandardError("blescope: cannot write \(output)\n")
                throw Exit.badInput
            }
            if !quiet && Terminal.standardErrorIsTTY {
                writeStandardError("blescope: wrote \(output) (\(formatBytes(Int64(text.utf8.count))))\n")
            }
        } else {
            let out = OutputStream()
            out.write(text)
            out.flush()
        }
        let failed = report.files.filter { $0.error != nil }
        for f in failed { writeStandardError("blescope: \(f.path): \(f.error ?? "")\n") }
        // As `info` and `timeline`: the report covers every readable capture, and the exit code says some were not.
        if !failed.isEmpty || !inputs.missing.isEmpty { throw Exit.badInput }
    }
}

func fileSize(_ path: String) -> Int64? {
    var st = stat()
    return stat(path, &st) == 0 ? Int64(st.st_size) : nil
}
