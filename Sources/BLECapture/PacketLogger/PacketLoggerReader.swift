import BLECore

/// Apple PacketLogger (`.pklg`) facts.
///
/// No file header. Each record:
/// ```
/// length u32 (bytes after this field) | seconds u32 | microseconds u32 | type u8 | payload
/// ```
/// all big-endian (older macOS, BTstack's `hci_dump`) or all little-endian (current macOS/iOS).
/// Types as Wireshark's packetlogger dissector names them: 00 HCI command, 01 HCI event,
/// 02/03 ACL sent/received, 08/09 SCO sent/received, 0A/0B LMP sent/received, F7 syslog,
/// F8 kernel, F9 kernel debug, FA error, FB power, FC note, FD config, FE new controller.
/// 12/13 are taken as ISO sent/received (blescope's assumption; Wireshark 4.0 does not name them).
public enum PacketLogger {
    public static let headerSize = 13
    /// Smallest legal length field: seconds + microseconds + type byte.
    public static let minLength = 9
    /// Largest accepted length field (Wireshark's standard maximum packet size plus the header).
    public static let maxLength = BTSnoop.maxRecordLength + 9

    public static let command: UInt8 = 0x00, event: UInt8 = 0x01, aclSent: UInt8 = 0x02, aclReceived: UInt8 = 0x03
    public static let scoSent: UInt8 = 0x08, scoReceived: UInt8 = 0x09, lmpSent: UInt8 = 0x0A, lmpReceived: UInt8 = 0x0B
    public static let isoSent: UInt8 = 0x12, isoReceived: UInt8 = 0x13
    public static let syslog: UInt8 = 0xF7, kernel: UInt8 = 0xF8, kernelDebug: UInt8 = 0xF9, error: UInt8 = 0xFA
    public static let power: UInt8 = 0xFB, note: UInt8 = 0xFC, config: UInt8 = 0xFD, newController: UInt8 = 0xFE

    /// Types the sniffer accepts as evidence of a PacketLogger file.
    static func isKnownType(_ t: UInt8) -> Bool {
        switch t {
        case 0x00...0x03, 0x08...0x0B, 0x12, 0x13, 0xF7...0xFE: true
        default: false
        }
    }

    /// Kind and direction of a record type. Config (FD) is binary, so it is `.other`, not text.
    @inline(__always)
    static func classify(_ t: UInt8) -> (RecordKind, Direction) {
        switch t {
        case command: (.command, .tx)
        case event: (.event, .rx)
        case aclSent: (.acl, .tx)
        case aclReceived: (.acl, .rx)
        case scoSent: (.sco, .tx)
        case scoReceived: (.sco, .rx)
        case isoSent: (.iso, .tx)
        case isoReceived: (.iso, .rx)
        case lmpSent: (.other, .tx)
        case lmpReceived: (.other, .rx)
        case syslog, kernel, kernelDebug, error, power, note, newController: (.text, .unknown)
        default: (.other, .unknown)
        }
    }

    /// Type byte for writing a record of this kind and direction.
    static func type(kind: RecordKind, direction: Direction, rawType: UInt32) -> UInt8? {
        switch kind {
        case .command: command
        case .event: event
        case .acl: direction == .rx ? aclReceived : aclSent
        case .sco: direction == .rx ? scoReceived : scoSent
        case .iso: direction == .rx ? isoReceived : isoSent
        case .text: note
        case .other: rawType <= 0xFF ? UInt8(rawType) : nil
        default: nil
        }
    }

    /// How many of the leading records of `bytes` look like PacketLogger records in this byte order,
    /// and whether the walk ended exactly at the end of `bytes`. Nil when the first record is implausible.
    static func plausibleRecords(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool, limit: Int = 8) -> (count: Int, exactEnd: Bool)? {
        guard let p = bytes.baseAddress else { return nil }
        var offset = 0
        var count = 0
        var previousSeconds: UInt32? = nil
        while count < limit, offset + headerSize <= bytes.count {
            let h = p + offset
            let length = Int(bigEndian ? h.be32(0) : h.le32(0))
            let seconds = bigEndian ? h.be32(4) : h.le32(4)
            let micros = bigEndian ? h.be32(8) : h.le32(8)
            let type = h.byte(12)
            guard length >= minLength, length <= maxLength, micros < 1_000_000, isKnownType(type) else { break }
            // Timestamps ascend, give or take: tolerate a jump back of up to 10 days (notes written earlier). In 64 bits: a
            // seconds field within 10 days' worth of 2^32 (a millisecond counter near its wrap) must not wrap the sum.
            if let prev = previousSeconds, UInt64(seconds) + 864_000 < UInt64(prev) { break }
            previousSeconds = seconds
            offset += 4 + length
            count += 1
        }
        if count == 0 { return nil }
        return (count, offset == bytes.count)
    }
}

