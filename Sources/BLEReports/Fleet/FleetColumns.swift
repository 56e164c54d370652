import BLEAnalysis
import BLECore

/// The columns of each fleet table (``FleetTable``), declared once: the JSON keys of `export --tables`, held to
/// `schemas/tables/<table>.schema.json`. Every value is a scalar; a capture-level list (completeness items) is
/// flattened to its count and its worst item, which is what a fleet query groups by.
enum FleetColumns {
    static let captures = ColumnTable<CaptureRow>([
        Column("capture_id") { .text($0.id) },
        Column("file") { .text($0.file.path) },
        Column("error") { .text($0.file.error) },
        Column("format") { .text($0.file.info?.format) },
        Column("datalink") { .int($0.file.info.map { Int($0.datalink) }) },
        Column("size_bytes") { .int64($0.file.info?.fileSize) },
        Column("records") { .int($0.file.info?.statistics.records) },
        Column("first_time") { .time($0.file.info?.statistics.minTimestamp) },
        Column("last_time") { .time($0.file.info?.statistics.maxTimestamp) },
        Column("span_s") { row in .double(row.file.info?.span.map { Double($0) / 1e6 }, decimals: 6) },
        Column("controller_manufacturer") { .text(controllerIdentity($0.file)?.manufacturer.description) },
        Column("controller_manufacturer_id") { .int(controllerIdentity($0.file).map { Int($0.manufacturer.rawValue) }) },
        Column("completeness") { .text($0.file.info?.completeness.verdict) },
        Column("completeness_items") { .int($0.file.info?.completeness.items.count) },
        Column("completeness_code") { .text(worstItem($0.file)?.code.id) },
        Column("completeness_reason") { .text(worstItem($0.file)?.message) },
        Column("connections") { .int($0.file.error == nil ? $0.file.connections.count : nil) },
        Column("findings") { .int($0.file.error == nil ? $0.file.diagnosis.findings.count : nil) },
    ])

    /// The controller the log names first (Read Local Version Information, or a monitor's index info).
    static func controllerIdentity(_ f: FileAnalysis) -> ControllerIdentity? {
        f.info?.controllerIdentities.sorted { $0.key < $1.key }.first?.value
    }

    /// The completeness item a person reads first: the worst, the earliest among equals.
    static func worstItem(_ f: FileAnalysis) -> CaptureCompleteness.Item? {
        guard let items = f.info?.completeness.items, !items.isEmpty else { return nil }
        let worst = items.filter { $0.severity >= .warning }
        return (worst.isEmpty ? items : worst).first
    }

    static let connectionIdentity: [Column<ConnectionRow>] = [
        Column("capture_id") { .text($0.id) },
        Column("conn_number") { .int($0.connection.number) },
        Column("handle") { .int(Int($0.connection.handle)) },
        Column("transport") { .text($0.connection.isLE ? "le" : $0.connection.isBREDR ? "br/edr" : nil) },
    ]

    /// Peer and role: the shared connection fields (``ConnectionColumns``).
    static let connectionPeer: [Column<ConnectionRow>] = [ConnectionColumns.peer, ConnectionColumns.peerType, ConnectionColumns.role]
        .map { $0.withText(nil).lifted { (row: ConnectionRow) in row.connection } }

    static let connectionSpan: [Column<ConnectionRow>] = [
        Column("inferred") { .bool($0.connection.inferred) },
        Column("start_frame") { .int($0.connection.startFrame) },
        Column("start_time") { .time($0.connection.startTime) },
        Column("end_frame") { .int($0.connection.endFrame) },
        Column("end_time") { .time($0.connection.endTime) },
        Column("duration_s") { row in
            .double(row.connection.endTime.map { Double($0.microseconds(since: row.connection.startTime)) / 1e6 }, decimals: 6)
        },
        Column("end_reason") { .text($0.connection.lifecycle.ending?.reason) },
        Column("end_reason_code") { .int($0.connection.lifecycle.ending?.code.map { Int($0.rawValue) }) },
        Column("ended_by") { .text($0.connection.lifecycle.ending?.endedBy.rawValue) },
    ]

