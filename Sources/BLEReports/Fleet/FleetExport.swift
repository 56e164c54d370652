import BLEAnalysis
import BLECore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes the fleet tables (``FleetTable``) of many captures into one directory, `DIR/<table>.jsonl`, the rows of
/// each table in input order whatever the number of jobs.
///
/// Captures are analysed in parallel through ``BatchRunner``, each as `report` analyses it (``Report/analyze(path:
/// options:analyzerOptions:progress:)``), so a table's figures are the report's. Each capture's rows go through the
/// runner's ordered output tagged with their table, one byte before each line, into an anonymous temporary file that
/// is then split into the table files: memory holds a few captures' analyses, never the fleet's rows.
public enum FleetExport {
    /// The tables written, in this order; returns how many captures could not be read (each still has a `captures`
    /// row with its `error`), or nil when a table file could not be created (`problem` says which and why).
    public static func write(
        paths: [String], directory: String, options: ReportOptions = ReportOptions(),
        analyzerOptions: AnalyzerOptions = AnalyzerOptions(timeline: false), jobs: Int = 1,
        progress: FilesProgress? = nil, problem: inout String?
    ) -> Int? {
        var files: [FleetTable: Int32] = [:]
        defer { for fd in files.values { close(fd) } }
        for table in FleetTable.allCases {
            let path = directory + "/" + table.fileName
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else {
                problem = "cannot write \(path): \(String(cString: strerror(errno)))"
                return nil
            }
            files[table] = fd
        }
        guard let spool = tmpfile() else {
            problem = "cannot create a temporary file: \(String(cString: strerror(errno)))"
            return nil
        }
        defer { fclose(spool) }
        var options = options
        options.backgroundTrackers = false
        options.throughputBeside = jobs <= 1
        let opts = options
        let tagged = OutputStream(fd: fileno(spool))
        let failed = BatchRunner.run(paths, jobs: jobs, out: tagged, progress: progress) { _, path, stream in
            let f = Report.analyze(path: path, options: opts, analyzerOptions: analyzerOptions)
            let rows = FleetRows(f)
            for (index, table) in FleetTable.allCases.enumerated() {
                for line in rows.lines[table] ?? [] { stream.write(tag(index) + line) }
            }
            guard let error = f.error else { return .init(ok: true) }
            return .init(ok: false, message: "blescope: \(path): \(error)\n")
        }
        tagged.flush()
        split(spool: fileno(spool), into: FleetTable.allCases.map { OutputStream(fd: files[$0]!) })
        return failed
    }

    /// The one-byte table tag before a line: `A` for the first table, `B` for the second…
    static func tag(_ index: Int) -> String { String(UnicodeScalar(UInt8(65 + index))) }

    /// Reads the tagged lines back from the start of `spool` and writes each, without its tag, to its table.
    static func split(spool: Int32, into tables: [OutputStream]) {
        lseek(spool, 0, SEEK_SET)
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(spool, $0.baseAddress!, $0.count) }
            guard n > 0 else { break }
            pending.append(contentsOf: chunk[0..<n])
            var start = 0
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                let table = Int(pending[start]) - 65
                if tables.indices.contains(table) { tables[table].write(Array(pending[(start + 1)...newline])) }
                start = newline + 1
            }
            pending.removeFirst(start)
        }
        for t in tables { t.flush() }
    }
}
