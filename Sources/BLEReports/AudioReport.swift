import BLEAnalysis
import BLECore
import BLEProtocols

/// BR/EDR audio as programs read it: the SCO/eSCO links and, per BR/EDR connection, SDP, RFCOMM, A2DP, HFP and AVRCP
/// (``ClassicProfilesResult``). The report's `"audio"` object (only for a capture that has any, so that other captures'
/// JSON stays as it was; `schemas/report.schema.json#/$defs/audio`).
///
/// `{"synchronous_links": [{"number", "type", "handle", "conn_number", "peer", "request", "request_frame",
/// "requested_coding", "status", "result_frame", "established", "air_mode", "interval_ms", "start_frame", "end_frame",
/// "end_reason", "packets_tx", "packets_rx"}], "connections": [{"conn_number", "sdp", "rfcomm", "a2dp", "hfp", "avrcp", "obex"}]}`
public enum AudioReport {
    public static func isEmpty(_ connections: [Connection], _ classic: ClassicAnalysis) -> Bool {
        classic.isEmpty && !connections.contains { $0.profiles != nil }
    }

    public static func write(_ connections: [Connection], _ classic: ClassicAnalysis, to w: inout JSONWriter) {
        w.beginObject("audio")
        w.beginArray("synchronous_links")
        for l in classic.synchronousLinks { synchronous(l, &w) }
        w.endArray()
        w.beginArray("connections")
        for c in connections { if let p = c.profiles { profiles(p, &w) } }
        w.endArray()
        w.endObject()
    }

    static func synchronous(_ l: SynchronousLink, _ w: inout JSONWriter) {
        w.beginObject()
        w.field("number", l.number)
        w.field("type", l.isESCO ? "esco" : "sco")
        w.field("handle", l.handle.map(Int.init))
        w.field("conn_number", l.aclConnection)
        w.field("peer", l.peerAddress)
        w.field("request", l.request)
        w.field("request_frame", l.requestFrame)
        w.field("requested_coding", l.requestedCoding)
        w.field("status", l.status.description)
        w.field("result_frame", l.resultFrame)
        w.field("established", l.established)
        w.field("air_mode", l.airMode?.description)
        w.field("interval_ms", l.transmissionInterval > 0 ? l.intervalMilliseconds : nil, decimals: 3)
        w.field("start_frame", l.startFrame)
        w.field("end_frame", l.endFrame)
        w.field("end_reason", l.endReason?.description)
        w.field("packets_tx", l.packets.tx)
        w.field("packets_rx", l.packets.rx)
        w.endObject()
    }

    static func profiles(_ p: ClassicProfilesResult, _ w: inout JSONWriter) {
        w.beginObject()
        w.field("conn_number", p.connection)
        sdp(p.sdp, &w)
        w.beginArray("rfcomm")
        for c in p.rfcomm where c.dlci != 0 { rfcomm(c, &w) }
        w.endArray()
        a2dp(p.a2dp, &w)
        if let h = p.hfp { hfp(h, &w) } else { w.fieldNull("hfp") }
        avrcp(p.avrcp, &w)
        obex(p.obex, &w)
        w.endObject()
    }

    static func sdp(_ s: SDPSummary, _ w: inout JSONWriter) {
        w.beginObject("sdp")
        w.field("requests", s.requests)
        w.field("responses", s.responses)
        w.beginArray("services")
        for r in s.services {
            w.beginObject()
            w.field("frame", r.frame)
            w.field("from_peer", r.fromPeer)
            w.beginArray("classes")
            for c in r.classes { w.value(SDPServiceClass.name(c) ?? c.description) }
            w.endArray()
            w.beginArray("profiles")
            for v in r.profiles { w.value(v.text) }
            w.endArray()
            w.field("psm", r.psm.map(Int.init))
            w.field("rfcomm_channel", r.rfcommChannel.map(Int.init))
            w.field("name", r.name)
            w.endObject()
        }
        w.endArray()
        w.beginArray("errors")
        for e in s.errors {
            w.beginObject()
            w.field("frame", e.frame)
            w.field("from_peer", e.fromPeer)
            w.field("code", Int(e.code.rawValue))
            w.field("text", e.code.description)
            w.field("request_frame", e.requestFrame)
            w.endObject()
        }
        w.endArray()
        frames("unanswered", s.unanswered, &w)
        w.endObject()
    }

    static func rfcomm(_ c: RFCOMMChannel, _ w: inout JSONWriter) {
        w.beginObject()
        w.field("dlci", Int(c.dlci))
        w.field("server_channel", Int(c.serverChannel))
        w.field("service", c.service)
        w.field("open_frame", c.openFrame)
        w.field("refused_frame", c.refusedFrame)
        w.field("close_frame", c.closeFrame)
        w.field("closed_by_peer", c.closedByPeer)
        w.field("max_frame_size", c.maxFrameSize.map(Int.init))
        w.field("credit_flow", c.creditFlow)
        w.field("frames_tx", c.frames.tx)
        w.field("frames_rx", c.frames.rx)
        w.field("bytes_tx", c.bytes.tx)
        w.field("bytes_rx", c.bytes.rx)
        w.field("credits_given_tx", c.creditsGiven.tx)
        w.field("credits_given_rx", c.creditsGiven.rx)
        frames("flow_stops", c.flowStops, &w)
        frames("without_credit", c.withoutCredit, &w)
        frames("bad_fcs", c.badFCS, &w)
        w.endObject()
    }

