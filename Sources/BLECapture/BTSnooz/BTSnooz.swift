import BLECore
import CZlib

/// Android btsnooz: the HCI ring buffer an Android bug report embeds as text.
///
/// ```
/// --- BEGIN:BTSNOOP_LOG_SUMMARY (N bytes in) ---
/// base64 { version u8 (1 or 2) | last timestamp u64 LE | zlib { records } }
/// --- END:BTSNOOP_LOG_SUMMARY ---
/// v1 record: length u16 LE | delta time u32 LE | type u8 | length−1 bytes
/// v2 record: length u16 LE | packet length u16 LE | delta time u32 LE | type u8 | length−1 bytes
/// ```
/// `length` counts the type byte (it is the H4 length); types 0x10 event, 0x11/0x21 ACL in/out,
/// 0x12/0x22 SCO in/out, 0x17/0x2D ISO in/out, 0x20 command (AOSP `btsnooz.py`).
/// The last timestamp and the deltas are milliseconds in AOSP's writer; some builds store µs,
/// so the unit is chosen from the magnitude of the last timestamp (and said in a finding).
/// A Qualcomm variant (length u16, packet length u16, delta u64, type as first data byte) is detected too.
public enum BTSnooz {
    public static let beginMarker = "--- BEGIN:BTSNOOP_LOG_SUMMARY"
    public static let endMarker = "--- END:BTSNOOP_LOG_SUMMARY"

    public static let typeInEvent: UInt8 = 0x10, typeInACL: UInt8 = 0x11, typeInSCO: UInt8 = 0x12, typeInISO: UInt8 = 0x17
    public static let typeOutCommand: UInt8 = 0x20, typeOutACL: UInt8 = 0x21, typeOutSCO: UInt8 = 0x22, typeOutISO: UInt8 = 0x2D

    static func h4Type(_ t: UInt8) -> UInt8? {
        switch t {
        case typeOutCommand: 0x01
        case typeInACL, typeOutACL: 0x02
        case typeInSCO, typeOutSCO: 0x03
        case typeInEvent: 0x04
        case typeInISO, typeOutISO: 0x05
        default: nil
        }
    }

    static func isInbound(_ t: UInt8) -> Bool { t == typeInEvent || t == typeInACL || t == typeInSCO || t == typeInISO }

    static func snoozType(kind: RecordKind, direction: Direction) -> UInt8? {
        switch kind {
        case .command: typeOutCommand
        case .event: typeInEvent
        case .acl: direction == .rx ? typeInACL : typeOutACL
        case .sco: direction == .rx ? typeInSCO : typeOutSCO
        case .iso: direction == .rx ? typeInISO : typeOutISO
        default: nil
        }
    }

    enum Layout: CaseIterable {
        case v1, v2, v2u64
        var headerSize: Int {
            switch self {
            case .v1: 7;
            case .v2: 9;
            case .v2u64: 12
            }
        }
        var name: String {
            switch self {
            case .v1: "v1";
            case .v2: "v2";
            case .v2u64: "v2 (64-bit deltas)"
            }
        }
    }

    struct Entry { var length: Int; var packetLength: Int; var delta: UInt64; var type: UInt8; var dataStart: Int; var dataCount: Int }

    /// Reads the entry at `offset` (nil when it does not fit or is implausible).
    static func entry(_ body: UnsafeRawBufferPointer, at offset: Int, layout: Layout) -> Entry? {
        guard let p = body.baseAddress, offset + layout.headerSize <= body.count else { return nil }
        let h = p + offset
        let length = Int(h.le16(0))
        guard length >= 1 else { return nil }
        var e: Entry
        switch layout {
        case .v1:
            e = Entry(
                length: length, packetLength: length, delta: UInt64(h.le32(2)), type: h.byte(6),
                dataStart: offset + 7, dataCount: length - 1)
        case .v2:
            e = Entry(
                length: length, packetLength: Int(h.le16(2)), delta: UInt64(h.le32(4)), type: h.byte(8),
                dataStart: offset + 9, dataCount: length - 1)
        case .v2u64:
            guard offset + 12 + 1 <= body.count else { return nil }
            e = Entry(
                length: length, packetLength: Int(h.le16(2)), delta: h.le64(4), type: h.byte(12),
                dataStart: offset + 13, dataCount: length - 1)
        }
        guard h4Type(e.type) != nil, e.dataStart + e.dataCount <= body.count else { return nil }
        return e
    }

