import BLEAnalysis
import BLECapture
import BLECore
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a report prints times: UTC (the default) or local time at a fixed offset.
public struct ReportClock: Sendable, Hashable {
    /// Seconds east of UTC (0 for UTC).
    public var utcOffsetSeconds: Int
    public var isLocal: Bool

    public static let utc = ReportClock(utcOffsetSeconds: 0, isLocal: false)
    public static func local(offsetSeconds: Int) -> ReportClock { ReportClock(utcOffsetSeconds: offsetSeconds, isLocal: true) }

    /// `UTC` or `local time (UTC+02:00)`.
    public var zoneName: String {
        guard isLocal else { return "UTC" }
        let a = abs(utcOffsetSeconds)
        let h = a / 3600, m = a / 60 % 60
        return "local time (UTC\(utcOffsetSeconds < 0 ? "−" : "+")\(h < 10 ? "0" : "")\(h):\(m < 10 ? "0" : "")\(m))"
    }

    /// `2024-03-14 09:26:53.000000`.
    public func format(_ t: Timestamp) -> String { t.formatted(utcOffsetSeconds: utcOffsetSeconds) }
}

/// A key event of a capture for the report's timeline: connections, parameter/PHY/data-length/MTU/encryption
/// changes, disconnections, and warnings or errors (not every packet).
public struct KeyEvent: Hashable, Sendable {
    public var frame: Int
    public var timestamp: Timestamp?
    public var connectionNumber: Int?
    /// `connect`, `parameters`, `phy`, `data-length`, `mtu`, `encryption`, `disconnect`, `warning`, `error`.
    public var kind: String
    public var text: String
}

/// Findings of one code: how many, the first frames, the first message.
public struct FindingGroup: Hashable, Sendable {
    public var code: String
    public var severity: Finding.Severity
    public var count: Int
    /// Up to 10 frames, in order.
    public var firstFrames: [Int]
    public var message: String
}

/// One capture file analysed for a report: summary, connections, GATT, throughput, transfers, OTA, key events, findings.
public struct FileAnalysis: Sendable {
    public var path: String
    /// Why the file could not be read (then everything else is empty).
    public var error: String?
    public var info: CaptureInfo?
    public var counters = AnalysisCounters()
    public var connections: [Connection] = []
    /// This side's resolvable private addresses and the peers seen behind more than one (the Security section).
    public var addressRotation = AddressRotation()
    public var aclBuffers: (length: Int, packets: Int)?
    public var usage = GATTUsage()
    public var throughput: [ThroughputStream] = []
    public var streamsDropped = 0
    public var transfers: [Transfer] = []
    public var otaSessions: [OTASession] = []
    /// The isochronous streams and the audio profiles (`ReportISO.swift`): empty unless the capture has LE Audio.
    public var iso = ISOAnalysis()
    /// SCO/eSCO links (the profiles are the connections').
    public var classic = ClassicAnalysis()
    public var leAudio: LEAudioProfiles?
    public var keyEvents: [KeyEvent] = []
    public var keyEventsOmitted = 0
    /// All findings (capture, analyzer, transfer tracker), in frame order.
    public var findingCount = 0
    public var findingGroups: [FindingGroup] = []
    /// The verdicts that open the capture's section (``Report/summarize(_:maxFindings:)``); others may append.
    public var summary: [VerdictItem] = []
    /// What went wrong and why (``DiagnosisEngine``): the findings the summary opens with.
    public var diagnosis = DiagnosisResult(findings: [], rulesEvaluated: 0)
    /// The pass's evidence events (HCI, SMP, ATT and signalling exchanges the rules cite), in frame order: what `diff`
    /// compares of parameter requests, pairing and subscriptions.
    public var evidence: [EvidenceEvent] = []
    /// The timeline rows around each shown finding's deciding frame, by that frame.
    public var exchanges: [Int: [ExchangeRow]] = [:]
    /// Frames to times, for the links chart's findings (which carry only a frame).
    public var frameClock = FrameClock()
    /// Every timeline event, for the HTML page's searchable timeline (``ReportOptions/embedTimeline``).
    public var timeline: EmbeddedTimeline?

    public init(path: String, error: String) {
        self.path = path
        self.error = error
    }

    init(path: String) { self.path = path }

