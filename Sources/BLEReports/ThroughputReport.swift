import BLEAnalysis
import BLECodecs
import BLECore
import BLEProtocols

/// Renders ``ThroughputStream``s: a table a person reads at a glance with a verdict line per stream, JSON, or CSV.
///
/// JSON (`blescope throughput --json`), keys in this order:
/// `{"streams": [{"conn" (connection handle), "conn_number", "dir", "handle", "uuid", "name", "service_uuid", "kind", "packets",
/// "value_bytes", "att_bytes", "l2cap_bytes", "first_frame", "last_frame", "first_time", "last_time", "duration_s",
/// "rate_bps", "att_rate_bps", "l2cap_rate_bps", "ceiling_bps", "share", "value_size": {"min", "avg", "max"},
/// "window": {"window_s", "count", "min_bps", "median_bps", "p95_bps", "max_bps"} | null, "peak_bps", "peak_step_s",
/// "gaps": {"edges_us", "counts"}, "idle": {"threshold_s", "count", "total_s", "longest": [{"after_frame",
/// "resume_frame", "start_time", "gap_s"}]}, "link": {link} | null, "periods": [{"first_frame", "last_frame",
/// "first_time", "last_time", "duration_s", "link": {link}, "packets", "value_bytes", "l2cap_bytes", "rate_bps",
/// "active_rate_bps", "idle_s", "ceiling_bps", "share", "packets_per_event": {"events", "mean", "median", "p90",
/// "max", "estimated": true} | null, "limit", "verdict"}], "periods_not_split", "controller": {"max_in_flight",
/// "acl_buffer_packets", "acl_buffer_length"}, "flow_control", "link_layer": {...} | null, "limit", "verdict",
/// "series": {"slot_us", "points": [[µs from first_time, bps (integer)], …]}}], "streams_dropped": n, "iso_streams":
/// [health] (only when the capture has ISO data; `schemas/iso.schema.json`'s health objects)}`
///
/// `{link}` is ``LinkColumns``' object: `{"interval_ms", "latency", "timeout_ms", "phy_tx", "phy_rx", "max_tx_octets",
/// "max_rx_octets", "mtu", "encrypted", "ceiling_tx_bps", "assumed", "inferred"}`. Rates are value bits per second over first → last packet; times are seconds since the
/// Unix epoch (UTC) with µs.
public struct ThroughputReport {
    public var streams: [ThroughputStream]
    /// The capture's connections (by number − 1), for controller buffers and link-layer figures.
    public var connections: [Connection]
    /// Controller ACL buffers (LE Read Buffer Size), any controller: (length, packets).
    public var aclBuffers: (length: Int, packets: Int)?
    public var streamsDropped: Int
    /// The isochronous streams' health (`ThroughputReport+ISO.swift`): shown after the attribute streams when present.
    public var iso = ISOAnalysis()

    public init(
        streams: [ThroughputStream], connections: [Connection] = [], aclBuffers: (length: Int, packets: Int)? = nil,
        streamsDropped: Int = 0
    ) {
        self.streams = streams
        self.connections = connections
        self.aclBuffers = aclBuffers
        self.streamsDropped = streamsDropped
    }

    /// The report for an analysis: its throughput streams (none unless it observed throughput), connections and buffers.
    public init(_ analysis: CaptureAnalysis) {
        self.init(
            streams: analysis.throughput?.streams ?? [], connections: analysis.connections, aclBuffers: analysis.firstACLBuffers,
            streamsDropped: analysis.throughput?.streamsDropped ?? 0)
        iso = analysis.iso
    }

    func connection(_ number: Int) -> Connection? {
        number >= 1 && number <= connections.count && connections[number - 1].number == number
            ? connections[number - 1]
            : connections.first { $0.number == number }
    }

    /// Keeps the streams of connection `connection` (number, or handle when `isHandle`) and characteristic `uuid`.
    public func filtered(connectionNumbers: Set<Int> = [], handles: Set<UInt16> = [], uuids: Set<BluetoothUUID> = []) -> ThroughputReport {
        var r = self
        r.streams = streams.filter { s in
            (connectionNumbers.isEmpty || connectionNumbers.contains(s.key.connectionNumber))
                && (handles.isEmpty || handles.contains(s.connection))
                && (uuids.isEmpty || s.characteristic.map { uuids.contains($0) } == true)
        }
        return r
    }

