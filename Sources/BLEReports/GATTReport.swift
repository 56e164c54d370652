import BLEAnalysis
import BLECodecs
import BLECore
import BLEProtocols

/// Renders a GATT database as an indented tree: services, characteristics, descriptors.
public struct GATTTextRenderer {
    public var terminal: Terminal
    /// Names a UUID (SIG assigned numbers, vendor catalogue, codecs).
    public var name: (BluetoothUUID) -> String?

    public init(terminal: Terminal, name: @escaping (BluetoothUUID) -> String?) {
        self.terminal = terminal
        self.name = name
    }

    private func label(_ uuid: BluetoothUUID) -> String {
        if let n = name(uuid) { return "\(n) (\(uuid))" }
        return uuid.description
    }

    /// `inferred`: handles named from their values' layout (``InferredLayout``), for those nothing else named.
    public func render(_ db: GATTDatabase, usage: [UInt16: HandleUsage] = [:], inferred: [UInt16: InferredLayout] = [:]) -> String {
        var out = ""
        func usageText(_ h: UInt16) -> String {
            var parts: [String] = []
            if let u = usage[h], !u.isEmpty { parts.append(u.description) }
            if let u = usage[h], !u.codecs.isEmpty { parts.append("codec " + u.codecs.sorted().joined(separator: ", ")) }
            return parts.isEmpty ? "" : terminal.paint("  [" + parts.joined(separator: "; ") + "]", .dim)
        }
        var shown = Set<UInt16>()
        for s in db.services {
            out +=
                terminal.paint("\(hex(s.startHandle, width: 4))–\(hex(s.endHandle, width: 4))", .dim) + "  "
                + terminal.paint((s.isPrimary ? "" : "secondary ") + "service " + label(s.uuid), .bold) + "\n"
            for c in db.characteristics where c.declarationHandle > s.startHandle && c.declarationHandle <= s.endHandle {
                out +=
                    "  " + terminal.paint(hex(c.valueHandle, width: 4), .dim) + "  " + label(c.uuid)
                    + "  " + terminal.paint(c.properties.description, .cyan) + usageText(c.valueHandle) + "\n"
                shown.insert(c.valueHandle)
                shown.insert(c.declarationHandle)
                for (h, t) in db.attributeTypes.sorted(by: { $0.key < $1.key }) where h > c.valueHandle {
                    guard db.characteristic(owning: h) == c, !GATTAttributeType.declarations.contains(t.uuid16 ?? 0) else { continue }
                    out += "      " + terminal.paint(hex(h, width: 4), .dim) + "  " + label(t) + usageText(h) + "\n"
                    shown.insert(h)
                }
            }
        }
        // Handles used but not discovered (or named by the user's map).
        let extra = Set(usage.keys).union(db.userNames.keys).union(db.learnedTypes.keys).subtracting(shown).sorted()
        if !extra.isEmpty {
            out += terminal.paint("handles outside the discovered database", .bold) + "\n"
            for h in extra {
                let layout = db.userNames[h] == nil && db.uuid(for: h) == nil ? inferred[h] : nil
                let n = db.userNames[h] ?? db.uuid(for: h).map(label) ?? layout.map { $0.uuid.map(label) ?? $0.name } ?? "unknown"
                // A name the traffic taught says how it was learned; one inferred from the values' layout says so.
                let how =
                    db.userNames[h] == nil
                    ? db.learnedTypes[h].map { "  (learned from \($0.how))" } ?? layout.map { "  (\($0.how))" } ?? "" : ""
                out += "  " + terminal.paint(hex(h, width: 4), .dim) + "  " + n + usageText(h) + how + "\n"
            }
        }
        return out
    }
}

/// `blescope gatt`: every connection's database, in text or JSON.
public struct GATTReport {
    public var connections: [Connection]
    public var usage: GATTUsage
    /// What the capture cannot show, in the JSON when the command read the capture itself (the report says it once).
    public var log: LogScope?

    public init(connections: [Connection], usage: GATTUsage) {
        self.connections = connections
        self.usage = usage
    }

    public func text(terminal: Terminal) -> String {
        let renderer = GATTTextRenderer(terminal: terminal) { AssignedNumbers.name(for: $0) }
        var out = ""
        for c in connections where hasDatabase(c) {
            out += connectionText(c, renderer: renderer, terminal: terminal)
        }
        return out.isEmpty ? "No GATT database or attribute traffic in this capture.\n" : out
    }

