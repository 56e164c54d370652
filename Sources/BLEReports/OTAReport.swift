import BLEAnalysis
import BLECore

/// Renders firmware-update sessions (``OTASession``): a readable verdict per session, or JSON.
///
/// JSON: `{"sessions": [{"conn" (connection handle), "conn_number", "protocol", "result", "result_detail", "start_frame", "end_frame", "duration_s",
/// "image_size", "image_sha256", "image_crc32", "packets", "retransmitted_packets", "retransmitted_bytes",
/// "resend_requests", "connections" ([{"role", "conn_number", "conn", "peer", "start_frame", "end_frame", "end_reason", "gap_s"}]), "resends" ([{"index", "request_frame", "resent_frame"}]), "throughput_bps", "goodput", "packets_per_event", "phases", "objects", "stalls", "link",
/// "findings"}]}`.
public enum OTAReport {
    public static func text(_ sessions: [OTASession], terminal: Terminal = Terminal(colors: false)) -> String {
        if sessions.isEmpty { return "No firmware update found.\n" }
        var out = ""
        for s in sessions { out += session(s, terminal: terminal) }
        return out
    }

    /// One session: the verdict line, then one indented line per fact.
    static func session(_ s: OTASession, terminal: Terminal) -> String {
        var out = headline(s, terminal: terminal)
        out += "  frames \(s.startFrame)-\(s.endFrame), \(formatDuration(microseconds: s.durationMicroseconds))\n"
        if s.connections.count > 1 {
            for c in s.connections { out += connectionLine(c) }
        }
        out += imageLine(s)
        out += packetsLine(s)
        out += rateLine(s)
        if let link = s.links.last {
            var l = "  link " + linkDescription(link)
            if let c = ThroughputCeiling.ceiling(for: link, direction: .tx) { l += ", ceiling \(formatBitRate(c))" }
            if s.links.count > 1 { l += " (\(s.links.count) link states during the update)" }
            out += l + "\n"
        }
        for p in s.phases {
            out +=
                "  phase \(p.name.padding(to: 12)) frames \(p.startFrame)-\(p.endFrame)  \(formatDuration(microseconds: p.durationMicroseconds))"
            out += p.packets > 0 ? ", \(p.packets) packets, \(formatCount(p.bytes)) bytes\n" : "\n"
        }
        let pauses = s.objects.compactMap(\.createPauseMicroseconds)
        if !pauses.isEmpty {
            let avg = pauses.reduce(0, +) / Int64(pauses.count)
            out +=
                "  \(s.objects.count) objects; pause after Create: average \(formatDuration(microseconds: avg)), max \(formatDuration(microseconds: pauses.max() ?? 0))\n"
        }
        for st in s.stalls {
            out +=
                "  stall \(formatDuration(microseconds: st.gapMicroseconds)) after \(st.preceding) (frames \(st.afterFrame)→\(st.resumeFrame))\n"
        }
        for f in s.findings { out += "  \(terminal.severity(f.severity)): \(f.message)\(f.frame.map { " (frame \($0))" } ?? "")\n" }
        return out
    }

    /// `DFU (codec) on connection #n: SUCCESS — detail`, bold.
    static func headline(_ s: OTASession, terminal: Terminal) -> String {
        let verdict: String
        switch s.result {
        case .success: verdict = terminal.paint("SUCCESS", .green)
        case .failure: verdict = terminal.paint("FAILED", .red)
        case .aborted: verdict = terminal.paint("ABORTED", .yellow)
        case .incomplete: verdict = terminal.paint("INCOMPLETE", .yellow)
        }
        let on =
            s.connections.count > 1
            ? "connections " + s.connections.map { "#\($0.connectionNumber)" }.joined(separator: " → ")
            : "connection #\(s.connectionNumber)"
        var head = "\(s.protocolName)\(s.codec.map { " (\($0))" } ?? "") on \(on): \(verdict)"
        if let d = s.result.detail { head += " — \(d)" }
        return terminal.paint(head, .bold) + "\n"
    }