    public static func name(of s: ThroughputStream) -> String? {
        if let psm = s.psm { return "L2CAP CoC " + L2CAPPSM(psm).description }
        return s.characteristic.flatMap { AssignedNumbers.name(for: $0) }
    }

    /// The rows the column table renders: each stream with its connection.
    public var rows: [ThroughputRow] {
        streams.map { ThroughputRow(stream: $0, connection: connection($0.key.connectionNumber), aclBuffers: aclBuffers) }
    }

    // MARK: text

    /// The table (``ThroughputColumns``) grouped by connection: a heading with the link (again whenever a stream saw
    /// another), each stream's row, its name and details, its verdict; then what limited the connection.
    public func text(terminal: Terminal = Terminal(colors: false)) -> String {
        if streams.isEmpty {
            return (iso.health.isEmpty ? "No attribute values in this capture.\n" : "") + linkQualityText(terminal: terminal, except: [])
                + isoText(terminal: terminal)
        }
        let table = ThroughputColumns.table
        var out = ""
        var seen = Set<Int>()
        let rows = self.rows
        var i = 0
        while i < rows.count {
            let number = rows[i].stream.key.connectionNumber
            seen.insert(number)
            var shownLink: LinkSnapshot? = nil
            var head = "connection #\(number) (handle \(hex(rows[i].stream.connection, width: 4)))"
            if let link = rows[i].stream.mainPeriod?.link {
                head += ": link " + OTAReport.linkDescription(link)
                shownLink = link
            }
            out += (out.isEmpty ? "" : "\n") + terminal.fit(terminal.paint(head, .bold)) + "\n"
            out += terminal.paint(table.textHeader, .dim) + "\n"
            while i < rows.count && rows[i].stream.key.connectionNumber == number {
                let row = rows[i]
                if let link = row.stream.mainPeriod?.link, link != shownLink {
                    out += terminal.fit(terminal.paint("link " + OTAReport.linkDescription(link), .dim)) + "\n"
                    shownLink = link
                }
                out += streamText(row, table: table, terminal: terminal)
                i += 1
            }
            if let c = connection(number) { out += terminal.fit(connectionText(c, terminal: terminal)) + "\n" }
        }
        if streamsDropped > 0 { out += "\(streamsDropped) further stream(s) not tracked (limit reached)\n" }
        out += linkQualityText(terminal: terminal, except: seen) + isoText(terminal: terminal)
        let note = NotationLegend.note(for: out, width: terminal.width ?? 100)
        return note.isEmpty ? out : out + "\n" + note
    }

    /// A stream's row, the line naming it (characteristic, packets per event, idle gaps), its verdict and link quality.
    func streamText(_ row: ThroughputRow, table: ColumnTable<ThroughputRow>, terminal: Terminal) -> String {
        let s = row.stream
        var out = terminal.fit(table.textLine(row)) + "\n"
        var detail: [String] = []
        if let ppe = s.mainPeriod?.packetsPerEvent {
            detail.append("~\(String(fractionDigits: 1, ppe.mean)) packets/event (median \(ppe.median), max \(ppe.max))")
        }
        if s.idleGapCount > 0 {
            detail.append(
                "\(s.idleGapCount) idle gap\(s.idleGapCount == 1 ? "" : "s") > \(formatDuration(microseconds: s.idleThresholdMicroseconds)) (\(formatDuration(microseconds: s.idleMicroseconds)))"
            )
        }
        if s.periods.count > 1 { detail.append("\(s.periods.count) link periods") }
        // The attribute's name first; on a line of its own (shortened in its middle if need be) when the rest would
        // not fit beside it.
        if let name = s.characteristic.map({ u in Self.name(of: s).map { "\($0) (\(u))" } ?? u.description }) ?? Self.name(of: s) {
            let line = ([name] + detail).joined(separator: "; ")
            if let width = terminal.width, 4 + line.count > width {
                out += "    " + terminal.paint(terminal.shorten(name, to: width - 4), .dim) + "\n"
            } else {
                detail.insert(name, at: 0)
            }
        }
        if !detail.isEmpty { out += terminal.fit("    " + terminal.paint(detail.joined(separator: "; "), .dim)) + "\n" }
        out += terminal.fit("    → " + paintVerdict(s.verdict, terminal: terminal)) + "\n"
        if let q = row.connection.flatMap({ LinkQualitySummary($0.linkQuality) }) {
            out += terminal.fit("    → " + terminal.paint("link quality: " + q.verdict, q.isRadioLimited ? .yellow : .green)) + "\n"
        }
        return out
    }

