import BLEAnalysis
import BLECore
import BLEProtocols

/// The report as one JSON document: everything, keys in a fixed order.
///
/// ```
/// {"schema": "blescope-report/1",
///  "time_zone": "UTC" | "local time (UTC+hh:mm)",      // how the HTML/Markdown print times; JSON times are always UTC
///  "files": [{
///    "file": path, "error": null | message,
///    "summary": {"items": [{"topic", "status" (ok, warning, failure, info), "text", "section", "frame"}]},
///                             // the verdicts the HTML and Markdown open with, same order
///    "capture": {…},          // exactly `blescope info --json` (CaptureInfo.json)
///    "counters": {"records", "commands", "events", "acl_fragments", "l2cap_pdus", "att_pdus", "smp_pdus",
///                 "signalling_pdus", "link_layer_records"},
///    "acl_buffers": {"length", "packets"} | null,
///    "connections": [{"number", "handle", "controller", "peer", "peer_type", "role", "inferred",
///                     "start_frame", "start_time", "end_frame", "end_time", "disconnect_reason", "ended_by",
///                     "link": {link},   // in force at the end: the link object of every output (LinkColumns)
///                     "parameters": [{"frame", "time", "interval_ms", "latency", "timeout_ms"}],
///                     "phy": [{"frame", "time", "tx", "rx"}],
///                     "data_length": [{"frame", "time", "max_tx_octets", "max_tx_time", "max_rx_octets", "max_rx_time"}],
///                     "mtu": [{"frame", "time", "mtu"}], "encryption": [{"frame", "time", "encrypted"}],
///                     "acl_packets": {"tx", "rx"}, "acl_bytes": {"tx", "rx"}, "att_pdus", "max_in_flight",
///                     "completed_packets", "link_layer": {…} | null,
///                     "link_quality": {…} | null,   // Bluetooth Quality Reports summed (see writeLinkQuality)
///                     "quality_reports": [{"frame", "time", "report", "rssi", "snr", "tx_power", "retransmissions",
///                                          "nak", "no_rx", "flow_off"}]}],
///    "gatt": {…},             // exactly `blescope gatt --json`
///    "throughput": {…},       // exactly `blescope throughput --json` (series included)
///    "transfers": {…},        // exactly `blescope transfers --json` (without the file's findings: see "findings")
///    "ota": {…},              // exactly `blescope ota --json`
///    "key_events": {"events": [{"frame", "time", "conn_number", "kind", "text"}], "omitted"},
///    "findings": {"count", "groups": [{"severity", "code", "count", "first_frames", "message"}]}
///  }]}
/// ```
/// Times are seconds since the Unix epoch with µs (UTC), as in every blescope JSON output.
public enum JSONReport {
    public static func render(_ report: Report) -> String {
        var out = head(options: report.options)
        for (i, f) in report.files.enumerated() {
            if i > 0 { out += "," }
            out += file(f)
        }
        return out + tail
    }

    /// `{"schema":…,"time_zone":…,"files":[` — the file objects follow, separated by commas, then ``tail``.
    public static func head(options: ReportOptions) -> String {
        "{\"schema\":\"blescope-report/1\",\"time_zone\":" + quoted(options.clock.zoneName) + ",\"files\":["
    }

    public static let tail = "]}"

    static func quoted(_ s: String) -> String {
        var w = JSONWriter()
        w.value(s)
        return w.string
    }

