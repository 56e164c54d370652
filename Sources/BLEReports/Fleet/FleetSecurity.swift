import BLEAnalysis
import BLECore

/// One row per link of the `security` fleet table: how it was secured (its last pairing's procedure and model, its
/// smallest key size in force and where that size comes from, the algorithm) and its worst security finding, so "how
/// many field logs ran with a key under 16 bytes" is one query (docs/fleets.md; `schemas/tables/security.schema.json`).
struct SecurityRow {
    var id: String
    var connection: Connection
    /// The link's security and link-layer compliance findings, worst first.
    var findings: [Diagnosis]

    var record: LinkSecurity { connection.machine.securityRecord }
    var pairing: SecurityPairing? { record.pairings.last { $0.procedure != nil } ?? record.pairings.last }
    var smallest: (size: Int, session: EncryptionSession)? { record.smallestKeySize }
    var encrypted: [EncryptionSession] { record.sessions.filter { $0.onFrame != nil } }
}

extension FleetColumns {
    static let security = ColumnTable<SecurityRow>([
        Column("capture_id") { .text($0.id) },
        Column("conn_number") { .int($0.connection.number) },
        Column("transport") { .text($0.connection.isLE ? "le" : "br/edr") },
        Column("peer") { .text($0.connection.peerIdentity ?? $0.connection.peerAddress) },
        Column("pairings") { .int($0.record.pairings.count) },
        Column("pairing_frame") { .int($0.pairing?.frame) },
        Column("procedure") { .text($0.pairing?.procedure?.rawValue) },
        Column("model") { .text($0.pairing?.model?.rawValue) },
        Column("authenticated") { .bool($0.pairing?.authenticated) },
        Column("bonding") { .bool($0.pairing?.bonding) },
        Column("debug_key") { .bool($0.record.pairings.contains { $0.debugKeyFrame != nil }) },
        Column("link_key_type") { .text($0.pairing?.linkKeyType?.description) },
        Column("pairing_outcome") { row in
            .text(
                row.pairing.map {
                    switch $0.outcome {
                    case .unfinished: "unfinished"
                    case .completed: "completed"
                    case .failed: "failed"
                    }
                })
        },
        Column("encrypted") { .bool(!$0.encrypted.isEmpty) },
        Column("sessions") { .int($0.record.sessions.count) },
        Column("algorithm") { row in .text(row.encrypted.last?.algorithm(isLE: row.connection.isLE)) },
        Column("key_size") { .int($0.smallest?.size) },
        Column("key_size_source") { .text($0.smallest?.session.keySizeSource?.kind) },
        Column("key_size_frame") { .int($0.smallest?.session.keySizeSource?.frame) },
        Column("security_findings") { .int($0.findings.count) },
        Column("worst_rule") { .text($0.findings.first?.rule) },
        Column("worst_severity") { .text($0.findings.first?.severity.rawValue) },
    ])

    /// The security rows of a capture: one per link, with its security and link-layer findings worst first.
    static func securityRows(id: String, _ f: FileAnalysis) -> [SecurityRow] {
        let mine = f.diagnosis.findings.filter(\.isSecurity)
        return f.connections.map { c in
            let findings = mine.filter { $0.connection == c.number }.enumerated()
                .sorted { ($0.element.severity, -$0.offset) > ($1.element.severity, -$1.offset) }.map(\.element)
            return SecurityRow(id: id, connection: c, findings: findings)
        }
    }
}
