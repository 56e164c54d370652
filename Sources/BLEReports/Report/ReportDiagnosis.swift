import BLEAnalysis
import BLECapture
import BLECore

/// One timeline row shown beside a diagnosis finding: the exchanges around its deciding frame.
public struct ExchangeRow: Hashable, Sendable {
    public var frame: Int
    public var timestamp: Timestamp
    public var direction: Direction
    public var layer: String
    public var name: String
    public var summary: String
    /// The other half of a request/response pair, when the capture holds it.
    public var pairedFrame: Int?
    /// The connection number of the row, when it belongs to one.
    public var connection: Int? = nil
}

extension Report {
    /// The diagnosis of one analysed capture: the pass's evidence with what only the caller knows (the completeness
    /// verdict, the capture reader's findings, the file name), through the rules.
    static func diagnose(_ analysis: CaptureAnalysis, capture: CaptureFile, completeness: CaptureCompleteness) -> DiagnosisResult {
        DiagnosisEngine.diagnose(DiagnosisReport.evidence(analysis, capture: capture, completeness: completeness))
    }

    /// Rows before and after each deciding frame (``exchangeRowsBefore`` events up to it, ``exchangeRowsAfter`` after),
    /// from a second pass that builds timeline events only inside those windows and stops after the last one.
    static let exchangeRowsBefore = 6
    static let exchangeRowsAfter = 3
    /// How many events around a deciding frame the rows are chosen from: on a phone's log the last six events before a
    /// link loss are often advertising reports, and the link's own last exchange (the Domyos treadmill's unanswered
    /// Write Request at 5129, 14 frames before its 0x08) is a few dozen events back.
    static let exchangeRowsPool = 64

    /// A finding's deciding frame and the link it is about, whose rows come first.
    struct ExchangeTarget: Hashable {
        var frame: Int
        var connection: Int?
    }

    /// The rows to show of `pool` (in frame order): the link's own when it has enough, filled with the others nearest
    /// the deciding frame; `fromEnd` picks the last rows (before the frame), else the first (after it).
    static func pick(_ pool: [ExchangeRow], connection: Int?, count: Int, fromEnd: Bool) -> [ExchangeRow] {
        guard let connection, pool.count > count else { return Array(fromEnd ? pool.suffix(count) : pool.prefix(count)) }
        let ordered = fromEnd ? Array(pool.reversed()) : pool
        let own = ordered.filter { $0.connection == connection }.prefix(count)
        let others = ordered.filter { $0.connection != connection }.prefix(count - own.count)
        return (own + others).sorted { $0.frame < $1.frame }
    }

    @_optimize(speed)
    static func exchanges(path: String, around found: [ExchangeTarget], options: AnalyzerOptions) -> [Int: [ExchangeRow]] {
        var connectionAt: [Int: Int?] = [:]
        for t in found where connectionAt[t.frame] == nil { connectionAt[t.frame] = t.connection }
        let targets = connectionAt.keys.sorted()
        guard let last = targets.last, let capture = try? CaptureFile.open(path: path) else { return [:] }
        var options = options
        options.timeline = false
        let analyzer = Analyzer(options: options)
        var before: [Int: [ExchangeRow]] = [:]
        var after: [Int: [ExchangeRow]] = [:]  // target → the rows after it, up to the pool's size
        var recent: [ExchangeRow] = []  // the last events, for the rows before a target
        var next = 0  // the next target not reached yet
        analyzer.onEvent = { e in
            let row = ExchangeRow(
                frame: e.frame, timestamp: e.timestamp, direction: e.direction, layer: e.layer.rawValue, name: e.name,
                summary: e.summary, pairedFrame: e.responseFrame ?? e.requestFrame, connection: e.connectionNumber)
            for (t, rows) in after where rows.count < exchangeRowsPool && e.frame > t { after[t]!.append(row) }
            while next < targets.count, e.frame >= targets[next] {
                let t = targets[next]
                before[t] = recent.filter { $0.frame < t } + (e.frame == t ? [row] : [])
                after[t] = []
                next += 1
            }
            recent.append(row)
            if recent.count > exchangeRowsPool { recent.removeFirst() }
        }
        // A window opens a few hundred records ahead of its target (the rows before it), and the pass ends once the last
        // window has its rows after: a statistics pass elsewhere, so the report stays about as fast.
        let lead = 400
        var record = CaptureRecord.empty
        var window = 0  // the first target whose window is not behind the record
        while capture.next(into: &record) {
            while window < targets.count, record.frame > targets[window] + lead { window += 1 }
            analyzer.setTimeline(window < targets.count && record.frame >= targets[window] - lead)
            analyzer.process(record)
            if record.frame > last + lead { break }
        }
        analyzer.setTimeline(false)
        var rows: [Int: [ExchangeRow]] = [:]
        for (t, pool) in before {
            let connection = connectionAt[t] ?? nil
            // The deciding frame's own row stays, then the link's rows before and after it.
            let own = pool.last?.frame == t ? [pool.last!] : []
            let earlier = pick(Array(pool.dropLast(own.count)), connection: connection, count: exchangeRowsBefore, fromEnd: true)
            let later = pick(after[t] ?? [], connection: connection, count: exchangeRowsAfter, fromEnd: false)
            rows[t] = earlier + own + later
        }
        return rows
    }
}

