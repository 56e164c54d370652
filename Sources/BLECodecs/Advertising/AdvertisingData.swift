import BLECore

/// One AD structure: length(1) type(1) data(length − 1) (Core Spec Vol 3, Part C, 11).
public struct ADStructure: Hashable, Sendable, CustomStringConvertible {
    public var type: ADType
    public var data: [UInt8]

    public init(type: ADType, data: [UInt8]) { self.type = type; self.data = data }

    /// Appends `length type data`; data longer than 254 bytes is cut (the length field is one byte).
    public func encode(into w: inout ByteWriter) {
        let n = min(data.count, 254)
        w.write(UInt8(n + 1)); w.write(type.rawValue); w.write(contentsOf: data.prefix(n))
    }

    public var bytes: [UInt8] {
        var w = ByteWriter(capacity: data.count + 2)
        encode(into: &w)
        return w.bytes
    }

    public var description: String { "\(type) \(hexString(data))" }
}

/// A list of service UUIDs (AD types 0x02–0x07, and the solicitation lists 0x14, 0x15, 0x1F).
public struct ServiceUUIDList: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable { case incomplete, complete, solicitation }
    public var kind: Kind
    /// Bytes per UUID on the wire: 2, 4 or 16.
    public var width: Int
    public var uuids: [BluetoothUUID]

    public init(kind: Kind, width: Int, uuids: [BluetoothUUID]) { self.kind = kind; self.width = width; self.uuids = uuids }

    /// The AD type that carries a list of this kind and width.
    public var adType: ADType {
        switch (kind, width) {
        case (.incomplete, 2): .incompleteServiceUUIDs16
        case (.complete, 2): .completeServiceUUIDs16
        case (.incomplete, 4): .incompleteServiceUUIDs32
        case (.complete, 4): .completeServiceUUIDs32
        case (.incomplete, _): .incompleteServiceUUIDs128
        case (.complete, _): .completeServiceUUIDs128
        case (.solicitation, 2): .solicitationUUIDs16
        case (.solicitation, 4): .solicitationUUIDs32
        case (.solicitation, _): .solicitationUUIDs128
        }
    }

    static func shape(of type: ADType) -> (Kind, Int)? {
        switch type.rawValue {
        case 0x02: (.incomplete, 2)
        case 0x03: (.complete, 2)
        case 0x04: (.incomplete, 4)
        case 0x05: (.complete, 4)
        case 0x06: (.incomplete, 16)
        case 0x07: (.complete, 16)
        case 0x14: (.solicitation, 2)
        case 0x1F: (.solicitation, 4)
        case 0x15: (.solicitation, 16)
        default: nil
        }
    }
}

/// Service data (AD types 0x16, 0x20, 0x21): a UUID in its own width, then the service's bytes.
public struct ServiceData: Hashable, Sendable, CustomStringConvertible {
    public var uuid: BluetoothUUID
    public var data: [UInt8]

    public init(uuid: BluetoothUUID, data: [UInt8]) { self.uuid = uuid; self.data = data }

    public var adType: ADType { uuid.width == 2 ? .serviceData16 : uuid.width == 4 ? .serviceData32 : .serviceData128 }

    /// The Eddystone frame, when the UUID is 0xFEAA.
    public var eddystone: EddystoneFrame? { uuid == EddystoneFrame.serviceUUID ? EddystoneFrame(serviceData: data) : nil }

    public var description: String {
        let name = AssignedNumbers.name(for: uuid).map { " (\($0))" } ?? ""
        return "\(uuid)\(name): \(hexString(data))"
    }
}

/// Manufacturer specific data (AD type 0xFF): company identifier (2, LE) then the company's bytes.
public struct ManufacturerData: Hashable, Sendable, CustomStringConvertible {
    public var companyID: UInt16
    public var data: [UInt8]

    public init(companyID: UInt16, data: [UInt8]) { self.companyID = companyID; self.data = data }