/// Walks PacketLogger records in one byte order.
final class PacketLoggerReader: RecordReader {
    let source: ByteSource
    let bigEndian: Bool
    private var walk = RecordWalk()
    private var scratch = TextScratch()
    /// Set when the leading records show a millisecond counter in the seconds field (``PacketLoggerClock``).
    private var clock: PacketLoggerClock?
    private var clockDecided = false

    init(source: ByteSource, bigEndian: Bool) {
        self.source = source
        self.bigEndian = bigEndian
    }

    deinit { scratch.free() }

    var findings: [Finding] { (clock.map { [$0.finding] } ?? []) + walk.findings }
    var bytesConsumed: Int64 { source.bytesConsumed }

    func next() -> CaptureRecord? {
        if walk.stopped { return nil }
        let src = source
        if !clockDecided { decideClock(src) }
        guard src.ensure(PacketLogger.headerSize) else {
            walk.stop(atEndOf: src, needed: PacketLogger.headerSize)
            return nil
        }
        let h = src.cursor
        let length = Int(bigEndian ? h.be32(0) : h.le32(0))
        let seconds = bigEndian ? h.be32(4) : h.le32(4)
        let micros = bigEndian ? h.be32(8) : h.le32(8)
        let type = h.byte(12)
        let recordFrame = walk.frame &+ 1
        let recordOffset = src.offset
        guard length >= PacketLogger.minLength, length <= PacketLogger.maxLength else {
            walk.stop(
                invalidLength: "length \(length) outside \(PacketLogger.minLength)...\(PacketLogger.maxLength)",
                offset: recordOffset)
            return nil
        }
        let total = 4 &+ length
        guard src.ensure(total) else {
            walk.stop(atEndOf: src, needed: total)
            return nil
        }
        walk.frame = recordFrame
        let payload = UnsafeRawBufferPointer(start: src.cursor + PacketLogger.headerSize, count: length - PacketLogger.minLength)
        src.advance(total)
        let (kind, direction) = PacketLogger.classify(type)
        let timestamp =
            clock == nil
            ? Timestamp(seconds: Int64(seconds), microseconds: Int64(micros)) : clock!.time(seconds: seconds, microseconds: micros)
        var record = CaptureRecord(
            frame: recordFrame, timestamp: timestamp,
            direction: direction, kind: kind, originalLength: length - 8, includedLength: length - 8,
            fileOffset: recordOffset, rawType: UInt32(type), bytes: payload)
        // From the type byte, as Wireshark's frame holds it.
        record.stored = UnsafeRawBufferPointer(start: payload.baseAddress! - 1, count: payload.count + 1)
        if type == PacketLogger.syslog, let text = composeSyslog(payload) { record.bytes = text }
        return record
    }

    /// Reads ahead over the first records (whatever of ``PacketLoggerClock/lookAheadBytes`` the file holds) once, before
    /// the first record is returned, so every record's time is read the same way.
    private func decideClock(_ src: ByteSource) {
        clockDecided = true
        _ = src.ensure(PacketLoggerClock.lookAheadBytes)
        let window = UnsafeRawBufferPointer(start: src.cursor, count: min(src.available, PacketLoggerClock.lookAheadBytes))
        clock = PacketLoggerClock.millisecondEvidence(window, bigEndian: bigEndian).map(PacketLoggerClock.init(evidence:))
    }

    /// Syslog payload: pid u32, message type u8, then NUL-terminated process, sender, subsystem,
    /// category, message (Wireshark's packetlogger dissector); composed as `process: message`.
    private func composeSyslog(_ payload: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard payload.count > 5 else { return nil }
        var fields: [Range<Int>] = []
        fields.reserveCapacity(5)
        var start = 5
        var i = 5
        while i < payload.count, fields.count < 5 {
            if payload[i] == 0 { fields.append(start..<i); start = i + 1 }
            i += 1
        }
        if fields.count < 5, start < payload.count { fields.append(start..<payload.count) }
        guard fields.count == 5 else { return nil }
        scratch.reset(reserving: payload.count + 2)
        scratch.append(UnsafeRawBufferPointer(rebasing: payload[fields[0]]))
        if scratch.count > 0 { scratch.append(ascii: ": ") }
        scratch.append(UnsafeRawBufferPointer(rebasing: payload[fields[4]]))
        return scratch.bytes
    }
}
