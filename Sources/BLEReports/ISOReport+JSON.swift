import BLEAnalysis
import BLECore
import BLEProtocols

/// The JSON form (`schemas/iso.schema.json`): `{"streams", "health", "events", "ase_states", "ase_operations", "bass",
/// "completeness"?}`.
extension ISOReport {
    /// `log` when the command read the capture itself (what the log cannot show, as `completeness`).
    public func json(log: LogScope? = nil) -> String {
        var w = JSONWriter(capacity: 8192)
        w.beginObject()
        write(into: &w)
        if let log { writeCompleteness(log.completeness, into: &w) }
        w.endObject()
        return w.string
    }

    /// The report's keys into an object already open (`report --format json` nests them under `iso`).
    public func write(into w: inout JSONWriter) {
        w.beginArray("streams")
        for s in iso.streams { Self.write(s, into: &w) }
        w.endArray()
        w.beginArray("health")
        for h in iso.health { Self.write(h, label: iso.label(of: h), into: &w) }
        w.endArray()
        w.beginArray("events")
        for e in iso.events { Self.write(e, into: &w) }
        w.endArray()
        guard let profiles else { return }
        w.beginArray("ase_states")
        for a in profiles.aseStates { Self.write(a, into: &w) }
        w.endArray()
        w.beginArray("ase_operations")
        for op in profiles.operations { Self.write(op, into: &w) }
        w.endArray()
        w.beginArray("bass")
        for b in profiles.bass { Self.write(b, into: &w) }
        w.endArray()
    }

