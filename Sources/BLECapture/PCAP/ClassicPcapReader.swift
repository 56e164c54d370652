import BLECore

/// Classic pcap facts (tcpdump.org pcap file format, draft-ietf-opsawg-pcap).
///
/// ```
/// file header (24): magic u32 | major u16 | minor u16 | thiszone i32 | sigfigs u32 | snaplen u32 | linktype u32
/// record (16 + caplen): ts_sec u32 | ts_usec or ts_nsec u32 | caplen u32 | len u32 | caplen bytes
/// ```
/// magic a1b2c3d4 (µs) or a1b23c4d (ns), in the writer's byte order.
///
/// Read natively over the same buffered source as btsnoop rather than through libpcap, whose
/// per-packet `fread`s are several times slower (docs/performance.md#classic-pcap), and so that a cut file gives
/// exact offsets. pcapng still goes through libpcap.
enum ClassicPcap {
    static let headerSize = 24
    static let recordHeaderSize = 16

    /// (big-endian, nanoseconds) for a magic read big-endian, nil if not classic pcap.
    static func magic(_ be: UInt32) -> (bigEndian: Bool, nanoseconds: Bool)? {
        switch be {
        case 0xA1B2_C3D4: (true, false)
        case 0xD4C3_B2A1: (false, false)
        case 0xA1B2_3C4D: (true, true)
        case 0x4D3C_B2A1: (false, true)
        default: nil
        }
    }
}

final class ClassicPcapReader: RecordReader {
    let source: ByteSource
    let bigEndian: Bool
    let nanoseconds: Bool
    let linkType: UInt32
    private var walk = RecordWalk()
    private var subsecondOutOfRange = SubsecondTally()

    init(source: ByteSource, bigEndian: Bool, nanoseconds: Bool, linkType: UInt32) {
        self.source = source
        self.bigEndian = bigEndian
        self.nanoseconds = nanoseconds
        self.linkType = linkType
        source.advance(ClassicPcap.headerSize)
    }

    var findings: [Finding] {
        guard let f = subsecondOutOfRange.finding(unit: nanoseconds ? "ts_nsec" : "ts_usec") else { return walk.findings }
        return walk.findings + [f]
    }

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
        guard src.ensure(ClassicPcap.recordHeaderSize) else {
            walk.stop(atEndOf: src, needed: ClassicPcap.recordHeaderSize)
            return false
        }
        let h = src.cursor
        let be = bigEndian
        let seconds = be ? h.be32(0) : h.le32(0)
        let fraction = be ? h.be32(4) : h.le32(4)
        let caplen = Int(be ? h.be32(8) : h.le32(8))
        let len = Int(be ? h.be32(12) : h.le32(12))
        let recordFrame = walk.frame &+ 1
        let recordOffset = src.offset
        if let problem = RecordWalk.lengthProblem(
            captured: caplen, original: len,
            maximum: BTSnoop.maxRecordLength, noun: "captured")
        {
            walk.stop(invalidLength: problem, offset: recordOffset)
            return false
        }
        let total = ClassicPcap.recordHeaderSize &+ caplen
        guard src.ensure(total) else {
            walk.stop(atEndOf: src, needed: total)
            return false
        }
        walk.frame = recordFrame
        let packet = UnsafeRawBufferPointer(start: src.cursor + ClassicPcap.recordHeaderSize, count: caplen)
        src.advance(total)
        if caplen < len { walk.truncation.note(frame: recordFrame) }
        if fraction >= (nanoseconds ? 1_000_000_000 : 1_000_000) {
            subsecondOutOfRange.note(frame: recordFrame, offset: recordOffset, value: fraction)
        }
        let micros = nanoseconds ? Int64(fraction / 1000) : Int64(fraction)
        record = CaptureRecord(
            frame: recordFrame, timestamp: Timestamp(microseconds: Int64(seconds) &* 1_000_000 &+ micros),
            direction: .unknown, kind: .other, originalLength: len, includedLength: caplen,
            fileOffset: recordOffset, rawType: linkType, linkType: linkType, bytes: packet)
        record.stored = packet
        if nanoseconds { record.extraNanoseconds = UInt16(truncatingIfNeeded: fraction % 1000) }
        PcapLinkType.interpret(&record, packet: packet)
        if let indicator = PcapLinkType.nonHCIIndicator(record, packet: packet) {
            walk.nonHCI.note(frame: recordFrame, indicator: indicator)
        }
        return true
    }
}