    /// `connection #1: controller buffer: …; no credit-based flow-control stall`: what limited the connection as a whole.
    func connectionText(_ c: Connection, terminal: Terminal) -> String {
        var parts: [String] = []
        if c.linkLayer == nil {
            parts.append(
                "controller buffer: at most \(c.maxInFlight) ACL packet\(c.maxInFlight == 1 ? "" : "s") in flight"
                    + (aclBuffers.map { " of \($0.packets)" } ?? ""))
            if !c.controllerQueueFull.isEmpty {
                parts.append(
                    "controller queue full \(c.controllerQueueFull.count) time\(c.controllerQueueFull.count == 1 ? "" : "s"), "
                        + formatDuration(microseconds: c.controllerQueueFullMicroseconds)
                        + " in all (the host waited for Number Of Completed Packets)")
            }
        }
        if let ll = c.linkLayer {
            parts.append(
                "air: \(formatCount(ll.events)) events, \(String(fractionDigits: 2, ll.averagePacketsPerEvent)) packets/event "
                    + "(max \(ll.maxPacketsPerEvent)), \(formatCount(ll.emptyPDUs)) empty PDUs, "
                    + "\(formatCount(ll.retransmissions)) retransmissions, \(formatCount(ll.crcErrors)) CRC errors"
                    + Self.airDirectionsAndMIC(ll))
        }
        if c.creditStalls.isEmpty {
            parts.append("no credit-based flow-control stall")
        } else {
            let total = c.creditStalls.reduce(Int64(0)) { $0 + $1.durationMicroseconds }
            parts.append(
                "credit-based channels: sender out of credits \(c.creditStalls.count) time\(c.creditStalls.count == 1 ? "" : "s"), "
                    + formatDuration(microseconds: total) + " waiting for credits")
        }
        return "  " + parts.joined(separator: "; ")
    }

    /// `connection #2: link quality: limited by the radio: …` for connections with quality reports and no stream above.
    func linkQualityText(terminal: Terminal, except: Set<Int>) -> String {
        var out = ""
        for c in connections where !except.contains(c.number) {
            guard let q = LinkQualitySummary(c.linkQuality) else { continue }
            let line =
                terminal.paint("connection #\(c.number): ", .bold)
                + terminal.paint("link quality: " + q.verdict, q.isRadioLimited ? .yellow : .green)
            out += terminal.fit(line) + "\n"
        }
        return out
    }

    func paintVerdict(_ v: ThroughputVerdict, terminal: Terminal) -> String {
        switch v.limit {
        case .ceiling: terminal.paint(v.text, .green)
        case .unknown: v.text
        default: terminal.paint(v.text, .yellow)
        }
    }

    // MARK: JSON

    /// `{"streams": [...], "streams_dropped", "completeness"?}`: `log` when the command read the capture itself.
    public func json(series: Bool = true, log: LogScope? = nil) -> String {
        var w = JSONWriter(capacity: 4096)
        w.beginObject()
        w.beginArray("streams")
        for row in rows { write(row, to: &w, series: series) }
        w.endArray()
        w.field("streams_dropped", streamsDropped)
        writeISO(into: &w)
        if let log { writeCompleteness(log.completeness, into: &w) }
        w.endObject()
        return w.string
    }

    /// One stream as a JSON object (``ThroughputColumns``); `series: false` leaves the rate series out.
    public func write(_ s: ThroughputStream, to w: inout JSONWriter, series: Bool = true) {
        write(ThroughputRow(stream: s, connection: connection(s.key.connectionNumber), aclBuffers: aclBuffers), to: &w, series: series)
    }

