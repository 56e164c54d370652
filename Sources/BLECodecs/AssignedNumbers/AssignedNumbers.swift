import BLECore

/// Names of Bluetooth SIG assigned numbers (Assigned Numbers document, sections 3.4–3.8, 2.3, 7;
/// Core Spec Vol 1, Part F for HCI error codes), plus a hand-written catalogue of well-known vendor
/// 128-bit UUIDs (``VendorCatalogue``).
///
/// The tables live in the generated `Generated*.swift` files (see `scripts/gen_assigned_numbers.py`)
/// as one text literal each; they are parsed on first use into sorted arrays and binary-searched.
/// Unknown values give `nil`; never a crash.
public enum AssignedNumbers {
    public static func serviceName(_ uuid16: UInt16) -> String? {
        services.name(UInt64(uuid16)) ?? members.name(UInt64(uuid16))
    }
    public static func characteristicName(_ uuid16: UInt16) -> String? { characteristics.name(UInt64(uuid16)) }
    public static func descriptorName(_ uuid16: UInt16) -> String? { descriptors.name(UInt64(uuid16)) }
    /// Member (company-assigned) 16-bit UUIDs, 0xF000–0xFFFF in the source table.
    public static func memberName(_ uuid16: UInt16) -> String? { members.name(UInt64(uuid16)) }
    public static func companyName(_ id: UInt16) -> String? { companies.name(UInt64(id)) }
    /// Appearance value `category << 6 | subcategory` (Assigned Numbers 2.6); falls back to the category name.
    public static func appearanceName(_ v: UInt16) -> String? {
        appearances.name(UInt64(v)) ?? appearances.name(UInt64(v & 0xFFC0))
    }
    public static func adTypeName(_ t: UInt8) -> String? { adTypes.name(UInt64(t)) }
    public static func hciErrorName(_ code: UInt8) -> String? { hciErrors.name(UInt64(code)) }

    /// Any kind of UUID: SIG 16-bit service, characteristic, descriptor or member UUID (in that order),
    /// or a vendor 128-bit UUID from the hand-written ``VendorCatalogue`` and then the generated table.
    public static func name(for uuid: BluetoothUUID) -> String? {
        if let u = uuid.uuid16 {
            if let vendor = VendorCatalogue.entry(for: uuid) { return vendor.name }
            return services.name(UInt64(u)) ?? characteristics.name(UInt64(u)) ?? descriptors.name(UInt64(u))
                ?? members.name(UInt64(u))
        }
        if let vendor = VendorCatalogue.entry(for: uuid) { return vendor.name }
        return vendorUUIDs.name(uuid)
    }

    static let services = NameTable(serviceText)
    static let members = NameTable(memberText)
    static let characteristics = NameTable(characteristicText)
    static let descriptors = NameTable(descriptorText)
    static let companies = NameTable(companyText)
    static let appearances = NameTable(appearanceText)
    static let adTypes = NameTable(adTypeText)
    static let hciErrors = NameTable(hciErrorText)
    static let vendorUUIDs = UUIDNameTable(vendorUUIDText)
}

/// A sorted `key → name` table parsed once from `HEX=name` lines.
struct NameTable: Sendable {
    let keys: [UInt64]
    let names: [String]

    init(_ text: String) {
        var pairs: [(UInt64, String)] = []
        for line in text.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "="), let k = UInt64(line[..<eq], radix: 16) else { continue }
            pairs.append((k, String(line[line.index(after: eq)...])))
        }
        pairs.sort { $0.0 < $1.0 }
        keys = pairs.map(\.0)
        names = pairs.map(\.1)
    }

    func name(_ key: UInt64) -> String? {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo < keys.count && keys[lo] == key ? names[lo] : nil
    }
}

/// A sorted 128-bit UUID → name table parsed once from `32HEX=name` lines.
struct UUIDNameTable: Sendable {
    let entries: [BluetoothUUID: String]

    init(_ text: String) {
        var d: [BluetoothUUID: String] = [:]
        for line in text.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "="), let u = BluetoothUUID(String(line[..<eq])) else { continue }
            d[u] = String(line[line.index(after: eq)...])
        }
        entries = d
    }

    func name(_ uuid: BluetoothUUID) -> String? { entries[uuid] }
}
