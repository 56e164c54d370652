import BLECore

/// A Bluetooth device address (BD_ADDR), stored as on the wire (least significant byte first).
///
/// Printed most significant byte first, as people write it: `C0:11:22:33:44:55` (Core Spec Vol 2, Part B, 1.2).
public struct BDAddress: Hashable, Sendable, Comparable, CustomStringConvertible, WireCodable {
    /// The 48-bit value (`0xC01122334455` prints as `C0:11:22:33:44:55`).
    public var value: UInt64

    public init(_ value: UInt64) { self.value = value & 0xFFFF_FFFF_FFFF }

    /// From text `C0:11:22:33:44:55` (most significant first); nil unless six hex bytes.
    public init?(_ text: String) {
        guard let b = BLECore.bytes(fromHex: text), b.count == 6 else { return nil }
        self.init(b.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let lo = UInt64(try UInt32(parsingLittleEndian: &input))
        let hi = UInt64(try UInt16(parsingLittleEndian: &input))
        value = hi << 32 | lo
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(littleEndian: UInt32(truncatingIfNeeded: value))
        writer.write(littleEndian: UInt16(truncatingIfNeeded: value >> 32))
    }

    public var description: String {
        let digits = Array("0123456789ABCDEF")
        var s = ""
        for i in stride(from: 40, through: 0, by: -8) {
            let b = Int((value >> UInt64(i)) & 0xFF)
            s.append(digits[b >> 4]); s.append(digits[b & 0xF])
            if i > 0 { s.append(":") }
        }
        return s
    }

    public static func < (a: BDAddress, b: BDAddress) -> Bool { a.value < b.value }
}

/// LE address type as HCI carries it (Core Spec Vol 4, Part E, 7.7.65.1 and 7.8.12).
public struct LEAddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
    public static let `public` = LEAddressType(0x00)
    public static let random = LEAddressType(0x01)
    /// Public identity address (resolved from an RPA by the controller).
    public static let publicIdentity = LEAddressType(0x02)
    /// Random (static) identity address (resolved from an RPA by the controller).
    public static let randomIdentity = LEAddressType(0x03)
    /// Anonymous advertisement (in advertising reports, 0xFF).
    public static let anonymous = LEAddressType(0xFF)

    public var name: String? {
        switch rawValue {
        case 0: "public"
        case 1: "random"
        case 2: "public identity"
        case 3: "random identity"
        case 0xFF: "anonymous"
        default: nil
        }
    }
    public var description: String { name ?? "LEAddressType(\(hex(rawValue)))" }
}

/// Connection role (Core Spec Vol 4, Part E, 7.7.65.1).
public struct HCIRole: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let central = HCIRole(rawValue: 0)
    public static let peripheral = HCIRole(rawValue: 1)
    public var description: String {
        switch rawValue {
        case 0: "central"
        case 1: "peripheral"
        default: "HCIRole(\(hex(rawValue)))"
        }
    }
}

/// Formatting helpers for summaries of HCI values in their spec units.
enum Units {
    /// Connection interval units of 1.25 ms → `30.00 ms`.
    static func interval1250(_ v: UInt16) -> String { String(fractionDigits: 2, ConnectionTiming.intervalMilliseconds(v)) + " ms" }
    /// Advertising/scan units of 0.625 ms → `100.000 ms`.
    static func interval625(_ v: UInt16) -> String { String(fractionDigits: 3, Double(v) * 0.625) + " ms" }
    /// Supervision timeout units of 10 ms → `4000 ms`.
    static func timeout10(_ v: UInt16) -> String { "\(ConnectionTiming.supervisionTimeoutMilliseconds(v)) ms" }
}

extension ByteReader {
    /// Reads a byte array of a length already checked against `remaining`.
    @inlinable mutating func readLengthPrefixedArray() throws(DecodeError) -> [UInt8] {
        let n = Int(try readUInt8())
        return try readArray(n)
    }
}
