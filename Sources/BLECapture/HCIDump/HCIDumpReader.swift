import BLECore

/// BlueZ hcidump's own file format (`hcidump -w FILE`, the Linux tool before `btmon`), which Wireshark reads as
/// "Bluetooth HCI dump". No file header; every record is
///
/// ```
/// len u16 LE | in u8 | pad u8 | ts_sec u32 LE | ts_usec u32 LE | len bytes: H4 packet indicator, HCI packet
/// ```
///
/// `in` is 1 for a packet the controller sent the host (BlueZ `hcidump/hcidump.c`, `struct dump_hdr`). With no magic,
/// the file is recognised by its leading records (``plausibleRecords(_:limit:)``).
public enum HCIDump {
    public static let recordHeaderSize = 12
    /// An H4 indicator and at most an ACL packet of 65535 bytes with its 4-byte header.
    static let maxLength = 1 + 4 + 65_535

    /// How many leading records of `bytes` (at most `limit`) are hcidump records whose H4 packet is consistent with
    /// its own length field, and whether they end exactly at the end of `bytes`; nil when the first is not one.
    static func plausibleRecords(_ bytes: UnsafeRawBufferPointer, limit: Int = 8) -> (count: Int, exactEnd: Bool)? {
        guard let p = bytes.baseAddress else { return nil }
        var offset = 0, count = 0
        while count < limit, offset + recordHeaderSize <= bytes.count {
            let h = p + offset
            let length = Int(h.le16(0))
            guard length >= 2, length <= maxLength, h.byte(2) <= 1, h.byte(3) == 0, h.le32(8) < 1_000_000 else { break }
            let packet = offset + recordHeaderSize
            if packet + length <= bytes.count, !consistent(UnsafeRawBufferPointer(start: p + packet, count: length)) { break }
            offset = packet + length
            count += 1
        }
        if count == 0 { return nil }
        return (count, offset == bytes.count)
    }

    /// The H4 packet's own length field agrees with the record's length (Core Spec Vol 4, Part E, 5.4).
    static func consistent(_ packet: UnsafeRawBufferPointer) -> Bool {
        let n = packet.count
        switch packet[0] {
        case 0x01: return n >= 4 && Int(packet[3]) + 4 == n
        case 0x02: return n >= 5 && Int(packet[3]) | Int(packet[4]) << 8 + 5 == n
        case 0x03: return n >= 4 && Int(packet[3]) + 4 == n
        case 0x04: return n >= 3 && Int(packet[2]) + 3 == n
        default: return false
        }
    }
}

/// Walks hcidump records.
final class HCIDumpReader: RecordReader {
    let source: ByteSource
    private var walk = RecordWalk()

    init(source: ByteSource) { self.source = source }

    var findings: [Finding] { walk.findings }
    var bytesConsumed: Int64 { source.bytesConsumed }

    func next() -> CaptureRecord? {
        var record = CaptureRecord.empty
        return next(into: &record) ? record : nil
    }

    func next(into record: inout CaptureRecord) -> Bool {
        if walk.stopped { return false }
        let src = source
        guard src.ensure(HCIDump.recordHeaderSize) else {
            walk.stop(atEndOf: src, needed: HCIDump.recordHeaderSize)
            return false
        }
        let h = src.cursor
        let length = Int(h.le16(0))
        let received = h.byte(2) != 0
        let micros = Int64(h.le32(4)) * 1_000_000 + Int64(h.le32(8))
        let recordOffset = src.offset
        if length == 0 {
            walk.stop(invalidLength: "length 0 (an hcidump record holds at least its H4 packet indicator)", offset: recordOffset)
            return false
        }
        let total = HCIDump.recordHeaderSize + length
        guard src.ensure(total) else {
            walk.stop(atEndOf: src, needed: total)
            return false
        }
        walk.frame &+= 1
        let payload = UnsafeRawBufferPointer(start: src.cursor + HCIDump.recordHeaderSize, count: length)
        src.advance(total)
        record = CaptureRecord(
            frame: walk.frame, timestamp: Timestamp(microseconds: micros), direction: received ? .rx : .tx, kind: .other,
            originalLength: length, includedLength: length, fileOffset: recordOffset, rawType: UInt32(payload[0]),
            bytes: payload, cumulativeDrops: 0)
        record.stored = payload
        let type = payload[0]
        if type >= 1 && type <= 5 {
            record.kind = RecordKind(rawValue: type)
            record.bytes = UnsafeRawBufferPointer(rebasing: payload[1...])
        } else {
            walk.nonHCI.note(frame: walk.frame, indicator: type)
        }
        return true
    }
}
