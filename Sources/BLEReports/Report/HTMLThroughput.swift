import BLEAnalysis
import BLECodecs
import BLECore

/// The report page's `Throughput` section: the stream table, then per stream (the ones with the most bytes) its
/// verdict, facts, link periods and charts, then the others' verdicts.
extension HTMLReport {
    static func throughput(_ f: FileAnalysis, options: ReportOptions) -> String {
        var out = "<h3>Throughput</h3>"
        let streams = f.throughput
        guard !streams.isEmpty else { return out + "<p class=\"muted\">No attribute values.</p>" }
        out += throughputTable(streams, options: options)
        if streams.count > options.maxRows { out += "<p class=\"muted\">… \(streams.count - options.maxRows) more streams.</p>" }
        if f.streamsDropped > 0 { out += "<p class=\"muted\">\(f.streamsDropped) streams were not tracked (limit reached).</p>" }
        // Charts for the streams with the most bytes, in stream order.
        let charted = Set(
            streams.enumerated().sorted { ($0.element.valueBytes, $1.offset) > ($1.element.valueBytes, $0.offset) }
                .prefix(options.maxCharts).map(\.offset))
        out += "<p class=\"legend muted\"><span><i class=\"sw\" style=\"border-color:#1f6feb\"></i>rate per slot</span>"
        out += "<span><i class=\"sw\" style=\"border-color:#c23030;border-top-style:dashed\"></i>ceiling for the link in force</span>"
        out += "<span><i class=\"sw\" style=\"border-color:#2e8540;border-top-style:dotted\"></i>average</span></p>"
        for (i, s) in streams.enumerated() where charted.contains(i) { out += streamSection(s, in: f) }
        let verdictsOnly = streams.enumerated().filter { !charted.contains($0.offset) }.prefix(options.maxRows)
        if !verdictsOnly.isEmpty {
            out += "<p><b>Other streams</b> (no chart):</p><ul>"
            for (_, s) in verdictsOnly {
                out +=
                    "<li><span class=\"mono\">#\(s.key.connectionNumber) \(s.key.direction) \(hex(s.key.handle, width: 4)) \(esc(s.key.kind.name))</span>: \(esc(s.verdict.text))</li>"
            }
            out += "</ul>"
        }
        return out
    }

    /// One row per stream (at most `maxRows`).
    static func throughputTable(_ streams: [ThroughputStream], options: ReportOptions) -> String {
        var out =
            "<div class=\"scroll\"><table><tr><th>conn</th><th>dir</th><th>handle</th><th>characteristic</th><th>kind</th><th>packets</th><th>value bytes</th>"
        out += "<th>duration</th><th>rate</th><th>window median / p95 / max</th><th>ceiling</th><th>share</th></tr>"
        let shown = streams.prefix(options.maxRows)
        for s in shown {
            out +=
                "<tr><td class=\"n\">#\(s.key.connectionNumber)</td><td>\(s.key.direction)</td><td class=\"mono\">\(hex(s.key.handle, width: 4))</td>"
            out += "<td>\(esc(shortName(s)))</td><td class=\"nw\">\(esc(s.key.kind.name))</td>"
            out += "<td class=\"n\">\(formatCount(s.packets))</td><td class=\"n\">\(formatCount(s.valueBytes))</td>"
            out += "<td class=\"n\">\(s.packets < 2 ? "—" : esc(formatDuration(microseconds: s.durationMicroseconds)))</td>"
            out += "<td class=\"n\">\(esc(s.rateBitsPerSecond.map(formatBitRate) ?? "—"))</td>"
            out +=
                "<td class=\"n\">\(esc(s.windows.map { "\(formatBitRate($0.median)) / \(formatBitRate($0.p95)) / \(formatBitRate($0.max))" } ?? "—"))</td>"
            out += "<td class=\"n\">\(esc(s.ceilingBitsPerSecond.map(formatBitRate) ?? "—"))</td>"
            let share = s.rateBitsPerSecond.flatMap { r in s.ceilingBitsPerSecond.map { r / $0 } }
            out += "<td class=\"n\">\(share.map { String(fractionDigits: 0, $0 * 100) + " %" } ?? "—")</td></tr>"
        }
        out += "</table></div>"
        return out
    }

