import BLECore

/// Checksum algorithms a codec spec can name (parameters from the CRC RevEng catalogue).
public enum ChecksumAlgorithm: String, Hashable, Sendable, CaseIterable {
    /// XOR of all bytes.
    case xor8
    /// Sum of all bytes modulo 256.
    case sum8
    /// CRC-8/SMBUS: poly 0x07, init 0, no reflection, xorout 0 (check "123456789" = 0xF4).
    case crc8
    /// CRC-16/CCITT-FALSE (IBM-3740): poly 0x1021, init 0xFFFF, no reflection (check 0x29B1).
    case crc16CCITTFalse = "crc16-ccitt-false"
    /// CRC-16/MODBUS: poly 0x8005 reflected (0xA001), init 0xFFFF (check 0x4B37).
    case crc16Modbus = "crc16-modbus"
    /// CRC-16/XMODEM: poly 0x1021, init 0, no reflection (check 0x31C3).
    case crc16XModem = "crc16-xmodem"
    /// CRC-32 (IEEE 802.3, zlib) (check 0xCBF43926).
    case crc32

    /// Width of the stored checksum in bytes.
    public var width: Int {
        switch self {
        case .xor8, .sum8, .crc8: 1
        case .crc16CCITTFalse, .crc16Modbus, .crc16XModem: 2
        case .crc32: 4
        }
    }

    public func compute(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        switch self {
        case .xor8:
            var x: UInt8 = 0
            for b in bytes { x ^= b }
            return UInt32(x)
        case .sum8:
            var x: UInt8 = 0
            for b in bytes { x &+= b }
            return UInt32(x)
        case .crc8:
            var c: UInt8 = 0
            for b in bytes {
                c ^= b
                for _ in 0..<8 { c = c & 0x80 != 0 ? (c << 1) ^ 0x07 : c << 1 }
            }
            return UInt32(c)
        case .crc16CCITTFalse, .crc16XModem:
            var c: UInt16 = self == .crc16XModem ? 0 : 0xFFFF
            for b in bytes {
                c ^= UInt16(b) << 8
                for _ in 0..<8 { c = c & 0x8000 != 0 ? (c << 1) ^ 0x1021 : c << 1 }
            }
            return UInt32(c)
        case .crc16Modbus:
            var c: UInt16 = 0xFFFF
            for b in bytes {
                c ^= UInt16(b)
                for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0xA001 : c >> 1 }
            }
            return UInt32(c)
        case .crc32:
            return CRC32.checksum(bytes)
        }
    }

    public func compute(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { compute($0) } }
}
