/// A Bluetooth UUID: 16-, 32- or 128-bit, kept in the width it was written in.
///
/// 16- and 32-bit UUIDs are shorthand for the Bluetooth Base UUID
/// `0000xxxx-0000-1000-8000-00805F9B34FB` (Core Spec Vol 3, Part B, 2.5.1); two UUIDs are equal
/// when their 128-bit forms are, so a SIG UUID written in 128-bit form matches its 16-bit form.
public struct BluetoothUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 128-bit value, most significant byte first (the order of the textual form).
    public let high: UInt64
    public let low: UInt64
    /// How many bytes it was written with on the wire (2, 4 or 16).
    public let width: Int

    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    static let baseHighLowBits: UInt64 = 0x0000_1000

    public init(uuid16: UInt16) { self.init(uuid32: UInt32(uuid16), width: 2) }

    public init(uuid32: UInt32, width: Int = 4) {
        high = UInt64(uuid32) << 32 | BluetoothUUID.baseHighLowBits
        low = BluetoothUUID.baseLow
        self.width = width
    }

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
        width = 16
    }

    /// Reads a UUID in the little-endian wire order used by ATT, SMP and AD structures.
    /// - Throws: ``DecodeError/invalidSize(expected:got:)`` unless `width` is 2, 4 or 16.
    public init(parsingLittleEndian input: inout ByteReader, width: Int) throws(DecodeError) {
        switch width {
        case 2: self.init(uuid16: try UInt16(parsingLittleEndian: &input))
        case 4: self.init(uuid32: try UInt32(parsingLittleEndian: &input))
        case 16:
            let low = try UInt64(parsingLittleEndian: &input)
            let high = try UInt64(parsingLittleEndian: &input)
            self.init(high: high, low: low)
        default: throw .invalidSize(expected: 16, got: width)
        }
    }

    /// Little-endian wire bytes in the UUID's own width.
    public var littleEndianBytes: [UInt8] {
        var w = ByteWriter(capacity: 16)
        switch width {
        case 2: w.write(littleEndian: UInt16(truncatingIfNeeded: high >> 32))
        case 4: w.write(littleEndian: UInt32(truncatingIfNeeded: high >> 32))
        default:
            w.write(littleEndian: low)
            w.write(littleEndian: high)
        }
        return w.bytes
    }

    /// True when this is the Bluetooth Base UUID with a 32-bit value inserted.
    public var isSIGBased: Bool {
        low == BluetoothUUID.baseLow && (high & 0xFFFF_FFFF) == BluetoothUUID.baseHighLowBits
    }

    /// The 16-bit short form when this is a SIG UUID (also when written in 128-bit form).
    public var uuid16: UInt16? {
        guard isSIGBased, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    public var uuid32: UInt32? {
        guard isSIGBased else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The canonical uppercase 128-bit text: `0000180F-0000-1000-8000-00805F9B34FB`.
    public var uuidString: String {
        func hexDigits(_ v: UInt64, _ n: Int) -> String {
            let s = String(v, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        return hexDigits(high >> 32, 8) + "-" + hexDigits(high >> 16 & 0xFFFF, 4) + "-" + hexDigits(high & 0xFFFF, 4)
            + "-" + hexDigits(low >> 48, 4) + "-" + hexDigits(low & 0xFFFF_FFFF_FFFF, 12)
    }

    /// Short form for SIG UUIDs (`0x180F`, `0x0000FE59`→`0xFE59`), the full text otherwise.
    public var description: String {
        if let u = uuid16 {
            return "0x" + String(repeating: "0", count: 4 - String(u, radix: 16).count) + String(u, radix: 16, uppercase: true)
        }
        if let u = uuid32 { return "0x" + String(u, radix: 16, uppercase: true) }
        return uuidString
    }

    /// Parses `180F`, `0x180F`, `0000180f`, or the 36-character form; nil otherwise.
    public init?(_ text: String) {
        var t = Substring(text.trimmingWhitespace())
        if t.hasPrefix("0x") || t.hasPrefix("0X") { t = t.dropFirst(2) }
        let digits = t.filter { $0 != "-" }
        guard digits.allSatisfy(\.isHexDigit) else { return nil }
        switch (t.count, digits.count) {
        case (4, 4): self.init(uuid16: UInt16(digits, radix: 16)!)
        case (8, 8): self.init(uuid32: UInt32(digits, radix: 16)!)
        case (36, 32), (32, 32):
            guard t.count == 32 || (Array(t)[8] == "-" && Array(t)[13] == "-" && Array(t)[18] == "-" && Array(t)[23] == "-") else {
                return nil
            }
            self.init(high: UInt64(digits.prefix(16), radix: 16)!, low: UInt64(digits.suffix(16), radix: 16)!)
        default: return nil
        }
    }

    public static func == (a: BluetoothUUID, b: BluetoothUUID) -> Bool { a.high == b.high && a.low == b.low }
    public func hash(into hasher: inout Hasher) { hasher.combine(high); hasher.combine(low) }
    public static func < (a: BluetoothUUID, b: BluetoothUUID) -> Bool { (a.high, a.low) < (b.high, b.low) }
}

extension StringProtocol {
    /// The string without leading and trailing spaces, tabs and newlines (no Foundation needed).
    public func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
