import BLECore

/// A 128-bit value of the Security Manager or the link layer (a key, a random, a confirm value),
/// kept in WIRE ORDER: least significant octet first, as it appears in SMP PDUs, LL_ENC_REQ/RSP and HCI.
///
/// The Core Spec prints these values most significant octet first (`0x4C68…01BF`), and so do
/// users and sniffers when they print a key: `init(hex:)` takes that notation and `hex` gives it back.
public struct Key128: Hashable, Sendable, CustomStringConvertible {
    /// The 16 octets, least significant first (wire order).
    public let bytes: [UInt8]

    /// From 16 octets in wire order (least significant first); nil if there are not exactly 16.
    public init?<C: Collection>(wire: C) where C.Element == UInt8 {
        guard wire.count == 16 else { return nil }
        bytes = Array(wire)
    }

    /// From 16 octets most significant first (the spec's and FIPS-197's notation); nil if not 16.
    public init?<C: Collection>(msbFirst: C) where C.Element == UInt8 {
        guard msbFirst.count == 16 else { return nil }
        bytes = msbFirst.reversed()
    }

    /// From hex text most significant octet first, as the spec, users and sniffers print keys:
    /// `"0F241772AC270CAFEE654186F0A65D5F"` (spaces, colons, dashes and `0x` ignored). Nil unless 16 octets.
    public init?(hex: some StringProtocol) {
        guard let b = BLECore.bytes(fromHex: hex), b.count == 16 else { return nil }
        bytes = b.reversed()
    }

    /// A 128-bit integer value: `Key128(passkey)` is the TK of a passkey entry (Core Spec Vol 3, Part H, 2.3.5.3).
    public init(_ value: UInt64) {
        var b = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 { b[i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
        bytes = b
    }

    /// All zero: the TK of Just Works and the `r` of LE Secure Connections Just Works/Numeric Comparison.
    public static let zero = Key128(0)

    /// The octets most significant first (the AES block order of FIPS-197).
    public var msbFirst: [UInt8] { bytes.reversed() }

    /// Uppercase hex, most significant octet first (the spec's notation): `0F241772AC270CAFEE654186F0A65D5F`.
    public var hex: String { hexString(msbFirst).uppercased() }

    public var description: String { hex }
}