    /// Assigned Numbers 7 (company identifiers).
    public var companyName: String? { AssignedNumbers.companyName(companyID) }
    public var iBeacon: IBeacon? { IBeacon(manufacturerData: self) }

    public var description: String {
        "\(companyName ?? "company") (\(hex(companyID))): \(hexString(data))"
    }
}

/// A typed AD structure (Core Spec Supplement, Part A, 1).
///
/// Structures whose type is unknown, or whose data has the wrong size for their type, are kept by value
/// as ``other(_:_:)``.
public enum ADElement: Hashable, Sendable, CustomStringConvertible {
    /// 0x01 (CSS A.1.3).
    case flags(ADFlags)
    /// 0x02–0x07, 0x14, 0x15, 0x1F (CSS A.1.1, A.1.10).
    case serviceUUIDs(ServiceUUIDList)
    /// 0x08 shortened, 0x09 complete (CSS A.1.2); invalid UTF-8 repaired with U+FFFD.
    case localName(String, complete: Bool)
    /// 0x0A, dBm (CSS A.1.5).
    case txPowerLevel(Int8)
    /// 0x12, in 1.25 ms units; 0xFFFF means no specific value (CSS A.1.9).
    case peripheralConnectionIntervalRange(min: UInt16, max: UInt16)
    /// 0x16, 0x20, 0x21 (CSS A.1.11).
    case serviceData(ServiceData)
    /// 0x17 public, 0x18 random target addresses (CSS A.1.13, A.1.14).
    case targetAddresses([BDAddress], random: Bool)
    /// 0x19 (CSS A.1.12; Assigned Numbers 2.6).
    case appearance(UInt16)
    /// 0x1A, in 0.625 ms units (CSS A.1.15).
    case advertisingInterval(UInt16)
    /// 0x1C (CSS A.1.17).
    case leRole(LERole)
    /// 0x24 (CSS A.1.18).
    case uri(URIValue)
    /// 0xFF (CSS A.1.4).
    case manufacturerData(ManufacturerData)
    /// Any other structure, by value.
    case other(ADType, [UInt8])

