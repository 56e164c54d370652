import ArgumentParser
import BLEAnalysis
import BLEReports

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Flat tables for fleets of captures: one JSON Lines file per table, for DuckDB and Spark.",
        discussion: """
            --tables DIR writes DIR/captures.jsonl, connections.jsonl, findings.jsonl, streams.jsonl, \
            ota_sessions.jsonl, iso_streams.jsonl, quality_reports.jsonl, audio_streams.jsonl, sco_links.jsonl and security.jsonl (each described by \
            schemas/tables/<table>.schema.json): every value a scalar, rows joined on capture_id (the capture's path \
            as given) and conn_number. Captures are analysed in parallel (--jobs) as `report` analyses them; rows \
            keep the input order. An unreadable capture keeps its captures row, with its error, and the exit code is \
            2 at the end. SQL over the tables: docs/fleets.md.
            """)

    @Option(help: "The directory to write the tables into (created if missing).")
    var tables: String

    @Argument(help: "Capture files, directories (every regular file below, sorted by path) or quoted globs.")
    var inputs: [String]

    @OptionGroup var batch: BatchOptions

    @OptionGroup var analysis: AnalysisOptions

    func validate() throws {
        _ = try analysis.analyzerOptions(timeline: false, announce: false)
    }

    func run() throws {
        if mkdir(tables, 0o755) != 0 && errno != EEXIST {
            writeStandardError("blescope: cannot create \(tables): \(String(cString: strerror(errno)))\n")
            throw Exit.badInput
        }
        let inputs = captureInputs(self.inputs, jobs: batch.effectiveJobs)
        let analyzerOptions = try analysis.analyzerOptions(timeline: false)
        defer { analysis.sayUnusedCodecs(analyzerOptions, captures: inputs.files.count) }
        var problem: String?
        let failed = FleetExport.write(
            paths: inputs.files, directory: tables, analyzerOptions: analyzerOptions, jobs: batch.effectiveJobs,
            progress: analysis.quiet ? nil : FilesProgress(label: "export", total: inputs.files.count), problem: &problem)
        guard let failed else {
            writeStandardError("blescope: \(problem ?? "cannot write the tables")\n")
            throw Exit.badInput
        }
        try finishBatch(inputs, failed: failed, arguments: self.inputs)
    }
}
