import ArgumentParser
import BLEAnalysis
import BLEReports

struct Gatt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "The GATT database of each connection, rebuilt from discovery, with how each handle was used.")

    @Argument(help: capturesHelp)
    var files: [String]

    @Flag(help: "JSON instead of text (schema in the README); with several captures one object per line, its \"file\" first.")
    var json = false

    @OptionGroup var analysis: AnalysisOptions

    @OptionGroup var display: DisplayOptions

    @OptionGroup var batch: BatchOptions

    func run() throws {
        let terminal = display.terminal()
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        let analyzerOptions = try analysis.analyzerOptions(timeline: false, diagnosis: false)
        defer { analysis.sayUnusedCodecs(analyzerOptions, captures: inputs.files.count) }
        let json = self.json
        try runOverCaptures(
            inputs, arguments: files, jobs: batch.effectiveJobs, quiet: analysis.quiet, label: "gatt", out: OutputStream(),
            jsonErrors: json, separator: { i, path in json ? "" : (i > 0 ? "\n" : "") + fileHeader(path, terminal: terminal) },
            work: { capture, file, out, progress in
                let (result, log) = LogScope.analyze(
                    capture, options: analyzerOptions, observing: Observing(gattUsage: true),
                    progress: { progress?.update(records: $0, bytes: $1) })
                var report = GATTReport(connections: result.connections, usage: result.gattUsage ?? GATTUsage())
                report.log = log
                if json {
                    writeJSONLine(report.json, file: file, to: out)
                } else {
                    out.write(log.text(terminal: terminal))
                    out.write(terminal.fit(report.text(terminal: terminal)))
                }
            })
    }
}
