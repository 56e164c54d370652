import BLEAnalysis
import BLECodecs
import BLECore

/// The columns of `blescope timeline`, in JSON key order: `--format jsonl` (`schemas/timeline.schema.json`),
/// `--format csv` and the text header follow from this list.
///
/// JSON Lines is the hot path (millions of lines): ``TimelineJSONRenderer`` writes the ``core`` keys as constant bytes,
/// in this order (`ColumnTableTests` holds it to the list), and then any ``extra`` column through the table, so a new
/// column is one entry in ``extra`` (and its key in the schema): JSON and CSV get it, CSV at the end of its rows.
public enum TimelineColumns {
    public typealias Row = TimelineEvent

    public static let table = ColumnTable<Row>(core + extra)

    /// Columns added after the first release of the table: rendered generically, after the core keys.
    public static let extra: [Column<Row>] = [
        // A discovery response's items (services, includes, characteristic declarations, Find Information's types),
        // named; null on every other event.
        Column("attributes", value: attributesCell)
    ]

    /// The `attributes` column's cell, per event with details: a function, not a closure, since a closure does not take
    /// `@_optimize(speed)` and BLEReports is compiled for size (docs/performance.md#size).
    @_optimize(speed)
    static func attributesCell(_ e: Row) -> Cell { .json { w, key in writeAttributes(of: e, into: &w, key: key) } }

    @_optimize(speed)
    static func writeAttributes(of e: Row, into w: inout JSONWriter, key: String) {
        guard let items = e[extra: TimelineEvent.discovered] else { return w.fieldNull(key) }
        w.beginArray(key)
        for item in items { writeDiscovered(item, into: &w) }
        w.endArray()
    }

    /// One discovered attribute: `{"kind":"characteristic","handle":2,"value_handle":3,"properties":10,
    /// "property_names":["read","write"],"uuid":"00002A00-…","name":"Device Name"}` (keys that do not apply to the kind
    /// are left out).
    static func writeDiscovered(_ item: DiscoveredAttribute, into w: inout JSONWriter) {
        w.beginObject()
        w.field("kind", item.kind.rawValue)
        w.field("handle", Int(item.handle))
        if let s = item.startHandle { w.field("start_handle", Int(s)) }
        if let e = item.endHandle { w.field("end_handle", Int(e)) }
        if let v = item.valueHandle { w.field("value_handle", Int(v)) }
        if let p = item.properties {
            w.field("properties", Int(p.rawValue))
            w.beginArray("property_names")
            for n in p.names { w.value(n) }
            w.endArray()
        }
        w.field("uuid", item.uuid?.uuidString)
        w.field("name", item.name)
        w.endObject()
    }

