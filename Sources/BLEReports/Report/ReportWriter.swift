import BLEAnalysis
import BLECore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The formats a report is written in.
public enum ReportFormat: String, Sendable, CaseIterable {
    /// One self-contained page (``HTMLReport``).
    case html
    /// Markdown for issue trackers (``MarkdownReport``).
    case md
    /// One JSON document, schema `blescope-report/1` (``JSONReport``).
    case json
    /// One line per capture, each exactly an element of the JSON document's `files`: what a data engine
    /// ingests for fleet-wide questions.
    case jsonl
}

/// A file's row in the HTML overview table: all that is kept of a capture once its section is written.
public struct FileOverview: Sendable, Hashable {
    public var path: String
    public var error: String?
    public var records: Int
    public var connections: Int
    public var streams: Int
    public var findings: Int

    public init(_ f: FileAnalysis) {
        path = f.path
        error = f.error
        records = f.info?.statistics.records ?? 0
        connections = f.connections.count
        streams = f.throughput.count
        findings = f.findingCount
    }
}

/// Writes a report over any number of captures one file at a time, so memory holds the analyses of the
/// files being worked on, never the whole report.
///
/// Files are analysed in parallel (`jobs`) through ``BatchRunner``: each worker renders its file's section
/// as soon as the file is analysed and drops the analysis; sections are written in input order, so the
/// output is byte for byte what ``HTMLReport/render(_:)`` (and the Markdown and JSON renderers) make of
/// ``Report/build(paths:options:parallel:analyzerOptions:progress:)``. The HTML page lists the files before
/// their sections: with several files the sections are spooled to an anonymous temporary file until the
/// overview rows (a few numbers per file) are all known.
public enum ReportWriter {
    /// Writes the report of `paths` to `out`; returns how many files could not be read (each named on
    /// standard error, in input order, and listed in the report with its error).
    public static func write(
        paths: [String], format: ReportFormat, to out: OutputStream,
        options: ReportOptions = ReportOptions(),
        analyzerOptions: AnalyzerOptions = AnalyzerOptions(timeline: false), jobs: Int = 1,
        filesProgress: FilesProgress? = nil,
        fileProgress: (@Sendable (String) -> ProgressReporter?)? = nil
    ) -> Int {
        var options = options
        if jobs > 1 && paths.count > 1 {
            // The cores are busy with other files: a second thread per file would only contend with them.
            options.backgroundTrackers = false
            options.throughputBeside = false
        } else if options.backgroundTrackers && !secondThreadForced {
            // One file: the trackers run on the decoding thread unless `BLESCOPE_THREADS=2` asks for the second one.
            // Since the trackers became cheap, copying each value into the batches costs more than the trackers do
            // (docs/performance.md#report-writer).
            options.backgroundTrackers = false
        }
        // Only the page has a searchable timeline: the other formats skip its pass.
        options.embedTimeline = format == .html
        let opts = options
        let overviews = Locked<[FileOverview?]>(Array(repeating: nil, count: format == .html ? paths.count : 0))
        let analyse: @Sendable (Int, String, OutputStream) -> BatchRunner.Outcome = { i, path, stream in
            let progress = fileProgress?(path)
            let f = Report.analyze(path: path, options: opts, analyzerOptions: analyzerOptions, progress: progress)
            progress?.finish()
            switch format {
            case .html:
                stream.write(HTMLReport.file(f, index: i + 1, options: opts))
                overviews.withLock { $0[i] = FileOverview(f) }
            case .md: stream.write(MarkdownReport.file(f, options: opts))
            case .json: stream.write((i > 0 ? "," : "") + JSONReport.file(f))
            case .jsonl: stream.write(JSONReport.file(f) + "\n")
            }
            guard let error = f.error else { return .init(ok: true) }
            return .init(ok: false, message: "blescope: \(path): \(error)\n")
        }
        switch format {
        case .html:
            out.write(HTMLReport.head(paths: paths, options: opts))
            guard paths.count > 1, let spool = tmpfile() else {
                // One file has no overview; without a temporary file the sections go first, the table after.
                let failed = BatchRunner.run(paths, jobs: jobs, out: out, progress: filesProgress, work: analyse)
                out.write(HTMLReport.overview(overviews.withLock { $0.compactMap { $0 } }) + HTMLReport.tail)
                return failed
            }
            defer { fclose(spool) }
            let sections = OutputStream(fd: fileno(spool))
            let failed = BatchRunner.run(paths, jobs: jobs, out: sections, progress: filesProgress, work: analyse)
            sections.flush()
            out.write(HTMLReport.overview(overviews.withLock { $0.compactMap { $0 } }))
            out.copy(fromStartOf: fileno(spool))
            out.write(HTMLReport.tail)
            return failed
        case .md:
            out.write(MarkdownReport.head(fileCount: paths.count, options: opts))
            return BatchRunner.run(paths, jobs: jobs, out: out, progress: filesProgress, work: analyse)
        case .json:
            out.write(JSONReport.head(options: opts))
            let failed = BatchRunner.run(paths, jobs: jobs, out: out, progress: filesProgress, work: analyse)
            out.write(JSONReport.tail + "\n")
            return failed
        case .jsonl:
            return BatchRunner.run(paths, jobs: jobs, out: out, progress: filesProgress, work: analyse)
        }
    }
}
