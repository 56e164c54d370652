import BLEAnalysis
import BLECore

/// The flat tables `blescope export --tables` writes for fleets of captures: one JSON Lines file per table, one row
/// per line, every value a scalar (text, number, boolean or null), so that DuckDB's `read_json` and Spark's
/// `spark.read.json` read them with no unnesting. Rows join on `capture_id` (the capture's path as given) and, below a
/// capture, on `conn_number` (the connection's number in the capture, as every other output numbers it).
///
/// Each table's columns are one ``ColumnTable`` (the flat form of the output that owns the figure: the streams table
/// is `throughput`'s CSV columns), held to its JSON Schema in `schemas/tables/` by `FleetTablesTests`.
public enum FleetTable: String, CaseIterable, Sendable {
    case captures, connections, findings, streams
    case otaSessions = "ota_sessions"
    case isoStreams = "iso_streams"
    case qualityReports = "quality_reports"
    /// One row per link: how it was secured (`FleetSecurity.swift`).
    case security
    case audioStreams = "audio_streams"
    case scoLinks = "sco_links"

    /// `captures.jsonl`.
    public var fileName: String { rawValue + ".jsonl" }
}

/// One capture's rows, per table: each a JSON object on one line (with its newline).
public struct FleetRows: Sendable {
    public var lines: [FleetTable: [String]] = [:]

    /// The rows of `f`, every one carrying `capture_id`.
    public init(_ f: FileAnalysis) {
        let id = f.path
        add(.captures, FleetColumns.captures, [CaptureRow(id: id, file: f)])
        let connections = f.connections.map { ConnectionRow(id: id, connection: $0) }
        add(.connections, FleetColumns.connections, connections)
        let peers = Dictionary(f.connections.map { ($0.number, $0.peerAddress) }, uniquingKeysWith: { a, _ in a })
        add(.findings, FleetColumns.findings, f.diagnosis.findings.map { FindingRow(id: id, finding: $0, peers: peers) })
        let report = f.throughputReport
        for s in f.throughput {
            let row = ThroughputRow(
                stream: s, connection: f.connections.first { $0.number == s.key.connectionNumber },
                aclBuffers: report.aclBuffers)
            var w = JSONWriter(capacity: 512)
            w.beginObject()
            w.field("capture_id", id)
            ThroughputColumns.table.writeFlatFields(row, to: &w)
            w.endObject()
            lines[.streams, default: []].append(w.string + "\n")
        }
        add(.otaSessions, FleetColumns.otaSessions, f.otaSessions.map { OTARow(id: id, session: $0) })
        add(.isoStreams, FleetColumns.isoStreams, f.iso.health.map { ISORow(id: id, health: $0, label: f.iso.label(of: $0)) })
        let reports = f.connections.flatMap { c in c.linkQuality.map { QualityRow(id: id, connection: c.number, sample: $0) } }
        add(.qualityReports, FleetColumns.qualityReports, reports)
        add(.security, FleetColumns.security, FleetColumns.securityRows(id: id, f))
        let streams = f.connections.flatMap { c in
            (c.profiles?.a2dp.streams ?? []).map { AudioStreamRow(id: id, connection: c.number, stream: $0) }
        }
        add(.audioStreams, FleetColumns.audioStreams, streams)
        add(.scoLinks, FleetColumns.scoLinks, f.classic.synchronousLinks.map { SCORow(id: id, link: $0) })
    }

    private mutating func add<Row>(_ table: FleetTable, _ columns: ColumnTable<Row>, _ rows: [Row]) {
        for row in rows {
            var w = JSONWriter(capacity: 512)
            w.beginObject()
            columns.writeFields(row, to: &w)
            w.endObject()
            lines[table, default: []].append(w.string + "\n")
        }
    }
}

struct CaptureRow {
    var id: String
    var file: FileAnalysis
}

struct ConnectionRow {
    var id: String
    var connection: Connection
}

struct FindingRow {
    var id: String
    var finding: Diagnosis
    var peers: [Int: String?]
}

struct OTARow {
    var id: String
    var session: OTASession
}

struct ISORow {
    var id: String
    var health: ISOStreamHealth
    var label: String
}

struct QualityRow {
    var id: String
    var connection: Int
    var sample: LinkQualitySample
}