    static func a2dp(_ a: A2DPSummary, _ w: inout JSONWriter) {
        w.beginObject("a2dp")
        w.field("signals", a.signals)
        w.beginArray("streams")
        for s in a.streams {
            let m = s.media
            w.beginObject()
            w.field("acp_seid", Int(s.acpSEID))
            w.field("int_seid", s.intSEID.map(Int.init))
            w.field("configured_by", s.configuredByThisSide ? "this side" : "peer")
            w.field("this_side", s.thisSideIsSink.map { $0 ? "sink" : "source" })
            w.field("role_frame", s.roleFrame)
            w.field("configuration_frame", s.configurationFrame)
            w.field("codec", s.codec?.name)
            w.field("codec_text", s.codec?.description)
            w.field("sampling_hz", s.codec?.frequencies.first)
            w.field("bitpool_max", s.codec?.sbcBitpool?.upperBound)
            w.field("open_frame", s.openFrame)
            frames("starts", s.starts, &w)
            frames("suspends", s.suspends, &w)
            w.field("close_frame", s.closeFrame)
            w.field("abort_frame", s.abortFrame)
            w.field("reconfigurations", s.reconfigurations.count)
            w.field("packets", m.packets)
            w.field("packets_tx", m.packetsSent)
            w.field("bytes", m.bytes)
            w.field("first_frame", m.firstFrame)
            w.field("last_frame", m.lastFrame)
            w.field("duration_s", Double(m.durationMicroseconds) / 1e6, decimals: 3)
            w.field("streaming_s", Double(m.streamingMicroseconds) / 1e6, decimals: 3)
            w.field("rate_bps", m.bitsPerSecond, decimals: 0)
            w.field("sequence_gaps", m.sequenceGaps)
            w.field("packets_missing", m.packetsMissing)
            w.field("jitter_ms", m.jitterMilliseconds, decimals: 3)
            w.beginArray("stalls")
            for st in m.stalls {
                w.beginObject()
                w.field("from_frame", st.fromFrame)
                w.field("to_frame", st.toFrame)
                w.field("ms", Double(st.microseconds) / 1000, decimals: 1)
                w.endObject()
            }
            w.endArray()
            w.field("delay_report_ms", s.delayReportMilliseconds, decimals: 1)
            w.endObject()
        }
        w.endArray()
        w.beginArray("rejections")
        for r in a.rejections {
            w.beginObject()
            w.field("frame", r.frame)
            w.field("signal", r.signal.description)
            w.field("error", r.error?.description)
            w.field("command_frame", r.commandFrame)
            w.field("by_peer", r.byPeer)
            w.endObject()
        }
        w.endArray()
        frames("unanswered", a.unanswered, &w)
        w.endObject()
    }

    static func hfp(_ h: HFPSession, _ w: inout JSONWriter) {
        w.beginObject("hfp")
        w.field("dlci", Int(h.dlci))
        w.field("this_side", h.thisSideIsGateway ? "audio gateway" : "hands-free")
        w.field("hf_features", h.handsFreeFeatures)
        w.field("ag_features", h.gatewayFeatures)
        w.beginArray("available_codecs")
        for c in h.availableCodecs { w.value(HFPCodec.name(c)) }
        w.endArray()
        w.beginArray("codec_selections")
        for s in h.codecSelections {
            w.beginObject()
            w.field("frame", s.frame)
            w.field("codec", HFPCodec.name(s.codec))
            w.field("confirmed_frame", s.confirmedFrame)
            w.endObject()
        }
        w.endArray()
        w.field("slc_frame", h.slcFrame)
        if let f = h.slcFailure {
            w.beginObject("slc_failure")
            w.field("frame", f.frame)
            w.field("command", f.command)
            w.field("why", f.why)
            w.endObject()
        } else {
            w.fieldNull("slc_failure")
        }
        w.field("errors", h.errors.count)
        w.field("indicator_changes", h.indicatorChanges.count)
        w.field("call_events", h.callEvents.count)
        w.field("speaker_gain", h.speakerGain)
        w.field("lines", h.lines)
        w.endObject()
    }

    static func avrcp(_ a: AVRCPSummary, _ w: inout JSONWriter) {
        w.beginObject("avrcp")
        w.field("commands", a.commands)
        w.field("responses", a.responses)
        w.field("operations", a.operations.count)
        w.beginArray("registered")
        for e in a.registered { w.value(e) }
        w.endArray()
        w.field("changed", a.changed.count)
        w.beginArray("rejections")
        for r in a.rejections {
            w.beginObject()
            w.field("frame", r.frame)
            w.field("what", r.what)
            w.endObject()
        }
        w.endArray()
        w.field("volume", a.volume)
        w.endObject()
    }

    static func frames(_ key: String, _ list: [Int], _ w: inout JSONWriter) {
        w.beginArray(key)
        for f in list { w.value(f) }
        w.endArray()
    }
}