    /// Whether `c` has a database or attribute traffic to show: the peer's as server, or this side's (a peripheral-side
    /// log, where the peer discovers and reads this side's database: issue 49, point 6).
    func hasDatabase(_ c: Connection) -> Bool {
        !c.gatt.isEmpty || !(usage.byConnection[c.number]?.isEmpty ?? true) || !c.localGATT.isEmpty
            || !(usage.localByConnection[c.number]?.isEmpty ?? true)
    }

    /// The peer's database or its use is in the capture (this side acted as GATT client).
    func hasPeerDatabase(_ c: Connection) -> Bool { !c.gatt.isEmpty || !(usage.byConnection[c.number]?.isEmpty ?? true) }

    /// One connection's heading, database, bearers and attributes. Its own function: inlined into ``text(terminal:)``,
    /// Swift 6.3.1's release optimizer crashed on the loop (CopyPropagation, signal 6).
    @inline(never)
    func connectionText(_ c: Connection, renderer: GATTTextRenderer, terminal: Terminal) -> String {
        var head = "Connection #\(c.number)  handle \(hex(c.handle, width: 4))"
        if let peer = ConnectionColumns.peerText(c) { head += "  peer \(peer)" }
        if let identity = c.peerIdentity { head += " = identity \(identity)" }
        head += "  frames \(c.startFrame)–\(c.endFrame.map(String.init) ?? "end")"
        if c.inferred { head += "  (inferred)" }
        var out = terminal.paint(head, .bold) + "\n"
        let peer = hasPeerDatabase(c)
        let source =
            !peer
            ? "the peer's: none (this side was the GATT server)"
            : c.gatt.isEmpty ? "none (no discovery in the capture)" : c.gatt.source.rawValue
        out += terminal.paint("  database: " + source + ", " + Self.mtuText(c), .dim) + "\n"
        if c.gatt.isEmpty && peer {
            out += terminal.paint("  names: give --gatt FILE (a map of handles to UUIDs or names) to name these handles", .dim) + "\n"
        }
        let bearers = c.attBearers
        if bearers.contains(where: { $0.kind != .leFixed }) {
            // Only where a dynamic bearer exists, so that LE-only captures read as before.
            let list = bearers.map { b in
                b.kind == .leFixed
                    ? "le-fixed ATT_MTU \(b.mtu ?? 23)"
                    : "\(b.kind) CID \(hex(b.txCID, width: 4))/\(hex(b.rxCID, width: 4)) ATT_MTU \(b.mtu.map(String.init) ?? "?") from frame \(b.openFrame ?? 0)"
            }
            out += terminal.paint("  bearers (CID tx/rx): " + list.joined(separator: "; "), .dim) + "\n"
        }
        if peer {
            let rendered = renderer.render(c.gatt, usage: usage.byConnection[c.number] ?? [:], inferred: usage.layouts[c.number] ?? [:])
            out += Self.indented(rendered)
        }
        let localUsage = usage.localByConnection[c.number] ?? [:]
        if !c.localGATT.isEmpty || !localUsage.isEmpty {
            out += terminal.paint("  this side's own database, as the peer discovered and used it:", .dim) + "\n"
            out += Self.indented(renderer.render(c.localGATT, usage: localUsage))
        }
        return out + "\n"
    }

