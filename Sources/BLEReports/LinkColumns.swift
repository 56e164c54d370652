import BLEAnalysis
import BLECore
import BLEProtocols

/// The link fields every output writes (connection interval, peripheral latency, supervision timeout, PHY, data length,
/// ATT_MTU, encryption), declared once over a ``LinkSnapshot``: `throughput` (each stream's and period's `link`), `ota`
/// (each session's `link`), `report` (each connection's `link`, its Markdown and HTML connection tables) and the fleet
/// tables read these columns, lifted to their rows, so a field has one key, one value and one spelling everywhere.
///
/// JSON: `{"interval_ms", "latency", "timeout_ms", "phy_tx", "phy_rx", "max_tx_octets", "max_rx_octets", "mtu",
/// "encrypted", "ceiling_tx_bps", "assumed", "inferred"}` (`schemas/throughput.schema.json#/$defs/link`, which the
/// other schemas reference). A PHY is named as the link layer names it (`1M`, `2M`, `Coded`): which coding a Coded link
/// uses is not a link fact (the ceiling assumes S8, the worst case, and says so in its own field).
public enum LinkColumns {
    public typealias Row = LinkSnapshot

    /// Connection interval, peripheral latency and supervision timeout: the fields of a parameters change, nil before
    /// one is known.
    public static let interval = Column<ConnectionParameters?>(
        "interval_ms", csv: "interval_ms", text: TextColumn("interval", width: 9, .right) { $0.map(intervalText) ?? "—" }
    ) { .double($0.map(intervalMilliseconds), decimals: 2) }

    public static let latency = Column<ConnectionParameters?>(
        "latency", text: TextColumn("latency", width: 7, .right) { $0.map { String($0.latency) } ?? "—" }
    ) { .int($0.map { Int($0.latency) }) }

    public static let timeout = Column<ConnectionParameters?>(
        "timeout_ms", text: TextColumn("timeout", width: 9, .right) { $0.map(timeoutText) ?? "—" }
    ) { .int($0.map(timeoutMilliseconds)) }

    /// `interval / latency / timeout`: the three in one text cell (`30.00 ms / 0 / 4000 ms`).
    public static let parametersCell = Column<ConnectionParameters?>.textOnly(
        TextColumn("interval / latency / timeout", width: 28) { $0.map(parametersText) ?? "—" })

    public static let phyTx = Column<PHYPair>("phy_tx") { .text($0.tx.description) }
    public static let phyRx = Column<PHYPair>("phy_rx") { .text($0.rx.description) }
    /// Both directions in one word where they agree (`2M`), `tx 2M / rx 1M` otherwise: the CSV's and the texts' PHY.
    public static let phy = Column<PHYPair>(nil, csv: "phy", text: TextColumn("PHY", width: 5) { $0.description }) {
        .text($0.description)
    }

    public static let maxTxOctets = Column<DataLength>("max_tx_octets") { .int(Int($0.maxTxOctets)) }
    public static let maxRxOctets = Column<DataLength>("max_rx_octets") { .int(Int($0.maxRxOctets)) }
    /// `251/27`: the most payload octets per link-layer packet, sent / received.
    public static let dataLength = Column<DataLength>(
        nil, csv: "data_length", text: TextColumn("DL tx/rx", width: 8) { dataLengthText($0) }
    ) {
        .text(dataLengthText($0))
    }

    /// The ATT_MTU: JSON and CSV the number, the text `≥ 243` where it is only known to be at least that (its source,
    /// with the frame, is the connection's ``ConnectionColumns/mtuSource`` and ``ConnectionColumns/mtuBasis``).
    public static let mtu = Column<Row>("mtu", csv: "mtu", text: TextColumn("MTU", width: 5, .right) { mtuText($0) }) { .int($0.mtu) }

    public static let encrypted = Column<Row>(
        "encrypted", text: TextColumn("encrypted", width: 9) { $0.encrypted ? "yes" : "no" }
    ) { .bool($0.encrypted) }

    /// The notification ceiling the capturing side's sending direction can reach on this link (``ThroughputCeiling``).
    public static let ceilingTx = Column<Row>("ceiling_tx_bps") { .double(ThroughputCeiling.ceiling(for: $0, direction: .tx), decimals: 0) }

    public static let assumed = Column<Row>("assumed") { l in
        .json { w, key in
            w.beginArray(key)
            for name in l.unseen.assumedNames { w.value(name) }
            w.endArray()
        }
    }
    public static let inferred = Column<Row>("inferred") { l in
        .json { w, key in
            w.beginArray(key)
            for name in l.unseen.inferredNames { w.value(name) }
            w.endArray()
        }
    }

