/// Lowercase hex without separators: `a50603`.
@inlinable
public func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    let n = bytes.count
    if n == 0 { return "" }
    return String(unsafeUninitializedCapacity: n * 2) { out in
        var i = 0
        for b in bytes {
            out[i] = hexDigit(b >> 4)
            out[i &+ 1] = hexDigit(b & 0x0F)
            i &+= 2
        }
        return i
    }
}

/// The ASCII lowercase hex digit for a value 0–15.
@inlinable @inline(__always)
public func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 0x30 &+ v : 0x57 &+ v }

/// Hex with a separator: `a5 06 03`.
public func hexString<C: Collection>(_ bytes: C, separator: String) -> String where C.Element == UInt8 {
    bytes.map { b in
        let s = String(b, radix: 16)
        return b < 16 ? "0" + s : s
    }.joined(separator: separator)
}

/// Parses hex digits, ignoring spaces, colons, dashes and an optional `0x`; nil on any other character or an odd count.
public func bytes(fromHex text: some StringProtocol) -> [UInt8]? {
    var body = Substring(text)
    if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
    var out: [UInt8] = []
    var high: UInt8? = nil
    for c in body.utf8 {
        let v: UInt8
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
        case UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "_"): continue
        default: return nil
        }
        if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
    }
    return high == nil ? out : nil
}

/// A classic 16-bytes-per-line dump with offsets and ASCII, for `--verbose` output.
public func hexDump<C: Collection>(_ bytes: C, indent: String = "") -> String where C.Element == UInt8 {
    let all = Array(bytes)
    var lines: [String] = []
    var offset = 0
    while offset < all.count {
        let chunk = all[offset..<min(offset + 16, all.count)]
        let hex = hexString(chunk, separator: " ")
        let ascii = String(decoding: chunk.map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
        let off = String(offset, radix: 16)
        let padded = String(repeating: "0", count: max(0, 4 - off.count)) + off
        lines.append(indent + padded + "  " + hex.padding(to: 47) + "  " + ascii)
        offset += 16
    }
    return lines.joined(separator: "\n")
}

extension String {
    /// Pads with spaces on the right to `width` characters (never truncates).
    public func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    /// Pads with spaces on the left to `width` characters (never truncates).
    public func leftPadding(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

/// `0x002a` style: fixed width hex with prefix.
@inlinable
public func hex<T: FixedWidthInteger>(_ value: T, width: Int = MemoryLayout<T>.size * 2) -> String {
    let magnitude = UInt64(truncatingIfNeeded: value)
    var digits = 1
    while digits < 16, magnitude >> (4 * UInt64(digits)) != 0 { digits += 1 }
    let n = max(width, digits)
    return String(unsafeUninitializedCapacity: n + 2) { out in
        out[0] = UInt8(ascii: "0")
        out[1] = UInt8(ascii: "x")
        for i in 0..<n {
            let shift = UInt64(4 * (n - 1 - i))
            out[2 + i] = shift >= 64 ? UInt8(ascii: "0") : hexDigit(UInt8(truncatingIfNeeded: (magnitude >> shift) & 0xF))
        }
        return n + 2
    }
}
