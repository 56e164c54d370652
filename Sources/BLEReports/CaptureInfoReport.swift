import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEProtocols

/// What `blescope info` says about one capture file: a capinfos for Bluetooth.
public struct CaptureInfo: Sendable {
    public var file: String
    public var format: String
    public var compressed: Bool
    public var datalink: UInt32
    public var datalinkName: String
    public var fileSize: Int64?
    public var statistics: CaptureStatistics
    public var findings: [Finding]
    /// What the log can and cannot show.
    public var completeness: CaptureCompleteness
    /// What was carried against what was decoded (L2CAP and above), from a statistics-only analysis in the same pass.
    public var decodeHealth: DecodeHealth?
    /// Who made each controller, by controller index (from the same analysis; empty without it).
    public var controllerIdentities: [UInt16: ControllerIdentity] = [:]
    /// Vendor-specific commands and events, counted and named (empty without the analysis).
    public var vendorActivity = VendorActivity()
    /// What went wrong and why, from the same pass (nil without the analysis: `--no-decode`).
    public var diagnosis: DiagnosisResult?

    /// Reads the whole capture once, counting records and decoding them without building events (for the decode
    /// health); `progress` is called with (records, bytes).
    @_optimize(speed)
    public init(reading capture: CaptureFile, progress: ProgressReporter? = nil, decode: Bool = true) {
        var stats = CaptureStatistics()
        var tracker = CompletenessTracker()
        // The trackers the diagnosis reads (``Observing/diagnosis``): its findings are `diagnose`'s and `report`'s.
        let pass = decode ? AnalysisPass(options: AnalyzerOptions(timeline: false), observing: .diagnosis) : nil
        Self.walk(capture, stats: &stats, completeness: &tracker, pass: pass, analyzer: pass?.analyzer, progress: progress)
        let analysis = pass?.finish()
        decodeHealth = analysis?.decodeHealth
        controllerIdentities = pass?.analyzer.controllerIdentities ?? [:]
        vendorActivity = pass?.analyzer.vendorActivity ?? VendorActivity()
        progress?.finish()
        file = capture.path
        format = capture.format.name
        compressed = capture.compressed
        datalink = capture.datalink
        datalinkName = capture.datalinkName
        fileSize = capture.fileSize
        statistics = stats
        findings = capture.findings
        var verdict = tracker.result(format: capture.format.name, readerFindings: capture.findings)
        verdict.add(analysisFindings: analysis?.findings ?? [])
        if let analysis {
            let result = DiagnosisEngine.diagnose(DiagnosisReport.evidence(analysis, capture: capture, completeness: verdict))
            verdict.answer(result.findings)
            diagnosis = result
        }
        completeness = verdict
    }

    /// Reads every record into the statistics, the completeness tracker and the pass's analyzer.
    ///
    /// The analyzer is a parameter, borrowed for the whole loop: reached as `pass?.process` or held in a local, it was
    /// retained and released per record (5 % of `info`, docs/performance.md#capture-info). Marked for speed: BLEReports
    /// is compiled for size, and this loop at `-Osize` cost `info` 16 % more instructions (docs/performance.md#size).
    @_optimize(speed)
    private static func walk(
        _ capture: CaptureFile, stats: inout CaptureStatistics, completeness: inout CompletenessTracker, pass: AnalysisPass?,
        analyzer: Analyzer?, progress: ProgressReporter?
    ) {
        var record = CaptureRecord.empty  // written in place (``CaptureFile/next(into:)``)
        while capture.next(into: &record) {
            stats.add(record)
            completeness.add(record)
            analyzer?.process(record)
            // Asked only when the reporter would draw: the reader's position per record is a protocol witness.
            if stats.records & 0xFFFF == 0 {
                progress?.update(records: stats.records, bytes: capture.bytesConsumed)
                pass?.offerSecondCore()
            }
        }
    }

    /// From the earliest record to the latest (as capinfos's duration): the time the log covers, also when its
    /// records go back in time (then first and last in file order are not the bounds).
    public var span: Int64? {
        guard statistics.records > 0 else { return nil }
        return statistics.durationMicroseconds
    }

    /// The human-readable block, aligned.
    public func text(terminal: Terminal) -> String {
        let rows = self.rows
        let width = rows.map(\.0.count).max() ?? 0
        var lines = rows.map { terminal.paint(($0.0 + ":").padding(to: width + 2), .bold) + $0.1 }
        // The answer first: the story, then the diagnosis's findings at warning or above, one line each, under its row.
        let story = diagnosis.map { DiagnosisReport.storyLines($0.story, terminal: terminal) } ?? []
        lines.insert(contentsOf: story + diagnosisLines(terminal: terminal), at: 2)
        let text = lines.joined(separator: "\n") + belowRows(terminal: terminal) + "\n"
        let note = NotationLegend.note(for: text, width: terminal.width ?? 100)
        return note.isEmpty ? text : text + "\n" + note
    }