    /// Every link field, in the order the JSON writes them.
    public static let all: [Column<Row>] = {
        let parameters: [Column<Row>] = [interval, latency, timeout, parametersCell].lifted { (l: Row) in l.parameters }
        let phys: [Column<Row>] = [phyTx, phyRx, phy].lifted { (l: Row) in l.phy }
        let lengths: [Column<Row>] = [maxTxOctets, maxRxOctets, dataLength].lifted { (l: Row) in l.dataLength }
        let rest: [Column<Row>] = [mtu, encrypted, ceilingTx, assumed, inferred]
        return parameters + phys + lengths + rest
    }()
    public static let table = ColumnTable(all)

    /// One link field, by its JSON key or CSV name (a text-only field by its title).
    public static func field(_ name: String) -> Column<Row> {
        guard let c = all.first(where: { ($0.key ?? $0.csv ?? $0.text?.title) == name }) else {
            preconditionFailure("no link field \(name)")
        }
        return c
    }

    /// `{link}` under `key`: the link object of every output. A BR/EDR link's is `{"transport": "bredr", "encrypted"}`:
    /// no interval, PHY, data length, ATT_MTU or ceiling, which exist on LE only (its own facts are the connection's
    /// `bredr` object, ``ClassicLinkColumns``).
    public static func write(_ link: Row, key: String, to w: inout JSONWriter) {
        w.beginObject(key)
        if link.transport == .bredr {
            w.field("transport", "bredr")
            encrypted.cell(link).write("encrypted", to: &w)
        } else {
            table.writeFields(link, to: &w)
        }
        w.endObject()
    }

    /// The fields an LE link has and a BR/EDR link never does (every field but `encrypted`).
    public static func isLEOnly(_ name: String) -> Bool { name != "encrypted" }

    // MARK: The spellings, one per field

    public static func intervalMilliseconds(_ p: ConnectionParameters) -> Double { Double(p.intervalMicroseconds) / 1000 }
    public static func timeoutMilliseconds(_ p: ConnectionParameters) -> Int { ConnectionTiming.supervisionTimeoutMilliseconds(p.timeout) }
    /// `30.00 ms`.
    public static func intervalText(_ p: ConnectionParameters) -> String { String(fractionDigits: 2, intervalMilliseconds(p)) + " ms" }
    /// `4000 ms`.
    public static func timeoutText(_ p: ConnectionParameters) -> String { "\(timeoutMilliseconds(p)) ms" }
    /// `30.00 ms / 0 / 4000 ms`: interval, peripheral latency (connection events it may skip), supervision timeout.
    public static func parametersText(_ p: ConnectionParameters) -> String {
        "\(intervalText(p)) / \(p.latency) / \(timeoutText(p))"
    }
    /// `interval 30.00 ms, latency 0, timeout 4000 ms`.
    public static func parametersPhrase(_ p: ConnectionParameters) -> String {
        "interval \(intervalText(p)), latency \(p.latency), timeout \(timeoutText(p))"
    }
    public static func dataLengthText(_ d: DataLength) -> String { "\(d.maxTxOctets)/\(d.maxRxOctets)" }
    /// `data length tx 251 octets / 2120 µs, rx 251 octets / 2120 µs`: a data length in words.
    public static func dataLengthPhrase(_ d: DataLength) -> String {
        "data length tx \(d.maxTxOctets) octets / \(d.maxTxTime) µs, rx \(d.maxRxOctets) octets / \(d.maxRxTime) µs"
    }
    /// `247`, or `≥ 243` for an ATT_MTU known only from the largest PDU.
    public static func mtuText(_ l: Row) -> String { (l.unseen.contains(.mtuAtLeast) ? "≥ " : "") + String(l.mtu) }

    /// `interval 15.00 ms, latency 0, timeout 4000 ms, PHY 1M, data length 251/251, ATT_MTU 247, encrypted`, and what
    /// the capture did not show: a link in one line of text (`ota`).
    public static func sentence(_ l: Row) -> String {
        if l.transport == .bredr { return "BR/EDR" + (l.encrypted ? ", encrypted" : "") }
        var parts: [String] = []
        if let p = l.parameters { parts.append(parametersPhrase(p)) }
        parts.append("PHY \(l.phy.description)")
        parts.append("data length \(dataLengthText(l.dataLength))")
        parts.append("ATT_MTU \(mtuText(l))")
        if l.encrypted { parts.append("encrypted") }
        let caveat = l.unseen.caveat(mtu: l.mtu)
        return parts.joined(separator: ", ") + (caveat.isEmpty ? "" : " " + caveat)
    }
}