    static func write(_ s: ISOStream, into w: inout JSONWriter) {
        w.beginObject()
        w.field("number", s.number)
        w.field("kind", s.kind.rawValue)
        w.field("controller", s.controller)
        w.field("handle", s.handle)
        w.field("role", s.role)
        w.field("cig_id", s.cigID)
        w.field("cis_id", s.cisID)
        w.field("acl_handle", s.aclHandle)
        w.field("conn_number", s.connectionNumber)
        w.field("big_handle", s.bigHandle)
        w.field("bis_index", s.bisIndex)
        w.field("established_frame", s.establishedFrame)
        w.field("established_time", s.establishedTime)
        w.field("end_frame", s.endFrame)
        w.field("end_time", s.endTime)
        w.field("end_reason", s.endedByReset ? ISOStream.endedByResetText : s.endReason?.description)
        w.field("end_reason_code", s.endReason?.rawValue)
        w.field("iso_interval_us", Int(s.isoInterval) * 1250)
        w.field("nse", s.nse)
        w.field("framing", s.framing)
        for (name, dir) in [("tx", Direction.tx), ("rx", Direction.rx)] {
            let t = dir == .tx
            w.beginObject(name)
            w.field("sdu_interval_us", t ? s.sduIntervalTx : s.sduIntervalRx)
            w.field("max_sdu", t ? s.maxSDUTx : s.maxSDURx)
            w.field("max_pdu", t ? s.maxPDUTx : s.maxPDURx)
            w.field("phy", (t ? s.phyTx : s.phyRx)?.description)
            w.field("burst_number", t ? s.burstNumberTx : s.burstNumberRx)
            w.field("flush_timeout", t ? s.flushTimeoutTx : s.flushTimeoutRx)
            w.field("transport_latency_us", t ? s.transportLatencyTx : s.transportLatencyRx)
            w.endObject()
        }
        w.beginArray("data_paths")
        for p in s.dataPaths {
            w.beginObject()
            w.field("dir", p.direction == .tx ? "tx" : "rx")
            w.field("data_path_id", p.dataPathID)
            w.field("coding_format", p.codec.codingFormat)
            w.field("codec", p.codec.description)
            w.field("controller_delay_us", p.controllerDelayMicroseconds)
            w.fieldHex("codec_configuration", p.codecConfiguration)
            w.field("frame", p.frame)
            w.field("removed_frame", p.removedFrame)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    static func write(_ h: ISOStreamHealth, label: String, into w: inout JSONWriter) {
        w.beginObject()
        w.field("stream", h.streamNumber)
        w.field("label", label)
        w.field("controller", h.controller)
        w.field("handle", h.handle)
        w.field("dir", h.direction == .tx ? "tx" : "rx")
        w.field("first_frame", h.firstFrame)
        w.field("last_frame", h.lastFrame)
        w.field("first_time", h.firstTime)
        w.field("last_time", h.lastTime)
        w.field("sdu_interval_us", h.sduIntervalMicroseconds)
        w.field("interval_source", h.intervalSource)
        w.field("packets", h.packets)
        w.field("sdus", h.sdus)
        w.field("fragmented_sdus", h.fragmentedSDUs)
        w.field("sdu_bytes", h.sduBytes)
        w.field("first_sequence", h.firstSequence)
        w.field("last_sequence", h.lastSequence)
        w.field("expected_sdus", h.expectedSDUs)
        w.field("expected_sdus_by_time", h.expectedSDUsByTime)
        w.field("missing_sdus", h.missingSDUs)
        w.field("sequence_gaps", h.sequenceGaps)
        w.field("out_of_order", h.outOfOrder)
        w.field("valid", h.valid)
        w.field("possibly_invalid", h.possiblyInvalid)
        w.field("flagged_lost", h.flaggedLost)
        w.field("lost_sdus", h.lostSDUs)
        w.field("loss_ratio", h.lossRatio, decimals: 6)
        w.field("loss_bursts", h.lossBursts)
        w.beginArray("bursts")
        for b in h.bursts {
            w.beginObject()
            w.field("frame", b.frame)
            w.field("time", b.timestamp)
            w.field("first_sequence", b.firstSequence)
            w.field("sdus", b.sdus)
            w.field("duration_us", b.durationMicroseconds)
            w.endObject()
        }
        w.endArray()
        writeInts("possibly_invalid_frames", h.possiblyInvalidFrames, into: &w)
        writeInts("lost_frames", h.lostFrames, into: &w)
        w.field("time_stamp_jitter_max_us", h.timestampJitterMaxMicroseconds)
        w.field("time_stamp_jitter_mean_us", h.timestampJitterMeanMicroseconds, decimals: 1)
        w.field("arrival_jitter_max_us", h.arrivalJitterMaxMicroseconds)
        w.field("bitrate_bps", h.bitrate, decimals: 1)
        w.field("configured_bitrate_bps", h.configuredBitrate, decimals: 1)
        w.field("bucket_us", h.timeBucketMicroseconds)
        writeInts("received_per_bucket", h.receivedPerBucket, into: &w)
        writeInts("lost_per_bucket", h.lostPerBucket, into: &w)
        w.field("reassembly_findings", h.reassemblyFindings)
        w.field("silence_before_end_us", h.silenceBeforeEndMicroseconds)
        w.field("silent_sdus", h.silentSDUs)
        w.field("end_frame", h.endFrame)
        w.field("end_reason", h.endReason?.description)
        w.field("verdict", h.verdict(label: label))
        w.endObject()
    }

    static func writeInts(_ key: String, _ values: [Int], into w: inout JSONWriter) {
        w.beginArray(key)
        for v in values { w.value(v) }
        w.endArray()
    }

    static func write(_ e: ISOLifecycleEvent, into w: inout JSONWriter) {
        w.beginObject()
        w.field("frame", e.frame)
        w.field("time", e.timestamp)
        w.field("kind", e.kind.rawValue)
        w.field("controller", e.controller)
        w.field("handle", e.handle)
        w.field("cig_id", e.cigID)
        w.field("big_handle", e.bigHandle)
        w.field("status", e.status.description)
        w.field("status_code", e.status.rawValue)
        w.endObject()
    }

    static func write(_ a: ASEStateReport, into w: inout JSONWriter) {
        w.beginObject()
        w.field("frame", a.frame)
        w.field("time", a.timestamp)
        w.field("conn_number", a.connectionNumber)
        w.field("role", a.role)
        w.field("ase_id", a.aseID)
        w.field("state", a.state)
        w.field("state_name", a.stateName)
        w.field("via_read", a.viaRead)
        w.field("previous", a.previous)
        w.field("allowed", a.allowed)
        w.field("cig_id", a.cigID)
        w.field("cis_id", a.cisID)
        w.endObject()
    }

    static func write(_ op: ASEOperation, into w: inout JSONWriter) {
        w.beginObject()
        w.field("frame", op.frame)
        w.field("time", op.timestamp)
        w.field("conn_number", op.connectionNumber)
        w.field("opcode", op.opcode)
        w.field("name", op.name)
        w.beginArray("ase_ids")
        for id in op.aseIDs { w.value(id) }
        w.endArray()
        w.field("response_frame", op.responseFrame)
        w.field("refused", op.refused)
        w.beginArray("responses")
        for r in op.responses {
            w.beginObject()
            w.field("ase_id", r.aseID)
            w.field("code", r.code)
            w.field("code_name", r.codeName)
            w.field("reason", r.reason)
            w.field("reason_name", r.reasonName)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    static func write(_ b: BASSEvent, into w: inout JSONWriter) {
        w.beginObject()
        w.field("frame", b.frame)
        w.field("time", b.timestamp)
        w.field("conn_number", b.connectionNumber)
        w.field("kind", b.kind)
        w.field("name", b.name)
        w.field("opcode", b.opcode)
        w.field("source_id", b.sourceID)
        w.field("broadcast_id", b.broadcastID)
        w.field("pa_sync_state", b.paSyncState)
        writeInts("bis_sync", b.bisSync.map(Int.init), into: &w)
        w.endObject()
    }
}
