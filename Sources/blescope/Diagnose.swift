import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReports

/// `blescope diagnose`: what went wrong and why, ranked, each finding with the frame that decides it.
struct Diagnose: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say what went wrong in each capture and why: findings ranked by severity, each with its deciding frame.",
        discussion: """
            Each finding names the device and what happened, the frame that decides it, the frames that lead to it, \
            the likely causes, the link facts it rests on (observed, inferred or assumed) and whether what the log \
            cannot show lowers its confidence. Repeats fold into one line. Rules: docs/diagnosis.md \
            (`blescope diagnose --list-rules`; one rule's page: `--explain DC-01`). Exit 0 when the captures were read (whatever was found), 2 when one \
            could not be.
            """)

    @Argument(help: capturesHelp)
    var files: [String] = []

    @Flag(help: "One JSON object per capture, one per line (schemas/diagnose.schema.json).")
    var json = false

    @Flag(help: "List the rules (id, severity, title) and exit.")
    var listRules = false

    @Option(
        name: .customLong("explain"),
        help: ArgumentHelp("Print a rule's page: what it means, the evidence it reads, what to do (e.g. DC-01).", valueName: "RULE"))
    var explainRule: String?

    @Flag(
        help:
            "With --list-rules: the Markdown table of docs/diagnosis.md (id, severity, group, title, evidence, anchors); with --explain: the page in Markdown."
    )
    var markdown = false

    @OptionGroup var analysis: AnalysisOptions
    @OptionGroup var batch: BatchOptions
    @OptionGroup var display: DisplayOptions

    func validate() throws {
        if files.isEmpty && !listRules && explainRule == nil {
            throw ValidationError("give at least one capture (or --list-rules, --explain RULE)")
        }
    }

    func run() throws {
        let out = OutputStream()
        if let id = explainRule {
            // `--explain all --markdown`: the rule pages of docs/diagnosis.md.
            let page = id == "all" && markdown ? DiagnosisReport.rulePages() : DiagnosisReport.explain(id, markdown: markdown)
            guard let page else {
                writeStandardError("blescope: unknown rule '\(id)' (the rules: blescope diagnose --list-rules)\n")
                throw Exit.badInput
            }
            out.write(page)
            out.flush()
            return
        }
        if listRules {
            out.write(DiagnosisReport.ruleList(markdown: markdown))
            out.flush()
            return
        }
        let terminal = display.terminal()
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        let options = try analysis.analyzerOptions(timeline: false)
        defer { analysis.sayUnusedCodecs(options, captures: inputs.files.count) }
        let jobs = inputs.files.count > 1 ? batch.effectiveJobs : 1
        let quiet = analysis.quiet || inputs.files.count > 1
        // --verbose (AnalysisOptions): info findings in full, not one line each (and the codec specs loaded).
        let (json, verbose, isBatch) = (self.json, analysis.verbose, inputs.isBatch)
        let failed = BatchRunner.forEachCapture(inputs.files, jobs: jobs, out: out, progress: nil, jsonErrors: json && inputs.isBatch) {
            i, path, capture, out in
            let progress = quiet ? nil : ProgressReporter(label: path, totalBytes: capture.fileSize)
            let report = DiagnosisReport.analyze(capture, options: options, progress: progress)
            if json {
                out.write(report.json + "\n")
            } else {
                if isBatch { out.write((i > 0 ? "\n" : "") + "== \(path)\n") }
                out.write(report.text(terminal: terminal, verbose: verbose))
            }
            return .init(ok: true)
        }
        out.flush()
        try finishBatch(inputs, failed: failed, arguments: files)
    }
}