extension DiagnosisSeverity {
    /// The summary's status for a finding of this severity.
    var verdictStatus: VerdictItem.Status {
        switch self {
        case .critical, .error: .failure
        case .warning: .warning
        case .info: .info
        }
    }
}

extension HTMLReport {
    /// The diagnosis: every finding at warning or above with its evidence chain, causes, facts and confidence, and the
    /// timeline rows around its deciding frame (one click from the summary, `#file<N>-d<frame>`); info findings folded.
    static func diagnosis(_ f: FileAnalysis, index: Int) -> String {
        let d = f.diagnosis
        var out = "<span id=\"file\(index)-diagnosis\"></span><h3>Diagnosis</h3>"
        let tally = d.tally
        out +=
            "<p>" + esc(tally.isEmpty ? "Nothing wrong found by \(d.rulesEvaluated) rules." : "\(tally) (\(d.rulesEvaluated) rules).")
            + "</p>"
        let stats = f.info?.statistics
        let hasController = (stats?.commands ?? 0) + (stats?.events ?? 0) > 0
        for finding in d.atLeast(.warning) {
            let rows = f.exchanges[finding.frame]
            // Errors and worse: the exchanges drawn as a sequence chart (warnings keep their evidence chain).
            var chart: SequenceChart?
            if finding.severity >= .error, let rows, !rows.isEmpty {
                // The role when the finding was decided: a BR/EDR role switch can make this side the peripheral later.
                let role = finding.connection.flatMap { n in
                    f.connections.first { $0.number == n }?.link.role.value(atFrame: finding.frame)
                }
                chart = SequenceChart(
                    rows: rows, decidingFrame: finding.frame, localRole: role, hasController: hasController, connection: finding.connection)
            }
            out += block(finding, index: index, rows: rows, timeline: f.timeline != nil, chart: chart)
        }
        let context = d.findings.filter { $0.severity == .info }
        if !context.isEmpty {
            out += "<details><summary>\(context.count) more in context (info)</summary><ul>"
            for c in context { out += "<li><b>\(ruleLink(c.rule))</b> \(esc(DiagnosisReport.summaryLine(c)))</li>" }
            out += "</ul></details>"
        }
        return out
    }

    /// A rule id linked to its page in the docs (`docs/diagnosis.md#dc-01`), its meaning as the link's title.
    static func ruleLink(_ id: String) -> String {
        let title = DiagnosisRules.explanation(id).map { " title=\"\(esc($0.meaning))\"" } ?? ""
        return "<a href=\"docs/diagnosis.md#\(DiagnosisReport.anchor(id))\"\(title)>\(esc(id))</a>"
    }

