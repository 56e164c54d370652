import BLECore

/// A link-layer access address (Core Spec Vol 6, Part B, 2.1.2); little-endian on the air.
public struct LLAccessAddress: RawRepresentable, Hashable, Sendable, CustomStringConvertible, WireCodable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    /// The advertising physical channel access address `0x8E89BED6`.
    public static let advertising = LLAccessAddress(0x8E89_BED6)

    public var isAdvertising: Bool { self == .advertising }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        rawValue = try UInt32(parsingLittleEndian: &input)
    }

    public func encode(into writer: inout ByteWriter) { writer.write(littleEndian: rawValue) }

    public var description: String { hex(rawValue) }
}

/// A device address on the air: 48 bits plus the TxAdd/RxAdd bit that says public or random
/// (Core Spec Vol 6, Part B, 1.3). Stored as a number, printed most significant byte first.
public struct LLDeviceAddress: Hashable, Sendable, CustomStringConvertible {
    /// The 48-bit value (`0xC01122334455` prints as `C0:11:22:33:44:55`).
    public var value: UInt64
    public var isRandom: Bool

    public init(_ value: UInt64, isRandom: Bool = false) {
        self.value = value & 0xFFFF_FFFF_FFFF
        self.isRandom = isRandom
    }

    /// Reads 6 bytes, least significant first.
    public init(parsing input: inout ByteReader, isRandom: Bool) throws(DecodeError) {
        let low = try UInt32(parsingLittleEndian: &input)
        let high = try UInt16(parsingLittleEndian: &input)
        self.init(UInt64(high) << 32 | UInt64(low), isRandom: isRandom)
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(littleEndian: UInt32(truncatingIfNeeded: value))
        writer.write(littleEndian: UInt16(truncatingIfNeeded: value >> 32))
    }

    public var description: String {
        var parts: [String] = []
        for i in stride(from: 40, through: 0, by: -8) {
            let b = UInt8(truncatingIfNeeded: value >> UInt64(i))
            let s = String(b, radix: 16, uppercase: true)
            parts.append(b < 16 ? "0" + s : s)
        }
        return parts.joined(separator: ":") + (isRandom ? " (random)" : "")
    }
}

/// The 24-bit link-layer CRC (Core Spec Vol 6, Part B, 3.1.1): polynomial
/// x²⁴ + x¹⁰ + x⁹ + x⁶ + x⁴ + x³ + x + 1, shifted in least significant bit first, over the PDU
/// (header and payload). `crcInit` is `0x555555` on advertising channels, the CONNECT_IND value on a connection.
public enum LLCRC {
    /// Computes the CRC over `pdu` and returns it in the byte order it is sent in
    /// (the 3 CRC bytes read as a little-endian 24-bit number equal the result).
    public static func compute<C: Collection>(crcInit: UInt32, over pdu: C) -> UInt32 where C.Element == UInt8 {
        // The LFSR runs on the bit-reversed init value; the register is sent most significant bit first.
        var state = reverse24(crcInit)
        for byte in pdu {
            var b = byte
            for _ in 0..<8 {
                let bit = (state ^ UInt32(b)) & 1
                b >>= 1
                state >>= 1
                if bit != 0 { state ^= 0xDA_6000 }
            }
        }
        return state
    }

    /// The 24-bit value with its bit order reversed.
    public static func reverse24(_ v: UInt32) -> UInt32 {
        var out: UInt32 = 0
        for i in 0..<24 where v & (1 << UInt32(i)) != 0 { out |= 1 << UInt32(23 - i) }
        return out
    }
}
