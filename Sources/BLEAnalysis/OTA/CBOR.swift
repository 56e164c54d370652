import BLECore

/// A CBOR data item (RFC 8949), as far as MCUmgr SMP bodies need: integers, byte and text strings,
/// arrays, maps, simple values and floats; tags are read and dropped.
public indirect enum CBORValue: Hashable, Sendable {
    case int(Int64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    case map([CBORPair])
    case bool(Bool)
    case null
    case undefined
    case float(Double)

    public var intValue: Int64? { if case let .int(v) = self { v } else { nil } }
    public var bytesValue: [UInt8]? { if case let .bytes(b) = self { b } else { nil } }
    public var textValue: String? { if case let .text(t) = self { t } else { nil } }

    /// The value for a text key of a map.
    public subscript(key: String) -> CBORValue? {
        guard case let .map(pairs) = self else { return nil }
        return pairs.first { $0.key == .text(key) }?.value
    }

    /// Reads one data item (RFC 8949 §3). Fails on truncation, reserved additional info, nesting deeper than 16.
    ///
    /// ```
    /// initial byte: | major type (3 bits) | additional info (5 bits) |
    /// info 0-23 value, 24 u8, 25 u16 BE, 26 u32 BE, 27 u64 BE, 31 indefinite length
    /// ```
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        self = try CBORValue.read(&input, depth: 0)
    }

    public init(bytes: [UInt8]) throws(DecodeError) {
        self = try withByteReader(bytes) { (r: inout ByteReader) throws(DecodeError) in try CBORValue(parsing: &r) }
    }

    static func argument(_ info: UInt8, _ input: inout ByteReader) throws(DecodeError) -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24: return UInt64(try UInt8(parsing: &input))
        case 25: return UInt64(try UInt16(parsingBigEndian: &input))
        case 26: return UInt64(try UInt32(parsingBigEndian: &input))
        case 27: return try UInt64(parsingBigEndian: &input)
        default: throw .invalidValue(field: "CBOR additional info", value: Int(info), offset: input.absoluteOffset - 1)
        }
    }

    static func length(_ info: UInt8, _ input: inout ByteReader) throws(DecodeError) -> Int {
        let n = try argument(info, &input)
        guard n <= UInt64(input.remaining) else {
            throw .truncated(needed: Int(clamping: n), available: input.remaining, offset: input.absoluteOffset)
        }
        return Int(n)
    }

    static func read(_ input: inout ByteReader, depth: Int) throws(DecodeError) -> CBORValue {
        guard depth < 16 else { throw .malformed("CBOR nested too deeply") }
        let initial = try UInt8(parsing: &input)
        let major = initial >> 5
        let info = initial & 0x1F
        switch major {
        case 0:
            let v = try argument(info, &input)
            return .int(v > UInt64(Int64.max) ? Int64.max : Int64(v))
        case 1:
            let v = try argument(info, &input)
            return .int(v >= UInt64(Int64.max) ? Int64.min : -1 - Int64(v))
        case 2, 3:
            var data: [UInt8] = []
            if info == 31 {
                while try input.peekUInt8() != 0xFF {
                    let chunk = try read(&input, depth: depth + 1)
                    switch chunk {
                    case let .bytes(b) where major == 2: data += b
                    case let .text(t) where major == 3: data += Array(t.utf8)
                    default: throw .malformed("CBOR indefinite string with a foreign chunk")
                    }
                }
                try input.skip(1)
            } else {
                data = try input.readArray(try length(info, &input))
            }
            return major == 2 ? .bytes(data) : .text(String(decoding: data, as: UTF8.self))
        case 4:
            var items: [CBORValue] = []
            if info == 31 {
                while try input.peekUInt8() != 0xFF { items.append(try read(&input, depth: depth + 1)) }
                try input.skip(1)
            } else {
                let n = try length(info, &input)  // each item takes at least one byte
                for _ in 0..<n { items.append(try read(&input, depth: depth + 1)) }
            }
            return .array(items)
        case 5:
            var pairs: [CBORPair] = []
            if info == 31 {
                while try input.peekUInt8() != 0xFF {
                    let k = try read(&input, depth: depth + 1)
                    pairs.append(CBORPair(key: k, value: try read(&input, depth: depth + 1)))
                }
                try input.skip(1)
            } else {
                let n = try length(info, &input)
                for _ in 0..<n {
                    let k = try read(&input, depth: depth + 1)
                    pairs.append(CBORPair(key: k, value: try read(&input, depth: depth + 1)))
                }
            }
            return .map(pairs)
        case 6:
            _ = try argument(info, &input)
            return try read(&input, depth: depth + 1)
        default:
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 23: return .undefined
            case 24: _ = try UInt8(parsing: &input); return .undefined
            case 25:
                let h = try UInt16(parsingBigEndian: &input)
                return .float(Double(floatFromHalfBits(h)))
            case 26: return .float(Double(Float(bitPattern: try UInt32(parsingBigEndian: &input))))
            case 27: return .float(Double(bitPattern: try UInt64(parsingBigEndian: &input)))
            case 0..<20: return .undefined
            default: throw .invalidValue(field: "CBOR simple value", value: Int(info), offset: input.absoluteOffset - 1)
            }
        }
    }

    /// Encodes the value (definite lengths), for test fixtures.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    static func head(_ major: UInt8, _ v: UInt64, into out: inout [UInt8]) {
        let m = major << 5
        switch v {
        case 0..<24: out.append(m | UInt8(v))
        case 24..<0x100: out += [m | 24, UInt8(v)]
        case 0x100..<0x10000: out += [m | 25, UInt8(v >> 8), UInt8(v & 0xFF)]
        case 0x10000..<0x1_0000_0000: out += [m | 26] + (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt64($0))) }
        default: out += [m | 27] + (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) }
        }
    }

    func encode(into out: inout [UInt8]) {
        switch self {
        case let .int(v): v >= 0 ? Self.head(0, UInt64(v), into: &out) : Self.head(1, UInt64(-1 - v), into: &out)
        case let .bytes(b): Self.head(2, UInt64(b.count), into: &out); out += b
        case let .text(t): Self.head(3, UInt64(t.utf8.count), into: &out); out += Array(t.utf8)
        case let .array(items): Self.head(4, UInt64(items.count), into: &out); for i in items { i.encode(into: &out) }
        case let .map(pairs):
            Self.head(5, UInt64(pairs.count), into: &out)
            for p in pairs { p.key.encode(into: &out); p.value.encode(into: &out) }
        case let .bool(b): out.append(b ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        case .undefined: out.append(0xF7)
        case let .float(d): out.append(0xFB); out += (0..<8).map { UInt8(truncatingIfNeeded: d.bitPattern >> (56 - 8 * UInt64($0))) }
        }
    }
}

/// One key/value pair of a CBOR map, in wire order.
public struct CBORPair: Hashable, Sendable {
    public var key: CBORValue
    public var value: CBORValue
    public init(key: CBORValue, value: CBORValue) { self.key = key; self.value = value }
}

/// IEEE 754 half precision to Float (RFC 8949 Appendix D), without relying on Float16 availability.
func floatFromHalfBits(_ h: UInt16) -> Float {
    let exp = Int(h >> 10 & 0x1F)
    let mant = Float(h & 0x3FF)
    let value: Float
    if exp == 0 {
        value = mant * Float(sign: .plus, exponent: -24, significand: 1)
    } else if exp != 31 {
        value = (mant + 1024) * Float(sign: .plus, exponent: exp - 25, significand: 1)
    } else {
        value = mant == 0 ? .infinity : .nan
    }
    return h & 0x8000 != 0 ? -value : value
}