    /// A charted stream: heading, verdict, facts, its link periods when more than one, and the charts.
    static func streamSection(_ s: ThroughputStream, in f: FileAnalysis) -> String {
        let title =
            "#\(s.key.connectionNumber) \(s.key.direction) \(hex(s.key.handle, width: 4)) \(s.key.kind) — \(characteristicName(s))"
        var out = "<h3 class=\"mono\">\(esc(title))</h3>"
        out += "<div class=\"\(verdictClass(s.verdict))\">\(esc(s.verdict.text))</div>"
        out += "<ul>" + streamFacts(s, in: f).map { "<li>\(esc($0))</li>" }.joined() + "</ul>"
        if s.periods.count > 1 {
            out += "<table><tr><th>frames</th><th>link</th><th>packets</th><th>rate</th><th>ceiling</th><th>verdict</th></tr>"
            for p in s.periods.prefix(12) {
                out += "<tr><td class=\"n\">\(p.firstFrame)–\(p.lastFrame)</td><td>\(esc(OTAReport.linkDescription(p.link)))</td>"
                out +=
                    "<td class=\"n\">\(formatCount(p.packets))</td><td class=\"n\">\(esc(p.rateBitsPerSecond.map(formatBitRate) ?? "—"))</td>"
                out +=
                    "<td class=\"n\">\(esc(p.ceilingBitsPerSecond.map(formatBitRate) ?? "—"))</td><td>\(esc(p.verdict.text))</td></tr>"
            }
            out += "</table>"
        }
        guard s.packets >= 2, s.durationMicroseconds > 0 else { return out }
        out += SVGChart.rateChart(s, title: "Rate over time")
        out += SVGChart.gapHistogram(s.gapHistogram, title: "Inter-packet gaps (\(formatCount(max(0, s.packets - 1))))")
        return out
    }

    /// The stream's facts: sizes, values, link, idle gaps, and what the link layer or the controller buffer shows.
    static func streamFacts(_ s: ThroughputStream, in f: FileAnalysis) -> [String] {
        var facts: [String] = []
        facts.append(
            "\(formatCount(s.packets)) packet\(s.packets == 1 ? "" : "s"), \(formatCount(s.valueBytes)) value bytes (\(formatCount(s.attBytes)) ATT, \(formatCount(s.l2capBytes)) L2CAP), frames \(s.firstFrame)–\(s.lastFrame)"
        )
        facts.append(
            "values \(s.minValueSize == s.maxValueSize ? "\(s.minValueSize)" : "\(s.minValueSize)–\(s.maxValueSize)") bytes; peak \(formatBitRate(s.peakBitsPerSecond)) over \(formatDuration(microseconds: (s.windows?.windowMicroseconds ?? 1_000_000) / 10))"
        )
        if let p = s.mainPeriod {
            var l = "link " + OTAReport.linkDescription(p.link)
            if let ppe = p.packetsPerEvent {
                l +=
                    "; about \(String(fractionDigits: 1, ppe.mean)) packets per connection event (median \(ppe.median), max \(ppe.max); estimated from timestamps)"
            }
            facts.append(l)
        }
        if s.idleGapCount > 0 {
            facts.append(
                "\(s.idleGapCount) idle gap\(s.idleGapCount == 1 ? "" : "s") over \(formatDuration(microseconds: s.idleThresholdMicroseconds)), \(formatDuration(microseconds: s.idleMicroseconds)) in all; longest \(formatDuration(microseconds: s.longestIdleGaps.first?.microseconds ?? 0)) after frame \(s.longestIdleGaps.first?.afterFrame ?? 0)"
            )
        }
        if let c = f.connections.first(where: { $0.number == s.key.connectionNumber }), let ll = c.linkLayer {
            facts.append(
                "air capture, whole connection: \(formatCount(ll.events)) connection events, \(String(fractionDigits: 2, ll.averagePacketsPerEvent)) packets per event (max \(ll.maxPacketsPerEvent)), \(formatCount(ll.emptyPDUs)) empty PDUs, \(formatCount(ll.retransmissions)) retransmissions, \(formatCount(ll.crcErrors)) CRC errors"
            )
        } else if let c = f.connections.first(where: { $0.number == s.key.connectionNumber }) {
            facts.append(
                "controller buffer: at most \(c.maxInFlight) ACL packets in flight\(f.aclBuffers.map { " of \($0.packets)" } ?? "")"
                    + (c.controllerQueueFull.isEmpty
                        ? ""
                        : ", queue full \(c.controllerQueueFull.count)× for \(formatDuration(microseconds: c.controllerQueueFullMicroseconds))")
                    + (c.creditStalls.isEmpty
                        ? "; no credit-based flow-control stall"
                        : "; out of credits \(c.creditStalls.count)× for \(formatDuration(microseconds: c.creditStalls.reduce(Int64(0)) { $0 + $1.durationMicroseconds }))")
            )
        }
        return facts
    }

    static func verdictClass(_ v: ThroughputVerdict) -> String {
        switch v.limit {
        case .ceiling: "verdict ok"
        case .unknown: "verdict"
        default: "verdict"
        }
    }

    /// The characteristic's name when known, else its UUID (the full label is in the stream's heading).
    static func shortName(_ s: ThroughputStream) -> String {
        if let name = ThroughputReport.name(of: s), s.psm != nil { return name }
        guard let u = s.characteristic else { return "unknown attribute" }
        return AssignedNumbers.name(for: u) ?? u.description
    }

    static func characteristicName(_ s: ThroughputStream) -> String {
        guard let u = s.characteristic else { return "unknown attribute" }
        return AssignedNumbers.name(for: u).map { "\($0) (\(u))" } ?? u.description
    }
}
