import BLECore

/// btsnoop v1 constants (RFC 1761 snoop as adapted by Frontline/Android/BlueZ).
///
/// ```
/// file header: "btsnoop\0" | version u32 BE = 1 | datalink u32 BE
/// record:      orig_len u32 BE | incl_len u32 BE | flags u32 BE | cumulative drops u32 BE
///              | timestamp i64 BE (µs since 0000-01-01) | incl_len bytes
/// ```
public enum BTSnoop {
    public static let magic: [UInt8] = Array("btsnoop\0".utf8)
    public static let fileHeaderSize = 16
    public static let recordHeaderSize = 24
    /// µs from 0000-01-01 (btsnoop's epoch) to 1970-01-01.
    public static let epochOffset: Int64 = 0x00DC_DDB3_0F2F_8000
    /// Largest record length accepted: Wireshark's standard maximum packet size, so any file
    /// Wireshark reads is read here too (the largest real HCI packet is an ACL packet of 65535+5 bytes).
    public static let maxRecordLength = 262_144

    public static let datalinkH1: UInt32 = 1001
    public static let datalinkH4: UInt32 = 1002
    public static let datalinkBCSP: UInt32 = 1003
    public static let datalinkH5: UInt32 = 1004
    public static let datalinkMonitor: UInt32 = 2001

    /// Human name of a btsnoop datalink.
    public static func datalinkName(_ datalink: UInt32) -> String {
        switch datalink {
        case datalinkH1: "H1"
        case datalinkH4: "H4"
        case datalinkBCSP: "BCSP"
        case datalinkH5: "H5"
        case datalinkMonitor: "Linux monitor"
        case 2002: "Linux simulator"
        default: "unknown"
        }
    }
}

/// Walks btsnoop records (datalinks 1001 H1, 1002 H4, 2001 Linux monitor).
final class BTSnoopReader: RecordReader {
    let source: ByteSource
    let datalink: UInt32
    private var walk = RecordWalk()
    private var scratch = TextScratch()

    init(source: ByteSource, datalink: UInt32) {
        self.source = source
        self.datalink = datalink
        source.advance(BTSnoop.fileHeaderSize)
    }

    deinit { scratch.free() }

    var findings: [Finding] { walk.findings }

    var bytesConsumed: Int64 { source.bytesConsumed }

    func next() -> CaptureRecord? {
        var record = CaptureRecord.empty
        return next(into: &record) ? record : nil
    }

    /// The next record written over `record` (every field); false at the end. See ``CaptureFile/next(into:)``.
    @inline(__always)
    func next(into record: inout CaptureRecord) -> Bool {
        if walk.stopped { return false }
        let src = source
        guard src.ensure(BTSnoop.recordHeaderSize) else {
            walk.stop(atEndOf: src, needed: BTSnoop.recordHeaderSize)
            return false
        }
        let h = src.cursor
        let originalLength = Int(h.be32(0))
        let includedLength = Int(h.be32(4))
        let flags = h.be32(8)
        let drops = h.be32(12)
        let rawTime = Int64(bitPattern: h.be64(16))
        let recordFrame = walk.frame &+ 1
        let recordOffset = src.offset
        if let problem = RecordWalk.lengthProblem(
            captured: includedLength, original: originalLength,
            maximum: BTSnoop.maxRecordLength, noun: "included")
        {
            walk.stop(invalidLength: problem, offset: recordOffset)
            return false
        }
        let total = BTSnoop.recordHeaderSize &+ includedLength
        guard src.ensure(total) else {
            walk.stop(atEndOf: src, needed: total)
            return false
        }
        walk.frame = recordFrame
        let payload = UnsafeRawBufferPointer(start: src.cursor + BTSnoop.recordHeaderSize, count: includedLength)
        src.advance(total)
        if includedLength < originalLength { walk.truncation.note(frame: recordFrame) }

        record = CaptureRecord(
            frame: recordFrame, timestamp: Timestamp(microseconds: rawTime &- BTSnoop.epochOffset),
            direction: .unknown, kind: .other, originalLength: originalLength,
            includedLength: includedLength, fileOffset: recordOffset, rawType: flags,
            bytes: payload, cumulativeDrops: drops)
        record.stored = payload
        switch datalink {
        case BTSnoop.datalinkH4:
            record.direction = flags & 1 != 0 ? .rx : .tx
            if includedLength > 0 {
                let type = payload[0]
                if type >= 1 && type <= 5 {
                    record.kind = RecordKind(rawValue: type)
                    record.bytes = UnsafeRawBufferPointer(rebasing: payload[1...])
                } else {
                    walk.nonHCI.note(frame: recordFrame, indicator: type)
                }
            }
        case BTSnoop.datalinkMonitor:
            let opcode = UInt16(truncatingIfNeeded: flags)
            let (kind, direction) = LinuxMonitor.classify(opcode)
            record.kind = kind
            record.direction = direction
            record.controllerIndex = UInt16(truncatingIfNeeded: flags >> 16)
            record.rawType = UInt32(opcode)
            if opcode == LinuxMonitor.userLogging, LinuxMonitor.composeUserLogging(payload, into: &scratch) {
                record.bytes = scratch.bytes
            }
        default:  // H1
            let received = flags & 1 != 0
            record.direction = received ? .rx : .tx
            record.kind = flags & 2 != 0 ? (received ? .event : .command) : .acl
        }
        return true
    }
}