    /// Types a structure, returning a problem when its data does not fit the type (the structure is then `.other`).
    public static func decode(_ s: ADStructure) -> (element: ADElement, problem: String?) {
        let d = s.data
        func wrongSize(_ expected: String) -> (ADElement, String?) {
            (.other(s.type, d), "\(s.type): expected \(expected) bytes, got \(d.count)")
        }
        func le16(_ at: Int) -> UInt16 { UInt16(d[at]) | UInt16(d[at + 1]) << 8 }
        switch s.type.rawValue {
        case 0x01:
            // Flags may be longer than one octet (all other octets reserved); only the 1-octet form is typed.
            return d.count == 1 ? (.flags(ADFlags(rawValue: d[0])), nil) : wrongSize("1")
        case 0x02...0x07, 0x14, 0x15, 0x1F:
            guard let (kind, width) = ServiceUUIDList.shape(of: s.type) else { return (.other(s.type, d), nil) }
            guard d.count % width == 0 else { return wrongSize("a multiple of \(width)") }
            let uuids = readLeniently(d) { (r: inout ByteReader) -> [BluetoothUUID] in
                var out: [BluetoothUUID] = []
                while !r.isAtEnd, let u = try? BluetoothUUID(parsingLittleEndian: &r, width: width) { out.append(u) }
                return out
            }
            return (.serviceUUIDs(ServiceUUIDList(kind: kind, width: width, uuids: uuids)), nil)
        case 0x08, 0x09:
            let complete = s.type == .completeLocalName
            if let text = String(validating: d, as: UTF8.self) { return (.localName(text, complete: complete), nil) }
            return (.localName(String(decoding: d, as: UTF8.self), complete: complete), "\(s.type): not valid UTF-8")
        case 0x0A:
            return d.count == 1 ? (.txPowerLevel(Int8(bitPattern: d[0])), nil) : wrongSize("1")
        case 0x12:
            return d.count == 4 ? (.peripheralConnectionIntervalRange(min: le16(0), max: le16(2)), nil) : wrongSize("4")
        case 0x16, 0x20, 0x21:
            let width = s.type == .serviceData16 ? 2 : s.type == .serviceData32 ? 4 : 16
            guard d.count >= width else { return wrongSize("at least \(width)") }
            let uuid = readLeniently(Array(d[0..<width])) { (r: inout ByteReader) -> BluetoothUUID? in
                try? BluetoothUUID(parsingLittleEndian: &r, width: width)
            }
            guard let uuid else { return (.other(s.type, d), nil) }
            return (.serviceData(ServiceData(uuid: uuid, data: Array(d[width...]))), nil)
        case 0x17, 0x18:
            guard !d.isEmpty, d.count % 6 == 0 else { return wrongSize("a multiple of 6") }
            let addresses = stride(from: 0, to: d.count, by: 6).map { at in BDAddress(littleEndian48(d, at: at)) }
            return (.targetAddresses(addresses, random: s.type == .randomTargetAddress), nil)
        case 0x19:
            return d.count == 2 ? (.appearance(le16(0)), nil) : wrongSize("2")
        case 0x1A:
            return d.count == 2 ? (.advertisingInterval(le16(0)), nil) : wrongSize("2")
        case 0x1C:
            return d.count == 1 ? (.leRole(LERole(rawValue: d[0])), nil) : wrongSize("1")
        case 0x24:
            guard let uri = URIValue(bytes: d) else { return (.other(s.type, d), "\(s.type): empty or not valid UTF-8") }
            return (.uri(uri), nil)
        case 0xFF:
            guard d.count >= 2 else { return wrongSize("at least 2") }
            return (.manufacturerData(ManufacturerData(companyID: le16(0), data: Array(d[2...]))), nil)
        default:
            return (.other(s.type, d), nil)
        }
    }

    /// The AD structure that carries this element (the encoder).
    public var structure: ADStructure {
        var w = ByteWriter(capacity: 32)
        let type: ADType
        switch self {
        case let .flags(f): type = .flags; w.write(f.rawValue)
        case let .serviceUUIDs(list):
            type = list.adType
            for u in list.uuids {
                let widened =
                    u.width == list.width
                    ? u
                    : list.width == 16
                        ? BluetoothUUID(high: u.high, low: u.low)
                        : list.width == 4 ? BluetoothUUID(uuid32: u.uuid32 ?? 0) : BluetoothUUID(uuid16: u.uuid16 ?? 0)
                w.write(contentsOf: widened.littleEndianBytes)
            }
        case let .localName(name, complete): type = complete ? .completeLocalName : .shortenedLocalName; w.write(contentsOf: name.utf8)
        case let .txPowerLevel(p): type = .txPowerLevel; w.write(UInt8(bitPattern: p))
        case let .peripheralConnectionIntervalRange(lo, hi):
            type = .peripheralConnectionIntervalRange; w.write(littleEndian: lo); w.write(littleEndian: hi)
        case let .serviceData(sd): type = sd.adType; w.write(contentsOf: sd.uuid.littleEndianBytes); w.write(contentsOf: sd.data)
        case let .targetAddresses(addresses, random):
            type = random ? .randomTargetAddress : .publicTargetAddress
            for a in addresses { a.encode(into: &w) }
        case let .appearance(a): type = .appearance; w.write(littleEndian: a)
        case let .advertisingInterval(i): type = .advertisingInterval; w.write(littleEndian: i)
        case let .leRole(r): type = .leRole; w.write(r.rawValue)
        case let .uri(u): type = .uri; w.write(contentsOf: u.bytes)
        case let .manufacturerData(m): type = .manufacturerSpecificData; w.write(littleEndian: m.companyID); w.write(contentsOf: m.data)
        case let .other(t, b): type = t; w.write(contentsOf: b)
        }
        return ADStructure(type: type, data: w.bytes)
    }