    /// Number of entries if `layout` walks `body` exactly to its end with known types.
    static func walk(_ body: UnsafeRawBufferPointer, layout: Layout) -> Int? {
        var offset = 0
        var n = 0
        while offset < body.count {
            guard let e = entry(body, at: offset, layout: layout) else { return nil }
            offset = e.dataStart + e.dataCount
            n += 1
        }
        return n
    }

    /// Decodes a btsnooz blob (after base64) into btsnoop bytes (datalink 1002), plus notes.
    static func decodeToBTSnoop(_ blob: [UInt8]) -> (bytes: [UInt8], notes: [String])? {
        guard blob.count >= 9 else { return nil }
        let version = blob[0]
        guard version == 1 || version == 2 else { return nil }
        var last: UInt64 = 0
        for i in 0..<8 { last |= UInt64(blob[1 + i]) << (8 * UInt64(i)) }
        // Android's snoop ring buffer is a few MiB: a larger inflated body is a deflate bomb, not a capture.
        guard let body = zlibInflate(Array(blob[9...]), maxOutput: 1 << 28) else { return nil }
        var notes: [String] = []
        return body.withUnsafeBytes { raw -> ([UInt8], [String])? in
            let preferred: [Layout] = version == 1 ? [.v1, .v2, .v2u64] : [.v2, .v2u64, .v1]
            guard let layout = preferred.first(where: { walk(raw, layout: $0) != nil }) else { return nil }
            if layout != preferred[0] { notes.append("btsnooz version \(version) with \(layout.name) record layout") }
            // Unit of the timestamps, from the magnitude of the last one.
            let lastSigned = Int64(bitPattern: last)
            let msRange: ClosedRange<Int64> = 946_684_800_000...4_102_444_800_000
            let usRange: ClosedRange<Int64> = 946_684_800_000_000...4_102_444_800_000_000
            var scale: Int64 = 1000
            var lastUnixUs: Int64
            if msRange.contains(lastSigned) {
                lastUnixUs = lastSigned &* 1000
            } else if msRange.contains(lastSigned &- BTSnoop.epochOffset / 1000) {
                lastUnixUs = (lastSigned &- BTSnoop.epochOffset / 1000) &* 1000
                notes.append("btsnooz timestamps are ms since year 0")
            } else if usRange.contains(lastSigned) {
                scale = 1; lastUnixUs = lastSigned
                notes.append("btsnooz timestamps are µs")
            } else if usRange.contains(lastSigned &- BTSnoop.epochOffset) {
                scale = 1; lastUnixUs = lastSigned &- BTSnoop.epochOffset
                notes.append("btsnooz timestamps are µs since year 0")
            } else {
                lastUnixUs = lastSigned &* 1000
                notes.append("btsnooz last timestamp \(lastSigned) is not a plausible date; read as ms since 1970")
            }
            var totalDelta: Int64 = 0
            var offset = 0
            while offset < raw.count, let e = entry(raw, at: offset, layout: layout) {
                totalDelta &+= Int64(bitPattern: e.delta) &* scale
                offset = e.dataStart + e.dataCount
            }
            var out = ByteWriter(capacity: raw.count + raw.count / 2 + 16)
            out.write(contentsOf: BTSnoop.magic)
            out.write(bigEndian: UInt32(1))
            out.write(bigEndian: BTSnoop.datalinkH4)
            var time = lastUnixUs &- totalDelta
            offset = 0
            while offset < raw.count, let e = entry(raw, at: offset, layout: layout) {
                time &+= Int64(bitPattern: e.delta) &* scale
                out.write(bigEndian: UInt32(max(e.packetLength, e.length)))
                out.write(bigEndian: UInt32(e.length))
                out.write(bigEndian: UInt32(isInbound(e.type) ? 1 : 0))
                out.write(bigEndian: UInt32(0))
                out.write(bigEndian: UInt64(bitPattern: time &+ BTSnoop.epochOffset))
                out.write(h4Type(e.type)!)
                out.write(contentsOf: UnsafeRawBufferPointer(rebasing: raw[e.dataStart..<e.dataStart + e.dataCount]))
                offset = e.dataStart + e.dataCount
            }
            return (out.bytes, notes)
        }
    }