    /// Each non-empty line two spaces in.
    static func indented(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "  " + $0 }.joined(separator: "\n")
    }

    /// `ATT_MTU 247 (observed at frame 34)`: ``ConnectionColumns/mtuWithSource(_:)``, as every output gives it.
    static func mtuText(_ c: Connection) -> String { ConnectionColumns.mtuWithSource(c) }

    public var json: String {
        var w = JSONWriter()
        w.beginObject()
        w.beginArray("connections")
        for c in connections where hasDatabase(c) {
            let used = usage.byConnection[c.number] ?? [:]
            w.beginObject()
            w.field("conn", c.handle)
            w.field("conn_number", c.number)
            Self.writeField(ConnectionColumns.peer, c, to: &w)
            w.field("peer_identity", c.peerIdentity)
            w.field("source", c.gatt.isEmpty ? nil : c.gatt.source.rawValue)
            for column in [ConnectionColumns.link("mtu"), ConnectionColumns.mtuSource, ConnectionColumns.mtuBasis] {
                Self.writeField(column, c, to: &w)
            }
            let bearers = c.attBearers
            if bearers.contains(where: { $0.kind != .leFixed }) {
                // Only where a dynamic bearer exists (BR/EDR, EATT): LE-only outputs stay as they were.
                w.beginArray("bearers")
                for b in bearers {
                    w.beginObject()
                    w.field("bearer", b.kind.rawValue)
                    w.field("cid_tx", b.txCID)
                    w.field("cid_rx", b.rxCID)
                    w.field("mtu", b.mtu)
                    w.field("open_frame", b.openFrame)
                    w.endObject()
                }
                w.endArray()
            }
            writeServices("services", c.gatt, used: used, into: &w)
            w.beginArray("handles_used")
            // Handles used, and those the traffic named without a use counted (a Read By Type's items).
            let learned = c.gatt.learnedTypes.keys.filter { c.gatt.role(of: $0) == nil }
            let inferred = usage.layouts[c.number] ?? [:]
            for h in Set(used.keys).union(learned).sorted() {
                // Named from the values' layout only where nothing else named the handle.
                let layout = c.gatt.uuid(for: h) == nil ? inferred[h] : nil
                let uuid = c.gatt.uuid(for: h) ?? layout?.uuid
                w.beginObject()
                w.field("handle", h)
                w.field("uuid", uuid?.uuidString)
                w.field("name", uuid.flatMap { AssignedNumbers.name(for: $0) } ?? layout?.name)
                w.field("learned_from", c.gatt.role(of: h) == nil ? c.gatt.learnedTypes[h]?.how ?? layout?.how : nil)
                writeUsage(used[h], into: &w)
                w.endObject()
            }
            w.endArray()
            writeThisSide(c, into: &w)
            w.endObject()
        }
        w.endArray()
        if let log { writeCompleteness(log.completeness, into: &w) }
        w.endObject()
        return w.string
    }

    /// This side's own database as the peer discovered and used it (the peer as GATT client), when the capture shows
    /// it: `this_side` {`services`, `handles_used`}, marked apart from the peer's.
    private func writeThisSide(_ c: Connection, into w: inout JSONWriter) {
        let used = usage.localByConnection[c.number] ?? [:]
        guard !c.localGATT.isEmpty || !used.isEmpty else { return }
        w.beginObject("this_side")
        writeServices("services", c.localGATT, used: used, into: &w)
        w.beginArray("handles_used")
        for h in used.keys.sorted() {
            let uuid = c.localGATT.uuid(for: h)
            w.beginObject()
            w.field("handle", h)
            w.field("uuid", uuid?.uuidString)
            w.field("name", uuid.flatMap { AssignedNumbers.name(for: $0) })
            w.field("learned_from", nil as String?)
            writeUsage(used[h], into: &w)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    /// A database's services, characteristics and descriptors, each attribute with its use.
    private func writeServices(_ key: String, _ db: GATTDatabase, used: [UInt16: HandleUsage], into w: inout JSONWriter) {
        w.beginArray(key)
        for s in db.services {
            w.beginObject()
            w.field("start_handle", s.startHandle)
            w.field("end_handle", s.endHandle)
            w.field("uuid", s.uuid.uuidString)
            w.field("name", AssignedNumbers.name(for: s.uuid))
            w.field("primary", s.isPrimary)
            w.beginArray("characteristics")
            for ch in db.characteristics where ch.declarationHandle > s.startHandle && ch.declarationHandle <= s.endHandle {
                w.beginObject()
                w.field("declaration_handle", ch.declarationHandle)
                w.field("value_handle", ch.valueHandle)
                w.field("uuid", ch.uuid.uuidString)
                w.field("name", AssignedNumbers.name(for: ch.uuid))
                w.beginArray("properties")
                for p in ch.properties.names { w.value(p) }
                w.endArray()
                writeUsage(used[ch.valueHandle], into: &w)
                w.beginArray("descriptors")
                for (h, t) in db.attributeTypes.sorted(by: { $0.key < $1.key }) where h > ch.valueHandle {
                    guard db.characteristic(owning: h) == ch, !GATTAttributeType.declarations.contains(t.uuid16 ?? 0) else {
                        continue
                    }
                    w.beginObject()
                    w.field("handle", h)
                    w.field("uuid", t.uuidString)
                    w.field("name", AssignedNumbers.name(for: t))
                    writeUsage(used[h], into: &w)
                    w.endObject()
                }
                w.endArray()
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        w.endArray()
    }

    /// One shared connection field (``ConnectionColumns``) under its key.
    static func writeField(_ column: Column<Connection>, _ c: Connection, to w: inout JSONWriter) {
        column.cell(c).write(column.key ?? "", to: &w)
    }

    private func writeUsage(_ u: HandleUsage?, into w: inout JSONWriter) {
        let u = u ?? HandleUsage()
        w.beginObject("usage")
        w.field("reads", u.reads)
        w.field("writes", u.writes)
        w.field("write_commands", u.writeCommands)
        w.field("notifications", u.notifications)
        w.field("indications", u.indications)
        w.beginArray("codecs")
        for c in u.codecs.sorted() { w.value(c) }
        w.endArray()
        w.endObject()
    }
}