    /// The link in force at the connection's end: the shared link fields (``LinkColumns``), scalars only.
    static let connectionLink: [Column<ConnectionRow>] = {
        let link: [Column<Connection>] = ["interval_ms", "latency", "timeout_ms", "phy_tx", "phy_rx", "max_tx_octets", "mtu"]
            .map(ConnectionColumns.link)
        let more: [Column<Connection>] = [ConnectionColumns.mtuSource, ConnectionColumns.link("encrypted")]
        return (link + more).map { $0.withText(nil).lifted { (row: ConnectionRow) in row.connection } }
    }()

    static let connectionTraffic: [Column<ConnectionRow>] = [
        Column("acl_bytes_tx") { .int($0.connection.aclBytes.tx) },
        Column("acl_bytes_rx") { .int($0.connection.aclBytes.rx) },
        Column("att_pdus") { .int($0.connection.attPDUs) },
        Column("quality_reports") { .int($0.connection.linkQuality.count) },
    ]

    static let connections = ColumnTable<ConnectionRow>(
        connectionIdentity + connectionPeer + connectionSpan + connectionLink + connectionTraffic)

    static let findings = ColumnTable<FindingRow>([
        Column("capture_id") { .text($0.id) },
        Column("rule") { .text($0.finding.rule) },
        Column("severity") { .text($0.finding.severity.rawValue) },
        Column("frame") { .int($0.finding.frame) },
        Column("count") { .int($0.finding.count) },
        Column("conn_number") { .int($0.finding.connection) },
        Column("peer") { row in .text(row.finding.device ?? row.finding.connection.flatMap { row.peers[$0] ?? nil }) },
        Column("message") { .text($0.finding.message) },
    ])

    static let otaSessions = ColumnTable<OTARow>([
        Column("capture_id") { .text($0.id) },
        Column("conn_number") { .int($0.session.connectionNumber) },
        Column("protocol") { .text($0.session.protocolName.rawValue) },
        Column("result") { .text($0.session.result.label) },
        Column("result_detail") { .text($0.session.result.detail) },
        Column("start_frame") { .int($0.session.startFrame) },
        Column("end_frame") { .int($0.session.endFrame) },
        Column("start_time") { .time($0.session.startTime) },
        Column("duration_s") { .double(Double($0.session.durationMicroseconds) / 1e6, decimals: 6) },
        Column("image_size") { .int($0.session.image.count) },
        Column("image_sha256") { .text($0.session.image.isEmpty ? nil : $0.session.imageSHA256) },
        Column("packets") { .int($0.session.packets) },
        Column("throughput_bps") { .double($0.session.throughputBitsPerSecond, decimals: 0) },
    ])

    static let isoStreams = ColumnTable<ISORow>([
        Column("capture_id") { .text($0.id) },
        Column("stream") { .int($0.health.streamNumber) },
        Column("label") { .text($0.label) },
        Column("kind") { .text($0.health.kind?.rawValue) },
        Column("handle") { .int(Int($0.health.handle)) },
        Column("dir") { .text($0.health.direction == .tx ? "tx" : "rx") },
        Column("first_frame") { .int($0.health.firstFrame) },
        Column("last_frame") { .int($0.health.lastFrame) },
        Column("sdus") { .int($0.health.sdus) },
        Column("expected_sdus") { .int($0.health.expectedSDUs) },
        Column("missing_sdus") { .int($0.health.missingSDUs) },
        Column("flagged_lost") { .int($0.health.flaggedLost) },
        Column("lost_sdus") { .int($0.health.lostSDUs) },
        Column("loss_ratio") { .double($0.health.lossRatio, decimals: 6) },
        Column("loss_bursts") { .int($0.health.lossBursts) },
    ])

    static let qualityReports = ColumnTable<QualityRow>([
        Column("capture_id") { .text($0.id) },
        Column("conn_number") { .int($0.connection) },
        Column("frame") { .int($0.sample.frame) },
        Column("time") { .time($0.sample.timestamp) },
        Column("report") { .text($0.sample.reportID.description) },
        Column("rssi") { .int(Int($0.sample.quality.rssi)) },
        Column("snr") { .int(Int($0.sample.quality.snr)) },
        Column("tx_power") { .int(Int($0.sample.quality.txPowerLevel)) },
        Column("retransmissions") { .int(Int($0.sample.quality.retransmissionCount)) },
        Column("nak") { .int(Int($0.sample.quality.nakCount)) },
        Column("no_rx") { .int(Int($0.sample.quality.noRxCount)) },
        Column("flow_off") { .int(Int($0.sample.quality.flowOffCount)) },
    ])
}