    /// Encodes HCI records as a btsnooz blob (version 1 or 2, millisecond timestamps as AOSP writes them).
    /// Records that are not HCI are skipped. For fixtures and tests.
    public static func encode(_ records: [OwnedRecord], version: UInt8 = 2) -> [UInt8] {
        var body = ByteWriter(capacity: 1024)
        var previousMs: Int64? = nil
        var lastMs: Int64 = 0
        for r in records {
            guard let type = snoozType(kind: r.kind, direction: r.direction) else { continue }
            let ms = r.timestamp.microseconds / 1000
            let delta = previousMs.map { ms - $0 } ?? 0
            previousMs = ms
            lastMs = ms
            let length = UInt16(truncatingIfNeeded: r.bytes.count + 1)
            body.write(littleEndian: length)
            if version >= 2 { body.write(littleEndian: UInt16(truncatingIfNeeded: r.originalLength + 1)) }
            body.write(littleEndian: UInt32(truncatingIfNeeded: delta))
            body.write(type)
            body.write(contentsOf: r.bytes)
        }
        var blob = ByteWriter(capacity: body.count + 16)
        blob.write(version)
        blob.write(littleEndian: UInt64(bitPattern: lastMs))
        blob.write(contentsOf: zlibDeflate(body.bytes))
        return blob.bytes
    }

    /// A minimal Android bug report text with the btsnooz block of `records`, lines of 76 base64 characters.
    public static func bugReport(_ records: [OwnedRecord], version: UInt8 = 2) -> [UInt8] {
        let encoded = Base64.encode(encode(records, version: version))
        var text = "== dumpstate: 2026-01-01 00:00:00\n------ DUMPSYS (dumpsys bluetooth_manager) ------\n"
        text += beginMarker + " (\(encoded.count) bytes in) ---\n"
        var i = encoded.startIndex
        while i < encoded.endIndex {
            let j = encoded.index(i, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            text += String(decoding: encoded[i..<j], as: UTF8.self) + "\n"
            i = j
        }
        text += endMarker + " ---\n"
        return Array(text.utf8)
    }

    /// Finds the block in bug report text and returns the decoded blob; nil without markers.
    static func extractBlob(from source: ByteSource) -> [UInt8]? {
        let begin = Array(beginMarker.utf8), end = Array(endMarker.utf8)
        var inside = false
        var base64: [UInt8] = []
        while let line = nextLine(source) {
            if !inside {
                if contains(line, begin) { inside = true }
            } else if contains(line, end) {
                return Base64.decode(base64)
            } else {
                base64.append(contentsOf: line.lazy.filter { $0 > 0x20 })
            }
        }
        return inside && !base64.isEmpty ? Base64.decode(base64) : nil
    }

    private static func nextLine(_ source: ByteSource) -> UnsafeRawBufferPointer? {
        var want = 4096
        while true {
            let have = source.available
            if have > 0, let nl = memchrOffset(source.cursor, 0x0A, have) {
                let line = UnsafeRawBufferPointer(start: source.cursor, count: nl)
                source.advance(nl + 1)
                return line
            }
            if have >= (1 << 20) || !source.ensure(max(want, have + 1)) {
                // No newline: hand out what is left (or a 1 MiB slice of an absurd line).
                let n = min(source.available, 1 << 20)
                if n == 0 { return nil }
                let line = UnsafeRawBufferPointer(start: source.cursor, count: n)
                source.advance(n)
                return line
            }
            want = max(want * 2, have + 4096)
        }
    }

    private static func memchrOffset(_ p: UnsafeRawPointer, _ byte: UInt8, _ n: Int) -> Int? {
        for i in 0..<n where p.byte(i) == byte { return i }
        return nil
    }

    static func contains(_ hay: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard hay.count >= needle.count, let first = needle.first else { return false }
        var i = 0
        while i + needle.count <= hay.count {
            if hay[i] == first {
                var j = 1
                while j < needle.count && hay[i + j] == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }
}

/// Base64 (RFC 4648 §4) without Foundation.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = bytes[i], b1 = i + 1 < bytes.count ? bytes[i + 1] : 0, b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 3) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            i += 3
        }
        return out
    }

