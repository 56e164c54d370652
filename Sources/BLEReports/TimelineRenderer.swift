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

/// Renders timeline events as aligned text lines.
public struct TimelineTextRenderer {
    public var terminal: Terminal
    public var timeStyle: TimeStyle
    private var origin: Timestamp?

    public init(terminal: Terminal, timeStyle: TimeStyle) {
        self.terminal = terminal
        self.timeStyle = timeStyle
        if case .relative(let t) = timeStyle { origin = t }
    }

    /// Relative times count from `time` (the first record's) unless an origin was given: a filtered timeline's first
    /// line is then `+12.600…`, as `--from 12.6` counted, not `+0`.
    public mutating func startCounting(at time: Timestamp) {
        if origin == nil { origin = time }
    }

    /// Where the event text starts (continuation lines of a fitted event are indented to it).
    var eventColumn: Int {
        switch timeStyle {
        case .relative: 41
        case .absoluteUTC, .absoluteLocal: 54
        }
    }

    public var header: String {
        let time: String
        switch timeStyle {
        case .relative: time = "time (s)".leftPadding(to: 13)
        case .absoluteUTC: time = "time (UTC)".padding(to: 26)
        case .absoluteLocal: time = "time (local)".padding(to: 26)
        }
        return terminal.paint("  frame " + time + "  conn    dir layer  event", .dim) + "\n"
    }

    public mutating func line(_ e: TimelineEvent) -> String {
        var out = String(e.frame).leftPadding(to: 7) + " "
        switch timeStyle {
        case .relative:
            if origin == nil { origin = e.timestamp }
            let delta = e.timestamp.microseconds(since: origin!)
            out += ("+" + String(fractionDigits: 6, Double(delta) / 1e6)).leftPadding(to: 13)
        case .absoluteUTC:
            out += e.timestamp.formatted().padding(to: 26)
        case .absoluteLocal(let offset):
            out += e.timestamp.formatted(utcOffsetSeconds: offset).padding(to: 26)
        }
        out += "  " + (e.connection.map { hex($0, width: 4) } ?? "").padding(to: 7)
        out += " " + e.direction.arrow + "  "
        out += terminal.paint(e.layer.rawValue.uppercased().padding(to: 5), layerStyle(e.layer)) + "  "
        out += terminal.paint(e.name, .bold)
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
        guard let width = terminal.width, out.utf8.count > width else { return out + "\n" }
        // Wider than the output: the event's text goes on under itself, long values shortened in their middle.
        var fitted = ""
        TextWidth.fitLine(Substring(out), width: width, indent: eventColumn, into: &fitted)
        return fitted + "\n"
    }

    private func layerStyle(_ layer: Layer) -> Terminal.Style {
        switch layer {
        case .hci: .blue
        case .att: .green
        case .smp: .magenta
        case .l2cap: .yellow
        default: .dim
        }
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

    public init() {}

    /// One object and a newline, appended to `out`.
    public mutating func append(_ e: TimelineEvent, to out: inout [UInt8]) {
        line.clear()
        render(e)
        line.withBytes { out.append(contentsOf: $0) }
        line.clear()
    }

    /// One object and a newline, written to `stream`.
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
    public mutating func writeBuffered(_ e: TimelineEvent, to stream: OutputStream) {
        render(e)
        if line.count >= Self.chunkSize { flush(to: stream) }
    }

    /// Writes what ``writeBuffered(_:to:)`` gathered.
    public mutating func flush(to stream: OutputStream) {
        line.withBytes { stream.write($0) }
        line.clear()
    }

    static let chunkSize = 1 << 16

    /// `handles`, `value` and `values` of an event with boxed fields.
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
                renderExtraColumns(e)
                line.append("}\n")
            }
            return
        }
        renderDecoded(e)
        line.append("}\n")
    }

    /// `frame` to `handle`: where the event is and what it is.
    @inline(__always)
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

