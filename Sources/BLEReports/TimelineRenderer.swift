import BLEAnalysis
import BLECodecs
import BLECore

/// How times are shown in the text timeline.
public enum TimeStyle: Sendable {
    /// Seconds since the first record: `+12.345678`.
    case relative(to: Timestamp?)
    /// UTC date and time.
    case absoluteUTC
    /// Local time, at a fixed offset from UTC.
    case absoluteLocal(offsetSeconds: Int)
}

/// Renders timeline events as aligned text lines: the text columns of ``TimelineColumns`` (frame, time, conn, dir,
/// layer, event), the time in the run's style.
public struct TimelineTextRenderer {
    public var terminal: Terminal
    public var timeStyle: TimeStyle
    private var origin: Timestamp?
    /// ``TimelineColumns/textTable(time:origin:)``, made again when the origin becomes known.
    private var table: ColumnTable<TimelineEvent>

    public init(terminal: Terminal, timeStyle: TimeStyle) {
        self.terminal = terminal
        self.timeStyle = timeStyle
        if case .relative(let t) = timeStyle { origin = t }
        table = TimelineColumns.textTable(time: timeStyle, origin: origin)
    }

    /// Relative times count from `time` (the first record's) unless an origin was given: a filtered timeline's first
    /// line is then `+12.600…`, as `--from 12.6` counted, not `+0`.
    public mutating func startCounting(at time: Timestamp) {
        guard origin == nil else { return }
        origin = time
        table = TimelineColumns.textTable(time: timeStyle, origin: origin)
    }

    /// Where the event text starts (continuation lines of a fitted event are indented to it).
    var eventColumn: Int { table.textOffsets.last ?? 0 }

    public var header: String { terminal.paint(table.textHeader, .dim) + "\n" }

    public mutating func line(_ e: TimelineEvent) -> String {
        startCounting(at: e.timestamp)
        let out = table.textLine(e, terminal: terminal)
        guard let width = terminal.width, out.utf8.count > width else { return out + "\n" }
        // Wider than the output: the event's text goes on under itself, long values wrapped.
        var fitted = ""
        TextWidth.fitLine(Substring(out), width: width, indent: eventColumn, into: &fitted)
        return fitted + "\n"
    }
}

/// Renders timeline events as JSON Lines (schema in the README, "timeline JSON Lines").
///
/// The hot output path of `timeline --format jsonl`: keys are written as constant byte strings and
/// numbers and hex straight into a reusable buffer, so a line costs no temporary Strings. Codec
/// output (rare) goes through ``JSONWriter``.
public struct TimelineJSONRenderer {
    private let line = ByteBuffer(capacity: 1024)
    private var decodedWriter = JSONWriter(capacity: 256)
    /// ``TimelineColumns/extra``, read once: a global's accessor per event would cost its once-check on the hot path.
    private let extraColumns = TimelineColumns.extra
    /// `,"key":null` for every extra column: what they write for an event without details (their facts are typed extras,
    /// kept in the details box), as constant bytes on the path of most lines.
    private let extraNulls = Array(TimelineColumns.extra.compactMap(\.key).map { ",\"\($0)\":null" }.joined().utf8)

    public init() {}

    /// One object and a newline, appended to `out`.
    @_optimize(speed)
    public mutating func append(_ e: TimelineEvent, to out: inout [UInt8]) {
        line.clear()
        render(e)
        line.withBytes { out.append(contentsOf: $0) }
        line.clear()
    }

    /// One object and a newline, written to `stream`.
    @_optimize(speed)
    public mutating func write(_ e: TimelineEvent, to stream: OutputStream) {
        line.clear()
        render(e)
        line.withBytes { stream.write($0) }
        line.clear()
    }

    /// One object and a newline, gathered in the renderer's buffer and written to `stream` in chunks of 64 KiB, which
    /// the stream passes to the file without copying them into its own buffer; ``flush(to:)`` writes the rest. Between
    /// the two, nothing else may write to `stream`.
    ///
    /// Written in chunks, so each line is not copied again into the stream's buffer
    /// (docs/performance.md#timeline-renderer).
    @_optimize(speed)
    public mutating func writeBuffered(_ e: TimelineEvent, to stream: OutputStream) {
        render(e)
        if line.count >= Self.chunkSize { flush(to: stream) }
    }

    /// Writes what ``writeBuffered(_:to:)`` gathered.
    @_optimize(speed)
    public mutating func flush(to stream: OutputStream) {
        line.withBytes { stream.write($0) }
        line.clear()
    }

    static let chunkSize = 1 << 16

