import BLECore

// BD_ADDR itself is in BLECore, so that the codecs (BLECodecs) need not wait for this module to build: a clean build
// compiles the two side by side (docs/performance.md#build-time).
extension BDAddress: WireCodable {}

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