/// A change of one link fact in words, with its frame: what the report's change history, its key events and the links
/// chart's ticks say, from ``LinkColumns/changes(of:)``.
public struct LinkChange: Hashable, Sendable {
    public var frame: Int
    public var time: Timestamp
    /// `parameters`, `phy`, `data-length`, `mtu` or `encryption`.
    public var kind: String
    public var text: String
}

extension LinkColumns {
    /// Every change of the link's facts, in words (``LinkChange``), fact by fact (each in frame order).
    public static func changes(of link: LinkState) -> [LinkChange] {
        var out: [LinkChange] = ClassicLinkColumns.changes(of: link)
        for p in link.parameters.changes {
            out.append(LinkChange(frame: p.frame, time: p.timestamp, kind: "parameters", text: parametersPhrase(p.value)))
        }
        for p in link.phy.changes {
            out.append(LinkChange(frame: p.frame, time: p.timestamp, kind: "phy", text: "PHY " + p.value.description))
        }
        for d in link.dataLength.changes {
            out.append(LinkChange(frame: d.frame, time: d.timestamp, kind: "data-length", text: dataLengthPhrase(d.value)))
        }
        for m in link.mtu.changes {
            let text =
                if case .inferred = m.source { "ATT_MTU ≥ \(m.value) (\(m.source.description))" } else { "ATT_MTU \(m.value)" }
            out.append(LinkChange(frame: m.frame, time: m.timestamp, kind: "mtu", text: text))
        }
        for e in link.encryption.changes {
            out.append(
                LinkChange(frame: e.frame, time: e.timestamp, kind: "encryption", text: e.value ? "encryption on" : "encryption off"))
        }
        return out
    }
}

/// The fields of a connection besides its link (``LinkColumns``, lifted to the link in force at its end): peer, role,
/// and where the ATT_MTU came from. Read by `report` (JSON, Markdown, HTML), `gatt` and the fleet tables.
public enum ConnectionColumns {
    public typealias Row = Connection

    public static let peer = Column<Row>("peer", text: TextColumn("peer", width: 17) { peerText($0) ?? "—" }) { .text($0.peerAddress) }
    public static let peerType = Column<Row>("peer_type") { .text($0.peerAddressType) }
    /// The local side's role (`central`, `peripheral`), null when the capture does not say.
    public static let role = Column<Row>("role", text: TextColumn("role", width: 10) { $0.role?.rawValue ?? "—" }) {
        .text($0.role?.rawValue)
    }
    /// `observed`, `inferred` or `assumed` (``FactSource/kind``); null on BR/EDR (no ATT_MTU on its fixed channels).
    public static let mtuSource = Column<Row>("mtu_source") { .text($0.isBREDR ? nil : $0.link.mtu.source.kind) }
    /// `observed at frame 34`, `inferred: at least the 243-byte ATT PDU at frame 84`, `assumed (default)`.
    public static let mtuBasis = Column<Row>("mtu_basis") { .text($0.isBREDR ? nil : $0.link.mtu.source.description) }

    /// The link in force at the connection's end, field by field (an LE-only field is null on a BR/EDR link).
    public static let link: [Column<Row>] = LinkColumns.all.map(lift)
    /// One link field of the connection (``LinkColumns/field(_:)``).
    public static func link(_ name: String) -> Column<Row> { lift(LinkColumns.field(name)) }
    static func lift(_ column: Column<LinkSnapshot>) -> Column<Row> {
        let name = column.key ?? column.csv ?? column.text?.title ?? ""
        guard LinkColumns.isLEOnly(name) else { return column.lifted { (c: Row) in c.link.snapshot } }
        return column.lifted(optional: { (c: Row) in c.isBREDR ? nil : c.link.snapshot })
    }
    /// `"link": {link}`: the link in force at the connection's end.
    public static let linkObject = Column<Row>("link") { c in .json { w, key in LinkColumns.write(c.link.snapshot, key: key, to: &w) } }

    /// `C4:7D:2A:10:5E:80 (random)`: the peer's address with its type, as the texts give it (nil: not known).
    public static func peerText(_ c: Row) -> String? { c.peerAddress.map { $0 + (c.peerAddressType.map { " (\($0))" } ?? "") } }

    /// `ATT_MTU 247 (observed at frame 34)`, `ATT_MTU ≥ 243 (inferred: at least the 243-byte ATT PDU at frame 84)`: the
    /// value with where it came from.
    public static func mtuWithSource(_ c: Row) -> String {
        let source = c.link.mtu.source
        let basis = if case .assumed = source { "assumed: the default, the capture does not show it" } else { source.description }
        return "ATT_MTU \(LinkColumns.mtuText(c.link.snapshot)) (\(basis))"
    }
}
