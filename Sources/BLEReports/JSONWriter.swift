import BLECore

/// A small, fast JSON writer with a stable key order (the order calls are made in).
///
/// Output that programs read must be stable: keys are never reordered, floats are written with
/// a fixed number of decimals where the schema says so, and nothing depends on hashing.
///
/// Its methods are `@inline(never)`: inlined, each `w.field(…)` call site became a copy of the key writer and the
/// number or string formatter, and the release build's optimizer spent its time on them (ThroughputReport.write was
/// 6,960 SIL lines). Out of line, BLEReports compiles in 41 s instead of 49 s of CPU (release, one module, 2026-11-26);
/// no JSON output here is written per record (the timeline's JSON Lines use ``ByteBuffer``).
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = [false]

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    @_optimize(speed)
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = [false]
    }

    @_optimize(speed)
    private mutating func separator() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    @inline(never)
    @_optimize(speed)
    private mutating func key(_ k: String) {
        separator()
        // Keys are the schema's own names: plain ASCII, never in need of escaping.
        if k.utf8.withContiguousStorageIfAvailable({ (name: UnsafeBufferPointer<UInt8>) -> Void in
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "\""), count: name.count + 3))
            bytes.withUnsafeMutableBufferPointer { out in
                for (i, c) in name.enumerated() { out[start &+ 1 &+ i] = c }
                out[start &+ name.count &+ 2] = UInt8(ascii: ":")
            }
        }) == nil {
            bytes.append(UInt8(ascii: "\""))
            appendRaw(k)
            bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        needsComma[needsComma.count - 1] = false
    }

    @_optimize(speed)
    private mutating func valueDone() { needsComma[needsComma.count - 1] = true }

    @inline(never)
    @_optimize(speed)
    public mutating func beginObject(_ k: String? = nil) {
        if let k { key(k) } else { separator() }
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    @inline(never)
    @_optimize(speed)
    public mutating func endObject() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
        valueDone()
    }

    @inline(never)
    @_optimize(speed)
    public mutating func beginArray(_ k: String? = nil) {
        if let k { key(k) } else { separator() }
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
    }

    @inline(never)
    @_optimize(speed)
    public mutating func endArray() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
        valueDone()
    }

    // MARK: key/value pairs

    @inline(never)
    @_optimize(speed)
    public mutating func field(_ k: String, _ v: String?) {
        key(k)
        if let v { appendEscaped(v) } else { appendRaw("null") }
        valueDone()
    }

    @_optimize(speed)
    public mutating func field<T: BinaryInteger>(_ k: String, _ v: T?) {
        key(k)
        if let v { appendInteger(Int64(truncatingIfNeeded: v)) } else { appendRaw("null") }
        valueDone()
    }

    /// Decimal digits without going through a String.
    @inline(never)
    @_optimize(speed)
    private mutating func appendInteger(_ v: Int64) {
        if v == 0 { bytes.append(UInt8(ascii: "0")); return }
        var m = v.magnitude
        if v < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        while m > 0 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: m % 10))
            m /= 10
        }
        bytes[start...].reverse()
    }

    @inline(never)
    @_optimize(speed)
    public mutating func field(_ k: String, _ v: Bool?) {
        key(k)
        appendRaw(v.map { $0 ? "true" : "false" } ?? "null")
        valueDone()
    }

    /// A float with `decimals` fixed digits (seconds since the epoch use 6 for µs precision).
    @inline(never)
    @_optimize(speed)
    public mutating func field(_ k: String, _ v: Double?, decimals: Int) {
        key(k)
        if let v, v.isFinite { appendRaw(String(fractionDigits: decimals, v)) } else { appendRaw("null") }
        valueDone()
    }

    /// Seconds since the Unix epoch with µs precision, exact (no binary rounding of the µs).
    @inline(never)
    @_optimize(speed)
    public mutating func field(_ k: String, _ t: Timestamp?) {
        key(k)
        if let t {
            let us = t.microseconds
            let s = us >= 0 ? us / 1_000_000 : -((-us + 999_999) / 1_000_000)
            var frac = us - s * 1_000_000
            appendInteger(s)
            bytes.append(UInt8(ascii: "."))
            let start = bytes.count
            for _ in 0..<6 {
                bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: frac % 10))
                frac /= 10
            }
            bytes[start...].reverse()
        } else {
            appendRaw("null")
        }
        valueDone()
    }

    @_optimize(speed)
    public mutating func fieldHex<C: Collection>(_ k: String, _ v: C?) where C.Element == UInt8 {
        key(k)
        if let v {
            bytes.append(UInt8(ascii: "\""))
            appendHex(v)
            bytes.append(UInt8(ascii: "\""))
        } else {
            appendRaw("null")
        }
        valueDone()
    }

    /// Lowercase hex digits, two per byte.
    @_optimize(speed)
    private mutating func appendHex<C: Collection>(_ v: C) where C.Element == UInt8 {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(UInt8(0), count: v.count * 2))
        bytes.withUnsafeMutableBufferPointer { out in
            var i = start
            for b in v {
                out[i] = hexDigit(b >> 4)
                out[i &+ 1] = hexDigit(b & 0xF)
                i &+= 2
            }
        }
    }

    @inline(never)
    @_optimize(speed)
    public mutating func fieldNull(_ k: String) {
        key(k)
        appendRaw("null")
        valueDone()
    }

    /// Array element values.
    @inline(never)
    @_optimize(speed)
    public mutating func value(_ v: String) {
        separator()
        appendEscaped(v)
    }

    @_optimize(speed)
    public mutating func value<T: BinaryInteger>(_ v: T) {
        separator()
        appendInteger(Int64(truncatingIfNeeded: v))
    }

    /// An array element that is already JSON (an object another writer made), written as it is.
    @_optimize(speed)
    public mutating func value(raw json: String) {
        separator()
        appendRaw(json)
    }

    /// Ends a JSON Lines record.
    @_optimize(speed)
    public mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        needsComma = [false]
    }

    @inline(never)
    @_optimize(speed)
    private mutating func appendRaw(_ s: String) {
        if s.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: s.utf8)
        }
    }

    @inline(never)
    @_optimize(speed)
    private mutating func appendEscaped(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { (utf8: UnsafeBufferPointer<UInt8>) in
            // Most strings need no escaping: copy them in one go.
            if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                bytes.append(contentsOf: utf8)
                return
            }
            for c in utf8 {
                switch c {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0..<0x20:
                    let digits: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, digits[Int(c >> 4)], digits[Int(c & 0xF)]])
                default: bytes.append(c)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
