import BLECodecs
import BLECore
import BLEProtocols

/// One attribute a discovery response names (Core Spec Vol 3, Part G, 4.4–4.7): a service group, an include, a
/// characteristic declaration, or a handle and its type from Find Information.
public struct DiscoveredAttribute: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        /// Read By Group Type (or Find By Type Value) for «Primary Service».
        case primaryService = "primary-service"
        /// Read By Group Type for «Secondary Service».
        case secondaryService = "secondary-service"
        /// Read By Type for «Include» (Part G, 3.2): the included service's range and, when 16-bit, its UUID.
        case include
        /// Read By Type for «Characteristic» (Part G, 3.3.1): properties, value handle, UUID.
        case characteristic
        /// Find Information (Part F, 3.4.3.2): a handle and its attribute type (a declaration, a value or a descriptor).
        case attribute
    }

    public var kind: Kind
    /// The declaration's handle (the service's first handle; the include or characteristic declaration; the attribute).
    public var handle: UInt16
    /// A service's last handle; an include's included service's last handle.
    public var endHandle: UInt16?
    /// An include's included service's first handle.
    public var startHandle: UInt16?
    /// A characteristic's value handle.
    public var valueHandle: UInt16?
    public var properties: CharacteristicProperties?
    /// nil only for an include of a service with a 128-bit UUID (the declaration leaves it out, Part G, 3.2).
    public var uuid: BluetoothUUID?

    public init(
        kind: Kind, handle: UInt16, endHandle: UInt16? = nil, startHandle: UInt16? = nil, valueHandle: UInt16? = nil,
        properties: CharacteristicProperties? = nil, uuid: BluetoothUUID?
    ) {
        self.kind = kind
        self.handle = handle
        self.endHandle = endHandle
        self.startHandle = startHandle
        self.valueHandle = valueHandle
        self.properties = properties
        self.uuid = uuid
    }

    /// The UUID's name: a GATT declaration's («Characteristic»), the assigned numbers' or the vendor catalogue's.
    public var name: String? { uuid.flatMap(Self.name(of:)) }

    /// A UUID's name as Wireshark gives one: the four GATT declarations, then ``AssignedNumbers/name(for:)`` (SIG
    /// services, characteristics, descriptors and members; the vendor catalogue).
    public static func name(of uuid: BluetoothUUID) -> String? {
        if let u = uuid.uuid16, let declaration = GATTAttributeType.declarationName(u) { return declaration }
        return AssignedNumbers.name(for: uuid)
    }

    /// `Generic Access (0x1800)`, `Nordic UART Service (6E400001-B5A3-F393-E0A9-E50E24DCCA9E)`; the UUID alone when it
    /// has no name.
    public static func label(_ uuid: BluetoothUUID) -> String {
        name(of: uuid).map { "\($0) (\(uuid))" } ?? uuid.description
    }

    /// The item as the timeline prints it: `0x0001–0x0005 Generic Access (0x1800)`, `0x0003 Device Name (0x2A00)
    /// [read,write]`, `0x0010 includes 0x0020–0x0025 Battery (0x180F)`, `0x0004 Client Characteristic Configuration
    /// (0x2902)`.
    public var text: String {
        let uuidText = uuid.map(Self.label)
        switch kind {
        case .primaryService, .secondaryService:
            let range = hex(handle, width: 4) + "–" + hex(endHandle ?? handle, width: 4)
            return (kind == .secondaryService ? "secondary " : "") + range + " " + (uuidText ?? "?")
        case .include:
            let range = hex(startHandle ?? 0, width: 4) + "–" + hex(endHandle ?? 0, width: 4)
            return hex(handle, width: 4) + " includes " + range + (uuidText.map { " " + $0 } ?? "")
        case .characteristic:
            let value = valueHandle ?? handle
            var s = hex(value, width: 4) + " " + (uuidText ?? "?") + " [" + (properties?.description ?? "") + "]"
            // The value follows its declaration (Part G, 3.3); said only when it does not.
            if value != handle &+ 1 { s += " (declared at " + hex(handle, width: 4) + ")" }
            return s
        case .attribute:
            return hex(handle, width: 4) + " " + (uuidText ?? "?")
        }
    }
}