    func write(_ row: ThroughputRow, to w: inout JSONWriter, series: Bool) {
        w.beginObject()
        ThroughputColumns.table.writeFields(row, to: &w, except: series ? [] : ["series"])
        w.endObject()
    }

    static func writeWindow(_ win: WindowStats?, key: String, to w: inout JSONWriter) {
        guard let win else { w.fieldNull(key); return }
        w.beginObject(key)
        w.field("window_s", Double(win.windowMicroseconds) / 1e6, decimals: 6)
        w.field("count", win.count)
        w.field("min_bps", win.min, decimals: 1)
        w.field("median_bps", win.median, decimals: 1)
        w.field("p95_bps", win.p95, decimals: 1)
        w.field("max_bps", win.max, decimals: 1)
        w.endObject()
    }

    static func writeGaps(_ s: ThroughputStream, key: String, to w: inout JSONWriter) {
        w.beginObject(key)
        w.beginArray("edges_us")
        for e in ThroughputTracker.gapBucketEdges { w.value(e) }
        w.endArray()
        w.beginArray("counts")
        for c in s.gapHistogram { w.value(c) }
        w.endArray()
        w.endObject()
    }

    static func writeIdle(_ s: ThroughputStream, key: String, to w: inout JSONWriter) {
        w.beginObject(key)
        w.field("threshold_s", Double(s.idleThresholdMicroseconds) / 1e6, decimals: 6)
        w.field("count", s.idleGapCount)
        w.field("total_s", Double(s.idleMicroseconds) / 1e6, decimals: 6)
        w.beginArray("longest")
        for g in s.longestIdleGaps {
            w.beginObject()
            w.field("after_frame", g.afterFrame)
            w.field("resume_frame", g.resumeFrame)
            w.field("start_time", g.startTime)
            w.field("gap_s", Double(g.microseconds) / 1e6, decimals: 6)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    static func writePeriods(_ periods: [ThroughputPeriod], key: String, to w: inout JSONWriter) {
        w.beginArray(key)
        for p in periods {
            w.beginObject()
            w.field("first_frame", p.firstFrame)
            w.field("last_frame", p.lastFrame)
            w.field("first_time", p.firstTime)
            w.field("last_time", p.lastTime)
            w.field("duration_s", Double(p.durationMicroseconds) / 1e6, decimals: 6)
            writeLink(p.link, key: "link", to: &w)
            w.field("packets", p.packets)
            w.field("value_bytes", p.valueBytes)
            w.field("l2cap_bytes", p.l2capBytes)
            w.field("rate_bps", p.rateBitsPerSecond, decimals: 1)
            w.field("active_rate_bps", p.activeRateBitsPerSecond, decimals: 1)
            w.field("idle_s", Double(p.idleMicroseconds) / 1e6, decimals: 6)
            w.field("ceiling_bps", p.ceilingBitsPerSecond, decimals: 0)
            w.field("share", p.share, decimals: 4)
            if let e = p.packetsPerEvent {
                w.beginObject("packets_per_event")
                w.field("events", e.events)
                w.field("mean", e.mean, decimals: 3)
                w.field("median", e.median)
                w.field("p90", e.p90)
                w.field("max", e.max)
                w.field("estimated", true)
                w.endObject()
            } else {
                w.fieldNull("packets_per_event")
            }
            w.field("limit", p.verdict.limit.rawValue)
            w.field("verdict", p.verdict.text)
            w.endObject()
        }
        w.endArray()
    }

    static func writeSeries(_ s: ThroughputStream, key: String, to w: inout JSONWriter) {
        w.beginObject(key)
        w.field("slot_us", s.seriesSlotMicroseconds)
        w.beginArray("points")
        for p in s.series {
            w.beginArray()
            w.value(p.time.microseconds(since: s.firstTime))
            w.value(Int64(p.bitsPerSecond.rounded()))
            w.endArray()
        }
        w.endArray()
        w.endObject()
    }

    /// `{link}`: ``LinkColumns``, the link object of every output.
    static func writeLink(_ l: LinkSnapshot, key: String, to w: inout JSONWriter) { LinkColumns.write(l, key: key, to: &w) }

    static func writeLinkLayer(_ ll: LinkLayerStats, key: String = "link_layer", to w: inout JSONWriter) {
        w.beginObject(key)
        w.field("packets", ll.packets)
        w.field("events", ll.events)
        w.field("packets_per_event", ll.averagePacketsPerEvent, decimals: 3)
        w.field("max_packets_per_event", ll.maxPacketsPerEvent)
        w.field("empty_pdus", ll.emptyPDUs)
        w.field("retransmissions", ll.retransmissions)
        w.field("crc_errors", ll.crcErrors)
        w.field("mic_failures", ll.micFailures)
        w.field("directions_inferred", ll.directionsInferred)
        w.field("directions_corrected", ll.directionsCorrected)
        w.field("directions_from_att", ll.directionsFromATT)
        w.endObject()
    }

    /// What the air line adds when there is something to add: PDUs whose MIC failed (counted, never read as data), and
    /// the directions the connection events gave where the pseudo-header said none or a wrong one (``AirDirections``).
    static func airDirectionsAndMIC(_ ll: LinkLayerStats) -> String {
        var text = ""
        if ll.micFailures > 0 { text += ", \(formatCount(ll.micFailures)) MIC failed (not decoded)" }
        if ll.directionsInferred > 0 {
            text += ", direction of \(formatCount(ll.directionsInferred)) PDUs inferred from the connection events"
            if ll.directionsFromATT > 0 {
                text += " or, for \(formatCount(ll.directionsFromATT)), from ATT (the server notifies and responds, the client asks)"
            }
        }
        if ll.directionsCorrected > 0 {
            text += ", \(formatCount(ll.directionsCorrected)) the pseudo-header gave as the previous packet's side corrected"
        }
        return text
    }

    // MARK: CSV

    /// The CSV header (``ThroughputColumns``).
    public static var csvHeader: String { ThroughputColumns.table.csvHeader }

    /// The CSV: the header (unless `header` is false), then one row per stream, each after `prefix` (a file column).
    public func csv(header: Bool = true, prefix: String = "") -> String {
        let table = ThroughputColumns.table
        var out = header ? table.csvHeader : ""
        for row in rows { out += prefix + table.csvLine(row) }
        return out
    }
}

/// Quotes a CSV field when it holds a comma, quote or newline (RFC 4180).
func csvField(_ s: String) -> String {
    guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
    return "\"" + s.replacingAll("\"", with: "\"\"") + "\""
}

/// `"link_quality": {"reports", "first_frame", "last_frame", "rssi_min", "rssi_max", "rssi_mean", "snr_min",
/// "retransmissions", "nak", "no_rx", "flow_off", "crc_errors", "tx_unacked", "worst_rssi_frame",
/// "approaching_lsto_frames", "choppy_frames", "radio_limited", "verdict"}`: a connection's Bluetooth Quality Reports summed.
public func writeLinkQuality(_ q: LinkQualitySummary, into w: inout JSONWriter, key: String = "link_quality") {
    w.beginObject(key)
    w.field("reports", q.reports)
    w.field("first_frame", q.firstFrame)
    w.field("last_frame", q.lastFrame)
    // null when no report measured a signal (each said RSSI -127, the bottom of the scale).
    let measured = q.measuredReports > 0
    w.field("rssi_min", measured ? q.minRSSI : nil)
    w.field("rssi_max", measured ? q.maxRSSI : nil)
    w.field("rssi_mean", measured ? q.meanRSSI : nil, decimals: 1)
    w.field("snr_min", q.minSNR)
    w.field("retransmissions", q.retransmissions)
    w.field("nak", q.nak)
    w.field("no_rx", q.noRx)
    w.field("flow_off", q.flowOff)
    w.field("crc_errors", q.crcErrors)
    w.field("tx_unacked", q.txUnacked)
    w.field("worst_rssi_frame", measured ? q.worstRSSIFrame : nil)
    w.beginArray("approaching_lsto_frames")
    for f in q.approachingLSTOFrames.prefix(100) { w.value(f) }
    w.endArray()
    w.beginArray("choppy_frames")
    for f in q.choppyFrames.prefix(100) { w.value(f) }
    w.endArray()
    w.field("radio_limited", q.isRadioLimited)
    w.field("verdict", q.verdict)
    w.endObject()
}
