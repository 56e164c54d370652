import BLEAnalysis
import BLECodecs
import BLECore
import BLEProtocols

/// GATT differences of one peer: services, characteristics and descriptors matched by UUID (the n-th of a UUID in a
/// service with the n-th), never by handle, so a database whose handles moved compares equal but for one line saying
/// so. What an added or removed service holds is not listed again.
enum DiffGATT {
    /// One attribute of a database, keyed by its path of UUIDs: `180F#1/2A19#1/2902#1`.
    struct Entity {
        enum Level: Int { case service, characteristic, descriptor }
        var level: Level
        var key: String
        var parent: String?
        var uuid: BluetoothUUID
        var handle: UInt16
        var properties: CharacteristicProperties?
        var frame: Int?
    }

    static func entities(_ db: GATTDatabase) -> [Entity] {
        var out: [Entity] = []
        var seen: [String: Int] = [:]
        func key(_ parent: String?, _ uuid: BluetoothUUID) -> String {
            let base = (parent.map { $0 + "/" } ?? "") + uuid.description
            seen[base, default: 0] += 1
            return base + "#\(seen[base]!)"
        }
        for s in db.services {
            let sk = key(nil, s.uuid)
            out.append(Entity(level: .service, key: sk, uuid: s.uuid, handle: s.startHandle, frame: s.discoveredAt))
            for c in db.characteristics where c.declarationHandle > s.startHandle && c.declarationHandle <= s.endHandle {
                let ck = key(sk, c.uuid)
                out.append(
                    Entity(
                        level: .characteristic, key: ck, parent: sk, uuid: c.uuid, handle: c.valueHandle, properties: c.properties,
                        frame: c.discoveredAt))
                for (h, t) in db.attributeTypes.sorted(by: { $0.key < $1.key }) where h > c.valueHandle {
                    guard db.characteristic(owning: h) == c, !GATTAttributeType.declarations.contains(t.uuid16 ?? 0) else { continue }
                    out.append(Entity(level: .descriptor, key: key(ck, t), parent: ck, uuid: t, handle: h, frame: c.discoveredAt))
                }
            }
        }
        return out
    }

    /// `characteristic 0x2A19 Battery Level`.
    static func label(_ e: Entity) -> String {
        let what = ["service", "characteristic", "descriptor"][e.level.rawValue]
        return what + " " + e.uuid.description + (AssignedNumbers.name(for: e.uuid).map { " " + $0 } ?? "")
    }

    /// The differences between the databases of one peer in A and in B (`connections` names them in the output): what
    /// was removed ranks first (a client that used it breaks), then changed properties, then additions.
    /// `side` names whose database it is when it is not the peer's (`this side's `).
    static func compare(_ a: GATTDatabase, _ b: GATTDatabase, connections: (Int?, Int?), side: String = "") -> [Difference] {
        func label(_ e: Entity) -> String { side + Self.label(e) }
        let ea = entities(a), eb = entities(b)
        let byKeyA = Dictionary(ea.map { ($0.key, $0) }, uniquingKeysWith: { x, _ in x })
        let byKeyB = Dictionary(eb.map { ($0.key, $0) }, uniquingKeysWith: { x, _ in x })
        var out: [Difference] = []
        for e in ea where byKeyB[e.key] == nil && (e.parent.map { byKeyB[$0] != nil } ?? true) {
            out.append(
                Difference(
                    .gatt, kindName(e.level) + "-removed", impact: .major, subject: label(e) + placement(e, byKeyA),
                    a: hex(e.handle, width: 4), b: nil, frames: (e.frame, nil), connections: (connections.0, connections.1),
                    magnitude: Double(10 - e.level.rawValue)))
        }
        for e in eb where byKeyA[e.key] == nil && (e.parent.map { byKeyA[$0] != nil } ?? true) {
            out.append(
                Difference(
                    .gatt, kindName(e.level) + "-added", impact: .major, subject: label(e) + placement(e, byKeyB),
                    a: nil, b: hex(e.handle, width: 4), frames: (nil, e.frame), connections: (connections.0, connections.1),
                    magnitude: Double(3 - e.level.rawValue)))
        }
        var moved: [(Entity, Entity)] = []
        for x in ea {
            guard let y = byKeyB[x.key] else { continue }
            if let pa = x.properties, let pb = y.properties, pa != pb {
                out.append(
                    Difference(
                        .gatt, "properties-changed", impact: .major, subject: label(x) + placement(x, byKeyA) + " properties",
                        a: pa.description, b: pb.description, frames: (x.frame, y.frame), connections: (connections.0, connections.1),
                        magnitude: 2))
            }
            if x.handle != y.handle { moved.append((x, y)) }
        }
        if let (x, y) = moved.first {
            let first = label(x) + " \(hex(x.handle, width: 4)) → \(hex(y.handle, width: 4))"
            let levels = (0..<3).compactMap { level -> String? in
                let n = moved.filter { $0.0.level.rawValue == level }.count
                return n == 0 ? nil : "\(n) \(kindName(Entity.Level(rawValue: level)!))\(n == 1 ? "" : "s")"
            }
            out.append(
                Difference(
                    .gatt, "handles-moved", impact: .info,
                    subject: "\(moved.count) attribute\(moved.count == 1 ? "" : "s") at other handles (\(levels.joined(separator: ", "));"
                        + " first: \(first))",
                    a: nil, b: nil, frames: (x.frame, y.frame), connections: (connections.0, connections.1),
                    magnitude: Double(moved.count)))
        }
        return out
    }

    static func kindName(_ level: Entity.Level) -> String {
        ["service", "characteristic", "descriptor"][level.rawValue]
    }

    /// ` in service 0x180F` for a characteristic, ` of characteristic 0x2A37` for a descriptor.
    private static func placement(_ e: Entity, _ byKey: [String: Entity]) -> String {
        guard let p = e.parent.flatMap({ byKey[$0] }) else { return "" }
        return (e.level == .descriptor ? " of " : " in ") + kindName(p.level) + " " + p.uuid.description
    }
}