    /// Decodes, skipping whitespace; nil on any other character outside the alphabet.
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var acc: UInt32 = 0
        var bits = 0
        for c in text {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"), UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): v = 63
            case UInt8(ascii: "="), 0x09, 0x0A, 0x0D, 0x20: continue
            default: return nil
            }
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        return out
    }
}

/// zlib (RFC 1950) inflate of a whole buffer; gzip (RFC 1952) too when `gzip` is set. Nil on corrupt data.
func zlibInflate(_ input: [UInt8], gzip: Bool = false, maxOutput: Int = 1 << 31) -> [UInt8]? {
    var stream = z_stream()
    guard inflateInit2_(&stream, gzip ? 15 + 32 : 15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
    defer { inflateEnd(&stream) }
    var out = [UInt8](repeating: 0, count: max(4096, input.count * 4))
    var produced = 0
    var status: Int32 = Z_OK
    var mutableInput = input
    mutableInput.withUnsafeMutableBufferPointer { inBuf in
        stream.next_in = inBuf.baseAddress
        stream.avail_in = UInt32(inBuf.count)
        while true {
            if produced == out.count {
                guard out.count < maxOutput else { status = Z_BUF_ERROR; return }
                out.append(contentsOf: repeatElement(0, count: out.count))
            }
            let room = out.count - produced
            status = out.withUnsafeMutableBufferPointer { outBuf in
                stream.next_out = outBuf.baseAddress! + produced
                stream.avail_out = UInt32(min(room, Int(UInt32.max)))
                let s = inflate(&stream, Z_NO_FLUSH)
                produced = Int(stream.total_out)
                return s
            }
            if status == Z_STREAM_END { return }
            if status != Z_OK { return }
            if stream.avail_in == 0 && stream.avail_out != 0 { status = Z_BUF_ERROR; return }
        }
    }
    guard status == Z_STREAM_END else { return nil }
    out.removeSubrange(produced...)
    return out
}

/// zlib (RFC 1950) deflate of a whole buffer; `gzip` writes a gzip (RFC 1952) member instead.
public func zlibDeflate(_ input: [UInt8], gzip: Bool = false) -> [UInt8] {
    var stream = z_stream()
    guard
        deflateInit2_(
            &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, gzip ? 15 + 16 : 15, 8, Z_DEFAULT_STRATEGY,
            zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
    else { return [] }
    defer { deflateEnd(&stream) }
    let bound = Int(deflateBound(&stream, UInt(input.count))) + 64
    var out = [UInt8](repeating: 0, count: bound)
    var mutableInput = input
    let produced: Int = mutableInput.withUnsafeMutableBufferPointer { inBuf in
        out.withUnsafeMutableBufferPointer { outBuf in
            stream.next_in = inBuf.baseAddress
            stream.avail_in = UInt32(inBuf.count)
            stream.next_out = outBuf.baseAddress
            stream.avail_out = UInt32(outBuf.count)
            _ = deflate(&stream, Z_FINISH)
            return Int(stream.total_out)
        }
    }
    out.removeSubrange(produced...)
    return out
}
