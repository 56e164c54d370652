import ArgumentParser
import BLEAnalysis
import BLECore
import BLEReports

struct Throughput: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "throughput",
        abstract:
            "Throughput per stream (connection, direction, attribute, kind): rates, sliding windows, the ceiling for the link seen, and what limits it.",
        discussion: """
            A stream is the values of one kind (notify, indicate, write-cmd, write-req, read, …) on one attribute, \
            one way, on one connection. Rates are attribute value bits per second from the first to the last packet. \
            The ceiling is the notification / write-without-response maximum for the PHY, data length and MTU in \
            force (see the README); packets per connection event are estimated from the timestamps.
            """)

    @Argument(help: capturesHelp)
    var files: [String]

    @Flag(help: "JSON: {\"streams\": [...]} (schema in the README); with several captures one object per line, its \"file\" first.")
    var json = false

    @Flag(help: "CSV, one row per stream (with several captures, a file column first).")
    var csv = false

    @Option(help: "Sliding window in seconds (default 1).")
    var window: Double = 1

    @Option(help: "Gaps longer than this many milliseconds count as idle.")
    var idleMs: Int = 500

    @Option(help: "Only this connection: its number (3 or #3) or its handle (0x0040) (repeatable).")
    var conn: [String] = []

    @Option(help: "Only the characteristic with this UUID (repeatable; 2A37 or 128-bit).")
    var uuid: [String] = []

    @Flag(help: .hidden)
    var measureDelivery = false

    @OptionGroup var analysis: AnalysisOptions

    @OptionGroup var display: DisplayOptions

    @OptionGroup var batch: BatchOptions

    func validate() throws {
        if json && csv { throw ValidationError("--json and --csv exclude each other") }
        if !(window >= 0.001 && window <= 86_400) { throw ValidationError("--window: seconds between 0.001 and 86400") }
        if idleMs <= 0 { throw ValidationError("--idle-ms must be positive") }
        _ = try filters()
    }

    func filters() throws -> (numbers: Set<Int>, handles: Set<UInt16>, uuids: Set<BluetoothUUID>) {
        var numbers = Set<Int>(), handles = Set<UInt16>(), uuids = Set<BluetoothUUID>()
        for c in conn {
            if c.lowercased().hasPrefix("0x"), let h = parseInteger16(c) {
                handles.insert(h)
            } else if let n = Int(c.hasPrefix("#") ? String(c.dropFirst()) : c), n > 0 {
                numbers.insert(n)
            } else {
                throw ValidationError("--conn '\(c)': a connection number (3) or a handle (0x0040)")
            }
        }
        for u in uuid {
            guard let v = BluetoothUUID(u) else { throw ValidationError("--uuid '\(u)' is not a UUID") }
            uuids.insert(v)
        }
        return (numbers, handles, uuids)
    }

    func run() throws {
        let terminal = display.terminal()
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        let f = try filters()
        let analyzerOptions = try analysis.analyzerOptions(timeline: false, diagnosis: false)
        defer { analysis.sayUnusedCodecs(analyzerOptions, captures: inputs.files.count) }
        if measureDelivery {
            // Benchmark aid: the analyzer's cost of handing values to an observer that only counts them,
            // to tell the tracker's own cost from the delivery's (compare with a normal run).
            let counter = CountingObserver()
            let a = Analyzer.analyze(try openCapture(inputs.files[0]), options: analyzerOptions, configure: { $0.observers = [counter] })
            print("values=\(counter.count) records=\(a.counters.records)")
            return
        }
        let options = ThroughputOptions(window: Int64((window * 1_000_000).rounded()), idleThreshold: Int64(idleMs) * 1000)
        // Several captures share the cores already: no second thread per capture.
        let beside = !inputs.isBatch
        let out = OutputStream()
        let (json, csv) = (self.json, self.csv)
        if csv && inputs.isBatch { out.write("file," + ThroughputReport.csvHeader) }
        try runOverCaptures(
            inputs, arguments: files, jobs: batch.effectiveJobs, quiet: analysis.quiet, label: "throughput", out: out,
            jsonErrors: json, separator: { i, path in json || csv ? "" : (i > 0 ? "\n" : "") + fileHeader(path, terminal: terminal) },
            work: { capture, file, out, progress in
                let (result, log) = LogScope.analyze(
                    capture, options: analyzerOptions, observing: Observing(throughput: options, throughputBeside: beside),
                    progress: { progress?.update(records: $0, bytes: $1) })
                let report = ThroughputReport(result).filtered(connectionNumbers: f.numbers, handles: f.handles, uuids: f.uuids)
                if json {
                    writeJSONLine(report.json(log: log), file: file, to: out)
                } else if csv {
                    out.write(report.csv(header: file == nil, prefix: file.map { csvQuoted($0) + "," } ?? ""))
                } else {
                    out.write(log.text(terminal: terminal) + report.text(terminal: terminal))
                }
            })
    }
}

/// Counts attribute values and nothing else (`throughput --measure-delivery`). A class, so the count is read from
/// the instance given to the analyzer, not cast back out of its observers.
final class CountingObserver: AttributeValueObserver {
    var count = 0
    func observe(_ event: AttributeValueEvent, value: RawSpan) { count &+= 1 }
    func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {}
    func finish(frame: Int, timestamp: Timestamp) {}
}