    public var throughputReport: ThroughputReport {
        ThroughputReport(streams: throughput, connections: connections, aclBuffers: aclBuffers, streamsDropped: streamsDropped)
    }
}

/// Settings of a report.
public struct ReportOptions: Sendable {
    public var throughput: ThroughputOptions
    public var clock: ReportClock
    /// Most key events per file (the first ones are kept).
    public var maxKeyEvents: Int
    /// Most streams drawn as charts per file (the ones with the most bytes).
    public var maxCharts: Int
    /// Most rows in list sections (transfers, OTA sessions, finding groups, parameter changes per connection).
    public var maxRows: Int
    /// Run the trackers on a second thread beside the decoder (``BackgroundObservers``); the default when the
    /// machine has more than one core and `BLESCOPE_THREADS=1` is not set; ``ReportWriter`` uses it for one file only when
    /// `BLESCOPE_THREADS=2` asks (``secondThreadForced``: the copies into the batches cost more than the trackers now).
    /// Results are the same either way.
    public var backgroundTrackers: Bool
    /// Let the throughput tracker move to a second thread when a core is idle (``Observing/throughputBeside``); off
    /// when several files are analysed at once. Results are the same either way.
    public var throughputBeside: Bool = true
    /// Build every timeline event for the HTML page's searchable timeline (a second pass; ``ReportWriter`` turns it on
    /// for HTML only, so the JSON and Markdown reports cost what they did).
    public var embedTimeline = false

    public init(
        throughput: ThroughputOptions = ThroughputOptions(), clock: ReportClock = .utc, maxKeyEvents: Int = 300,
        maxCharts: Int = 12, maxRows: Int = 200,
        backgroundTrackers: Bool = secondThreadAvailable
    ) {
        self.backgroundTrackers = backgroundTrackers
        self.throughput = throughput
        self.clock = clock
        self.maxKeyEvents = maxKeyEvents
        self.maxCharts = maxCharts
        self.maxRows = maxRows
    }
}

/// The report over one or more capture files: each file analysed by its own ``Analyzer``.
public struct Report: Sendable {
    public var files: [FileAnalysis]
    public var options: ReportOptions

    public init(files: [FileAnalysis], options: ReportOptions) {
        self.files = files
        self.options = options
    }

    /// Analyses `paths`, in parallel on the available cores when `parallel` (results are identical to sequential
    /// processing: each file has its own analyzer and trackers, results are placed by input position).
    /// The whole report stays in memory: over many files, ``ReportWriter`` writes the same output file by file.
    /// One codec registry serves every worker (``CodecRegistry`` is thread-safe).
    public static func build(
        paths: [String], options: ReportOptions = ReportOptions(), parallel: Bool = true,
        analyzerOptions: AnalyzerOptions = AnalyzerOptions(timeline: false),
        progress: (@Sendable (String) -> ProgressReporter?)? = nil
    ) -> Report {
        let results = Locked<[FileAnalysis?]>(Array(repeating: nil, count: paths.count))
        let work: @Sendable (Int) -> Void = { i in
            let p = progress?(paths[i])
            let a = analyze(path: paths[i], options: options, analyzerOptions: analyzerOptions, progress: p)
            p?.finish()
            results.withLock { $0[i] = a }
        }
        if parallel && paths.count > 1 {
            DispatchQueue.concurrentPerform(iterations: paths.count, execute: work)
        } else {
            for i in paths.indices { work(i) }
        }
        let files = results.withLock { $0.map { $0! } }
        return Report(files: files, options: options)
    }

    /// Findings (errors and worse) that get the timeline rows around their deciding frame (the most severe first).
    static let maxExchangeWindows = 20

    /// One file through one analyzer with the throughput, transfer, OTA and GATT usage trackers.
    public static func analyze(
        path: String, options: ReportOptions = ReportOptions(),
        analyzerOptions: AnalyzerOptions = AnalyzerOptions(timeline: false),
        progress: ProgressReporter? = nil
    ) -> FileAnalysis {
        let capture: CaptureFile
        do { capture = try CaptureFile.open(path: path) } catch { return FileAnalysis(path: path, error: error.message) }
        return analyze(capture: capture, options: options, analyzerOptions: analyzerOptions, progress: progress)
    }

