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

struct Timeline: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One line per HCI/L2CAP/ATT/SMP event, decoded, with requests paired to responses.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, jsonl, csv }

    @Argument(
        help:
            "Capture file; or several files, directories, quoted globs (read in parallel, output in input order; jsonl lines get a \"file\" key, csv a file column, text a ==> file <== header; exit 2 at the end if any file could not be read)."
    )
    var files: [String]

    @Option(help: "Output: text, jsonl (JSON Lines, schema in the README), csv.")
    var format: Format = .text

    @Flag(help: "Absolute UTC times instead of seconds from the first record.")
    var absolute = false

    @Flag(help: "Absolute local times (implies --absolute).")
    var local = false

    @Option(help: "Only this connection handle (repeatable; 0x0040 or 64).")
    var conn: [String] = []

    @Option(help: "Only connections to this peer address (repeatable).")
    var address: [String] = []

    @Option(help: "Only this attribute handle (repeatable).")
    var handle: [String] = []

    @Option(help: "Only attributes with this UUID (repeatable; 2A37 or 128-bit).")
    var uuid: [String] = []

    @Option(help: "Only these layers (repeatable): hci, l2cap, att, smp, note.")
    var layer: [String] = []

    @Option(help: "From this time (seconds from the first record, as the time column counts) or frame (#120).")
    var from: String?

    @Option(help: "Up to this time (seconds from the first record) or frame (#200).")
    var to: String?

    @OptionGroup var analysis: AnalysisOptions

    @OptionGroup var display: DisplayOptions

    @OptionGroup var batch: BatchOptions

    func filter() throws -> TimelineFilter {
        var f = TimelineFilter()
        for c in conn {
            guard let v = parseInteger16(c) else { throw ValidationError("--conn '\(c)' is not a connection handle") }
            f.connections.insert(v)
        }
        for h in handle {
            guard let v = parseInteger16(h) else { throw ValidationError("--handle '\(h)' is not an attribute handle") }
            f.handles.insert(v)
        }
        for u in uuid {
            guard let v = BluetoothUUID(u) else { throw ValidationError("--uuid '\(u)' is not a UUID") }
            f.uuids.insert(v)
        }
        for l in layer {
            guard ["hci", "l2cap", "att", "smp", "note", "ll", "iso", "sdp", "rfcomm", "hfp", "avdtp", "a2dp", "avrcp", "obex"].contains(l)
            else {
                throw ValidationError("--layer '\(l)': use hci, l2cap, att, smp, note, ll, iso, sdp, rfcomm, hfp, avdtp, a2dp, avrcp, obex")
            }
            f.layers.insert(Layer(rawValue: l))
        }
        f.addresses = Set(address.map { $0.uppercased() })
        if let from {
            guard let b = TimelineFilter.Bound(from) else { throw ValidationError("--from '\(from)': seconds or #frame") }; f.from = b
        }
        if let to { guard let b = TimelineFilter.Bound(to) else { throw ValidationError("--to '\(to)': seconds or #frame") }; f.to = b }
        return f
    }

    func validate() throws { _ = try filter() }

    func run() throws {
        let terminal = display.terminal()
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        let options = try analysis.analyzerOptions(timeline: true, diagnosis: false)
        defer { analysis.sayUnusedCodecs(options, captures: inputs.files.count) }
        let filter = try filter()
        let out = OutputStream()
        guard inputs.isBatch else {
            let capture = try openCapture(inputs.files[0])
            render(capture, options: options, filter: filter, out: out, file: nil, quiet: analysis.quiet, terminal: terminal)
            out.flush()
            return
        }
        if format == .csv { out.write("file," + TimelineCSVRenderer.header) }
        let jobs = batch.effectiveJobs
        let files = analysis.quiet ? nil : FilesProgress(label: "timeline", total: inputs.files.count)
        let failed = BatchRunner.forEachCapture(inputs.files, jobs: jobs, out: out, progress: files) { i, path, capture, out in
            if format == .text { out.write((i > 0 ? "\n" : "") + fileHeader(path, terminal: terminal)) }
            render(capture, options: options, filter: filter, out: out, file: path, quiet: true, terminal: terminal)
            return .init(ok: true)
        }
        out.flush()
        try finishBatch(inputs, failed: failed, arguments: self.files)
    }

    /// One capture's timeline; `file` (several captures) tags each jsonl line and csv row with the path.
    func render(
        _ capture: CaptureFile, options: AnalyzerOptions, filter: TimelineFilter, out: OutputStream,
        file: String?, quiet: Bool, terminal: Terminal
    ) {
        let fileKey = file.map(jsonFileKey)
        let csvFile = file.map { "\"" + $0.replacingAll("\"", with: "\"\"") + "\"," }
        var line: [UInt8] = []
        var origin: Timestamp? = nil
        let timeStyle: TimeStyle = local ? .absoluteLocal(offsetSeconds: localUTCOffset()) : absolute ? .absoluteUTC : .relative(to: nil)
        var text = TimelineTextRenderer(terminal: terminal, timeStyle: timeStyle)
        var json = TimelineJSONRenderer()
        let csv = TimelineCSVRenderer()
        switch format {
        case .text: out.write(text.header)
        case .csv: if file == nil { out.write(TimelineCSVRenderer.header) }
        case .jsonl: break
        }
        // Read once: the property wrapper's getter in the per-event closure showed in profiles (see
        // docs/performance.md#cli-timeline).
        let format = self.format
        // One file's JSON Lines are rendered on a second thread when a core is idle (several files already use the cores).
        let background =
            format == .jsonl && file == nil && BackgroundTimelineJSON.pays
            ? BackgroundTimelineJSON(stream: out) : nil
        let filtering = !filter.isEmpty
        let progress = quiet ? nil : ProgressReporter(label: capture.path, totalBytes: capture.fileSize)
        let onEvent: (__owned TimelineEvent, AnalysisPass) -> Void = { e, pass in
            if filtering {
                // The filter's origin, and the time column's: the first event's time, whether or not it is kept.
                if origin == nil {
                    origin = e.timestamp
                    text.startCounting(at: e.timestamp)
                }
                let peer = e.connectionNumber.flatMap { pass.peerAddress(ofConnection: $0) }
                guard filter.matches(e, origin: origin, peerAddress: peer) else { return }
            }
            switch format {
            case .text: out.write(text.line(e))
            case .csv: out.write((csvFile ?? "") + csv.line(e))
            case .jsonl:
                if let fileKey {
                    line.removeAll(keepingCapacity: true)
                    json.append(e, to: &line)
                    out.writeTagged(file: fileKey, line: line)
                } else if let background {
                    background.write(e)
                } else {
                    json.writeBuffered(e, to: out)
                }
            }
        }
        // The text ends with what the log cannot show (a stream cannot know it before its last record); JSON Lines and
        // CSV carry events only, and skip the tracker (1.5 % of a JSON Lines run).
        let reading: (Int, Int64) -> Void = { p, b in progress?.update(records: p, bytes: b) }
        let (analysis, log): (CaptureAnalysis, LogScope?) =
            format == .text
            ? LogScope.analyze(capture, options: options, progress: reading, onEvent: onEvent)
            : (CaptureAnalysis.analyze(capture, options: options, progress: reading, onEvent: onEvent), nil)
        background?.finish()
        if format == .jsonl && fileKey == nil && background == nil { json.flush(to: out) }
        progress?.finish()
        let findings = (capture.findings + analysis.findings).filter(filter.keeps)
        switch format {
        case .text:
            out.write(terminal.fit(TimelineFindings.text(findings, terminal: terminal)))
            let scope = log?.textLines(terminal: terminal) ?? []
            if !scope.isEmpty { out.write("\n" + scope.joined(separator: "\n") + "\n") }
        case .jsonl: out.write(TimelineFindings.jsonLines(findings, file: file))
        case .csv: break
        }
    }
}

func localUTCOffset() -> Int {
    var now = time(nil)
    var tmLocal = tm()
    localtime_r(&now, &tmLocal)
    return Int(tmLocal.tm_gmtoff)
}
