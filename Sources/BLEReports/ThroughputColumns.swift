import BLEAnalysis
import BLECore

/// One row of `blescope throughput`: a stream and what the report knows of its connection.
public struct ThroughputRow {
    public var stream: ThroughputStream
    public var connection: Connection?
    public var aclBuffers: (length: Int, packets: Int)?
}

/// The columns of `blescope throughput`, in JSON key order: its JSON (`schemas/throughput.schema.json`), its CSV and its
/// text table all follow from this one list. A new column is one entry here (and its key in the schema).
///
/// Rates are bits per second in JSON and CSV; the text shows them in the run's unit (`--units`, kbps by default).
///
/// A `.json` cell's closure captures the values it writes, not the row: BLEReports is compiled for size, and there a
/// closure that captures the row copies all of it (stream, connection) into its context for each cell, 4 M instructions
/// of `report --format json` on the benchmark capture (docs/performance.md#size).
public enum ThroughputColumns {
    public typealias Row = ThroughputRow

    public static let table = ColumnTable<Row>(identity + volume + rates + distribution + link + linkCSV + linkDetails + verdict)

    static let identity: [Column<Row>] = [
        Column("conn", csv: "connection_handle") { .int(Int($0.stream.connection)) }.csvText { hex($0.stream.connection, width: 4) },
        Column("conn_number", csv: "conn") { .int($0.stream.key.connectionNumber) },
        Column("dir", csv: "dir", text: TextColumn("dir", width: 3) { $0.stream.key.direction.description }) {
            .text($0.stream.key.direction.description)
        },
        Column("handle", csv: "handle", text: TextColumn("handle", width: 6) { hex($0.stream.key.handle, width: 4) }) {
            .int(Int($0.stream.key.handle))
        }.csvText { hex($0.stream.key.handle, width: 4) },
        Column("uuid", csv: "uuid") { .text($0.stream.characteristic?.uuidString) },
        Column("name") { .text(ThroughputReport.name(of: $0.stream)) },
        Column("service_uuid") { .text($0.stream.service?.uuidString) },
        Column("kind", csv: "kind", text: TextColumn("kind", width: 9) { $0.stream.key.kind.name }) { .text($0.stream.key.kind.name) },
        Column("psm") { .int($0.stream.psm.map(Int.init)) },
    ]

    static let volume: [Column<Row>] = [
        Column("packets", csv: "packets", text: TextColumn("packets", width: 8, .right) { formatCount($0.stream.packets) }) {
            .int($0.stream.packets)
        },
        Column("value_bytes", csv: "value_bytes", text: TextColumn("bytes", width: 10, .right) { formatCount($0.stream.valueBytes) }) {
            .int($0.stream.valueBytes)
        },
        Column("att_bytes", csv: "att_bytes") { .int($0.stream.attBytes) },
        Column("l2cap_bytes", csv: "l2cap_bytes") { .int($0.stream.l2capBytes) },
        Column("first_frame", csv: "first_frame") { .int($0.stream.firstFrame) },
        Column("last_frame", csv: "last_frame") { .int($0.stream.lastFrame) },
        Column("first_time", csv: "first_time") { .time($0.stream.firstTime) },
        Column("last_time", csv: "last_time") { .time($0.stream.lastTime) },
        Column(
            "duration_s", csv: "duration_s",
            text: TextColumn("duration", width: 10, .right) { formatDuration(microseconds: $0.stream.durationMicroseconds) }
        ) { .double(Double($0.stream.durationMicroseconds) / 1e6, decimals: 6) },
    ]

    static let rates: [Column<Row>] = [
        Column(
            "rate_bps", csv: "rate_bps", text: TextColumn("rate", width: 11, .right) { $0.stream.rateBitsPerSecond.map(formatRate) ?? "-" }
        ) {
            .double($0.stream.rateBitsPerSecond, decimals: 1)
        },
        Column("att_rate_bps") { .double($0.stream.attRateBitsPerSecond, decimals: 1) },
        Column("l2cap_rate_bps") { .double($0.stream.l2capRateBitsPerSecond, decimals: 1) },
        Column("ceiling_bps", csv: "ceiling_bps") { .double($0.stream.ceilingBitsPerSecond, decimals: 0) },
        Column("share", csv: "share") { row in
            let s = row.stream
            return .double(s.rateBitsPerSecond.flatMap { r in s.ceilingBitsPerSecond.map { r / $0 } }, decimals: 4)
        },
        Column("value_size") { row in
            let s = row.stream
            let (least, average, most) = (s.minValueSize, s.packets > 0 ? Double(s.valueBytes) / Double(s.packets) : nil, s.maxValueSize)
            return .json { w, key in
                w.beginObject(key)
                w.field("min", least)
                w.field("avg", average, decimals: 2)
                w.field("max", most)
                w.endObject()
            }
        },
    ]

