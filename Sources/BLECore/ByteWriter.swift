/// Appends fields to a growing byte array; the mirror of ``ByteReader`` used by every encoder.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var count: Int { bytes.count }

    public mutating func write(_ value: UInt8) { bytes.append(value) }

    public mutating func write<T: FixedWidthInteger>(littleEndian value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func write<T: FixedWidthInteger>(bigEndian value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func write<S: Sequence>(contentsOf data: S) where S.Element == UInt8 {
        bytes.append(contentsOf: data)
    }

    /// Writes a 24-bit little-endian value (used by a few HCI parameters).
    public mutating func write(uint24LittleEndian value: UInt32) {
        write(UInt8(truncatingIfNeeded: value))
        write(UInt8(truncatingIfNeeded: value >> 8))
        write(UInt8(truncatingIfNeeded: value >> 16))
    }

    /// Overwrites two bytes at `offset` (for length fields known only after the body is written).
    public mutating func patch(littleEndian value: UInt16, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }

    public mutating func patch(bigEndian value: UInt32, at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * i)) }
    }
}
