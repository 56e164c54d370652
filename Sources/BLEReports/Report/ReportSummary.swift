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
    /// The verdicts that open a capture's section, in this order: OTA sessions (result, duration, rate, the
    /// limit of the stream that carried the image), transfers (complete/cut), the worst throughput verdict,
    /// link quality per connection with quality reports, completeness, the top findings by severity.
    public static func summarize(_ f: FileAnalysis, maxFindings: Int = 3) -> [VerdictItem] {
        var items: [VerdictItem] = []
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
        if let s = worstStream(f.throughput) {
            let name = "#\(s.key.connectionNumber) \(s.key.direction) \(hex(s.key.handle, width: 4)) \(s.key.kind.name)"
            let rate = s.rateBitsPerSecond.map(formatBitRate) ?? "-"
            items.append(
                VerdictItem(
                    topic: "throughput", status: s.verdict.limit == .ceiling || s.verdict.limit == .unknown ? .info : .warning,
                    text: "slowest stream \(name), \(rate): \(s.verdict.text)", section: "throughput", frame: s.firstFrame))
        }
        for c in f.connections {
            guard let q = LinkQualitySummary(c.linkQuality) else { continue }
            items.append(
                VerdictItem(
                    topic: "link-quality", status: q.isRadioLimited ? .warning : .ok,
                    text: "connection #\(c.number): \(q.verdict)", section: "connections",
                    frame: q.approachingLSTOFrames.first ?? q.worstRSSIFrame))
        }
        if let completeness = f.info?.completeness {
            let status: VerdictItem.Status = completeness.verdict == "incomplete" ? .warning : completeness.items.isEmpty ? .ok : .info
            items.append(
                VerdictItem(
                    topic: "completeness", status: status, text: "log " + completeness.headline, section: "capture",
                    frame: completeness.items.first { $0.severity >= .warning }?.frame ?? completeness.items.first?.frame))
        }
        items += isoItems(f)
        for g in f.findingGroups.prefix(maxFindings) where g.severity >= .warning {
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

    /// The worst throughput verdict: the lowest share of its ceiling among streams that carry data (10 packets and
    /// 1 kB at least, so a control point's few bytes do not count), else the stream with the most bytes.
    public static func worstStream(_ streams: [ThroughputStream]) -> ThroughputStream? {
        let measured = streams.filter { $0.packets >= 10 && $0.valueBytes >= 1024 && $0.mainPeriod?.share != nil }
        if let w = measured.min(by: { ($0.mainPeriod!.share!, $0.firstFrame) < ($1.mainPeriod!.share!, $1.firstFrame) }) { return w }
        return streams.max { $0.valueBytes < $1.valueBytes }
    }
}