    static let distribution: [Column<Row>] = [
        Column("window", text: TextColumn("window median / p95 / max", width: 26) { windowText($0.stream) }) { row in
            let windows = row.stream.windows
            return .json { w, key in ThroughputReport.writeWindow(windows, key: key, to: &w) }
        },
        Column(nil, csv: "window_median_bps") { .double($0.stream.windows?.median, decimals: 1) },
        Column(nil, csv: "window_p95_bps") { .double($0.stream.windows?.p95, decimals: 1) },
        Column(nil, csv: "window_max_bps") { .double($0.stream.windows?.max, decimals: 1) },
        Column("peak_bps", csv: "peak_bps") { .double($0.stream.peakBitsPerSecond, decimals: 1) },
        Column("peak_step_s") { .double(Double($0.stream.windows?.windowMicroseconds ?? 0) / 1e7, decimals: 6) },
        .textOnly(TextColumn("share", width: 5, .right) { shareText($0.stream) }),
        Column("gaps") { row in
            let s = row.stream
            return .json { w, key in ThroughputReport.writeGaps(s, key: key, to: &w) }
        },
        Column("idle") { row in
            let s = row.stream
            return .json { w, key in ThroughputReport.writeIdle(s, key: key, to: &w) }
        },
        Column(nil, csv: "idle_gaps") { .int($0.stream.idleGapCount) },
    ]

    static let link: [Column<Row>] = [
        Column("link") { row in
            let link = row.stream.mainPeriod?.link
            return .json { w, key in
                if let link { ThroughputReport.writeLink(link, key: key, to: &w) } else { w.fieldNull(key) }
            }
        }
    ]

    /// The main period's link, in the CSV: the shared link fields (``LinkColumns``) that have a CSV name.
    static let linkCSV: [Column<Row>] = LinkColumns.all.filter { $0.csv != nil }.map { (c: Column<LinkSnapshot>) -> Column<Row> in
        c.renamed(nil).withText(nil).lifted(optional: { (row: Row) in row.stream.mainPeriod?.link })
    }

    static let linkDetails: [Column<Row>] = [
        Column(nil, csv: "packets_per_event") { .double($0.stream.mainPeriod?.packetsPerEvent?.mean, decimals: 2) },
        Column("periods") { row in
            let periods = row.stream.periods
            return .json { w, key in ThroughputReport.writePeriods(periods, key: key, to: &w) }
        },
        Column("periods_not_split") { .int($0.stream.periodsNotSplit) },
        Column("controller") { row in
            let c = row.connection
            let (inFlight, packets, length) = (c?.maxInFlight, row.aclBuffers?.packets, row.aclBuffers?.length)
            let (queueFull, queueFullUs) = (c?.controllerQueueFull.count, c?.controllerQueueFullMicroseconds)
            return .json { w, key in
                w.beginObject(key)
                w.field("max_in_flight", inFlight)
                w.field("acl_buffer_packets", packets)
                w.field("acl_buffer_length", length)
                w.field("queue_full_count", queueFull)
                w.field("queue_full_us", queueFullUs)
                w.endObject()
            }
        },
        Column("flow_control") { row in
            let c = row.connection
            let (stalls, stallUs) = (c?.creditStalls.count, c.map { $0.creditStalls.reduce(Int64(0)) { $0 + $1.durationMicroseconds } })
            return .json { w, key in
                w.beginObject(key)
                w.field("credit_stalls", stalls)
                w.field("credit_stall_us", stallUs)
                w.endObject()
            }
        },
        Column("link_layer") { row in
            let ll = row.connection?.linkLayer
            return .json { w, key in
                if let ll { ThroughputReport.writeLinkLayer(ll, key: key, to: &w) } else { w.fieldNull(key) }
            }
        },
    ]

    static let verdict: [Column<Row>] = [
        Column("limit", csv: "limit") { .text($0.stream.verdict.limit.rawValue) },
        Column("verdict", csv: "verdict") { .text($0.stream.verdict.text) },
        Column("link_quality") { row in
            let quality = row.connection.flatMap { LinkQualitySummary($0.linkQuality) }
            return .json { w, key in
                if let quality { writeLinkQuality(quality, into: &w, key: key) } else { w.fieldNull(key) }
            }
        },
        Column("series") { row in
            let s = row.stream
            return .json { w, key in ThroughputReport.writeSeries(s, key: key, to: &w) }
        },
    ]

    /// `180.7 / 195.7 / 196.6 kbps`: the windows' median, 95th percentile and maximum, in one unit.
    static func windowText(_ s: ThroughputStream) -> String {
        guard let w = s.windows else { return "(shorter than the window)" }
        let unit = RateUnit.display
        return unit.number(w.median) + " / " + unit.number(w.p95) + " / " + unit.format(w.max)
    }

    /// The rate's share of the ceiling, `23 %`, or `-` without one.
    static func shareText(_ s: ThroughputStream) -> String {
        if let share = s.mainPeriod?.share, s.mainPeriod?.packets == s.packets || s.periods.count == 1 {
            return String(fractionDigits: 0, share * 100) + " %"
        }
        if let r = s.rateBitsPerSecond, let c = s.ceilingBitsPerSecond, c > 0 { return String(fractionDigits: 0, r / c * 100) + " %" }
        return "-"
    }
}
