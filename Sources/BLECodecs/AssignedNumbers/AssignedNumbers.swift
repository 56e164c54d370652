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

/// A `key → name` table over `HEX=name` lines, indexed once: each key with where its name lies in the text, sorted by
/// key; a lookup makes the one `String` it returns.
///
/// Not a `String` per line: the company table's 3,413 lines split, parsed and sorted as strings took ~2 ms on first use
/// (1.1 % of `diagnose --json` on the benchmark capture, which prints one company name).
struct NameTable: Sendable {
    private struct Entry: Sendable {
        var key: UInt64
        var start: Int32
        var end: Int32
    }
    private let text: [UInt8]
    private let entries: [Entry]

    init(_ text: String) {
        let bytes = Array(text.utf8)
        var entries: [Entry] = []
        var lineStart = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            if let entry = Self.entry(bytes, lineStart, lineEnd) { entries.append(entry) }
            lineStart = lineEnd + 1
        }
        // The generated tables come sorted: sorting then only checks.
        if !entries.indices.dropFirst().allSatisfy({ entries[$0 - 1].key <= entries[$0].key }) { entries.sort { $0.key < $1.key } }
        self.text = bytes
        self.entries = entries
    }

    /// `HEX=name` between `start` and `end` (the newline excluded); nil for any other line.
    private static func entry(_ bytes: [UInt8], _ start: Int, _ end: Int) -> Entry? {
        var key: UInt64 = 0
        var i = start
        while i < end, bytes[i] != UInt8(ascii: "=") {
            guard let digit = hexDigit(bytes[i]), key >> 60 == 0 else { return nil }
            key = key << 4 | UInt64(digit)
            i += 1
        }
        guard i > start, i < end else { return nil }
        return Entry(key: key, start: Int32(i + 1), end: Int32(end))
    }

    private static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    func name(_ key: UInt64) -> String? {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].key < key { lo = mid + 1 } else { hi = mid }
        }
        guard lo < entries.count, entries[lo].key == key else { return nil }
        return String(decoding: text[Int(entries[lo].start)..<Int(entries[lo].end)], as: UTF8.self)
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