/// A growable byte buffer with unchecked-free appends for the JSON Lines hot path.
final class ByteBuffer {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
    }

    deinit { storage.deallocate() }

    func clear() { count = 0 }

    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { body(UnsafeRawBufferPointer(start: storage, count: count)) }

    @inline(__always) private func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        var newCapacity = capacity * 2
        while newCapacity < count + n { newCapacity *= 2 }
        let new = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 1)
        new.copyMemory(from: storage, byteCount: count)
        storage.deallocate()
        storage = new
        capacity = newCapacity
    }

    @inline(__always) func append(byte: UInt8) {
        reserve(1)
        storage.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// Inlined so that each key's length is a constant and its copy a few moves, not a call to memmove:
    /// the out-of-line version was about 30 calls per line (docs/performance.md#timeline-renderer).
    @inline(__always) func append(_ s: StaticString) {
        reserve(s.utf8CodeUnitCount)
        (storage + count).copyMemory(from: s.utf8Start, byteCount: s.utf8CodeUnitCount)
        count += s.utf8CodeUnitCount
    }

    func append(bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (storage + count).copyMemory(from: base, byteCount: bytes.count)
        count += bytes.count
    }

    /// Decimal digits written backwards from the end, two at a time from a table: no reversal pass
    /// (the digit-at-a-time version with a reversal cost more: docs/performance.md#timeline-renderer).
    func append(integer v: Int64) {
        reserve(21)
        if v < 0 { storage.storeBytes(of: UInt8(ascii: "-"), toByteOffset: count, as: UInt8.self); count &+= 1 }
        var m = v.magnitude
        var digits = 1
        var t = m
        while t >= 10 { t /= 10; digits &+= 1 }
        var end = count &+ digits
        count = end
        ByteBuffer.digitPairs.withUnsafeBufferPointer { pairs in
            while m >= 100 {
                let pair = Int(m % 100) &* 2
                m /= 100
                end &-= 2
                storage.storeBytes(of: pairs[pair], toByteOffset: end, as: UInt8.self)
                storage.storeBytes(of: pairs[pair &+ 1], toByteOffset: end &+ 1, as: UInt8.self)
            }
            if m >= 10 {
                let pair = Int(m) &* 2
                storage.storeBytes(of: pairs[pair], toByteOffset: end &- 2, as: UInt8.self)
                storage.storeBytes(of: pairs[pair &+ 1], toByteOffset: end &- 1, as: UInt8.self)
            } else {
                storage.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: m), toByteOffset: end &- 1, as: UInt8.self)
            }
        }
    }

    /// Four lowercase hex digits (`hex(v, width: 4)` without its `0x`).
    func append(hex16 v: UInt16) {
        reserve(4)
        ByteBuffer.hexPairs.withUnsafeBufferPointer { pairs in
            storage.storeBytes(of: pairs[Int(v >> 8)], toByteOffset: count, as: UInt16.self)
            storage.storeBytes(of: pairs[Int(v & 0xFF)], toByteOffset: count &+ 2, as: UInt16.self)
        }
        count &+= 4
    }

    /// "00" "01" … "99".
    private static let digitPairs: [UInt8] = (0..<100).flatMap { [UInt8(ascii: "0") + UInt8($0 / 10), UInt8(ascii: "0") + UInt8($0 % 10)] }

    func append(optional v: Int64?) {
        if let v { append(integer: v) } else { append("null") }
    }

    /// Seconds since the epoch with exactly six decimals.
    func append(seconds t: Timestamp) {
        let us = t.microseconds
        let s = us >= 0 ? us / 1_000_000 : -((-us + 999_999) / 1_000_000)
        var frac = us - s * 1_000_000
        append(integer: s)
        reserve(7)
        append(byte: UInt8(ascii: "."))
        for k in stride(from: 5, through: 0, by: -1) {
            storage.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: frac % 10), toByteOffset: count + k, as: UInt8.self)
            frac /= 10
        }
        count += 6
    }

    /// Two hex digits per byte: eight bytes at a time as 64-bit words (``hexDigits(of:)``), the rest with one 16-bit
    /// store per byte from a table (docs/performance.md#timeline-renderer); Swift's SIMD types compiled to lane-by-lane
    /// loops here (generic conversions and comparisons not vectorised), so the words are plain `UInt64`s.
    func append(hexString v: [UInt8]) {
        reserve(v.count * 2 + 2)
        append(byte: UInt8(ascii: "\""))
        var n = count
        let out = storage
        v.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var i = 0
            while i &+ 8 <= bytes.count {
                let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                out.storeBytes(of: ByteBuffer.hexDigits(of: word & 0xFFFF_FFFF), toByteOffset: n, as: UInt64.self)
                out.storeBytes(of: ByteBuffer.hexDigits(of: word >> 32), toByteOffset: n &+ 8, as: UInt64.self)
                i &+= 8
                n &+= 16
            }
            ByteBuffer.hexPairs.withUnsafeBufferPointer { pairs in
                while i < bytes.count {
                    out.storeBytes(of: pairs[Int(bytes[i])], toByteOffset: n, as: UInt16.self)
                    n &+= 2
                    i &+= 1
                }
            }
        }
        count = n
        append(byte: UInt8(ascii: "\""))
    }

    /// The eight lowercase hex digits of the four bytes in the low half of `x` (first byte first), as they lie in
    /// memory on a little-endian machine: each byte spread to a 16-bit lane, its high nibble in the lane's low byte,
    /// then `'0' + n`, plus `'a' - '0' - 10` (0x27) where the nibble is over 9 (no carry crosses a byte: every byte stays
    /// below 0x67).
    @inline(__always)
    static func hexDigits(of x: UInt64) -> UInt64 {
        var y = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF
        y = (y | (y << 8)) & 0x00FF_00FF_00FF_00FF
        let nibbles = ((y >> 4) & 0x000F_000F_000F_000F) | ((y & 0x000F_000F_000F_000F) << 8)
        let over9 = ((nibbles &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return nibbles &+ 0x3030_3030_3030_3030 &+ over9 &* 0x27
    }

    /// Byte → its two lowercase hex digits as they lie in memory (first digit in the low byte on little-endian machines).
    private static let hexPairs: [UInt16] = (0..<256).map { b in
        let digits = [hexDigit(UInt8(b >> 4)), hexDigit(UInt8(b & 0xF))]
        return digits.withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) }
    }

    func append(optionalString s: String?) {
        if let s { append(string: s) } else { append("null") }
    }

    /// A JSON string, escaped.
    func append(string s: String) {
        var s = s
        s.withUTF8 { utf8 in
            reserve(utf8.count + 2)
            append(byte: UInt8(ascii: "\""))
            // Most strings need no escaping: copy them in one go.
            if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                append(bytes: UnsafeRawBufferPointer(utf8))
                append(byte: UInt8(ascii: "\""))
                return
            }
            for c in utf8 {
                switch c {
                case UInt8(ascii: "\""): append("\\\"")
                case UInt8(ascii: "\\"): append("\\\\")
                case 0x0A: append("\\n")
                case 0x0D: append("\\r")
                case 0x09: append("\\t")
                case 0..<0x20:
                    append("\\u00")
                    append(byte: hexDigit(c >> 4))
                    append(byte: hexDigit(c & 0xF))
                default: append(byte: c)
                }
            }
            append(byte: UInt8(ascii: "\""))
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
        while let r = rest.range(of: target) {
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
