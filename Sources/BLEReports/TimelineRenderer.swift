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
        if let n = e.attributeName ?? e.uuid?.description { out += " " + terminal.paint("[" + n + "]", .yellow) }
        if !e.summary.isEmpty { out += "  " + e.summary }
        if e.layer == .att, let v = e.value, !e.summary.contains("value=") { out += " value=" + hexString(v) }
        if let d = e.decoded { out += "  " + terminal.paint(d.summary, d.valid ? .cyan : .red) }
        if let r = e.responseFrame {
            out += terminal.paint("  → #\(r)" + (e.latency.map { " " + formatDuration(microseconds: $0) } ?? ""), .dim)
        } else if let r = e.requestFrame {
            out += terminal.paint("  ← #\(r)", .dim)
        }
        return out + "\n"
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
public struct TimelineJSONRenderer {
    private var writer = JSONWriter(capacity: 512)

    public init() {}

    /// One object and a newline, appended to `out`.
    public mutating func append(_ e: TimelineEvent, to out: inout [UInt8]) {
        writer.reset()
        writer.beginObject()
        writer.field("frame", e.frame)
        writer.field("time", e.timestamp)
        writer.field("conn", e.connection)
        writer.field("conn_number", e.connectionNumber)
        writer.field("dir", e.direction == .unknown ? nil : e.direction.description)
        writer.field("layer", e.layer.rawValue)
        writer.field("opcode", e.code)
        writer.field("opcode_name", e.name)
        writer.field("handle", e.handle)
        if let hs = e.handles {
            writer.beginArray("handles")
            for h in hs { writer.value(h) }
            writer.endArray()
        } else {
            writer.fieldNull("handles")
        }
        writer.fieldHex("value", e.value)
        if let vs = e.values {
            writer.beginArray("values")
            for v in vs { writer.value(hexString(v)) }
            writer.endArray()
        } else {
            writer.fieldNull("values")
        }
        writer.field("uuid", e.uuid?.uuidString)
        writer.field("name", e.attributeName)
        writer.field("name_source", e.nameSource?.rawValue)
        writer.field("request_frame", e.requestFrame)
        writer.field("response_frame", e.responseFrame)
        writer.field("latency_us", e.latency)
        writer.field("status", e.status)
        writer.field("summary", e.summary)
        if let d = e.decoded { writeDecoded(d, into: &writer) } else { writer.fieldNull("decoded") }
        writer.endObject()
        out.append(contentsOf: writer.bytes)
        out.append(UInt8(ascii: "\n"))
    }
}

/// Renders timeline events as CSV (RFC 4180 quoting), one header line first.
public struct TimelineCSVRenderer {
    public init() {}

    public static let header = "frame,time,conn,dir,layer,opcode,opcode_name,handle,value,uuid,name,request_frame,response_frame,latency_us,status,summary,decoded\n"

    public func line(_ e: TimelineEvent) -> String {
        func q(_ s: String?) -> String {
            guard let s else { return "" }
            if s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
                return "\"" + s.replacingAll("\"", with: "\"\"") + "\""
            }
            return s
        }
        var t = JSONWriter()
        t.beginObject(); t.field("t", e.timestamp); t.endObject()
        let time = String(t.string.dropFirst(5).dropLast())
        let fields: [String] = [
            String(e.frame), time, e.connection.map { String($0) } ?? "", e.direction == .unknown ? "" : e.direction.description,
            e.layer.rawValue, e.code.map { String($0) } ?? "", q(e.name), e.handle.map { String($0) } ?? "",
            e.value.map { hexString($0) } ?? "", e.uuid?.uuidString ?? "", q(e.attributeName),
            e.requestFrame.map { String($0) } ?? "", e.responseFrame.map { String($0) } ?? "",
            e.latency.map { String($0) } ?? "", q(e.status), q(e.summary), q(e.decoded?.summary),
        ]
        return fields.joined(separator: ",") + "\n"
    }
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
