import BLECore
import BLEProtocols

/// Learns a GATT database from the ATT traffic that discovers it, and reads what a write or an indication means for it.
///
/// Fed each decoded PDU served by the database (``feed(_:into:)``), with the request a response answers:
/// - discovery (Core Spec Vol 3, Part G, 4.4–4.7): Read By Group Type and Find By Type Value responses add services,
///   Read By Type responses for 0x2803 add characteristics and for 0x2802 includes, Find Information responses add
///   descriptor types;
/// - Service Changed (Part G, 7.1): an indication of the Service Changed characteristic invalidates the range it names;
/// - a two-byte write to a Client Characteristic Configuration descriptor (Part G, 3.3.3.3) turns notifications or
///   indications on or off (``cccdWrite(handle:_:_:in:)``).
///
/// Failure cases are left alone, never guessed: a response whose request is not in the capture teaches nothing (the
/// request says what type was asked for); an item whose UUID is neither 2, 4 nor 16 bytes is skipped; a characteristic
/// declaration of another length than 5 or 19 bytes, or an include shorter than 4, is skipped.
enum GATTLearner {
    /// One decoded ATT PDU, and the request it answers when it is a response.
    struct Input {
        var pdu: ATTPDU
        var request: ATTTransaction?
        var frame: Int
    }

    enum Output: Equatable {
        /// A discovery response: what names the database's handles must be looked up again.
        case discovered
        /// A Read By Type response for an attribute type that is no declaration: its items are values of `type`.
        case values(type: BluetoothUUID)
        /// The Service Changed indication: handles `start` to `end` are to be rediscovered.
        case serviceChanged(start: UInt16, end: UInt16)
    }

    /// Learns what `input` teaches into `database`; nil when it teaches nothing.
    static func feed(_ input: Input, into database: inout GATTDatabase) -> Output? {
        let request = input.request, frame = input.frame
        switch input.pdu {
        case .readByGroupTypeResponse(let groups):
            let primary = request?.type?.uuid16 != GATTAttributeType.secondaryService
            for g in groups {
                guard let uuid = uuid(g.value) else { continue }
                database.addService(.init(startHandle: g.start, endHandle: g.end, uuid: uuid, isPrimary: primary, discoveredAt: frame))
            }
            return .discovered
        case .findByTypeValueResponse(let ranges):
            let type = request?.type?.uuid16
            if let r = request, type == GATTAttributeType.primaryService || type == GATTAttributeType.secondaryService,
                let uuid = uuid(r.typeValue)
            {
                for range in ranges {
                    database.addService(
                        .init(
                            startHandle: range.start, endHandle: range.end, uuid: uuid, isPrimary: type == GATTAttributeType.primaryService,
                            discoveredAt: frame))
                }
            }
            return .discovered
        case .readByTypeResponse(let items):
            return learnDeclarations(items, type: request?.type, frame: frame, into: &database)
        case .findInformationResponse(let info):
            for entry in info.entries { database.addAttributeType(handle: entry.handle, uuid: entry.uuid) }
            return .discovered
        case .handleValueIndication(let h, let v):
            guard v.count == 4, database.uuid(for: h)?.uuid16 == GATTAttributeType.serviceChanged else { return nil }
            let start = UInt16(v[0]) | UInt16(v[1]) << 8, end = UInt16(v[2]) | UInt16(v[3]) << 8
            database.invalidate(start...max(start, end), keeping: h)
            return .serviceChanged(start: start, end: end)
        default:
            return nil
        }
    }

    /// A Read By Type response: characteristic or include declarations when the request asked for them (0x2803,
    /// 0x2802), values of the type asked for otherwise.
    private static func learnDeclarations(
        _ items: [ATTHandleValue], type: BluetoothUUID?, frame: Int, into database: inout GATTDatabase
    ) -> Output? {
        guard let type else { return nil }
        switch type.uuid16 {
        case GATTAttributeType.characteristic:
            for item in items where item.value.count == 5 || item.value.count == 19 {
                let valueHandle = UInt16(item.value[1]) | UInt16(item.value[2]) << 8
                guard let uuid = uuid(Array(item.value[3...])) else { continue }
                database.addCharacteristic(
                    .init(
                        declarationHandle: item.handle, properties: CharacteristicProperties(rawValue: item.value[0]),
                        valueHandle: valueHandle, uuid: uuid, discoveredAt: frame))
            }
            return .discovered
        case GATTAttributeType.include:
            for item in items where item.value.count >= 4 {
                let start = UInt16(item.value[0]) | UInt16(item.value[1]) << 8
                let end = UInt16(item.value[2]) | UInt16(item.value[3]) << 8
                database.addInclude(
                    .init(
                        handle: item.handle, startHandle: start, endHandle: end,
                        uuid: item.value.count == 6 ? uuid(Array(item.value[4...])) : nil))
            }
            return .discovered
        default:
            return .values(type: type)
        }
    }

    /// What a two-byte write of `low`, `high` to `handle` sets, when `handle` is a Client Characteristic Configuration
    /// descriptor: one Find Information named so, or else the handle right after the value of a characteristic that
    /// may notify or indicate (the usual layout, when the descriptors were not discovered). nil for any other handle.
    static func cccdWrite(handle: UInt16, _ low: UInt8, _ high: UInt8, in database: GATTDatabase) -> CCCDWrite? {
        let isCCCD: Bool
        if let t = database.attributeTypes[handle] {
            isCCCD = t.uuid16 == GATTAttributeType.clientCharacteristicConfiguration
        } else if let c = database.characteristic(owning: handle), c.valueHandle &+ 1 == handle,
            !c.properties.intersection([.notify, .indicate]).isEmpty
        {
            isCCCD = true
        } else {
            isCCCD = false
        }
        guard isCCCD else { return nil }
        return CCCDWrite(bits: UInt16(low) | UInt16(high) << 8)
    }

    /// A UUID of 2, 4 or 16 bytes, little-endian; nil for any other length.
    static func uuid(_ bytes: [UInt8]) -> BluetoothUUID? {
        guard bytes.count == 2 || bytes.count == 16 || bytes.count == 4 else { return nil }
        return try? withByteReader(bytes) { (r: inout ByteReader) throws(DecodeError) in
            try BluetoothUUID(parsingLittleEndian: &r, width: bytes.count)
        }
    }
}

/// A value written to a Client Characteristic Configuration descriptor (Core Spec Vol 3, Part G, 3.3.3.3).
struct CCCDWrite: Equatable {
    var bits: UInt16
    /// Bit 0.
    var notifications: Bool { bits & 1 != 0 }
    /// Bit 1.
    var indications: Bool { bits & 2 != 0 }

    /// The timeline's note: "  (CCCD: notifications on, indications on)"; indications are named only when on.
    var note: String {
        var parts: [String] = []
        parts.append(notifications ? "notifications on" : "notifications off")
        if indications { parts.append("indications on") }
        return "  (CCCD: " + parts.joined(separator: ", ") + ")"
    }
}
