/// A Bluetooth device address (BD_ADDR), stored as on the wire (least significant byte first).
///
/// Printed most significant byte first, as people write it: `C0:11:22:33:44:55` (Core Spec Vol 2, Part B, 1.2).
/// Its `WireCodable` conformance is declared in BLEProtocols. The small members are `@inlinable`: every advertising
/// report and connection event reads one, and BLEProtocols' decoders inlined them when the type was theirs.
public struct BDAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 48-bit value (`0xC01122334455` prints as `C0:11:22:33:44:55`).
    public var value: UInt64

    @inlinable public init(_ value: UInt64) { self.value = value & 0xFFFF_FFFF_FFFF }

    /// From text `C0:11:22:33:44:55` (most significant first); nil unless six hex bytes.
    public init?(_ text: String) {
        guard let b = BLECore.bytes(fromHex: text), b.count == 6 else { return nil }
        self.init(b.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    @inlinable public init(parsing input: inout ByteReader) throws(DecodeError) {
        let lo = UInt64(try UInt32(parsingLittleEndian: &input))
        let hi = UInt64(try UInt16(parsingLittleEndian: &input))
        value = hi << 32 | lo
    }

    @inlinable public func encode(into writer: inout ByteWriter) {
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

    @inlinable public static func < (a: BDAddress, b: BDAddress) -> Bool { a.value < b.value }
}
