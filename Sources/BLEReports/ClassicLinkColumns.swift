import BLEAnalysis
import BLECore
import BLEProtocols

/// A BR/EDR connection's own facts as every output writes them (``ClassicLinkFacts``): role switches, mode and sniff
/// intervals, subrating, supervision timeout, packet types and slots, the remote's version, features and name. The LE
/// link fields (interval, PHY, data length, ATT_MTU, ceiling) are never written for such a link (``LinkColumns``).
///
/// JSON, the connection's `"bredr"` object: `{"mode", "sniff_interval_ms", "modes": [{"frame", "time", "mode",
/// "interval_ms"}], "role_switches": [frame], "subrating": {…}|null, "supervision_timeout_ms", "packet_types", "edr",
/// "max_slots", "remote_version", "remote_company", "remote_subversion", "remote_features": [name], "remote_name", "class_of_device"}`
/// (`schemas/report.schema.json#/$defs/bredr`).
public enum ClassicLinkColumns {
    /// `"bredr": {…}` for a BR/EDR connection.
    public static func write(_ c: Connection, to w: inout JSONWriter) {
        guard let f = c.link.classic else { return }
        w.beginObject("bredr")
        let mode = f.mode.value ?? .active
        w.field("mode", mode.name)
        w.field("sniff_interval_ms", mode.isSniff ? mode.intervalMilliseconds : nil, decimals: 3)
        w.beginArray("modes")
        for m in f.mode.changes {
            w.beginObject()
            w.field("frame", m.frame)
            w.field("time", m.timestamp)
            w.field("mode", m.value.name)
            w.field("interval_ms", m.value.mode == 0 ? nil : m.value.intervalMilliseconds, decimals: 3)
            w.endObject()
        }
        w.endArray()
        w.beginArray("role_switches")
        for frame in f.roleSwitchFrames { w.value(frame) }
        w.endArray()
        if let s = f.subrating.value {
            w.beginObject("subrating")
            w.field("max_tx_latency_ms", slots(s.maxTxLatency), decimals: 3)
            w.field("max_rx_latency_ms", slots(s.maxRxLatency), decimals: 3)
            w.field("min_remote_timeout_ms", slots(s.minRemoteTimeout), decimals: 3)
            w.field("min_local_timeout_ms", slots(s.minLocalTimeout), decimals: 3)
            w.endObject()
        } else {
            w.fieldNull("subrating")
        }
        w.field("supervision_timeout_ms", f.supervisionTimeout.value.map(slots), decimals: 3)
        w.field("packet_types", f.packetTypes.value.map(ACLPacketTypes.names))
        w.field("edr", f.packetTypes.value.map(ACLPacketTypes.allowsEDR))
        w.field("max_slots", f.maxSlots.value.map(Int.init))
        w.field("remote_version", f.remoteVersion.value?.versionName)
        w.field("remote_company", f.remoteVersion.value.map { Int($0.company) })
        w.field("remote_subversion", f.remoteVersion.value.map { Int($0.subversion) })
        if let features = f.remoteFeatures.value {
            w.beginArray("remote_features")
            for name in LMPFeatures(features).names { w.value(name) }
            w.endArray()
        } else {
            w.fieldNull("remote_features")
        }
        w.field("remote_name", f.remoteName.value)
        w.field("class_of_device", f.classOfDevice.value.map { ClassOfDevice.name($0) ?? hex($0, width: 6) })
        w.endObject()
    }

    /// The BR/EDR connection's `link_facts`: each fact's value at the end and where it came from.
    public static func writeFacts(_ c: Connection, fact: (String, String?, FactSource, inout JSONWriter) -> Void, to w: inout JSONWriter) {
        let link = c.link
        fact("transport", link.transport.value?.rawValue, link.transport.source, &w)
        fact("role", link.role.value?.rawValue, link.role.source, &w)
        fact("encryption", link.encryption.value.map { $0 ? "on" : "off" }, link.encryption.source, &w)
        guard let f = link.classic else { return }
        fact("mode", f.mode.value?.description, f.mode.source, &w)
        fact("supervision_timeout", f.supervisionTimeout.value.map { timeoutText($0) }, f.supervisionTimeout.source, &w)
        fact("remote_name", f.remoteName.value, f.remoteName.source, &w)
        fact("class_of_device", f.classOfDevice.value.map { ClassOfDevice.name($0) ?? hex($0, width: 6) }, f.classOfDevice.source, &w)
    }

    /// Every change of a BR/EDR link's own facts in words (the report's change history and the links chart's ticks).
    public static func changes(of link: LinkState) -> [LinkChange] {
        guard let f = link.classic else { return [] }
        var out: [LinkChange] = []
        for m in f.mode.changes {
            out.append(LinkChange(frame: m.frame, time: m.timestamp, kind: "mode", text: m.value.description))
        }
        for r in link.role.changes where f.roleSwitchFrames.contains(r.frame) {
            out.append(LinkChange(frame: r.frame, time: r.timestamp, kind: "role", text: "role switch: now \(r.value.rawValue)"))
        }
        for t in f.supervisionTimeout.changes {
            out.append(
                LinkChange(
                    frame: t.frame, time: t.timestamp, kind: "supervision-timeout", text: "supervision timeout \(timeoutText(t.value))"))
        }
        return out
    }

    /// A BR/EDR connection's stretches for the links chart: sniff periods (`sniff`), A2DP media from its first packet to
    /// its last (`a2dp`), its SCO/eSCO links from setup to removal (`sco`).
    public static func spans(_ c: Connection, synchronous: [SynchronousLink], until open: Timestamp) -> [LinksChart.Span] {
        var out: [LinksChart.Span] = []
        if let modes = c.link.classic?.mode.changes {
            for (i, m) in modes.enumerated() where m.value.isSniff {
                let end = i + 1 < modes.count ? modes[i + 1].timestamp : open
                out.append(
                    LinksChart.Span(
                        kind: "sniff", startFrame: m.frame, start: m.timestamp, end: end, text: "\(m.value) from frame \(m.frame)"))
            }
        }
        for s in c.profiles?.a2dp.streams ?? [] {
            guard let first = s.media.firstTime, let last = s.media.lastTime, let frame = s.media.firstFrame else { continue }
            let text = "A2DP \(s.codec?.name ?? "stream") SEID \(s.acpSEID): \(s.media.packets) media packets from frame \(frame)"
            out.append(LinksChart.Span(kind: "a2dp", startFrame: frame, start: first, end: last, text: text))
        }
        for l in synchronous where l.aclConnection == c.number && l.established {
            guard let start = l.startTime, let frame = l.startFrame else { continue }
            let text =
                "\(l.isESCO ? "eSCO" : "SCO") \(l.airMode?.description ?? "") from frame \(frame)" + (l.endFrame.map { " to \($0)" } ?? "")
            out.append(LinksChart.Span(kind: "sco", startFrame: frame, start: start, end: l.endTime ?? open, text: text))
        }
        return out
    }

    /// `5000 ms`: a timeout in slots of 0.625 ms.
    public static func timeoutText(_ slots: UInt16) -> String { String(fractionDigits: 0, Self.slots(slots)) + " ms" }
    static func slots(_ v: UInt16) -> Double { Double(v) * 0.625 }
}
