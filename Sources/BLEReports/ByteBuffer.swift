import BLECore

/// A growable byte buffer with unchecked-free appends for the JSON Lines hot path.
final class ByteBuffer {
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
    }

    deinit { storage.deallocate() }

    @_optimize(speed)
    func clear() { count = 0 }

    @_optimize(speed)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { body(UnsafeRawBufferPointer(start: storage, count: count)) }

    @_optimize(speed)
    @inline(__always) private func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        var newCapacity = capacity * 2
        while newCapacity < count + n { newCapacity *= 2 }
        let new = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 1)
        new.copyMemory(from: storage, byteCount: count)
        storage.deallocate()
        storage = new
        capacity = newCapacity
    }

    @_optimize(speed)
    @inline(__always) func append(byte: UInt8) {
        reserve(1)
        storage.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// Inlined so that each key's length is a constant and its copy a few moves, not a call to memmove:
    /// the out-of-line version was about 30 calls per line (docs/performance.md#timeline-renderer).
    @_optimize(speed)
    @inline(__always) func append(_ s: StaticString) {
        reserve(s.utf8CodeUnitCount)
        (storage + count).copyMemory(from: s.utf8Start, byteCount: s.utf8CodeUnitCount)
        count += s.utf8CodeUnitCount
    }

    @_optimize(speed)
    func append(bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (storage + count).copyMemory(from: base, byteCount: bytes.count)
        count += bytes.count
    }

    /// Decimal digits written backwards from the end, two at a time from a table: no reversal pass
    /// (the digit-at-a-time version with a reversal cost more: docs/performance.md#timeline-renderer).
    @_optimize(speed)
    func append(integer v: Int64) {
        reserve(21)
        if v < 0 { storage.storeBytes(of: UInt8(ascii: "-"), toByteOffset: count, as: UInt8.self); count &+= 1 }
        var m = v.magnitude
        var digits = 1
        var t = m
        while t >= 10 { t /= 10; digits &+= 1 }
        var end = count &+ digits
        count = end
        let pairs = ByteBuffer.digitPairs
        while m >= 100 {
            let pair = Int(m % 100) &* 2
            m /= 100
            end &-= 2
            storage.storeBytes(of: pairs[pair], toByteOffset: end, as: UInt8.self)
            storage.storeBytes(of: pairs[pair &+ 1], toByteOffset: end &+ 1, as: UInt8.self)
        }
        if m >= 10 {
            let pair = Int(m) &* 2
            storage.storeBytes(of: pairs[pair], toByteOffset: end &- 2, as: UInt8.self)
            storage.storeBytes(of: pairs[pair &+ 1], toByteOffset: end &- 1, as: UInt8.self)
        } else {
            storage.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: m), toByteOffset: end &- 1, as: UInt8.self)
        }
    }

    /// Four lowercase hex digits (`hex(v, width: 4)` without its `0x`).
    @_optimize(speed)
    func append(hex16 v: UInt16) {
        reserve(4)
        let pairs = ByteBuffer.hexPairs
        storage.storeBytes(of: pairs[Int(v >> 8)], toByteOffset: count, as: UInt16.self)
        storage.storeBytes(of: pairs[Int(v & 0xFF)], toByteOffset: count &+ 2, as: UInt16.self)
        count &+= 4
    }

    /// "00" "01" … "99".
    /// Built in a loop: as one `flatMap` expression it took the type checker about a second of every clean build
    /// (`-warn-long-expression-type-checking`, docs/performance.md#build-time). A pointer, made once and never freed,
    /// not an array: an array's elements are read through a closure (`withUnsafeBufferPointer`), and a closure does not
    /// take its function's `@_optimize(speed)` where BLEReports is compiled for size (docs/performance.md#size).
    nonisolated(unsafe) private static let digitPairs: UnsafePointer<UInt8> = {
        let pairs = UnsafeMutablePointer<UInt8>.allocate(capacity: 200)
        for n in 0..<100 {
            pairs[2 * n] = UInt8(ascii: "0") &+ UInt8(n / 10)
            pairs[2 * n + 1] = UInt8(ascii: "0") &+ UInt8(n % 10)
        }
        return UnsafePointer(pairs)
    }()

    @_optimize(speed)
    func append(optional v: Int64?) {
        if let v { append(integer: v) } else { append("null") }
    }

    /// Seconds since the epoch with exactly six decimals.
    @_optimize(speed)
    func append(seconds t: Timestamp) {
        let us = t.microseconds
        let s = us >= 0 ? us / 1_000_000 : -((-us + 999_999) / 1_000_000)
        var frac = us - s * 1_000_000
        append(integer: s)
        reserve(7)
        append(byte: UInt8(ascii: "."))
        for k in stride(from: 5, through: 0, by: -1) {
            storage.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: frac % 10), toByteOffset: count + k, as: UInt8.self)
            frac /= 10
        }
        count += 6
    }

    /// Two hex digits per byte: eight bytes at a time as 64-bit words (``hexDigits(of:)``), the rest with one 16-bit
    /// store per byte from a table (docs/performance.md#timeline-renderer); Swift's SIMD types compiled to lane-by-lane
    /// loops here (generic conversions and comparisons not vectorised), so the words are plain `UInt64`s.
    @_optimize(speed)
    func append(hexString v: [UInt8]) {
        reserve(v.count * 2 + 2)
        append(byte: UInt8(ascii: "\""))
        v.withUnsafeBytes { storeHexDigits(of: $0) }
        append(byte: UInt8(ascii: "\""))
    }

    /// ``append(hexString:)``'s digits (reserved by the caller); a function, not the closure's body (``storeDigits``).
    @_optimize(speed)
    private func storeHexDigits(of bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let pairs = ByteBuffer.hexPairs
        var n = count
        let out = storage
        var i = 0
        while i &+ 8 <= bytes.count {
            let word = base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            out.storeBytes(of: ByteBuffer.hexDigits(of: word & 0xFFFF_FFFF), toByteOffset: n, as: UInt64.self)
            out.storeBytes(of: ByteBuffer.hexDigits(of: word >> 32), toByteOffset: n &+ 8, as: UInt64.self)
            i &+= 8
            n &+= 16
        }
        while i < bytes.count {
            out.storeBytes(of: pairs[Int(bytes[i])], toByteOffset: n, as: UInt16.self)
            n &+= 2
            i &+= 1
        }
        count = n
    }

    /// The eight lowercase hex digits of the four bytes in the low half of `x` (first byte first), as they lie in
    /// memory on a little-endian machine: each byte spread to a 16-bit lane, its high nibble in the lane's low byte,
    /// then `'0' + n`, plus `'a' - '0' - 10` (0x27) where the nibble is over 9 (no carry crosses a byte: every byte stays
    /// below 0x67).
    @inline(__always)
    @_optimize(speed)
    static func hexDigits(of x: UInt64) -> UInt64 {
        var y = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF
        y = (y | (y << 8)) & 0x00FF_00FF_00FF_00FF
        let nibbles = ((y >> 4) & 0x000F_000F_000F_000F) | ((y & 0x000F_000F_000F_000F) << 8)
        let over9 = ((nibbles &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return nibbles &+ 0x3030_3030_3030_3030 &+ over9 &* 0x27
    }

    /// Byte → its two lowercase hex digits as they lie in memory (first digit in the low byte on little-endian machines);
    /// a pointer for the reason of ``digitPairs``.
    nonisolated(unsafe) private static let hexPairs: UnsafePointer<UInt16> = {
        let pairs = UnsafeMutablePointer<UInt16>.allocate(capacity: 256)
        for b in 0..<256 {
            let digits = [hexDigit(UInt8(b >> 4)), hexDigit(UInt8(b & 0xF))]
            pairs[b] = digits.withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) }
        }
        return UnsafePointer(pairs)
    }()

    @_optimize(speed)
    func append(optionalString s: String?) {
        if let s { append(string: s) } else { append("null") }
    }

    /// A JSON string, escaped.
    @_optimize(speed)
    func append(string s: String) {
        var s = s
        s.withUTF8 { appendEscaped(utf8: $0) }
    }

    /// ``append(string:)``'s body: a function, not the closure's (``storeDigits``).
    @_optimize(speed)
    private func appendEscaped(utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count + 2)
        append(byte: UInt8(ascii: "\""))
        // Most strings need no escaping: copy them in one go.
        var plain = true
        for c in utf8 where c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") {
            plain = false
            break
        }
        if plain {
            append(bytes: UnsafeRawBufferPointer(utf8))
            append(byte: UInt8(ascii: "\""))
            return
        }
        for c in utf8 {
            switch c {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0..<0x20:
                append("\\u00")
                append(byte: hexDigit(c >> 4))
                append(byte: hexDigit(c & 0xF))
            default: append(byte: c)
            }
        }
        append(byte: UInt8(ascii: "\""))
    }
}