    @_optimize(speed)
    public static func analyze(
        capture: CaptureFile, options: ReportOptions = ReportOptions(),
        analyzerOptions: AnalyzerOptions = AnalyzerOptions(timeline: false),
        progress: ProgressReporter? = nil
    ) -> FileAnalysis {
        var analyzerOptions = analyzerOptions
        analyzerOptions.timeline = false
        // The trackers cost about as much as decoding: on a second core they run alongside it.
        var perRecord = ReportRecordObservers()
        // The page's timeline is a pass of its own, with nothing to share with this one: on another core beside it.
        let timelinePass = DispatchGroup()
        let embedded = Locked<EmbeddedTimeline?>(nil)
        if options.embedTimeline {
            let path = capture.path, timelineOptions = analyzerOptions
            DispatchQueue.global().async(group: timelinePass) {
                let t = EmbeddedTimeline.build(path: path, options: timelineOptions)
                embedded.withLock { $0 = t }
            }
        }
        let analysis = CaptureAnalysis.analyze(
            capture, options: analyzerOptions,
            observing: Observing(
                throughput: options.throughput, transfers: TransferOptions(), otaStallThreshold: OTATracker().stallThreshold,
                gattUsage: true,
                inBackground: options.backgroundTrackers, throughputBeside: options.throughputBeside, leAudio: true),
            progress: { progress?.update(records: $0, bytes: $1) },
            onRecord: { perRecord.add($0) })
        var a = FileAnalysis(path: capture.path)
        a.frameClock = perRecord.frameClock
        var verdict = perRecord.completeness.result(format: capture.format.name, readerFindings: capture.findings)
        verdict.add(analysisFindings: analysis.findings)
        a.info = CaptureInfo(capture: capture, statistics: perRecord.stats, completeness: verdict)
        a.info?.decodeHealth = analysis.decodeHealth
        a.info?.controllerIdentities = analysis.controllerIdentities
        a.info?.vendorActivity = analysis.vendorActivity
        a.counters = analysis.counters
        a.connections = analysis.connections
        a.addressRotation = analysis.addressRotation
        a.aclBuffers = analysis.firstACLBuffers
        (a.throughput, a.streamsDropped) = analysis.throughput ?? ([], 0)
        a.transfers = analysis.transfers?.transfers ?? []
        a.otaSessions = analysis.otaSessions ?? []
        a.iso = analysis.iso
        a.classic = analysis.classic
        a.leAudio = analysis.leAudio
        if let usage = analysis.gattUsage { a.usage = usage }
        var findings = capture.findings + analysis.findings + (analysis.transfers?.findings ?? [])
        findings.sort { ($0.frame ?? 0, $0.offset ?? 0) < ($1.frame ?? 0, $1.offset ?? 0) }
        a.findingCount = findings.count
        a.findingGroups = groupFindings(findings)
        (a.keyEvents, a.keyEventsOmitted) = keyEvents(connections: analysis.connections, findings: findings, limit: options.maxKeyEvents)
        a.diagnosis = diagnose(analysis, capture: capture, completeness: verdict)
        a.info?.completeness.answer(a.diagnosis.findings)
        a.evidence = analysis.evidence.events
        // Errors and worse get the rows around them (a second pass over the file, up to the last one's frame):
        // warnings show their evidence chain only, so a capture without errors costs no second pass.
        let shown = a.diagnosis.atLeast(.error).prefix(maxExchangeWindows).map {
            ExchangeTarget(frame: $0.frame, connection: $0.connection)
        }
        if !shown.isEmpty { a.exchanges = exchanges(path: capture.path, around: Array(shown), options: analyzerOptions) }
        a.summary = summarize(a)
        if options.embedTimeline {
            timelinePass.wait()
            a.timeline = embedded.withLock { $0 }.map {
                marked($0, origin: perRecord.stats.minTimestamp, findings: findings, diagnosis: a.diagnosis)
            }
        }
        return a
    }

    /// The page's timeline: every event, and the findings marked on their frames (the diagnosis's first).
    static func marked(_ timeline: EmbeddedTimeline, origin: Timestamp?, findings: [Finding], diagnosis: DiagnosisResult)
        -> EmbeddedTimeline
    {
        var t = timeline
        t.origin = origin?.microseconds
        for d in diagnosis.findings { t.marks.append((d.frame, d.severity.rawValue, "\(d.rule) \(DiagnosisReport.summaryLine(d))")) }
        for f in findings {
            guard let frame = f.frame, t.marks.count < EmbeddedTimeline.maxMarks else { continue }
            t.marks.append((frame, f.severity.rawValue, "\(f.kind.code.id): \(f.message)"))
        }
        return t
    }

