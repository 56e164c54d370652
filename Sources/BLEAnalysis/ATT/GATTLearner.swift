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

    /// Learns what `input` teaches into `database`; nil when it teaches nothing. The items of a discovery response are
    /// read by ``ATTDiscovery/attributes(_:requestType:typeValue:)``, as the timeline shows them.
    static func feed(_ input: Input, into database: inout GATTDatabase) -> Output? {
        let request = input.request, frame = input.frame
        switch input.pdu {
        case .readByGroupTypeResponse, .findByTypeValueResponse, .findInformationResponse:
            let items = ATTDiscovery.attributes(input.pdu, requestType: request?.type, typeValue: request?.typeValue ?? [])
            for item in items ?? [] { add(item, frame: frame, into: &database) }
            if case .findInformationResponse = input.pdu, items?.isEmpty == false {
                database.descriptorDiscoveryFrames.append(request?.frame ?? frame)
            }
            return .discovered
        case .readByTypeResponse:
            guard let type = request?.type else { return nil }
            guard let items = ATTDiscovery.attributes(input.pdu, requestType: type) else { return .values(type: type) }
            for item in items { add(item, frame: frame, into: &database) }
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

    /// One discovered item into the database.
    private static func add(_ item: DiscoveredAttribute, frame: Int, into database: inout GATTDatabase) {
        switch item.kind {
        case .primaryService, .secondaryService:
            guard let uuid = item.uuid else { return }
            database.addService(
                .init(
                    startHandle: item.handle, endHandle: item.endHandle ?? item.handle, uuid: uuid,
                    isPrimary: item.kind == .primaryService, discoveredAt: frame))
        case .characteristic:
            guard let uuid = item.uuid, let valueHandle = item.valueHandle else { return }
            database.addCharacteristic(
                .init(
                    declarationHandle: item.handle, properties: item.properties ?? [], valueHandle: valueHandle, uuid: uuid,
                    discoveredAt: frame))
        case .include:
            database.addInclude(
                .init(handle: item.handle, startHandle: item.startHandle ?? 0, endHandle: item.endHandle ?? 0, uuid: item.uuid))
            // The included service's range and type, as the include declares them (Part G, 3.2): a secondary service is
            // found only this way (4.5.1), so without it its characteristics would belong to no service (the Redmi K70
            // log's AICS 0x0201–0x0263 and VOCS 0x0301–0x0343, included by Volume Control at 1399). A primary discovery
            // of the same start replaces it.
            if let uuid = item.uuid, let start = item.startHandle, let end = item.endHandle, start <= end,
                !database.services.contains(where: { $0.startHandle == start })
            {
                database.addService(.init(startHandle: start, endHandle: end, uuid: uuid, isPrimary: false, discoveredAt: frame))
            }
        case .attribute:
            if let uuid = item.uuid { database.addAttributeType(handle: item.handle, uuid: uuid) }
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
