import BLEAnalysis
import BLECore
import BLEProtocols

/// The fleet tables' BR/EDR audio rows: one per A2DP stream (`audio_streams`) and one per SCO/eSCO link or failed setup
/// (`sco_links`), joined to their connection by `conn_number`.
struct AudioStreamRow {
    var id: String
    var connection: Int
    var stream: A2DPStream
}

struct SCORow {
    var id: String
    var link: SynchronousLink
}

extension FleetColumns {
    static let audioStreams = ColumnTable<AudioStreamRow>([
        Column("capture_id") { .text($0.id) },
        Column("conn_number") { .int($0.connection) },
        Column("acp_seid") { .int(Int($0.stream.acpSEID)) },
        Column("codec") { .text($0.stream.codec?.name) },
        Column("codec_text") { .text($0.stream.codec?.description) },
        Column("sampling_hz") { .int($0.stream.codec?.frequencies.first) },
        Column("configuration_frame") { .int($0.stream.configurationFrame) },
        Column("starts") { .int($0.stream.starts.count) },
        Column("suspends") { .int($0.stream.suspends.count) },
        Column("packets") { .int($0.stream.media.packets) },
        Column("bytes") { .int($0.stream.media.bytes) },
        Column("first_frame") { .int($0.stream.media.firstFrame) },
        Column("duration_s") { .double(Double($0.stream.media.durationMicroseconds) / 1e6, decimals: 6) },
        Column("streaming_s") { .double(Double($0.stream.media.streamingMicroseconds) / 1e6, decimals: 6) },
        Column("rate_bps") { .double($0.stream.media.bitsPerSecond, decimals: 0) },
        Column("sequence_gaps") { .int($0.stream.media.sequenceGaps) },
        Column("packets_missing") { .int($0.stream.media.packetsMissing) },
        Column("stalls") { .int($0.stream.media.stalls.count) },
        Column("jitter_ms") { .double($0.stream.media.jitterMilliseconds, decimals: 3) },
    ])

    static let scoLinks = ColumnTable<SCORow>([
        Column("capture_id") { .text($0.id) },
        Column("number") { .int($0.link.number) },
        Column("conn_number") { .int($0.link.aclConnection) },
        Column("type") { .text($0.link.isESCO ? "esco" : "sco") },
        Column("handle") { .int($0.link.handle.map(Int.init)) },
        Column("established") { .bool($0.link.established) },
        Column("status") { .int(Int($0.link.status.rawValue)) },
        Column("request") { .text($0.link.request) },
        Column("requested_coding") { .text($0.link.requestedCoding) },
        Column("air_mode") { .text($0.link.airMode?.description) },
        Column("interval_ms") { .double($0.link.transmissionInterval > 0 ? $0.link.intervalMilliseconds : nil, decimals: 3) },
        Column("start_frame") { .int($0.link.startFrame ?? $0.link.resultFrame) },
        Column("end_frame") { .int($0.link.endFrame) },
        Column("packets_tx") { .int($0.link.packets.tx) },
        Column("packets_rx") { .int($0.link.packets.rx) },
    ])
}