    /// One capture's object, an element of `files` (and one line of `report --format jsonl`).
    public static func file(_ f: FileAnalysis) -> String {
        var head = JSONWriter()
        head.beginObject()
        head.field("file", f.path)
        head.field("error", f.error)
        var out = String(head.string)  // `{"file":…,"error":…` (object left open)
        guard f.error == nil else { return out + "}" }
        var sw = JSONWriter()
        sw.beginObject()
        writeSummary(f.summary, into: &sw)
        sw.endObject()
        out += "," + String(sw.string.dropFirst().dropLast())
        out += ",\"capture\":" + (f.info?.json ?? "null")
        out += ",\"diagnosis\":" + diagnosisJSON(f)
        out += "," + countersAndConnections(f)
        out += ",\"gatt\":" + GATTReport(connections: f.connections, usage: f.usage).json
        out += ",\"throughput\":" + f.throughputReport.json(series: true)
        out += ",\"transfers\":" + TransfersReport.json(f.transfers)
        out += ",\"ota\":" + OTAReport.json(f.otaSessions)
        // Only for a capture with LE Audio, so that the JSON of others stays as it was (schemas/report.schema.json).
        if !f.iso.isEmpty || !(f.leAudio?.isEmpty ?? true) { out += ",\"iso\":" + ISOReport(iso: f.iso, profiles: f.leAudio).json() }
        if !AudioReport.isEmpty(f.connections, f.classic) {
            var a = JSONWriter()
            a.beginObject()
            AudioReport.write(f.connections, f.classic, to: &a)
            a.endObject()
            out += "," + String(a.string.dropFirst().dropLast())
        }
        // Only for a capture whose addresses rotated, so that the JSON of others stays as it was.
        if !f.addressRotation.isEmpty {
            var p = JSONWriter()
            p.beginObject()
            SecurityJSON.privacy(f.addressRotation, to: &p)
            p.endObject()
            out += "," + String(p.string.dropFirst().dropLast())
        }
        out += "," + keyEventsAndFindings(f)
        return out
    }

    /// `"counters":{…},"acl_buffers":…,"connections":[…]` (no braces: spliced into the file's object).
    static func countersAndConnections(_ f: FileAnalysis) -> String {
        var w = JSONWriter(capacity: 4096)
        w.beginObject()
        let c = f.counters
        w.beginObject("counters")
        w.field("records", c.records)
        w.field("commands", c.commands)
        w.field("events", c.events)
        w.field("acl_fragments", c.aclFragments)
        w.field("l2cap_pdus", c.l2capPDUs)
        w.field("att_pdus", c.attPDUs)
        w.field("smp_pdus", c.smpPDUs)
        w.field("signalling_pdus", c.signallingPDUs)
        w.field("link_layer_records", c.linkLayerRecords)
        w.endObject()
        if let b = f.aclBuffers {
            w.beginObject("acl_buffers")
            w.field("length", b.length)
            w.field("packets", b.packets)
            w.endObject()
        } else {
            w.fieldNull("acl_buffers")
        }
        w.beginArray("connections")
        for c in f.connections { connection(c, to: &w) }
        w.endArray()
        w.endObject()
        // Splice: drop the writer's braces and continue the open object.
        return String(w.string.dropFirst().dropLast())
    }

    /// `"key_events":{…},"findings":{…}}`: the last members and the brace that closes the file's object.
    static func keyEventsAndFindings(_ f: FileAnalysis) -> String {
        var t = JSONWriter(capacity: 4096)
        t.beginObject()
        t.beginObject("key_events")
        t.beginArray("events")
        for e in f.keyEvents {
            t.beginObject()
            t.field("frame", e.frame)
            t.field("time", e.timestamp)
            t.field("conn_number", e.connectionNumber)
            t.field("kind", e.kind)
            t.field("text", e.text)
            t.endObject()
        }
        t.endArray()
        t.field("omitted", f.keyEventsOmitted)
        t.endObject()
        t.beginObject("findings")
        t.field("count", f.findingCount)
        t.beginArray("groups")
        for g in f.findingGroups {
            t.beginObject()
            t.field("severity", g.severity.rawValue)
            t.field("code", g.code)
            t.field("count", g.count)
            t.beginArray("first_frames")
            for fr in g.firstFrames { t.value(fr) }
            t.endArray()
            t.field("message", g.message)
            t.endObject()
        }
        t.endArray()
        t.endObject()
        t.endObject()
        return String(t.string.dropFirst())
    }