    /// What the JSON fast path writes itself (`fields`, only on events with decoded fields, is written after these).
    static let core: [Column<Row>] = [
        Column("frame", csv: "frame", text: TextColumn("frame", width: 7, .right) { String($0.frame) }) { .int($0.frame) },
        Column("time", csv: "time") { .time($0.timestamp) }.csvText { $0.timestamp.epochSecondsText },
        Column("conn", csv: "conn", text: TextColumn("conn", width: 6, gap: 2) { $0.connection.map { hex($0, width: 4) } ?? "" }) {
            .int($0.connection.map(Int.init))
        },
        Column("conn_number") { .int($0.connectionNumber) },
        Column("dir", csv: "dir", text: TextColumn("dir", width: 3, .right, gap: 0) { $0.direction.arrow }) {
            .text($0.direction == .unknown ? nil : $0.direction.description)
        },
        Column(
            "layer", csv: "layer",
            text: TextColumn("layer", width: 5, gap: 2, paint: { text, e, t in t.paint(text, layerStyle(e.layer)) }) {
                $0.layer.rawValue.uppercased()
            }
        ) { .text($0.layer.rawValue) },
        Column("bearer", csv: "bearer") { .text($0.bearer?.rawValue) },
        Column("cid", csv: "cid") { .int($0.cid.map(Int.init)) },
        Column("opcode", csv: "opcode") { .int64($0.code.map(Int64.init)) },
        Column(
            "opcode_name", csv: "opcode_name",
            text: TextColumn("event", width: 0, gap: 2, paint: { _, e, t in eventText(e, terminal: t) }) {
                eventText($0, terminal: Terminal(colors: false))
            }
        ) { .text($0.name) },
        Column("handle", csv: "handle") { .int($0.handle.map(Int.init)) },
        Column("handles") { e in
            .json { w, key in
                guard let hs = e.handles else { return w.fieldNull(key) }
                w.beginArray(key)
                for h in hs { w.value(h) }
                w.endArray()
            }
        },
        Column("value", csv: "value") { .text($0.value.map { hexString($0) }) },
        Column("values") { e in
            .json { w, key in
                guard let vs = e.values else { return w.fieldNull(key) }
                w.beginArray(key)
                for v in vs { w.value(hexString(v)) }
                w.endArray()
            }
        },
        Column("uuid", csv: "uuid") { .text($0.uuid?.uuidString) },
        Column("name", csv: "name") { .text($0.attributeName) },
        Column("name_source") { .text($0.nameSource?.rawValue) },
        Column("request_frame", csv: "request_frame") { .int($0.requestFrame) },
        Column("response_frame", csv: "response_frame") { .int($0.responseFrame) },
        Column("latency_us", csv: "latency_us") { .int64($0.latency) },
        Column("status", csv: "status") { .text($0.status) },
        Column("summary", csv: "summary") { .text($0.summary) },
        Column("decoded", csv: "decoded") { e in
            .json { w, key in
                if let d = e.decoded { writeDecoded(d, into: &w, key: key) } else { w.fieldNull(key) }
            }
        }.csvText { $0.decoded?.summary ?? "" },
    ]
}

extension TimelineColumns {
    /// The table with the time column's text in `time`'s style (relative times count from `origin`, else from each
    /// event's own time): what ``TimelineTextRenderer`` writes.
    public static func textTable(time: TimeStyle, origin: Timestamp?) -> ColumnTable<Row> {
        let clock: TextColumn<Row>
        switch time {
        case .relative:
            clock = TextColumn("time (s)", width: 13, .right) { e in
                "+" + String(fractionDigits: 6, Double(e.timestamp.microseconds(since: origin ?? e.timestamp)) / 1e6)
            }
        case .absoluteUTC:
            clock = TextColumn("time (UTC)", width: 26) { $0.timestamp.formatted() }
        case .absoluteLocal(let offset):
            clock = TextColumn("time (local)", width: 26) { $0.timestamp.formatted(utcOffsetSeconds: offset) }
        }
        return ColumnTable((core + extra).map { $0.key == "time" ? $0.withText(clock) : $0 })
    }

    /// The event column: its name, the bearer, the attribute's name, the summary, the value, the decoded value and the
    /// request or response it pairs with.
    static func eventText(_ e: Row, terminal: Terminal) -> String {
        var out = terminal.paint(e.name, .bold)
        if let b = e.bearer, b != .leFixed { out += " " + terminal.paint("(\(b) CID \(e.cid.map { hex($0, width: 4) } ?? "?"))", .dim) }
        if let n = e.attributeName ?? e.uuid?.description { out += " " + terminal.paint("[" + n + "]", .yellow) }
        if !e.summary.isEmpty { out += "  " + e.summary }
        if e.layer == .att, let v = e.value, !e.summary.contains("value=") { out += " value=" + hexString(v) }
        if let d = e.decoded { out += "  " + terminal.paint(d.summary, d.valid ? .cyan : .red) }
        if let r = e.responseFrame {
            out += terminal.paint("  → #\(r)" + (e.latency.map { " " + formatDuration(microseconds: $0) } ?? ""), .dim)
        } else if let r = e.requestFrame {
            out += terminal.paint("  ← #\(r)", .dim)
        }
        return out
    }

    static func layerStyle(_ layer: Layer) -> Terminal.Style {
        switch layer {
        case .hci: .blue
        case .att: .green
        case .smp: .magenta
        case .l2cap: .yellow
        default: .dim
        }
    }
}
