import BLEAnalysis
import BLECapture
import BLECodecs
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// Each output's column table (``ThroughputColumns``, ``TimelineColumns``) held against its JSON Schema in `schemas/`
/// and against what the renderers write: a column added to a table and not to the schema, or the reverse, fails here.
@Suite struct ColumnTableTests {
    /// The object schema at `path` (keys through `properties`, `items` and `$defs`) of `schemas/NAME.schema.json`.
    static func schema(_ name: String, at path: [String]) throws -> [String: Any] {
        let file = TestEnvironment.repositoryRoot + "/schemas/\(name).schema.json"
        var node = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        for key in path { node = try #require(node[key] as? [String: Any], "\(name): no \(key)") }
        return node
    }

    /// JSON Schema types a cell may take (null where the cell may be nil).
    static func types(_ property: [String: Any]) -> Set<String> {
        if let t = property["type"] as? String { return [t] }
        if let ts = property["type"] as? [String] { return Set(ts) }
        let alternatives = (property["anyOf"] as? [[String: Any]] ?? []) + (property["oneOf"] as? [[String: Any]] ?? [])
        return alternatives.reduce(into: Set<String>()) { $0.formUnion(types($1)) }
    }

    @Test func throughputColumnsAreTheSchemasStreamProperties() throws {
        let stream = try Self.schema("throughput", at: ["properties", "streams", "items"])
        let properties = try #require(stream["properties"] as? [String: Any])
        let keys = ThroughputColumns.table.keys
        #expect(Set(keys) == Set(properties.keys), "table \(Set(keys).symmetricDifference(properties.keys))")
        #expect(Set(stream["required"] as? [String] ?? []).isSubset(of: Set(keys)))
        #expect(keys.count == Set(keys).count, "a key twice")
        // The renderer writes exactly the table's keys, in its order, for a real stream.
        let report = Report.analyze(path: TestEnvironment.sample("nordic-dfu.btsnoop")).throughputReport
        let json = report.json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let first = try #require((object["streams"] as? [[String: Any]])?.first)
        #expect(Set(first.keys) == Set(keys))
        #expect(Self.keyOrder(of: json, within: "\"streams\":[{") == keys)
    }

    /// Every CSV header of the throughput table is a column of its own, and the text table fits 100 columns.
    @Test func throughputCSVAndTextHeaders() throws {
        let headers = ThroughputColumns.table.csvHeader.dropLast().split(separator: ",").map(String.init)
        #expect(headers.count == Set(headers).count)
        for required in ["conn", "connection_handle", "dir", "handle", "kind", "packets", "rate_bps", "verdict"] {
            #expect(headers.contains(required))
        }
        #expect(ThroughputColumns.table.textHeader.count <= 100)
        let widths = ThroughputColumns.table.textColumns.reduce(0) { $0 + $1.width + 1 }
        #expect(widths - 1 <= 96, "the row, indented, must fit 100 columns")
    }

    @Test func timelineColumnsAreTheSchemasEventProperties() throws {
        let event = try Self.schema("timeline", at: ["$defs", "event"])
        let properties = try #require(event["properties"] as? [String: Any])
        let keys = TimelineColumns.table.keys
        // The schema has `file` (several captures) and `fields` (decoded events only) besides the table's columns.
        #expect(Set(keys).union(["file", "fields"]) == Set(properties.keys), "\(Set(keys).symmetricDifference(properties.keys))")
        for column in TimelineColumns.table.columns {
            guard let key = column.key, let property = properties[key] as? [String: Any] else { continue }
            let allowed = Self.types(property)
            // Untyped properties (enums) allow anything their enum lists.
            guard !allowed.isEmpty else { continue }
            #expect(!allowed.isDisjoint(with: ["integer", "number", "string", "boolean", "array", "object", "null"]), "\(key)")
        }
    }

    /// The JSON Lines fast path writes the table's keys, in the table's order, for every event of a real capture
    /// (value events, requests with their responses, decoded values).
    @Test func timelineFastPathWritesTheTableInItsOrder() throws {
        let capture = try CaptureFile.open(path: TestEnvironment.sample("bracelet.btsnoop"))
        let registry = CodecRegistry()
        _ = try registry.load(directory: TestEnvironment.sample("codecs"))
        var renderer = TimelineJSONRenderer()
        var lines: [[UInt8]] = []
        _ = CaptureAnalysis.analyze(
            capture, options: AnalyzerOptions(timeline: true, codecs: registry),
            onEvent: { e, _ in
                var line: [UInt8] = []
                renderer.append(e, to: &line)
                lines.append(line)
            })
        #expect(lines.count > 100)
        let keys = TimelineColumns.table.keys
        for line in lines {
            var order = Self.keyOrder(of: String(decoding: line, as: UTF8.self), within: "{")
            if order.last == "fields" { order.removeLast() }
            #expect(order == keys, "\(String(decoding: line, as: UTF8.self))")
        }
        // CSV: the header's columns are the table's, and every row has as many fields.
        let csv = TimelineCSVRenderer.header
        #expect(csv == TimelineColumns.table.csvHeader)
        #expect(csv.hasPrefix("frame,time,conn,dir,layer,bearer,cid,opcode,opcode_name,handle,value,uuid,name,"))
    }

    /// The top-level keys of the first object that starts right after `prefix` in `json`, in order.
    static func keyOrder(of json: String, within prefix: String) -> [String] {
        guard let start = json.range(of: prefix) else { return [] }
        var keys: [String] = []
        var depth = 1
        var inString = false
        var escaped = false
        var current = ""
        var expectingKey = true
        for c in json[start.upperBound...] {
            if inString {
                if escaped {
                    escaped = false
                } else if c == "\\" {
                    escaped = true
                } else if c == "\"" {
                    inString = false
                    if depth == 1 && expectingKey { keys.append(current) }
                } else {
                    current.append(c)
                }
                continue
            }
            switch c {
            case "\"":
                inString = true
                current = ""
            case "{", "[": depth += 1
            case "}", "]":
                depth -= 1
                if depth == 0 { return keys }
            case ":": if depth == 1 { expectingKey = false }
            case ",": if depth == 1 { expectingKey = true }
            default: break
            }
        }
        return keys
    }
}
