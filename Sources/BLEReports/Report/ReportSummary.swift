import BLEAnalysis
import BLECore

/// One line of a capture's opening summary: a verdict a manager can read, and the section with the detail.
///
/// The summary is a list so that other analyses add their items (decode health, encrypted links without a
/// key…) without touching the renderers: HTML, Markdown and JSON print every item in order.
public struct VerdictItem: Hashable, Sendable {
    public enum Status: String, Hashable, Sendable {
        case ok, warning, failure, info
    }
    /// `ota`, `transfers`, `throughput`, `link-quality`, `completeness`, `findings`.
    public var topic: String
    public var status: Status
    public var text: String
    /// The detail section it links to: `ota`, `transfers`, `throughput`, `connections`, `capture`, `findings`
    /// (HTML ids are `file<N>-<section>`).
    public var section: String
    /// The deciding frame, when there is one.
    public var frame: Int?

    public init(topic: String, status: Status, text: String, section: String, frame: Int? = nil) {
        self.topic = topic; self.status = status; self.text = text; self.section = section; self.frame = frame
    }
}

extension Report {
    /// The verdicts that open a capture's section, in this order: the story (topic `story`), what the log cannot show
    /// when it is incomplete, the diagnosis (each finding at warning or above, most severe first; or that nothing was
    /// found), the platform the findings were judged against (topic `platform`, as `diagnose`'s `Platform:` line; after
    /// the answer, as there), OTA sessions (result,
    /// duration, rate, the limit of the stream that carried the image), transfers (complete/cut), the busiest data
    /// stream's throughput verdict, completeness when complete, decoder errors. Link quality and throughput limits are
    /// diagnosis rules (DC-01, HH-05, TP-03): no line per connection when nothing is wrong.
    /// The `Platform:` line of `diagnose` as a summary item (the same ``DiagnosisResult/platformLine``: one writer), when
    /// the log names a platform or this side: whose routine the findings were judged against, and who logged.
    static func platformItem(_ d: DiagnosisResult) -> VerdictItem? {
        d.platformLine.map {
            let frame = d.platform?.provenance.frame ?? d.thisSide?.name?.frame ?? d.thisSide?.controller?.frame
            return VerdictItem(topic: "platform", status: .info, text: $0, section: "capture", frame: frame)
        }
    }

