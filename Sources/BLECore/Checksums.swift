/// CRC-32 (IEEE 802.3, reflected, init and xorout 0xFFFFFFFF), as used by zlib, Nordic DFU and image checks.
public struct CRC32: Sendable {
    static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public private(set) var value: UInt32 = 0

    public init(_ initial: UInt32 = 0) { value = initial }

    /// Continues the CRC over `bytes` (Nordic DFU CRCs are cumulative over objects).
    public mutating func update<C: Sequence>(_ bytes: C) where C.Element == UInt8 {
        var c = ~value
        let t = CRC32.table
        for b in bytes { c = t[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        value = ~c
    }

    public static func checksum<C: Sequence>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }
}
