import BLECore
import BLEProtocols

/// Characteristic properties (Core Spec Vol 3, Part G, 3.3.1.1).
public struct CharacteristicProperties: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = Self(rawValue: 0x01)
    public static let read = Self(rawValue: 0x02)
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    public static let write = Self(rawValue: 0x08)
    public static let notify = Self(rawValue: 0x10)
    public static let indicate = Self(rawValue: 0x20)
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    public static let extendedProperties = Self(rawValue: 0x80)

    static let names: [(Self, String)] = [
        (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"), (.write, "write"),
        (.notify, "notify"), (.indicate, "indicate"), (.authenticatedSignedWrites, "signed-write"),
        (.extendedProperties, "extended-properties"),
    ]

    public var names: [String] { Self.names.filter { contains($0.0) }.map(\.1) }
    public var description: String { names.joined(separator: ",") }
}

/// Where the name of a handle came from.
public enum GATTSource: String, Hashable, Sendable {
    /// Discovered in this connection (ATT discovery PDUs in the capture).
    case discovery
    /// Discovered in an earlier connection to the same peer in the same capture.
    case earlierConnection = "earlier-connection"
    /// From the user's `--gatt` map.
    case userMap = "user-map"
    /// Learned from what the traffic shows, without discovery (``GATTDatabase/LearnedType``).
    case traffic
}

/// A GATT attribute database rebuilt from discovery (Core Spec Vol 3, Part G, 4.4–4.7).
public struct GATTDatabase: Hashable, Sendable {
    public struct Service: Hashable, Sendable {
        public var startHandle: UInt16
        public var endHandle: UInt16
        public var uuid: BluetoothUUID
        public var isPrimary: Bool
        public var discoveredAt: Int
    }

    public struct Include: Hashable, Sendable {
        public var handle: UInt16
        public var startHandle: UInt16
        public var endHandle: UInt16
        public var uuid: BluetoothUUID?
    }

    public struct Characteristic: Hashable, Sendable {
        public var declarationHandle: UInt16
        public var properties: CharacteristicProperties
        public var valueHandle: UInt16
        public var uuid: BluetoothUUID
        public var discoveredAt: Int
    }

    public struct Descriptor: Hashable, Sendable {
        public var handle: UInt16
        public var uuid: BluetoothUUID
    }

    public var services: [Service] = []
    public var includes: [Include] = []
    public var characteristics: [Characteristic] = []
    /// Every handle → type learned from Find Information (descriptors, and declarations too).
    public var attributeTypes: [UInt16: BluetoothUUID] = [:]
    /// The frames of the Find Information Requests whose responses taught them (descriptor discovery, Core Spec Vol 3,
    /// Part G, 4.7.1; the response's frame when the request is not in the capture): `diff` orders the procedures by them.
    public var descriptorDiscoveryFrames: [Int] = []
    public var source: GATTSource = .discovery
    /// Names given by the user's map (handle → name), when the source is the user map.
    public var userNames: [UInt16: String] = [:]

    public init() {}

    /// A handle's type learned from the traffic rather than from discovery, with how: a Read By Type response for a
    /// characteristic type (Read Using Characteristic UUID, Core Spec Vol 3, Part G, 4.8.2: the handle holds a value
    /// of that type), or a write of a Client Characteristic Configuration value followed by notifications or
    /// indications of the handle before it (the usual layout, Part G, 3.3).
    public struct LearnedType: Hashable, Sendable {
        public var uuid: BluetoothUUID
        /// `a Read By Type for 0x2A00 answered at frame 432`.
        public var how: String
        public var frame: Int
    }
    /// Handles named by the traffic, for those discovery did not name.
    public var learnedTypes: [UInt16: LearnedType] = [:]

    /// Keeps what the traffic shows `handle` to be, unless discovery (or an earlier lesson) named it already.
    public mutating func learn(_ uuid: BluetoothUUID, for handle: UInt16, how: String, frame: Int) {
        guard role(of: handle) == nil, learnedTypes[handle] == nil else { return }
        learnedTypes[handle] = LearnedType(uuid: uuid, how: how, frame: frame)
    }

    public var isEmpty: Bool { services.isEmpty && characteristics.isEmpty && attributeTypes.isEmpty && userNames.isEmpty }