    /// `Flags: LE General Discoverable, BR/EDR Not Supported`, `Complete local name: "Tag"`, …
    public var description: String {
        switch self {
        case let .flags(f): return "Flags: \(f)"
        case let .serviceUUIDs(l):
            let what =
                l.kind == .solicitation ? "Solicited services" : l.kind == .complete ? "Services (complete)" : "Services (incomplete)"
            return "\(what): " + l.uuids.map(serviceLabel).joined(separator: ", ")
        case let .localName(n, complete): return "\(complete ? "Complete" : "Shortened") local name: \"\(n)\""
        case let .txPowerLevel(p): return "TX power level: \(p) dBm"
        case let .peripheralConnectionIntervalRange(lo, hi):
            func ms(_ v: UInt16) -> String {
                v == 0xFFFF ? "any" : String(fractionDigits: 2, ConnectionTiming.intervalMilliseconds(v)) + " ms"
            }
            return "Peripheral connection interval: \(ms(lo))–\(ms(hi))"
        case let .serviceData(sd):
            if let e = sd.eddystone { return e.description }
            return "Service data \(sd)"
        case let .targetAddresses(a, random):
            return "\(random ? "Random" : "Public") target address: " + a.map(\.description).joined(separator: ", ")
        case let .appearance(a): return "Appearance: \(AssignedNumbers.appearanceName(a) ?? "unknown") (\(hex(a)))"
        case let .advertisingInterval(i): return "Advertising interval: " + String(fractionDigits: 3, Double(i) * 0.625) + " ms"
        case let .leRole(r): return "LE role: \(r)"
        case let .uri(u): return "URI: \(u)"
        case let .manufacturerData(m):
            if let b = m.iBeacon { return b.description }
            return "Manufacturer data \(m)"
        case let .other(t, b): return "\(t): \(hexString(b))"
        }
    }
}

/// Six bytes from `at`, least significant first. A loop, not `reduce` with shifts in a closure: that one expression
/// took the type checker 4.5 s (`-debug-time-function-bodies`), more than any other function in the package.
private func littleEndian48(_ bytes: [UInt8], at: Int) -> UInt64 {
    var value: UInt64 = 0
    for i in 0..<6 { value |= UInt64(bytes[at + i]) << UInt64(8 * i) }
    return value
}

/// A local name as the device's name: what precedes its first NUL. Devices pad a fixed-size name field with
/// NULs (`"SX70\0\0\0\0"` in a real capture); HCI defines the name that way ("the end of the name is indicated by
/// a NULL octet (0x00), and the following octets … have unspecified values", Core Spec Vol 4, Part E, 7.3.11) and
/// tshark shows AD names the same way. The AD element keeps the bytes as they were sent.
public func deviceName(_ localName: String) -> String {
    guard let nul = localName.firstIndex(of: "\0") else { return localName }
    return String(localName[..<nul])
}

/// `0x180D Heart Rate`, or the UUID alone when it has no name.
public func serviceLabel(_ uuid: BluetoothUUID) -> String {
    AssignedNumbers.name(for: uuid).map { "\(uuid) \($0)" } ?? uuid.description
}

/// Advertising or scan response data: a sequence of AD structures (Core Spec Vol 3, Part C, 11;
/// Core Spec Supplement, Part A), parsed leniently.
///
/// ```
/// | length (1) | AD type (1) | AD data (length − 1) | length | type | data | … | 00 (optional early end)
/// ```
/// A zero length ends the data (early termination; what follows is padding). A length that runs past
/// the end adds a problem and ends parsing; the structures before it are kept. Parsing never fails.
public struct AdvertisingData: Hashable, Sendable, CustomStringConvertible {
    /// The structures in wire order.
    public var structures: [ADStructure]
    /// One typed element per structure, same order.
    public var elements: [ADElement]
    /// What was wrong with the data (overrun lengths, wrong sizes for a type), in wire order.
    public var problems: [String]