extension TimelineEvent {
    /// The attributes a discovery response names (`timeline --format jsonl`: `attributes`).
    public static let discovered = TimelineExtraKey<[DiscoveredAttribute]>("attributes")
}

/// What a discovery response says, item by item: the one reading of these PDUs, which the ``GATTLearner`` turns into a
/// database and the timeline into text and JSON.
///
/// The request decides what a Read By Type response holds (Core Spec Vol 3, Part G, 4.6.1 and 4.5.1: characteristic
/// or include declarations) and which service a Find By Type Value response found (4.4.2): without it in the
/// capture, those two say nothing (their items could be anything), as tshark decodes them only with their request. A
/// Read By Group Type response without its request is taken for primary services (the only group type GATT discovers
/// by default, 4.4.1). Items whose UUID is not 2, 4 or 16 bytes, characteristic declarations of another length than 5
/// or 19 bytes and includes shorter than 4 are left out.
public enum ATTDiscovery {
    /// The attributes `pdu` names, answering a request of `type` (the Read By Type / Group Type or Find By Type Value
    /// request's attribute type) with `typeValue` (Find By Type Value's value); nil for a PDU that is no discovery
    /// response or says nothing without its request.
    public static func attributes(_ pdu: ATTPDU, requestType type: BluetoothUUID?, typeValue: [UInt8] = []) -> [DiscoveredAttribute]? {
        switch pdu {
        case .readByGroupTypeResponse(let groups):
            let kind: DiscoveredAttribute.Kind =
                type?.uuid16 == GATTAttributeType.secondaryService ? .secondaryService : .primaryService
            return groups.compactMap { g in
                uuid(g.value).map { DiscoveredAttribute(kind: kind, handle: g.start, endHandle: g.end, uuid: $0) }
            }
        case .findByTypeValueResponse(let ranges):
            let t = type?.uuid16
            guard t == GATTAttributeType.primaryService || t == GATTAttributeType.secondaryService, let u = uuid(typeValue) else {
                return nil
            }
            let kind: DiscoveredAttribute.Kind = t == GATTAttributeType.primaryService ? .primaryService : .secondaryService
            return ranges.map { DiscoveredAttribute(kind: kind, handle: $0.start, endHandle: $0.end, uuid: u) }
        case .readByTypeResponse(let items):
            return declarations(items, type: type?.uuid16)
        case .findInformationResponse(let info):
            return info.entries.map { DiscoveredAttribute(kind: .attribute, handle: $0.handle, uuid: $0.uuid) }
        default:
            return nil
        }
    }

    /// Read By Type items of characteristic (0x2803) or include (0x2802) declarations; nil for any other type.
    static func declarations(_ items: [ATTHandleValue], type: UInt16?) -> [DiscoveredAttribute]? {
        switch type {
        case GATTAttributeType.characteristic?:
            return items.compactMap { item in
                let v = item.value
                guard v.count == 5 || v.count == 19, let u = uuid(Array(v[3...])) else { return nil }
                return DiscoveredAttribute(
                    kind: .characteristic, handle: item.handle, valueHandle: UInt16(v[1]) | UInt16(v[2]) << 8,
                    properties: CharacteristicProperties(rawValue: v[0]), uuid: u)
            }
        case GATTAttributeType.include?:
            return items.compactMap { item in
                let v = item.value
                guard v.count >= 4 else { return nil }
                return DiscoveredAttribute(
                    kind: .include, handle: item.handle, endHandle: UInt16(v[2]) | UInt16(v[3]) << 8,
                    startHandle: UInt16(v[0]) | UInt16(v[1]) << 8, uuid: v.count == 6 ? uuid(Array(v[4...])) : nil)
            }
        default:
            return nil
        }
    }

    /// A UUID of 2, 4 or 16 bytes, little-endian; nil for any other length.
    static func uuid(_ bytes: [UInt8]) -> BluetoothUUID? {
        guard bytes.count == 2 || bytes.count == 16 || bytes.count == 4 else { return nil }
        return try? withByteReader(bytes) { (r: inout ByteReader) throws(DecodeError) in
            try BluetoothUUID(parsingLittleEndian: &r, width: bytes.count)
        }
    }
}