    /// One connection of an update that spans several.
    static func connectionLine(_ c: OTAConnectionStep) -> String {
        var line = "  "
        if let gap = c.gapMicroseconds { line += "after \(formatDuration(microseconds: gap)), " }
        line += "connection #\(c.connectionNumber) (\(c.role))"
        if let a = c.peerAddress { line += " to \(a)" }
        line += ", frames \(c.startFrame)-" + (c.endFrame.map(String.init) ?? "end")
        line += c.endReason.map { ", ended: \($0)" } ?? (c.endFrame == nil ? ", open at the end of the capture" : "")
        return line + "\n"
    }

    static func imageLine(_ s: OTASession) -> String {
        var image = "  image \(formatCount(s.image.count)) bytes"
        if let e = s.expectedSize { image += " of \(formatCount(e)) announced" }
        if s.imageOffset > 0 { image += " (from offset \(s.imageOffset))" }
        image += ", SHA-256 \(s.imageSHA256), CRC-32 \(hex(s.imageCRC32))"
        return image + "\n"
    }

    static func packetsLine(_ s: OTASession) -> String {
        var packets = "  \(formatCount(s.packets)) packets"
        if let n = s.expectedPackets { packets += " (\(n) announced)" }
        if !s.retransmittedPackets.isEmpty {
            packets +=
                ", \(s.retransmittedPackets.count) resent (\(s.retransmissionUnit) \(list(s.retransmittedPackets))), \(formatCount(s.retransmittedBytes)) bytes wasted"
        }
        if !s.resendRequests.isEmpty {
            packets += ", \(s.resendRequests.count) resend request(s)"
            let unanswered = s.resends.filter { $0.resentFrame == nil }.count
            if !s.resends.isEmpty { packets += unanswered == 0 ? ", each answered" : ", \(unanswered) never answered" }
        }
        if s.receipts > 0 { packets += ", \(s.receipts) receipts (PRN \(s.packetReceiptInterval ?? 0))" }
        return packets + "\n"
    }

    static func rateLine(_ s: OTASession) -> String {
        var rate =
            "  throughput "
            + (s.throughputBitsPerSecond.map(formatBitRate)
                ?? s.transferMicroseconds.map {
                    "- (\(s.packets) packets within \(formatDuration(microseconds: $0)): too short to rate)"
                }
                ?? "-")
        if let g = s.goodput {
            rate += ", goodput \(String(fractionDigits: 1, g * 100)) % of \(formatCount(s.wireBytes)) bytes on the link"
        }
        if let p = s.packetsPerConnectionEvent { rate += ", \(String(fractionDigits: 2, p)) packets per event" }
        return rate + "\n"
    }

    static func list(_ v: [Int]) -> String {
        v.count <= 12 ? v.map(String.init).joined(separator: ", ") : v.prefix(12).map(String.init).joined(separator: ", ") + ", …"
    }

    /// The link in one line (``LinkColumns/sentence(_:)``, as every output spells its fields).
    static func linkDescription(_ l: LinkSnapshot) -> String { LinkColumns.sentence(l) }

    /// `{"sessions": [...]}`; with `file`, `{"file", "sessions"}` (one line of `ota --json` over several captures).
    /// `{"file"?, "sessions": [...], "completeness"?}`: `log` (what the capture cannot show) when the command read the
    /// capture itself (the report says it once for the file).
    public static func json(_ sessions: [OTASession], file: String? = nil, log: LogScope? = nil) -> String {
        var w = JSONWriter(capacity: 2048)
        w.beginObject()
        if let file { w.field("file", file) }
        w.beginArray("sessions")
        for s in sessions { write(s, to: &w) }
        w.endArray()
        if let log { writeCompleteness(log.completeness, into: &w) }
        w.endObject()
        return w.string
    }

