import BLEAnalysis
import BLECore

/// How a handle was used during a connection (for `blescope gatt`).
public struct HandleUsage: Hashable, Sendable {
    public var reads = 0
    public var writes = 0
    public var writeCommands = 0
    public var notifications = 0
    public var indications = 0
    public init() {}
    public var isEmpty: Bool { reads + writes + writeCommands + notifications + indications == 0 }
    public var description: String {
        var parts: [String] = []
        if reads > 0 { parts.append("\(reads) read\(reads == 1 ? "" : "s")") }
        if writes > 0 { parts.append("\(writes) write\(writes == 1 ? "" : "s")") }
        if writeCommands > 0 { parts.append("\(writeCommands) write-cmd") }
        if notifications > 0 { parts.append("\(notifications) notif.") }
        if indications > 0 { parts.append("\(indications) indic.") }
        return parts.joined(separator: ", ")
    }
}

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

    public func render(_ db: GATTDatabase, usage: [UInt16: HandleUsage] = [:], codecFor: (UInt16) -> String? = { _ in nil }) -> String {
        var out = ""
        func usageText(_ h: UInt16) -> String {
            var parts: [String] = []
            if let u = usage[h], !u.isEmpty { parts.append(u.description) }
            if let c = codecFor(h) { parts.append("codec " + c) }
            return parts.isEmpty ? "" : terminal.paint("  [" + parts.joined(separator: "; ") + "]", .dim)
        }
        var shown = Set<UInt16>()
        for s in db.services {
            out += terminal.paint("\(hex(s.startHandle, width: 4))–\(hex(s.endHandle, width: 4))", .dim) + "  "
                + terminal.paint((s.isPrimary ? "" : "secondary ") + "service " + label(s.uuid), .bold) + "\n"
            for c in db.characteristics where c.declarationHandle > s.startHandle && c.declarationHandle <= s.endHandle {
                out += "  " + terminal.paint(hex(c.valueHandle, width: 4), .dim) + "  " + label(c.uuid)
                    + "  " + terminal.paint(c.properties.description, .cyan) + usageText(c.valueHandle) + "\n"
                shown.insert(c.valueHandle)
                shown.insert(c.declarationHandle)
                for (h, t) in db.attributeTypes.sorted(by: { $0.key < $1.key }) where h > c.valueHandle {
                    guard db.characteristic(owning: h) == c, ![0x2800, 0x2801, 0x2802, 0x2803].contains(t.uuid16 ?? 0) else { continue }
                    out += "      " + terminal.paint(hex(h, width: 4), .dim) + "  " + label(t) + usageText(h) + "\n"
                    shown.insert(h)
                }
            }
        }
        // Handles used but not discovered (or named by the user's map).
        let extra = Set(usage.keys).union(db.userNames.keys).subtracting(shown).sorted()
        if !extra.isEmpty {
            out += terminal.paint("handles outside the discovered database", .bold) + "\n"
            for h in extra {
                let n = db.userNames[h] ?? db.uuid(for: h).map(label) ?? "unknown"
                out += "  " + terminal.paint(hex(h, width: 4), .dim) + "  " + n + usageText(h) + "\n"
            }
        }
        return out
    }
}
