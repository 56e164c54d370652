import ArgumentParser
import BLEAnalysis
import BLEReports

struct ISO: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iso",
        abstract: "LE Audio: each CIS and BIS with its parameters and life, the health of its ISO data (SDUs lost, gaps, "
            + "flagged, jitter, bitrate), the ASE states and control-point operations (ASCS), BASS.",
        discussion: """
            Lost SDUs are those never delivered (gaps in the packet sequence numbers) plus those delivered flagged \
            lost; expected SDUs come from the sequence numbers. A verdict line per stream direction says how many of \
            how many were lost, in how many bursts, and where the longest gap was.
            """)

    @Argument(help: capturesHelp)
    var files: [String]

    @Flag(
        help: "JSON instead of text (schema: schemas/iso.schema.json); with several captures one object per line, its \"file\" first.")
    var json = false

    @OptionGroup var analysis: AnalysisOptions

    @OptionGroup var display: DisplayOptions

    @OptionGroup var batch: BatchOptions

    func run() throws {
        let terminal = display.terminal()
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        let analyzerOptions = try analysis.analyzerOptions(timeline: false, diagnosis: false)
        defer { analysis.sayUnusedCodecs(analyzerOptions, captures: inputs.files.count) }
        let out = OutputStream()
        let json = self.json
        try runOverCaptures(
            inputs, arguments: files, jobs: batch.effectiveJobs, quiet: analysis.quiet, label: "iso", out: out, jsonErrors: json,
            separator: { i, path in json ? "" : (i > 0 ? "\n" : "") + fileHeader(path, terminal: terminal) },
            work: { capture, file, out, progress in
                let (result, log) = LogScope.analyze(
                    capture, options: analyzerOptions, observing: Observing(leAudio: true),
                    progress: { progress?.update(records: $0, bytes: $1) })
                let report = ISOReport(iso: result.iso, profiles: result.leAudio)
                if json {
                    writeJSONLine(report.json(log: log), file: file, to: out)
                } else {
                    out.write(log.text(terminal: terminal) + report.text(terminal: terminal))
                }
            })
    }
}