    public static func write(_ s: OTASession, to w: inout JSONWriter) {
        w.beginObject()
        w.field("conn", s.connection)
        w.field("conn_number", s.connectionNumber)
        w.field("protocol", s.protocolName.rawValue)
        w.field("codec", s.codec)
        w.field("result", s.result.label)
        w.field("result_detail", s.result.detail)
        w.field("start_frame", s.startFrame)
        w.field("end_frame", s.endFrame)
        w.field("start_time", s.startTime)
        w.field("end_time", s.endTime)
        w.field("duration_s", Double(s.durationMicroseconds) / 1e6, decimals: 6)
        w.field("image_size", s.image.count)
        w.field("image_offset", s.imageOffset)
        w.field("expected_size", s.expectedSize)
        w.field("image_sha256", s.imageSHA256)
        let crc = String(s.imageCRC32, radix: 16)
        w.field("image_crc32", String(repeating: "0", count: 8 - crc.count) + crc)
        w.field("packets", s.packets)
        w.field("expected_packets", s.expectedPackets)
        w.field("packet_bytes", s.packetBytes)
        w.field("retransmission_unit", s.retransmissionUnit)
        w.beginArray("retransmitted_packets")
        for i in s.retransmittedPackets { w.value(i) }
        w.endArray()
        w.field("retransmitted_bytes", s.retransmittedBytes)
        w.field("resend_requests", s.resendRequests.count)
        w.beginArray("resend_request_indices")
        for i in s.resendRequests { w.value(i) }
        w.endArray()
        w.beginArray("resends")
        for r in s.resends {
            w.beginObject()
            w.field("index", r.index)
            w.field("request_frame", r.requestFrame)
            w.field("resent_frame", r.resentFrame)
            w.endObject()
        }
        w.endArray()
        w.field("receipts", s.receipts)
        w.field("resumed_from_offset", s.resumedFromOffset)
        w.field("transfer_s", s.transferMicroseconds.map { Double($0) / 1e6 }, decimals: 6)
        w.field("throughput_bps", s.throughputBitsPerSecond, decimals: 0)
        w.field("wire_bytes", s.wireBytes)
        w.field("goodput", s.goodput, decimals: 4)
        w.field("packets_per_event", s.packetsPerConnectionEvent, decimals: 2)
        writeConnectionsAndPhases(s, to: &w)
        writeLinks(s, to: &w)
        w.beginArray("findings")
        for f in s.findings { TransfersReport.writeFinding(f, to: &w) }
        w.endArray()
        w.endObject()
    }

    /// `connections`, `phases`, `objects` and `stalls` of a session.
    static func writeConnectionsAndPhases(_ s: OTASession, to w: inout JSONWriter) {
        w.beginArray("connections")
        for c in s.connections {
            w.beginObject()
            w.field("role", c.role)
            w.field("conn_number", c.connectionNumber)
            w.field("conn", c.connection)
            w.field("peer", c.peerAddress)
            w.field("start_frame", c.startFrame)
            w.field("end_frame", c.endFrame)
            w.field("end_reason", c.endReason)
            w.field("gap_s", c.gapMicroseconds.map { Double($0) / 1e6 }, decimals: 6)
            w.endObject()
        }
        w.endArray()
        w.beginArray("phases")
        for p in s.phases {
            w.beginObject()
            w.field("name", p.name)
            w.field("start_frame", p.startFrame)
            w.field("end_frame", p.endFrame)
            w.field("duration_s", Double(p.durationMicroseconds) / 1e6, decimals: 6)
            w.field("packets", p.packets)
            w.field("bytes", p.bytes)
            w.endObject()
        }
        w.endArray()
        w.beginArray("objects")
        for o in s.objects {
            w.beginObject()
            w.field("type", o.type == 1 ? "command" : o.type == 2 ? "data" : "type \(o.type)")
            w.field("offset", o.offset)
            w.field("size", o.size)
            w.field("create_frame", o.createFrame)
            w.field("packets", o.packets)
            w.field("create_pause_s", o.createPauseMicroseconds.map { Double($0) / 1e6 }, decimals: 6)
            w.field("crc_ok", o.crcMatches)
            w.field("executed", o.executed)
            w.endObject()
        }
        w.endArray()
        w.beginArray("stalls")
        for st in s.stalls {
            w.beginObject()
            w.field("after_frame", st.afterFrame)
            w.field("resume_frame", st.resumeFrame)
            w.field("gap_s", Double(st.gapMicroseconds) / 1e6, decimals: 6)
            w.field("preceding", st.preceding)
            w.endObject()
        }
        w.endArray()
    }

    /// `link`: each link setting the session ran with (``LinkColumns``: its ceiling, which facts were assumed or inferred).
    static func writeLinks(_ s: OTASession, to w: inout JSONWriter) {
        w.beginArray("link")
        for l in s.links {
            w.beginObject()
            LinkColumns.table.writeFields(l, to: &w)
            w.endObject()
        }
        w.endArray()
    }
}