    public static func summarize(_ f: FileAnalysis, maxFindings: Int = 3, maxDiagnoses: Int = 12) -> [VerdictItem] {
        // The story first: what the capture shows, in a few sentences (``Story``).
        var items = f.diagnosis.story.sentences.map {
            VerdictItem(topic: "story", status: .info, text: $0.text, section: "diagnosis", frame: $0.frames.first)
        }
        if let completeness = f.info?.completeness, completeness.hasWarnings {
            items.append(
                VerdictItem(
                    topic: "completeness", status: .warning, text: "log " + completeness.headline, section: "capture",
                    frame: completeness.items.first { $0.severity >= .warning }?.frame))
        }
        let serious = f.diagnosis.atLeast(.warning)
        for d in serious.prefix(maxDiagnoses) {
            items.append(
                VerdictItem(
                    topic: d.rule, status: d.severity.verdictStatus, text: DiagnosisReport.summaryLine(d), section: "diagnosis",
                    frame: d.frame))
        }
        if serious.count > maxDiagnoses {
            items.append(
                VerdictItem(
                    topic: "diagnosis", status: .info, text: "\(serious.count - maxDiagnoses) more findings in the diagnosis",
                    section: "diagnosis"))
        } else if serious.isEmpty && f.diagnosis.rulesEvaluated > 0 {
            items.append(
                VerdictItem(
                    topic: "diagnosis", status: .ok, text: "nothing wrong found by \(f.diagnosis.rulesEvaluated) rules",
                    section: "diagnosis"))
        }
        if let platform = platformItem(f.diagnosis) { items.append(platform) }
        for s in f.otaSessions.prefix(20) {
            var text = "\(s.protocolName.rawValue) on connection #\(s.connectionNumber): \(s.result.label.uppercased())"
            if let d = s.result.detail { text += " (\(d))" }
            text += ", \(formatCount(s.image.count)) bytes in \(formatDuration(microseconds: s.durationMicroseconds))"
            if let r = s.throughputBitsPerSecond { text += " at \(formatBitRate(r))" }
            if let limit = otaStream(s, in: f.throughput) { text += "; \(limit.verdict.text)" }
            items.append(
                VerdictItem(
                    topic: "ota", status: s.result == .success ? .ok : .failure, text: text, section: "ota",
                    frame: s.result == .success ? s.startFrame : s.endFrame))
        }
        if !f.transfers.isEmpty {
            let cut = f.transfers.filter { !$0.complete }
            var text = "\(f.transfers.count) transfer\(f.transfers.count == 1 ? "" : "s"): \(f.transfers.count - cut.count) complete"
            if let first = cut.first {
                text += ", \(cut.count) cut (first on connection #\(first.connectionNumber), frames \(first.firstFrame)–\(first.lastFrame))"
            }
            items.append(
                VerdictItem(
                    topic: "transfers", status: cut.isEmpty ? .ok : .warning, text: text, section: "transfers",
                    frame: cut.first?.lastFrame))
        }
        if let s = busiestStream(f.throughput) {
            let name = "#\(s.key.connectionNumber) \(s.key.direction) \(hex(s.key.handle, width: 4)) \(s.key.kind.name)"
            // Its bytes and average over its whole span first, so that the verdict's figure (which may be its busiest link
            // period's, as the verdict says) is not read as the same rate.
            let span = formatDuration(microseconds: s.lastTime.microseconds(since: s.firstTime))
            let rate = s.rateBitsPerSecond.map { ", \(formatBitRate($0)) on average over \(span)" } ?? ""
            items.append(
                VerdictItem(
                    topic: "throughput", status: .info,
                    text: "busiest stream \(name) (\(formatCount(s.valueBytes)) bytes\(rate)): \(s.verdict.text)", section: "throughput",
                    frame: s.firstFrame))
        }
        if let completeness = f.info?.completeness, !completeness.hasWarnings {
            items.append(
                VerdictItem(
                    topic: "completeness", status: completeness.items.isEmpty ? .ok : .info, text: "log " + completeness.headline,
                    section: "capture", frame: completeness.items.first?.frame))
        }
        items += isoItems(f)
        for g in f.findingGroups.prefix(maxFindings) where g.severity >= .error {
            items.append(
                VerdictItem(
                    topic: "findings", status: g.severity == .error ? .failure : .warning,
                    text: "\(g.severity.rawValue) \(g.code) ×\(g.count): \(g.message)", section: "findings",
                    frame: g.firstFrames.first))
        }
        return items
    }

    /// The stream that carried an OTA session's image: on its connection, overlapping its packets, most bytes.
    public static func otaStream(_ s: OTASession, in streams: [ThroughputStream]) -> ThroughputStream? {
        guard let first = s.firstPacketFrame, let last = s.lastPacketFrame else { return nil }
        return streams.filter { $0.key.connectionNumber == s.connectionNumber && $0.firstFrame <= last && $0.lastFrame >= first }
            .max { $0.valueBytes < $1.valueBytes }
    }

    /// The stream that carried the most data (10 packets and 1 kB at least: a control point's few bytes, a single read,
    /// say nothing about throughput), first of equals. Called busiest, never slowest: its share of the ceiling is in
    /// its verdict, and the throughput rules say when a stream was held back.
    public static func busiestStream(_ streams: [ThroughputStream]) -> ThroughputStream? {
        let measured = streams.filter { $0.packets >= 10 && $0.valueBytes >= 1024 }
        return measured.max { ($0.valueBytes, -$0.firstFrame) < ($1.valueBytes, -$1.firstFrame) }
    }
}