    public mutating func addService(_ s: Service) {
        if let i = services.firstIndex(where: { $0.startHandle == s.startHandle }) {
            services[i] = s
        } else {
            services.append(s)
            services.sort { $0.startHandle < $1.startHandle }
        }
    }

    public mutating func addCharacteristic(_ c: Characteristic) {
        if let i = characteristics.firstIndex(where: { $0.declarationHandle == c.declarationHandle }) {
            characteristics[i] = c
        } else {
            characteristics.append(c)
            characteristics.sort { $0.declarationHandle < $1.declarationHandle }
        }
    }

    public mutating func addInclude(_ inc: Include) {
        if !includes.contains(where: { $0.handle == inc.handle }) { includes.append(inc) }
    }

    public mutating func addAttributeType(handle: UInt16, uuid: BluetoothUUID) { attributeTypes[handle] = uuid }

    /// The service a handle belongs to.
    public func service(containing handle: UInt16) -> Service? {
        services.last { $0.startHandle <= handle && handle <= $0.endHandle }
    }

    /// The characteristic whose value handle or descriptors include `handle`.
    public func characteristic(owning handle: UInt16) -> Characteristic? {
        guard let i = characteristics.lastIndex(where: { $0.declarationHandle < handle }) else { return nil }
        let c = characteristics[i]
        if let s = service(containing: c.declarationHandle), handle > s.endHandle { return nil }
        if i + 1 < characteristics.count, handle >= characteristics[i + 1].declarationHandle { return nil }
        return c
    }

    /// What the attribute at `handle` is: a characteristic value, a descriptor, a declaration.
    public enum Role: Hashable, Sendable {
        case value(Characteristic)
        case descriptor(uuid: BluetoothUUID, of: Characteristic?)
        case declaration(BluetoothUUID)
    }

    public func role(of handle: UInt16) -> Role? {
        if let c = characteristics.first(where: { $0.valueHandle == handle }) { return .value(c) }
        if let t = attributeTypes[handle] {
            if GATTAttributeType.declarations.contains(t.uuid16 ?? 0) { return .declaration(t) }
            return .descriptor(uuid: t, of: characteristic(owning: handle))
        }
        if characteristics.contains(where: { $0.declarationHandle == handle }) {
            return .declaration(BluetoothUUID(uuid16: GATTAttributeType.characteristic))
        }
        if services.contains(where: { $0.startHandle == handle }) {
            return .declaration(BluetoothUUID(uuid16: GATTAttributeType.primaryService))
        }
        return nil
    }

    /// The UUID that names `handle` in a timeline: the characteristic's for a value handle, the
    /// descriptor's for a descriptor.
    public func uuid(for handle: UInt16) -> BluetoothUUID? {
        switch role(of: handle) {
        case .value(let c): c.uuid
        case .descriptor(let uuid, _): uuid
        case .declaration(let uuid): uuid
        case nil: learnedTypes[handle]?.uuid
        }
    }

    /// Forgets what was learned about `range` (after a Service Changed indication); the
    /// characteristic that carried the indication is kept so later indications are still named.
    public mutating func invalidate(_ range: ClosedRange<UInt16>, keeping handle: UInt16) {
        let keep = characteristics.first { $0.valueHandle == handle }
        services.removeAll { service in
            guard range.contains(service.startHandle) else { return false }
            guard let keep else { return true }
            return !(service.startHandle < keep.declarationHandle && keep.declarationHandle <= service.endHandle)
        }
        characteristics.removeAll { range.contains($0.declarationHandle) && $0.valueHandle != handle }
        includes.removeAll { range.contains($0.handle) }
        attributeTypes = attributeTypes.filter { !range.contains($0.key) || $0.key == handle &+ 1 }
    }

    /// Merges another (later) view of the same database.
    public mutating func merge(_ other: GATTDatabase) {
        for s in other.services { addService(s) }
        for c in other.characteristics { addCharacteristic(c) }
        for i in other.includes { addInclude(i) }
        attributeTypes.merge(other.attributeTypes) { _, new in new }
        descriptorDiscoveryFrames += other.descriptorDiscoveryFrames
        userNames.merge(other.userNames) { _, new in new }
        learnedTypes.merge(other.learnedTypes) { old, _ in old }
    }
}