    /// Groups findings by code (most severe first, then by first frame).
    public static func groupFindings(_ findings: [Finding]) -> [FindingGroup] {
        var groups: [String: FindingGroup] = [:]
        var order: [String] = []
        for f in findings {
            if var g = groups[f.kind.code.id] {
                g.count += 1
                if let fr = f.frame, g.firstFrames.count < 10 { g.firstFrames.append(fr) }
                if f.severity > g.severity { g.severity = f.severity }
                groups[f.kind.code.id] = g
            } else {
                groups[f.kind.code.id] = FindingGroup(
                    code: f.kind.code.id, severity: f.severity, count: 1,
                    firstFrames: f.frame.map { [$0] } ?? [], message: f.message)
                order.append(f.kind.code.id)
            }
        }
        return order.enumerated().map { ($0.offset, groups[$0.element]!) }
            .sorted { ($1.1.severity, $0.0) < ($0.1.severity, $1.0) }
            .map(\.1)
    }

    /// The key events: each connection's start, parameter/PHY/data-length/MTU/encryption changes and end, and
    /// warnings and errors (the first three of each code), by frame; the first `limit` kept.
    public static func keyEvents(connections: [Connection], findings: [Finding], limit: Int) -> ([KeyEvent], Int) {
        var events: [KeyEvent] = []
        for c in connections {
            var text = (c.inferred ? "connection inferred from traffic on handle " : "connected, handle ") + hex(c.handle, width: 4)
            if let peer = ConnectionColumns.peerText(c) { text += ", peer \(peer)" }
            if let role = c.role { text += ", local role \(role.rawValue)" }
            events.append(KeyEvent(frame: c.startFrame, timestamp: c.startTime, connectionNumber: c.number, kind: "connect", text: text))
            for change in LinkColumns.changes(of: c.link) {
                events.append(
                    KeyEvent(frame: change.frame, timestamp: change.time, connectionNumber: c.number, kind: change.kind, text: change.text))
            }
            if let end = c.endFrame {
                events.append(
                    KeyEvent(
                        frame: end, timestamp: c.endTime, connectionNumber: c.number, kind: "disconnect",
                        text: "disconnected" + ((c.lifecycle.ending?.text ?? c.disconnectReason).map { ": \($0)" } ?? "")))
            }
        }
        var perCode: [String: Int] = [:]
        for f in findings where f.severity >= .warning {
            // The first three of each code: the timeline shows that it happened and where it started.
            perCode[f.kind.code.id, default: 0] += 1
            guard perCode[f.kind.code.id]! <= 3 else { continue }
            events.append(
                KeyEvent(
                    frame: f.frame ?? 0, timestamp: nil, connectionNumber: nil, kind: f.severity.rawValue,
                    text: "\(f.kind.code.id): \(f.message)"))
        }
        // Stable: by frame, then the order above.
        let sorted = events.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }.map(\.element)
        return (Array(sorted.prefix(limit)), max(0, sorted.count - limit))
    }
}

extension CaptureInfo {
    /// The summary of a capture read by someone else's loop (the report's single pass).
    init(capture: CaptureFile, statistics: CaptureStatistics, completeness: CaptureCompleteness) {
        self.completeness = completeness
        file = capture.path
        format = capture.format.name
        compressed = capture.compressed
        datalink = capture.datalink
        datalinkName = capture.datalinkName
        fileSize = capture.fileSize
        self.statistics = statistics
        findings = capture.findings
    }
}

/// What `report`'s pass keeps per record beside the analyzer. A method, not the closure's body: a closure does not take
/// its function's `@_optimize(speed)`, and BLEReports is compiled for size (docs/performance.md#size).
struct ReportRecordObservers {
    var stats = CaptureStatistics()
    var completeness = CompletenessTracker()
    var frameClock = FrameClock()

    @_optimize(speed)
    mutating func add(_ record: CaptureRecord) {
        stats.add(record)
        completeness.add(record)
        frameClock.add(frame: record.frame, timestamp: record.timestamp)
    }
}