    /// The rows `name: value`, in order.
    var rows: [(String, String)] {
        let s = statistics
        var rows: [(String, String)] = []
        rows.append(("File", file))
        if let d = diagnosis {
            let tally = d.tally
            rows.append(
                (
                    "Diagnosis",
                    tally.isEmpty
                        ? DiagnosisReport.verdict(d, completeness: completeness) : tally + " (blescope diagnose: the evidence)"
                ))
        }
        let n = completeness.items.count
        let completenessRow: String = n == 0 ? completeness.headline : "\(completeness.verdict) (\(n == 1 ? "1 item" : "\(n) items") below)"
        rows.append(("Completeness", completenessRow))
        rows.append(("Format", format + (compressed ? " (gzip)" : "")))
        rows.append(("Datalink", "\(datalink) (\(datalinkName))"))
        if let fileSize { rows.append(("Size", formatBytes(fileSize))) }
        rows.append(("Records", formatCount(s.records)))
        rows.append(("First record", (s.firstTimestamp.map { $0.description + " UTC" } ?? "—") + notesBeforeFirstRecord))
        rows.append(("Last record", s.lastTimestamp.map { $0.description + " UTC" } ?? "—"))
        let outOfOrder = s.records > 0 && (s.firstTimestamp != s.minTimestamp || s.lastTimestamp != s.maxTimestamp)
        rows.append(
            (
                "Span",
                (span.map { formatDuration(microseconds: $0) } ?? "—")
                    + (outOfOrder ? " (earliest to latest record: the file's order goes back in time)" : "")
            ))
        rows.append(("By type", byTypeText))
        rows.append(("Truncated records", formatCount(s.truncatedRecords)))
        rows.append(("Dropped (capturer)", s.nordicSkips.skipped > 0 ? s.droppedText : formatCount(Int(s.maxDrops))))
        rows.append(("Controllers", controllersText))
        if !vendorActivity.commands.isEmpty { rows.append(("Vendor commands", vendorText(vendorActivity.commands))) }
        if !vendorActivity.events.isEmpty { rows.append(("Vendor events", vendorText(vendorActivity.events))) }
        if let h = decodeHealth { rows.append(("Decoded", h.headline)) }
        // Everything listed below the rows: the reader's findings and the decode-health warnings. Named apart from the
        // Diagnosis row's: "Findings: none" under "Diagnosis: 1 warning" read as a contradiction (newcap18's G613 log).
        let listed = findings.count + (decodeHealth?.warnings.count ?? 0)
        rows.append(("Reader findings", listed == 0 ? "none" : "\(listed) (below)"))
        return rows
    }

    /// Why `Records` counts more than the span holds: text notes dated before the first record (an iOS log's header
    /// notes, days earlier) are counted but are not records in time, so the span leaves them out (issue 48). Empty when no note is earlier.
    var notesBeforeFirstRecord: String {
        let s = statistics
        guard let note = s.earliestNoteTimestamp, let first = s.firstTimestamp, note < first else { return "" }
        let notes = s.text == 1 ? "1 text note is" : "\(formatCount(s.text)) text notes are"
        return " (\(notes) counted in Records, not in the span: the earliest is dated \(note) UTC, "
            + "\(formatDuration(microseconds: first.microseconds(since: note))) before)"
    }

    /// `commands 12, events 30, ACL tx 4, …`: the records by type, those present.
    var byTypeText: String {
        let s = statistics
        var kinds: [String] = []
        func add(_ name: String, _ n: Int) { if n > 0 { kinds.append("\(name) \(formatCount(n))") } }
        add("commands", s.commands)
        add("events", s.events)
        add("ACL tx", s.aclTx)
        add("ACL rx", s.aclRx)
        add("SCO tx", s.scoTx)
        add("SCO rx", s.scoRx)
        if let frame = s.scoEmptyFirstFrame {
            kinds.append("SCO empty \(formatCount(s.scoEmpty)) (no data, from frame \(frame): no link's audio)")
        }
        add("ISO tx", s.isoTx)
        add("ISO rx", s.isoRx)
        add("text notes", s.text)
        add("monitor", s.monitor)
        add("link-layer", s.linkLayer)
        add("other", s.other)
        return kinds.isEmpty ? "—" : kinds.joined(separator: ", ")
    }