    static func block(_ d: Diagnosis, index: Int, rows: [ExchangeRow]?, timeline: Bool = false, chart: SequenceChart? = nil) -> String {
        let cls = d.severity >= .error ? "finding failure" : "finding"
        var out = "<div class=\"\(cls)\" id=\"file\(index)-d\(d.frame)\">"
        out +=
            "<b class=\"sev-\(d.severity >= .error ? "error" : "warning")\">\(esc(d.severity.rawValue.uppercased()))</b> <b>\(ruleLink(d.rule))</b> "
            + esc(DiagnosisReport.summaryLine(d))
        if timeline {
            let target = index == 1 ? "#frame=\(d.frame)" : "#file\(index):frame=\(d.frame)"
            out += " <a class=\"tl-link\" href=\"\(target)\" data-frame=\"\(d.frame)\">frame \(d.frame) in the timeline</a>"
        }
        if d.count > 1 { out += "<br><span class=\"muted\">first: \(esc(d.message))</span>" }
        if !d.supporting.isEmpty {
            let cited = (d.supporting + [CitedFrame(d.frame, "decides")]).sorted { $0.frame < $1.frame }
            out +=
                "<br><span class=\"muted\">evidence: " + cited.map { "#\($0.frame) \(esc($0.text))" }.joined(separator: " → ") + "</span>"
        }
        if !d.causes.isEmpty { out += "<br>likely: " + esc(d.causes.joined(separator: "; ")) }
        for fact in d.facts {
            out += "<br><span class=\"muted\">fact: \(esc(fact.name)) \(esc(fact.value)), \(esc(fact.source.description))</span>"
        }
        if case .lowered(let reason) = d.confidence { out += "<br><span class=\"sev-warning\">confidence lowered:</span> \(esc(reason))" }
        if let chart { out += chart.svg() }
        if let rows, !rows.isEmpty {
            out += "<details><summary>exchanges around frame \(d.frame)</summary><div class=\"scroll\"><table>"
            out += "<tr><th>frame</th><th>time</th><th>dir</th><th>layer</th><th>what</th><th>pairs with</th></tr>"
            for r in rows {
                let mark = r.frame == d.frame ? " style=\"background:#fcefef\"" : ""
                out +=
                    "<tr\(mark)><td class=\"n\">\(r.frame)</td><td class=\"nw\">\(esc(r.timestamp.description))</td><td>\(esc(r.direction.arrow))</td>"
                    + "<td>\(esc(r.layer))</td><td>\(esc(r.name))\(r.summary.isEmpty ? "" : " " + esc(r.summary))</td>"
                    + "<td class=\"n\">\(r.pairedFrame.map(String.init) ?? "")</td></tr>"
            }
            out += "</table></div></details>"
        }
        return out + "</div>"
    }
}

extension MarkdownReport {
    /// The diagnosis as a list: each finding at warning or above with its evidence and likely causes.
    static func diagnosis(_ f: FileAnalysis) -> String {
        let d = f.diagnosis
        var out = "### Diagnosis\n\n"
        let serious = d.atLeast(.warning)
        if serious.isEmpty { return out + "Nothing wrong found by \(d.rulesEvaluated) rules.\n\n" }
        out += "\(d.tally) (\(d.rulesEvaluated) rules).\n\n"
        for x in serious {
            out += "- **\(x.severity.rawValue.uppercased()) \(x.rule)** \(DiagnosisReport.summaryLine(x))\n"
            if !x.supporting.isEmpty {
                let cited = (x.supporting + [CitedFrame(x.frame, "decides")]).sorted { $0.frame < $1.frame }
                out += "  - evidence: " + cited.map { "#\($0.frame) \($0.text)" }.joined(separator: " → ") + "\n"
            }
            if !x.causes.isEmpty { out += "  - likely: " + x.causes.joined(separator: "; ") + "\n" }
            if case .lowered(let reason) = x.confidence { out += "  - confidence lowered: \(reason)\n" }
        }
        return out + "\n"
    }
}