    /// Parses everything left in `input`.
    public init(parsing input: inout ByteReader) {
        structures = []
        elements = []
        problems = []
        while !input.isAtEnd {
            let start = input.offset
            guard let length = try? input.readUInt8() else { break }
            if length == 0 { _ = input.readRemaining(); break }
            let n = Int(length) - 1
            guard let type = try? input.readUInt8() else {
                problems.append("AD structure at offset \(start): length \(length) but the data ends after the length byte")
                break
            }
            guard n <= input.remaining else {
                problems.append(
                    "AD structure at offset \(start) (\(ADType(type))): length \(length) runs past the end (\(input.remaining + 1) bytes left)"
                )
                _ = input.readRemaining()
                break
            }
            guard let data = try? input.readArray(n) else { break }
            let s = ADStructure(type: ADType(type), data: data)
            let (element, problem) = ADElement.decode(s)
            structures.append(s)
            elements.append(element)
            if let problem { problems.append(problem) }
        }
    }

    public init(bytes: [UInt8]) {
        self = readLeniently(bytes) { (r: inout ByteReader) -> AdvertisingData in AdvertisingData(parsing: &r) }
    }

    /// Data made of typed elements (for fixtures); ``bytes`` encodes them.
    public init(_ elements: [ADElement]) {
        self.elements = elements
        structures = elements.map(\.structure)
        problems = []
    }

    /// The AD structures encoded back to back.
    public var bytes: [UInt8] {
        var w = ByteWriter(capacity: 31)
        for s in structures { s.encode(into: &w) }
        return w.bytes
    }

    // MARK: what the data advertises

    public var flags: ADFlags? { elements.lazy.compactMap { if case let .flags(f) = $0 { f } else { nil } }.first }

    /// The complete local name if present, else the shortened one.
    public var localName: String? {
        var shortened: String? = nil
        for case let .localName(n, complete) in elements {
            if complete { return deviceName(n) }
            if shortened == nil { shortened = deviceName(n) }
        }
        return shortened
    }

    public var txPowerLevel: Int8? { elements.lazy.compactMap { if case let .txPowerLevel(p) = $0 { p } else { nil } }.first }

    /// Service UUIDs of the complete and incomplete lists (not solicitations), in order, without repeats.
    public var serviceUUIDs: [BluetoothUUID] {
        var seen = Set<BluetoothUUID>(), out: [BluetoothUUID] = []
        for case let .serviceUUIDs(l) in elements where l.kind != .solicitation {
            for u in l.uuids where seen.insert(u).inserted { out.append(u) }
        }
        return out
    }

    public var solicitedServiceUUIDs: [BluetoothUUID] {
        elements.flatMap { e -> [BluetoothUUID] in if case let .serviceUUIDs(l) = e, l.kind == .solicitation { l.uuids } else { [] } }
    }

    public var serviceData: [ServiceData] { elements.compactMap { if case let .serviceData(s) = $0 { s } else { nil } } }
    public var manufacturerData: [ManufacturerData] { elements.compactMap { if case let .manufacturerData(m) = $0 { m } else { nil } } }
    public var appearance: UInt16? { elements.lazy.compactMap { if case let .appearance(a) = $0 { a } else { nil } }.first }
    public var uris: [URIValue] { elements.compactMap { if case let .uri(u) = $0 { u } else { nil } } }
    public var iBeacon: IBeacon? { manufacturerData.lazy.compactMap(\.iBeacon).first }
    public var eddystone: [EddystoneFrame] { serviceData.compactMap(\.eddystone) }

    public var description: String { elements.map(\.description).joined(separator: "; ") }
}

/// Runs a parser that cannot fail over `bytes`.
func readLeniently<R>(_ bytes: [UInt8], _ body: (inout ByteReader) -> R) -> R {
    bytes.withUnsafeBytes { buffer in
        var reader = ByteReader(buffer)
        return body(&reader)
    }
}