    /// `handles`, `value` and `values` of an event with boxed fields.
    @_optimize(speed)
    private func renderLists(_ e: TimelineEvent) {
        line.append(",\"handles\":")
        if let hs = e.handles {
            line.append("[")
            for (i, h) in hs.enumerated() {
                if i > 0 { line.append(",") }
                line.append(integer: Int64(h))
            }
            line.append("]")
        } else {
            line.append("null")
        }
        line.append(",\"value\":")
        if let v = e.value { line.append(hexString: v) } else { line.append("null") }
        line.append(",\"values\":")
        if let vs = e.values {
            line.append("[")
            for (i, v) in vs.enumerated() {
                if i > 0 { line.append(",") }
                line.append(hexString: v)
            }
            line.append("]")
        } else {
            line.append("null")
        }
    }

    /// The columns added to ``TimelineColumns/extra``, through the table (after the core keys, before `fields`).
    @_optimize(speed)
    private mutating func renderExtraColumns(_ e: TimelineEvent) {
        decodedWriter.reset()
        decodedWriter.beginObject()
        for c in extraColumns { if let key = c.key { c.value(e).write(key, to: &decodedWriter) } }
        decodedWriter.endObject()
        let bytes = decodedWriter.bytes
        guard bytes.count > 2 else { return }
        line.append(",")
        bytes[1..<(bytes.count - 1)].withUnsafeBytes { line.append(bytes: $0) }
    }

    /// Appends one line to `line` (the helpers inlined: this is the JSON Lines fast path).
    @_optimize(speed)
    private mutating func render(_ e: TimelineEvent) {
        renderIdentity(e)
        if e.hasNoDetails {
            // No boxed field: `handles` is null; its test through the box is skipped.
            line.append(",\"handles\":null,\"value\":")
            if let v = e.value { line.append(hexString: v) } else { line.append("null") }
            line.append(",\"values\":null")
        } else {
            renderLists(e)
        }

        renderPairing(e)
        if let h = e.summaryHandle {
            line.append(",\"summary\":\"handle=0x")
            line.append(hex16: h)
            line.append(byte: UInt8(ascii: "\""))
        } else {
            line.append(",\"summary\":"); line.append(string: e.summary)
        }
        guard !e.hasNoDetails else {
            if extraColumns.isEmpty {
                line.append(",\"decoded\":null}\n")
            } else {
                line.append(",\"decoded\":null")
                extraNulls.withUnsafeBytes { line.append(bytes: $0) }
                line.append("}\n")
            }
            return
        }
        renderDecoded(e)
        line.append("}\n")
    }

    /// `frame` to `handle`: where the event is and what it is.
    @inline(__always)
    @_optimize(speed)
    private mutating func renderIdentity(_ e: TimelineEvent) {
        line.append("{\"frame\":"); line.append(integer: Int64(e.frame))
        line.append(",\"time\":"); line.append(seconds: e.timestamp)
        line.append(",\"conn\":"); line.append(optional: e.connection.map(Int64.init))
        line.append(",\"conn_number\":"); line.append(optional: e.connectionNumber.map(Int64.init))
        line.append(",\"dir\":")
        switch e.direction {
        case .tx: line.append("\"tx\"")
        case .rx: line.append("\"rx\"")
        case .unknown: line.append("null")
        }
        line.append(",\"layer\":")
        switch e.layer {
        case .att: line.append("\"att\"")
        case .hci: line.append("\"hci\"")
        default: line.append(string: e.layer.rawValue)
        }
        line.append(",\"bearer\":"); line.append(optionalString: e.bearer?.rawValue)
        line.append(",\"cid\":"); line.append(optional: e.cid.map(Int64.init))
        line.append(",\"opcode\":"); line.append(optional: e.code.map(Int64.init))
        line.append(",\"opcode_name\":"); line.append(string: e.name)
        line.append(",\"handle\":"); line.append(optional: e.handle.map(Int64.init))
    }

    /// `uuid` to `status`: the attribute's name and the request/response pairing.
    @inline(__always)
    @_optimize(speed)
    private mutating func renderPairing(_ e: TimelineEvent) {
        if e.hasNoDetails, e.requestFrame == nil, e.responseFrame == nil, e.latency == nil {
            // A value event of an unnamed attribute (most lines of a big capture): one constant run, not seven keys
            // each with its own test and append.
            line.append(
                ",\"uuid\":null,\"name\":null,\"name_source\":null,\"request_frame\":null,\"response_frame\":null,\"latency_us\":null,\"status\":null"
            )
        } else {
            line.append(",\"uuid\":"); line.append(optionalString: e.uuid?.uuidString)
            line.append(",\"name\":"); line.append(optionalString: e.attributeName)
            line.append(",\"name_source\":"); line.append(optionalString: e.nameSource?.rawValue)
            line.append(",\"request_frame\":"); line.append(optional: e.requestFrame.map(Int64.init))
            line.append(",\"response_frame\":"); line.append(optional: e.responseFrame.map(Int64.init))
            line.append(",\"latency_us\":"); line.append(optional: e.latency)
            line.append(",\"status\":"); line.append(optionalString: e.status)
        }
    }

