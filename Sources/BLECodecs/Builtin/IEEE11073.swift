/// IEEE 11073-20601 medical floats as used by GATT (GATT Specification Supplement 2.2.2).
///
/// `SFLOAT`: 16 bits, 4-bit signed exponent (high nibble) and 12-bit signed mantissa.
/// `FLOAT`: 32 bits, 8-bit signed exponent (high byte) and 24-bit signed mantissa.
/// Special values (NaN, NRes, ±INFINITY, reserved) decode to `.nan` / `.infinity`.
public enum IEEE11073 {
    public static func sfloat(_ raw: UInt16) -> Double {
        switch raw {
        case 0x07FF, 0x0800, 0x0801: return .nan
        case 0x07FE: return .infinity
        case 0x0802: return -.infinity
        default: break
        }
        var mantissa = Int32(raw & 0x0FFF)
        if mantissa >= 0x0800 { mantissa -= 0x1000 }
        var exponent = Int32(raw >> 12)
        if exponent >= 8 { exponent -= 16 }
        return Double(mantissa) * pow10(Int(exponent))
    }

    public static func float(_ raw: UInt32) -> Double {
        switch raw {
        case 0x007F_FFFF, 0x0080_0000, 0x0080_0001: return .nan
        case 0x007F_FFFE: return .infinity
        case 0x0080_0002: return -.infinity
        default: break
        }
        var mantissa = Int32(raw & 0x00FF_FFFF)
        if mantissa >= 0x0080_0000 { mantissa -= 0x0100_0000 }
        let exponent = Int(Int8(truncatingIfNeeded: raw >> 24))
        return Double(mantissa) * pow10(exponent)
    }

    /// Encoders for fixtures: mantissa and exponent as on the wire.
    public static func sfloatBits(mantissa: Int, exponent: Int) -> UInt16 {
        UInt16(truncatingIfNeeded: (exponent & 0xF) << 12 | (mantissa & 0x0FFF))
    }

    public static func floatBits(mantissa: Int, exponent: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: (exponent & 0xFF) << 24 | (mantissa & 0x00FF_FFFF))
    }

    static func pow10(_ e: Int) -> Double {
        var r = 1.0
        if e >= 0 { for _ in 0..<e { r *= 10 } } else { for _ in 0..<(-e) { r /= 10 } }
        return r
    }
}
