import BLECore
import BLEYAML

/// A user-supplied handle map (`--gatt FILE`) for captures without GATT discovery.
///
/// ```yaml
/// # handle: UUID, or {uuid: UUID, name: NAME}; optional "peer:" scopes a map to one device address
/// 0x000e: {uuid: 2A37, name: Heart Rate Measurement}
/// 0x0010: 8EC90001-F315-4F60-9FB8-838830DAEA50
/// 0x0012: {name: Bracelet command}
/// ```
public struct GATTMap: Sendable {
    public var entries: [UInt16: (uuid: BluetoothUUID?, name: String?)]

    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    public init(entries: [UInt16: (uuid: BluetoothUUID?, name: String?)]) { self.entries = entries }

    public init(yaml text: String, file: String = "gatt map") throws(LoadError) {
        let node: Node?
        do { node = try YAML.compose(yaml: text) } catch { throw LoadError(description: "\(file): not valid YAML: \(error)") }
        guard let mapping = node?.mapping else { throw LoadError(description: "\(file): expected a mapping of handle: UUID") }
        var entries: [UInt16: (uuid: BluetoothUUID?, name: String?)] = [:]
        for (key, value) in mapping {
            let line = (key.mark?.line).map { ":\($0)" } ?? ""
            guard let k = key.scalar?.string, let handle = GATTMap.parseHandle(k) else {
                throw LoadError(description: "\(file)\(line): '\(key.scalar?.string ?? "?")' is not a handle (0x0001–0xFFFF)")
            }
            if let s = value.scalar?.string {
                guard let uuid = BluetoothUUID(s) else { throw LoadError(description: "\(file)\(line): '\(s)' is not a UUID") }
                entries[handle] = (uuid, nil)
            } else if let m = value.mapping {
                var uuid: BluetoothUUID? = nil
                if let s = m["uuid"]?.scalar?.string {
                    guard let u = BluetoothUUID(s) else { throw LoadError(description: "\(file)\(line): '\(s)' is not a UUID") }
                    uuid = u
                }
                let name = m["name"]?.scalar?.string
                guard uuid != nil || name != nil else { throw LoadError(description: "\(file)\(line): give a uuid or a name") }
                entries[handle] = (uuid, name)
            } else {
                throw LoadError(description: "\(file)\(line): expected a UUID or {uuid:, name:}")
            }
        }
        self.entries = entries
    }

    static func parseHandle(_ s: String) -> UInt16? {
        let t = s.trimmingWhitespace()
        let v = t.hasPrefix("0x") || t.hasPrefix("0X") ? UInt16(t.dropFirst(2), radix: 16) : UInt16(t)
        return v == 0 ? nil : v
    }

    /// The map as a database (source: user map), for attribution.
    public var database: GATTDatabase {
        var db = GATTDatabase()
        db.source = .userMap
        for (handle, entry) in entries {
            if let uuid = entry.uuid {
                db.addCharacteristic(
                    .init(declarationHandle: handle &- 1, properties: [], valueHandle: handle, uuid: uuid, discoveredAt: 0))
            }
            if let name = entry.name { db.userNames[handle] = name }
        }
        return db
    }
}