    /// The diagnosis's findings at warning or above (at most ``diagnosisLines``), wrapped under the Diagnosis row.
    func diagnosisLines(terminal: Terminal) -> [String] {
        guard let d = diagnosis else { return [] }
        let shown = d.atLeast(.warning)
        var listed = shown.prefix(Self.diagnosisLines).flatMap { x in
            wrap(
                "\(x.rule) \(DiagnosisReport.summaryLine(x))", width: DiagnosisReport.width,
                first: "  " + terminal.paint(x.severity.rawValue.uppercased(), x.severity >= .error ? .red : .yellow) + " ",
                rest: "      ")
        }
        if shown.count > Self.diagnosisLines { listed.append("  (+\(shown.count - Self.diagnosisLines) more: blescope diagnose)") }
        return listed
    }

    /// Below the rows: decode-health warnings, what the log cannot show, the reader's findings.
    func belowRows(terminal: Terminal) -> String {
        var out = ""
        if let h = decodeHealth {
            for c in h.warnings {
                out += "\n  " + terminal.severity(.warning) + ": " + (c.warning ?? "") + (c.warningFrame.map { " (frame \($0))" } ?? "")
            }
            for c in h.connections {
                if let note = c.fixedChannels {
                    out += "\n  " + terminal.severity(.info) + ": " + note + (c.fixedChannelsFrame.map { " (frame \($0))" } ?? "")
                }
            }
            if let v = h.vendorTraceSummary { out += "\n  " + terminal.severity(.info) + ": " + v }
            for d in h.decryptions { out += "\n  " + terminal.severity(.info) + ": " + d }
        }
        if !completeness.items.isEmpty {
            out += "\n" + terminal.paint("What the log cannot show:", .bold)
            for item in completeness.items {
                let frame: String = item.frame.map { " (frame \($0))" } ?? ""
                out += "\n  " + terminal.severity(item.severity) + ": " + item.message + frame
            }
        }
        if !completeness.items.isEmpty && !findings.isEmpty { out += "\n" + terminal.paint("Reader findings:", .bold) }
        for f in findings {
            var location: [String] = []
            if let frame = f.frame { location.append("frame \(frame)") }
            if let offset = f.offset { location.append("offset \(offset)") }
            out += "\n  " + terminal.severity(f.severity) + ": " + f.message
            if !location.isEmpty { out += " (" + location.joined(separator: ", ") + ")" }
        }
        return out
    }

    /// How many findings `info` lists under its Diagnosis row.
    static let diagnosisLines = 8

    /// `index 0: Broadcom Corporation (0x000f), HCI 4.2, LMP 4.2 subversion 0x4109 (frame 566)`; the bare index when
    /// the capture does not say who made the controller.
    var controllersText: String {
        let indices = Set(statistics.controllers).union(controllerIdentities.keys).sorted()
        if indices.isEmpty { return "—" }
        // `index 0`, not `0`: the controller's index in the log, which read alone looked like a count.
        return indices.map { index in
            guard let id = controllerIdentities[index] else { return "index \(index)" }
            return "index \(index): " + Self.describe(id)
        }.joined(separator: "; ")
    }

    /// The maker by its assigned company name, the version numbers when known, and the frame that said so.
    static func describe(_ id: ControllerIdentity) -> String {
        let company = id.hasNoCompany ? "no company ID" : id.companyName ?? "company"
        var s = company + " (\(hex(id.manufacturer.rawValue, width: 4)))"
        if let v = id.version, let hci = id.hciVersionName {
            s += ", HCI \(hci)"
            s += ", LMP \(ReadLocalVersionInformationReturn.versionName(v.lmpVersion)) subversion \(hex(v.lmpSubversion, width: 4))"
        }
        return s + " (frame \(id.frame))"
    }

    /// The most frequent vendor commands or events: `84 Android LE Advertising Filter, 2 event 0x1b, … (+3 more)`.
    func vendorText(_ entries: [VendorActivity.Entry]) -> String {
        let shown = 5
        let several = Set(entries.map(\.controller)).count > 1
        var parts = entries.prefix(shown).map { e in
            formatCount(e.count) + " " + (several ? "controller \(e.controller) " : "") + e.label
        }
        if entries.count > shown { parts.append("(+\(entries.count - shown) more)") }
        return parts.joined(separator: ", ")
    }