    /// `"summary": {"items": [{"topic", "status", "text", "section", "frame"}]}`, the verdicts in report order.
    public static func writeSummary(_ items: [VerdictItem], into w: inout JSONWriter) {
        w.beginObject("summary")
        w.beginArray("items")
        for i in items {
            w.beginObject()
            w.field("topic", i.topic)
            w.field("status", i.status.rawValue)
            w.field("text", i.text)
            w.field("section", i.section)
            w.field("frame", i.frame)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    static func connection(_ c: Connection, to w: inout JSONWriter) {
        w.beginObject()
        w.field("number", c.number)
        w.field("handle", c.handle)
        w.field("controller", c.controller)
        for column in [ConnectionColumns.peer, ConnectionColumns.peerType, ConnectionColumns.role] {
            column.cell(c).write(column.key!, to: &w)
        }
        w.field("inferred", c.inferred)
        w.field("start_frame", c.startFrame)
        w.field("start_time", c.startTime)
        w.field("end_frame", c.endFrame)
        w.field("end_time", c.endTime)
        w.field("disconnect_reason", c.disconnectReason)
        w.field("ended_by", c.lifecycle.ending?.endedBy.rawValue)
        if c.isBREDR {
            // No LE field on a BR/EDR link: its own facts instead (``ClassicLinkColumns``).
            w.field("transport", "bredr")
            ConnectionColumns.linkObject.cell(c).write("link", to: &w)
            w.beginObject("link_facts")
            ClassicLinkColumns.writeFacts(c, fact: writeFact, to: &w)
            w.endObject()
            writeEncryptionHistory(c.link, to: &w)
            ClassicLinkColumns.write(c, to: &w)
        } else {
            ConnectionColumns.linkObject.cell(c).write("link", to: &w)
            writeLinkHistory(c.link, to: &w)
            writeLinkFacts(c.link, to: &w)
            writeEncryptionHistory(c.link, to: &w)
        }
        writeTraffic(c, to: &w)
        if let ll = c.linkLayer { ThroughputReport.writeLinkLayer(ll, to: &w) } else { w.fieldNull("link_layer") }
        if let q = LinkQualitySummary(c.linkQuality) { writeLinkQuality(q, into: &w) } else { w.fieldNull("link_quality") }
        writeQualityReports(c.linkQuality, to: &w)
        SecurityJSON.write(c, to: &w)
        w.endObject()
    }

    /// A parameters change's fields: the link's (``LinkColumns``).
    static let parameterFields = ColumnTable<ConnectionParameters>(
        [LinkColumns.interval, LinkColumns.latency, LinkColumns.timeout].lifted { Optional($0) })
    /// A PHY change's fields: the link's `phy_tx` and `phy_rx`, named `tx` and `rx` within the change.
    static let phyFields = ColumnTable<PHYPair>([LinkColumns.phyTx.renamed("tx"), LinkColumns.phyRx.renamed("rx")])
    /// A data length change's fields: the link's octets, with the times the change also gives.
    static let dataLengthFields = ColumnTable<DataLength>([
        LinkColumns.maxTxOctets, Column("max_tx_time") { .int(Int($0.maxTxTime)) }, LinkColumns.maxRxOctets,
        Column("max_rx_time") { .int(Int($0.maxRxTime)) },
    ])

    /// `"parameters"`, `"phy"`, `"data_length"` and `"mtu"`: each link value's changes, oldest first.
    static func writeLinkHistory(_ link: LinkState, to w: inout JSONWriter) {
        w.beginArray("parameters")
        for p in link.parameters.changes {
            w.beginObject()
            w.field("frame", p.frame)
            w.field("time", p.timestamp)
            Self.parameterFields.writeFields(p.value, to: &w)
            w.endObject()
        }
        w.endArray()
        w.beginArray("phy")
        for p in link.phy.changes {
            w.beginObject()
            w.field("frame", p.frame)
            w.field("time", p.timestamp)
            Self.phyFields.writeFields(p.value, to: &w)
            w.endObject()
        }
        w.endArray()
        w.beginArray("data_length")
        for d in link.dataLength.changes {
            w.beginObject()
            w.field("frame", d.frame)
            w.field("time", d.timestamp)
            Self.dataLengthFields.writeFields(d.value, to: &w)
            w.endObject()
        }
        w.endArray()
        w.beginArray("mtu")
        for m in link.mtu.changes {
            w.beginObject()
            w.field("frame", m.frame)
            w.field("time", m.timestamp)
            w.field("mtu", m.value)
            w.field("source", m.source.kind)
            w.endObject()
        }
        w.endArray()
    }

    /// `"encryption": [{"frame", "time", "encrypted"}]`.
    static func writeEncryptionHistory(_ link: LinkState, to w: inout JSONWriter) {
        w.beginArray("encryption")
        for e in link.encryption.changes {
            w.beginObject()
            w.field("frame", e.frame)
            w.field("time", e.timestamp)
            w.field("encrypted", e.value)
            w.endObject()
        }
        w.endArray()
    }

    /// `"acl_packets"`, `"acl_bytes"`, `"att_pdus"`, `"max_in_flight"`, `"completed_packets"`.
    static func writeTraffic(_ c: Connection, to w: inout JSONWriter) {
        w.beginObject("acl_packets")
        w.field("tx", c.aclPackets[.tx])
        w.field("rx", c.aclPackets[.rx])
        w.endObject()
        w.beginObject("acl_bytes")
        w.field("tx", c.aclBytes[.tx])
        w.field("rx", c.aclBytes[.rx])
        w.endObject()
        w.field("att_pdus", c.attPDUs)
        w.field("max_in_flight", c.maxInFlight)
        w.field("completed_packets", c.completedPackets)
    }

    /// `"quality_reports"`: every Bluetooth Quality Report of the connection.
    static func writeQualityReports(_ reports: [LinkQualitySample], to w: inout JSONWriter) {
        w.beginArray("quality_reports")
        for s in reports {
            w.beginObject()
            w.field("frame", s.frame)
            w.field("time", s.timestamp)
            w.field("report", s.reportID.description)
            w.field("rssi", Int(s.quality.rssi))
            w.field("snr", Int(s.quality.snr))
            w.field("tx_power", Int(s.quality.txPowerLevel))
            w.field("retransmissions", Int(s.quality.retransmissionCount))
            w.field("nak", Int(s.quality.nakCount))
            w.field("no_rx", Int(s.quality.noRxCount))
            w.field("flow_off", Int(s.quality.flowOffCount))
            w.endObject()
        }
        w.endArray()
    }
}

extension JSONReport {
    /// `{"rules", "summary": {severity: count}, "story": [...], "findings": [...]}`: each finding as `diagnose --json` writes it, plus
    /// `exchanges`, the timeline rows around its deciding frame.
    static func diagnosisJSON(_ f: FileAnalysis) -> String {
        var w = JSONWriter(capacity: 2048)
        w.beginObject()
        DiagnosisReport.writeTally(f.diagnosis, to: &w)
        DiagnosisReport.writeStory(f.diagnosis.story, to: &w)
        w.beginArray("findings")
        for d in f.diagnosis.findings {
            var one = JSONWriter(capacity: 1024)
            DiagnosisReport.write(d, names: f.diagnosis.names, to: &one)
            var text = one.string
            if let rows = f.exchanges[d.frame] {
                var x = JSONWriter(capacity: 1024)
                x.beginObject()
                x.beginArray("exchanges")
                for r in rows {
                    x.beginObject()
                    x.field("frame", r.frame)
                    x.field("timestamp", r.timestamp)
                    x.field("direction", r.direction.description)
                    x.field("layer", r.layer)
                    x.field("name", r.name)
                    x.field("summary", r.summary)
                    x.field("pairedFrame", r.pairedFrame)
                    x.endObject()
                }
                x.endArray()
                x.endObject()
                text = String(text.dropLast()) + "," + String(x.string.dropFirst())
            }
            w.value(raw: text)
        }
        w.endArray()
        w.endObject()
        return w.string
    }
}

extension JSONReport {
    /// `"link_facts": {"mtu": {"value", "source", "basis"}, ...}`: the value in force at the end of each link fact and
    /// where it came from (observed at a frame, inferred from what, assumed).
    static func writeLinkFacts(_ link: LinkState, to w: inout JSONWriter) {
        func fact(_ key: String, _ value: String?, _ source: FactSource) { writeFact(key, value, source, &w) }
        w.beginObject("link_facts")
        fact("mtu", link.mtu.value.map(String.init), link.mtu.source)
        fact("phy", link.phy.value.flatMap { LinkColumns.phy.textCell($0) }, link.phy.source)
        fact("data_length", link.dataLength.value.flatMap { LinkColumns.dataLength.textCell($0) }, link.dataLength.source)
        fact("parameters", link.parameters.value.map(LinkColumns.parametersPhrase), link.parameters.source)
        fact("encryption", link.encryption.value.map { $0 ? "on" : "off" }, link.encryption.source)
        w.endObject()
    }

    /// One link fact: `{"value", "source", "frame", "basis"}` under `key`.
    static func writeFact(_ key: String, _ value: String?, _ source: FactSource, _ w: inout JSONWriter) {
        w.beginObject(key)
        w.field("value", value)
        w.field("source", source.kind)
        w.field("frame", source.frame)
        w.field("basis", source.description)
        w.endObject()
    }
}