    /// `decoded`, the extra columns and `fields` of an event with details (the line's end is the caller's).
    @inline(__always)
    @_optimize(speed)
    private mutating func renderDecoded(_ e: TimelineEvent) {
        line.append(",\"decoded\":")
        if let d = e.decoded {
            decodedWriter.reset()
            decodedWriter.beginObject()
            writeDecoded(d, into: &decodedWriter)
            decodedWriter.endObject()
            // `{"decoded":{...}}` → keep the inner object.
            let bytes = decodedWriter.bytes
            let inner = bytes[(bytes.firstIndex(of: UInt8(ascii: ":"))! + 1)..<(bytes.count - 1)]
            inner.withUnsafeBytes { line.append(bytes: $0) }
        } else {
            line.append("null")
        }
        if !extraColumns.isEmpty { renderExtraColumns(e) }
        if let fields = e.fields {
            // Only events with decoded fields carry the key: other lines stay as they were.
            line.append(",\"fields\":{")
            for (i, f) in fields.enumerated() {
                if i > 0 { line.append(",") }
                line.append(string: f.0)
                line.append(":")
                line.append(integer: f.1)
            }
            line.append("}")
        }
    }
}

/// Renders timeline events as CSV (RFC 4180 quoting), one header line first: the columns of ``TimelineColumns``.
public struct TimelineCSVRenderer {
    public init() {}

    public static var header: String { TimelineColumns.table.csvHeader }

    public func line(_ e: TimelineEvent) -> String { TimelineColumns.table.csvLine(e) }
}

extension String {
    /// Replaces every occurrence of `target` (no Foundation needed).
    public func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = Substring(self)
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound]
            out += replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

extension Substring {
    func range(of target: String) -> Range<Index>? {
        let t = Array(target)
        guard !t.isEmpty else { return nil }
        var i = startIndex
        while i < endIndex {
            if self[i] == t[0] {
                var j = i, k = 0
                while j < endIndex, k < t.count, self[j] == t[k] { j = index(after: j); k += 1 }
                if k == t.count { return i..<j }
            }
            i = index(after: i)
        }
        return nil
    }
}

/// `"decoded": {"codec", "message", "valid", "problems", "fields": {name: value}, "roles": {role: value}}`.
@_optimize(speed)
public func writeDecoded(_ d: DecodedValue, into w: inout JSONWriter, key: String = "decoded") {
    w.beginObject(key)
    w.field("codec", d.codec)
    w.field("message", d.message)
    w.field("valid", d.valid)
    w.beginArray("problems")
    for p in d.problems { w.value(p) }
    w.endArray()
    w.beginObject("fields")
    for f in d.fields { writeField(f, into: &w) }
    w.endObject()
    w.beginObject("roles")
    for (role, value) in d.roles.sorted(by: { $0.key < $1.key }) {
        switch value {
        case .int(let v): w.field(role.rawValue, v)
        case .bytes(let b): w.fieldHex(role.rawValue, b)
        case .present: w.field(role.rawValue, true)
        }
    }
    w.endObject()
    w.field("summary", d.summary)
    w.endObject()
}

@_optimize(speed)
private func writeField(_ f: DecodedField, into w: inout JSONWriter) {
    switch f.value {
    case .int(let v): w.field(f.name, v)
    case .double(let v): w.field(f.name, v, decimals: 6)
    case .string(let s): w.field(f.name, s)
    case .bytes(let b): w.fieldHex(f.name, b)
    case .bool(let b): w.field(f.name, b)
    case .named(let v, let name):
        w.beginObject(f.name); w.field("value", v); w.field("name", name); w.endObject()
    case .flags(let v, let names):
        w.beginObject(f.name); w.field("value", v)
        w.beginArray("set"); for n in names { w.value(n) }; w.endArray()
        w.endObject()
    case .list(let items):
        w.beginArray(f.name)
        for item in items { w.beginObject(); writeField(item, into: &w); w.endObject() }
        w.endArray()
    case .nested(let fields):
        w.beginObject(f.name)
        for item in fields { writeField(item, into: &w) }
        w.endObject()
    }
}
