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
/// `{link}` is `{"interval_ms", "latency", "timeout_ms", "phy_tx", "phy_rx", "max_tx_octets", "max_rx_octets",
/// "mtu", "encrypted"}`. Rates are value bits per second over first → last packet; times are seconds since the
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

    // MARK: text

    public func text(terminal: Terminal = Terminal(colors: false)) -> String {
        if streams.isEmpty {
            return (iso.health.isEmpty ? "No attribute values in this capture.\n" : "") + linkQualityText(terminal: terminal, except: [])
                + isoText(terminal: terminal)
        }
        var out =
            terminal.paint(
                "conn  dir  handle  kind        packets      bytes  duration    rate          window median / p95 / max        ceiling      share",
                .bold) + "\n"
        for s in streams {
            var line = "#\(s.key.connectionNumber)".padding(to: 6)
            line += s.key.direction.description.padding(to: 5)
            line += hex(s.key.handle, width: 4).padding(to: 8)
            line += s.key.kind.name.padding(to: 10)
            line += formatCount(s.packets).leftPadding(to: 9)
            line += formatCount(s.valueBytes).leftPadding(to: 11) + "  "
            line += formatDuration(microseconds: s.durationMicroseconds).padding(to: 12)
            line += (s.rateBitsPerSecond.map(formatBitRate) ?? "-").padding(to: 14)
            if let w = s.windows {
                line += (compactRate(w.median) + " / " + compactRate(w.p95) + " / " + formatBitRate(w.max)).padding(to: 33)
            } else {
                line += "(shorter than the window)".padding(to: 33)
            }
            line += (s.ceilingBitsPerSecond.map(formatBitRate) ?? "-").padding(to: 13)
            if let share = s.mainPeriod?.share, s.mainPeriod?.packets == s.packets || s.periods.count == 1 {
                line += String(fractionDigits: 0, share * 100) + " %"
            } else if let r = s.rateBitsPerSecond, let c = s.ceilingBitsPerSecond, c > 0 {
                line += String(fractionDigits: 0, r / c * 100) + " %"
            } else {
                line += "-"
            }
            out += line + "\n"
            var detail: [String] = []
            if let u = s.characteristic { detail.append(Self.name(of: s).map { "\($0) (\(u))" } ?? u.description) }
            if let p = s.mainPeriod { detail.append("link " + OTAReport.linkDescription(p.link)) }
            if let ppe = s.mainPeriod?.packetsPerEvent {
                detail.append("~\(String(fractionDigits: 1, ppe.mean)) packets/event (median \(ppe.median), max \(ppe.max))")
            }
            if s.idleGapCount > 0 {
                detail.append(
                    "\(s.idleGapCount) idle gap\(s.idleGapCount == 1 ? "" : "s") > \(formatDuration(microseconds: s.idleThresholdMicroseconds)) (\(formatDuration(microseconds: s.idleMicroseconds)))"
                )
            }
            if s.periods.count > 1 { detail.append("\(s.periods.count) link periods") }
            if !detail.isEmpty { out += "      " + terminal.paint(detail.joined(separator: "; "), .dim) + "\n" }
            out += "      → " + paintVerdict(s.verdict, terminal: terminal) + "\n"
            if let q = connection(s.key.connectionNumber).flatMap({ LinkQualitySummary($0.linkQuality) }) {
                out += "      → " + terminal.paint("link quality: " + q.verdict, q.isRadioLimited ? .yellow : .green) + "\n"
            }
        }
        // Per connection: buffers, flow control, link layer.
        var seen = Set<Int>()
        for s in streams where seen.insert(s.key.connectionNumber).inserted {
            guard let c = connection(s.key.connectionNumber) else { continue }
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
                        + "\(formatCount(ll.retransmissions)) retransmissions, \(formatCount(ll.crcErrors)) CRC errors")
            }
            if c.creditStalls.isEmpty {
                parts.append("no credit-based flow-control stall")
            } else {
                let total = c.creditStalls.reduce(Int64(0)) { $0 + $1.durationMicroseconds }
                parts.append(
                    "credit-based channels: sender out of credits \(c.creditStalls.count) time\(c.creditStalls.count == 1 ? "" : "s"), "
                        + formatDuration(microseconds: total) + " waiting for credits")
            }
            out += terminal.paint("connection #\(c.number): ", .bold) + parts.joined(separator: "; ") + "\n"
        }
        if streamsDropped > 0 { out += "\(streamsDropped) further stream(s) not tracked (limit reached)\n" }
        return out + linkQualityText(terminal: terminal, except: seen) + isoText(terminal: terminal)
    }

    /// `connection #2: link quality: limited by the radio: …` for connections with quality reports and no stream above.
    func linkQualityText(terminal: Terminal, except: Set<Int>) -> String {
        var out = ""
        for c in connections where !except.contains(c.number) {
            guard let q = LinkQualitySummary(c.linkQuality) else { continue }
            out +=
                terminal.paint("connection #\(c.number): ", .bold)
                + terminal.paint("link quality: " + q.verdict, q.isRadioLimited ? .yellow : .green) + "\n"
        }
        return out
    }

    func compactRate(_ bps: Double) -> String {
        let s = formatBitRate(bps)
        return s.hasSuffix(" kbps") || s.hasSuffix(" Mbps") || s.hasSuffix(" bps") ? String(s.split(separator: " ")[0]) : s
    }

    func paintVerdict(_ v: ThroughputVerdict, terminal: Terminal) -> String {
        switch v.limit {
        case .ceiling: terminal.paint(v.text, .green)
        case .unknown: v.text
        default: terminal.paint(v.text, .yellow)
        }
    }

    // MARK: JSON

    public func json(series: Bool = true) -> String {
        var w = JSONWriter(capacity: 4096)
        w.beginObject()
        w.beginArray("streams")
        for s in streams { write(s, to: &w, series: series) }
        w.endArray()
        w.field("streams_dropped", streamsDropped)
        writeISO(into: &w)
        w.endObject()
        return w.string
    }

    public func write(_ s: ThroughputStream, to w: inout JSONWriter, series: Bool = true) {
        w.beginObject()
        w.field("conn", s.connection)
        w.field("conn_number", s.key.connectionNumber)
        w.field("dir", s.key.direction.description)
        w.field("handle", s.key.handle)
        w.field("uuid", s.characteristic?.uuidString)
        w.field("name", Self.name(of: s))
        w.field("service_uuid", s.service?.uuidString)
        w.field("kind", s.key.kind.name)
        w.field("psm", s.psm)
        w.field("packets", s.packets)
        w.field("value_bytes", s.valueBytes)
        w.field("att_bytes", s.attBytes)
        w.field("l2cap_bytes", s.l2capBytes)
        w.field("first_frame", s.firstFrame)
        w.field("last_frame", s.lastFrame)
        w.field("first_time", s.firstTime)
        w.field("last_time", s.lastTime)
        w.field("duration_s", Double(s.durationMicroseconds) / 1e6, decimals: 6)
        w.field("rate_bps", s.rateBitsPerSecond, decimals: 1)
        w.field("att_rate_bps", s.attRateBitsPerSecond, decimals: 1)
        w.field("l2cap_rate_bps", s.l2capRateBitsPerSecond, decimals: 1)
        w.field("ceiling_bps", s.ceilingBitsPerSecond, decimals: 0)
        w.field("share", s.rateBitsPerSecond.flatMap { r in s.ceilingBitsPerSecond.map { r / $0 } }, decimals: 4)
        w.beginObject("value_size")
        w.field("min", s.minValueSize)
        w.field("avg", s.packets > 0 ? Double(s.valueBytes) / Double(s.packets) : nil, decimals: 2)
        w.field("max", s.maxValueSize)
        w.endObject()
        if let win = s.windows {
            w.beginObject("window")
            w.field("window_s", Double(win.windowMicroseconds) / 1e6, decimals: 6)
            w.field("count", win.count)
            w.field("min_bps", win.min, decimals: 1)
            w.field("median_bps", win.median, decimals: 1)
            w.field("p95_bps", win.p95, decimals: 1)
            w.field("max_bps", win.max, decimals: 1)
            w.endObject()
        } else {
            w.fieldNull("window")
        }
        w.field("peak_bps", s.peakBitsPerSecond, decimals: 1)
        w.field("peak_step_s", Double(s.windows?.windowMicroseconds ?? 0) / 1e7, decimals: 6)
        w.beginObject("gaps")
        w.beginArray("edges_us")
        for e in ThroughputTracker.gapBucketEdges { w.value(e) }
        w.endArray()
        w.beginArray("counts")
        for c in s.gapHistogram { w.value(c) }
        w.endArray()
        w.endObject()
        w.beginObject("idle")
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
        if let p = s.mainPeriod { Self.writeLink(p.link, key: "link", to: &w) } else { w.fieldNull("link") }
        w.beginArray("periods")
        for p in s.periods {
            w.beginObject()
            w.field("first_frame", p.firstFrame)
            w.field("last_frame", p.lastFrame)
            w.field("first_time", p.firstTime)
            w.field("last_time", p.lastTime)
            w.field("duration_s", Double(p.durationMicroseconds) / 1e6, decimals: 6)
            Self.writeLink(p.link, key: "link", to: &w)
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
        w.field("periods_not_split", s.periodsNotSplit)
        let c = connection(s.key.connectionNumber)
        w.beginObject("controller")
        w.field("max_in_flight", c?.maxInFlight)
        w.field("acl_buffer_packets", aclBuffers?.packets)
        w.field("acl_buffer_length", aclBuffers?.length)
        w.field("queue_full_count", c?.controllerQueueFull.count)
        w.field("queue_full_us", c?.controllerQueueFullMicroseconds)
        w.endObject()
        w.beginObject("flow_control")
        w.field("credit_stalls", c?.creditStalls.count)
        w.field("credit_stall_us", c.map { $0.creditStalls.reduce(Int64(0)) { $0 + $1.durationMicroseconds } })
        w.endObject()
        if let ll = c?.linkLayer { Self.writeLinkLayer(ll, to: &w) } else { w.fieldNull("link_layer") }
        w.field("limit", s.verdict.limit.rawValue)
        w.field("verdict", s.verdict.text)
        if let q = c.flatMap({ LinkQualitySummary($0.linkQuality) }) { writeLinkQuality(q, into: &w) } else { w.fieldNull("link_quality") }
        if series {
            w.beginObject("series")
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
        w.endObject()
    }

    static func writeLink(_ l: LinkSnapshot, key: String, to w: inout JSONWriter) {
        w.beginObject(key)
        w.field("interval_ms", l.parameters.map { Double($0.intervalMicroseconds) / 1000 }, decimals: 2)
        w.field("latency", l.parameters?.latency)
        w.field("timeout_ms", l.parameters.map { Int($0.timeout) * 10 })
        w.field("phy_tx", l.phy.tx.description)
        w.field("phy_rx", l.phy.rx.description)
        w.field("max_tx_octets", l.dataLength.maxTxOctets)
        w.field("max_rx_octets", l.dataLength.maxRxOctets)
        w.field("mtu", l.mtu)
        w.field("encrypted", l.encrypted)
        w.endObject()
    }

    static func writeLinkLayer(_ ll: LinkLayerStats, to w: inout JSONWriter) {
        w.beginObject("link_layer")
        w.field("packets", ll.packets)
        w.field("events", ll.events)
        w.field("packets_per_event", ll.averagePacketsPerEvent, decimals: 3)
        w.field("max_packets_per_event", ll.maxPacketsPerEvent)
        w.field("empty_pdus", ll.emptyPDUs)
        w.field("retransmissions", ll.retransmissions)
        w.field("crc_errors", ll.crcErrors)
        w.endObject()
    }

    // MARK: CSV

    public static let csvHeader =
        "conn,connection_handle,dir,handle,uuid,kind,packets,value_bytes,att_bytes,l2cap_bytes,first_frame,last_frame,"
        + "first_time,last_time,duration_s,rate_bps,window_median_bps,window_p95_bps,window_max_bps,peak_bps,ceiling_bps,share,"
        + "interval_ms,phy,data_length,mtu,packets_per_event,idle_gaps,limit,verdict\n"

    public func csv() -> String {
        var out = Self.csvHeader
        for s in streams {
            let p = s.mainPeriod
            var f: [String] = []
            f.append(String(s.key.connectionNumber))
            f.append(hex(s.connection, width: 4))
            f.append(s.key.direction.description)
            f.append(hex(s.key.handle, width: 4))
            f.append(s.characteristic?.uuidString ?? "")
            f.append(s.key.kind.name)
            f.append(String(s.packets))
            f.append(String(s.valueBytes))
            f.append(String(s.attBytes))
            f.append(String(s.l2capBytes))
            f.append(String(s.firstFrame))
            f.append(String(s.lastFrame))
            f.append(s.firstTime.iso8601)
            f.append(s.lastTime.iso8601)
            f.append(String(fractionDigits: 6, Double(s.durationMicroseconds) / 1e6))
            f.append(s.rateBitsPerSecond.map { String(fractionDigits: 1, $0) } ?? "")
            f.append(s.windows.map { String(fractionDigits: 1, $0.median) } ?? "")
            f.append(s.windows.map { String(fractionDigits: 1, $0.p95) } ?? "")
            f.append(s.windows.map { String(fractionDigits: 1, $0.max) } ?? "")
            f.append(String(fractionDigits: 1, s.peakBitsPerSecond))
            f.append(s.ceilingBitsPerSecond.map { String(fractionDigits: 0, $0) } ?? "")
            f.append(s.rateBitsPerSecond.flatMap { r in s.ceilingBitsPerSecond.map { String(fractionDigits: 4, r / $0) } } ?? "")
            f.append(p?.link.parameters.map { String(fractionDigits: 2, Double($0.intervalMicroseconds) / 1000) } ?? "")
            f.append(p.map { $0.link.phy.description } ?? "")
            f.append(p.map { "\($0.link.dataLength.maxTxOctets)/\($0.link.dataLength.maxRxOctets)" } ?? "")
            f.append(p.map { String($0.link.mtu) } ?? "")
            f.append(p?.packetsPerEvent.map { String(fractionDigits: 2, $0.mean) } ?? "")
            f.append(String(s.idleGapCount))
            f.append(s.verdict.limit.rawValue)
            f.append(s.verdict.text)
            out += f.map(csvField).joined(separator: ",") + "\n"
        }
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
    w.field("rssi_min", q.minRSSI)
    w.field("rssi_max", q.maxRSSI)
    w.field("rssi_mean", q.meanRSSI, decimals: 1)
    w.field("snr_min", q.minSNR)
    w.field("retransmissions", q.retransmissions)
    w.field("nak", q.nak)
    w.field("no_rx", q.noRx)
    w.field("flow_off", q.flowOff)
    w.field("crc_errors", q.crcErrors)
    w.field("tx_unacked", q.txUnacked)
    w.field("worst_rssi_frame", q.worstRSSIFrame)
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