    /// One JSON object (one line), keys as documented in the README.
    public var json: String {
        let s = statistics
        var w = JSONWriter()
        w.beginObject()
        w.field("file", file)
        w.field("format", format)
        w.field("compressed", compressed)
        w.field("datalink", datalink)
        w.field("datalink_name", datalinkName)
        w.field("file_size", fileSize)
        w.field("records", s.records)
        w.field("first_time", s.firstTimestamp)
        w.field("last_time", s.lastTimestamp)
        w.field("span_s", span.map { Double($0) / 1e6 }, decimals: 6)
        if let d = diagnosis {
            w.beginObject("diagnosis")
            DiagnosisReport.writeTally(d, to: &w)
            DiagnosisReport.writeStory(d.story, to: &w)
            w.beginArray("findings")
            for x in d.findings { DiagnosisReport.writeBrief(x, to: &w) }
            w.endArray()
            w.endObject()
        }
        w.beginObject("by_type")
        w.field("command", s.commands)
        w.field("event", s.events)
        w.field("acl_tx", s.aclTx)
        w.field("acl_rx", s.aclRx)
        w.field("sco_tx", s.scoTx)
        w.field("sco_rx", s.scoRx)
        w.field("sco_empty", s.scoEmpty)
        w.field("iso_tx", s.isoTx)
        w.field("iso_rx", s.isoRx)
        w.field("text", s.text)
        w.field("monitor", s.monitor)
        w.field("link_layer", s.linkLayer)
        w.field("other", s.other)
        w.endObject()
        w.field("original_bytes", s.originalBytes)
        w.field("truncated_records", s.truncatedRecords)
        w.field("drops", s.maxDrops)
        w.beginArray("controllers")
        for c in s.controllers.sorted() { w.value(c) }
        w.endArray()
        w.beginArray("controller_identities")
        for id in controllerIdentities.values.sorted(by: { $0.controller < $1.controller }) {
            w.beginObject()
            w.field("controller", id.controller)
            w.field("company_id", id.manufacturer.rawValue)
            w.field("company", AssignedNumbers.companyName(id.manufacturer.rawValue))
            w.field("vendor_table", id.manufacturer.table?.vendor)
            w.field("hci_version", id.version?.hciVersion)
            w.field("hci_subversion", id.version?.hciSubversion)
            w.field("lmp_version", id.version?.lmpVersion)
            w.field("lmp_subversion", id.version?.lmpSubversion)
            w.field("frame", id.frame)
            w.field("source", id.source.rawValue)
            w.endObject()
        }
        w.endArray()
        writeVendorEntries(vendorActivity.commands, key: "vendor_commands", into: &w)
        writeVendorEntries(vendorActivity.events, key: "vendor_events", into: &w)
        writeCompleteness(completeness, into: &w)
        writeFindings(findings, into: &w)
        if let h = decodeHealth { writeDecodeHealth(h, into: &w) } else { w.fieldNull("decode_health") }
        w.endObject()
        return w.string
    }
}

/// `"completeness": {"verdict", "headline", "items": [{"code", "severity", "message", "frame", "count"}]}`.
public func writeCompleteness(_ c: CaptureCompleteness, into w: inout JSONWriter, key: String = "completeness") {
    w.beginObject(key)
    w.field("verdict", c.verdict)
    w.field("headline", c.headline)
    w.beginArray("items")
    for i in c.items {
        w.beginObject()
        w.field("code", i.code.id)
        w.field("severity", i.severity.rawValue)
        w.field("message", i.message)
        w.field("frame", i.frame)
        w.field("count", i.count)
        w.endObject()
    }
    w.endArray()
    w.endObject()
}

/// `"findings": [{"severity", "code", "message", "frame", "offset"}]`, shared by every JSON output.
public func writeFindings(_ findings: [Finding], into w: inout JSONWriter, key: String = "findings") {
    w.beginArray(key)
    for f in findings {
        w.beginObject()
        w.field("severity", f.severity.rawValue)
        w.field("code", f.kind.code.id)
        w.field("message", f.message)
        w.field("frame", f.frame)
        w.field("offset", f.offset)
        w.endObject()
    }
    w.endArray()
}

/// `"vendor_commands": [{"controller", "opcode", "event_code", "vendor", "name", "label", "count", "first_frame"}]`:
/// `opcode` for commands, `event_code` (the first parameter byte) for events; `vendor`/`name` null when no table
/// names the code.
func writeVendorEntries(_ entries: [VendorActivity.Entry], key: String, into w: inout JSONWriter) {
    w.beginArray(key)
    for e in entries {
        w.beginObject()
        w.field("controller", e.controller)
        w.field("opcode", e.opcode?.rawValue)
        w.field("event_code", e.eventCode)
        w.field("vendor", e.name?.vendor)
        w.field("name", e.name?.name)
        w.field("label", e.label)
        w.field("count", e.count)
        w.field("first_frame", e.firstFrame)
        w.endObject()
    }
    w.endArray()
}
