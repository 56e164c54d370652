import BLECore

/// pcapng facts (IETF draft-ietf-opsawg-pcapng, "PCAP Now Generic (pcapng) Capture File Format", sections 3–4).
///
/// ```
/// block:   block type u32 | block total length u32 | body | block total length u32   (lengths: multiples of 4, ≥ 12)
/// options: code u16 | length u16 | value, padded to 32 bits … opt_endofopt (0)
/// SHB 0x0A0D0D0A: byte-order magic 0x1A2B3C4D | major u16 | minor u16 | section length i64 | options
/// IDB 1:  link type u16 | reserved u16 | snaplen u32 | options (if_tsresol 9, if_tsoffset 14)
/// EPB 6:  interface id u32 | timestamp high u32 | low u32 | captured length u32 | original length u32 | data | options
/// SPB 3:  original length u32 | data (captured: the smaller of it, the snaplen and the body)
/// PB 2 (obsolete): interface id u16 | drops count u16 | timestamp high | low | captured | original | data | options
/// NRB 4:  records (type u16 | length u16 | value, padded) … nrb_record_end (0) | options
/// DSB 10: secrets type u32 | secrets length u32 | secrets data, padded | options
/// ```
/// Each section (an SHB and what follows until the next) has its own byte order and its own interfaces.
enum Pcapng {
    static let sectionHeader: UInt32 = 0x0A0D_0D0A
    static let interfaceDescription: UInt32 = 1
    static let obsoletePacket: UInt32 = 2
    static let simplePacket: UInt32 = 3
    static let nameResolution: UInt32 = 4
    static let interfaceStatistics: UInt32 = 5
    static let enhancedPacket: UInt32 = 6
    static let decryptionSecrets: UInt32 = 0x0A
    static let byteOrderMagic: UInt32 = 0x1A2B_3C4D
    /// Larger blocks are taken for damage (libpcap's and Wireshark's limit is 16 MiB as well).
    static let maxBlockLength = 16 << 20

    /// The block types this reader knows: a damaged block is skipped to the next place one of these starts.
    static let known: Set<UInt32> = [
        sectionHeader, interfaceDescription, obsoletePacket, simplePacket, nameResolution, interfaceStatistics,
        enhancedPacket, decryptionSecrets, 7, 8, 9, 0xBAD, 0x4000_0BAD,
    ]

    static func blockName(_ type: UInt32) -> String {
        switch type {
        case sectionHeader: "Section Header Block"
        case interfaceDescription: "Interface Description Block"
        case obsoletePacket: "Packet Block"
        case simplePacket: "Simple Packet Block"
        case nameResolution: "Name Resolution Block"
        case interfaceStatistics: "Interface Statistics Block"
        case enhancedPacket: "Enhanced Packet Block"
        case decryptionSecrets: "Decryption Secrets Block"
        default: "block type \(hex(type))"
        }
    }

    /// Option codes common to every block, and those of the packet and interface blocks.
    static let optComment: UInt16 = 1
    static let epbFlags: UInt16 = 2
    static let ifTsresol: UInt16 = 9
    static let ifTsoffset: UInt16 = 14
}

/// An interface of the current section: its link type and how its timestamps count.
struct PcapngInterface {
    var linkType: UInt32
    var snapLength: Int
    /// `if_tsresol`: bit 7 clear, units of 10^-n s; set, units of 2^-n s (default 6: microseconds).
    var resolution: UInt8 = 6
    /// `if_tsoffset`: seconds added to every timestamp.
    var offsetSeconds: Int64 = 0
    /// A Bluetooth link type blescope reads (others' packets are counted as frames, kept as `.other`).
    var isBluetooth: Bool { PcapLinkType.supported.contains(linkType) }

    /// A timestamp in this interface's units as µs since the epoch and the nanoseconds past that µs.
    @inline(__always)
    func time(_ units: UInt64) -> (micros: Int64, extraNanoseconds: UInt16) {
        let offset = offsetSeconds &* 1_000_000
        if resolution == 6 { return (Int64(bitPattern: units) &+ offset, 0) }
        if resolution == 9 { return (Int64(bitPattern: units / 1000) &+ offset, UInt16(units % 1000)) }
        let n = Int(resolution & 0x7F)
        if resolution & 0x80 != 0 {
            // Binary fractions: the seconds, then the fraction in nanoseconds (rounded down, 128-bit product).
            guard n < 64 else { return (offset, 0) }
            let seconds = units >> UInt64(n)
            let fraction = units & ((1 << UInt64(n)) - 1)
            let product = fraction.multipliedFullWidth(by: 1_000_000_000)
            let nanos = n == 0 ? 0 : (product.high << (64 - UInt64(n))) | (product.low >> UInt64(n))
            return (Int64(bitPattern: seconds &* 1_000_000 &+ nanos / 1000) &+ offset, UInt16(nanos % 1000))
        }
        guard n <= 19 else { return (offset, 0) }
        if n < 6 { return (Int64(bitPattern: units &* Self.powerOf10(6 - n)) &+ offset, 0) }
        let perMicro = Self.powerOf10(n - 6)
        let rest = units % perMicro
        let nanos = n <= 9 ? rest &* Self.powerOf10(9 - n) : rest / Self.powerOf10(n - 9)
        return (Int64(bitPattern: units / perMicro) &+ offset, UInt16(truncatingIfNeeded: nanos))
    }

    static func powerOf10(_ n: Int) -> UInt64 {
        var v: UInt64 = 1
        for _ in 0..<n { v &*= 10 }
        return v
    }
}

extension FindingKind {
    /// A pcapng block that cannot be read as the format says: skipped, and reading resumed at the next block.
    public static func capturePcapngDamagedBlock(offset: Int64, block: String, detail: String, resumedAt: Int64?) -> FindingKind {
        FindingKind(
            .captureDamagedBlock,
            message: "pcapng \(block) at offset \(offset): \(detail); "
                + (resumedAt.map { "skipped, reading resumed at the next block (offset \($0))" } ?? "no block follows: reading stopped"))
    }
}

/// Reads pcapng natively: every interface with its own link type and timestamp resolution, Enhanced, Simple and
/// obsolete Packet Blocks, packet comments and direction flags, Name Resolution and Decryption Secrets Blocks, both
/// byte orders and any number of sections. libpcap, which read it before, gives a file its first interface's link
/// type and refuses an interface of another type, so a capture with two interfaces could not be read; and it cannot
/// step over a damaged block. Here a damaged block is a finding with its offset, and reading goes on at the next
/// block that checks out (its type known, its two lengths equal).
final class PcapngReader: RecordReader {
    let source: ByteSource
    private var bigEndian = false
    private(set) var interfaces: [PcapngInterface] = []
    private var walk = RecordWalk()
    private var damaged: [Finding] = []
    /// Sections read, names resolved (NRB records) and decryption secrets seen (type, bytes), for `info`.
    private(set) var sections = 0
    private(set) var resolvedNames = 0
    private(set) var secrets: [(type: UInt32, length: Int)] = []

    init(source: ByteSource) {
        self.source = source
    }

    var findings: [Finding] { walk.findings + damaged }
    var bytesConsumed: Int64 { source.bytesConsumed }

    @inline(__always) private func u32(_ p: UnsafeRawPointer, _ at: Int) -> UInt32 { bigEndian ? p.be32(at) : p.le32(at) }
    @inline(__always) private func u16(_ p: UnsafeRawPointer, _ at: Int) -> UInt16 {
        bigEndian ? p.be16(at) : UInt16(littleEndian: p.loadUnaligned(fromByteOffset: at, as: UInt16.self))
    }

    func next() -> CaptureRecord? {
        var record = CaptureRecord.empty
        return next(into: &record) ? record : nil
    }

    /// The next packet written over `record` (every field); false at the end. Blocks that carry no packet (interfaces,
    /// names, secrets, statistics, sections) are read on the way.
    func next(into record: inout CaptureRecord) -> Bool {
        let src = source
        while !walk.stopped {
            guard src.ensure(12) else {
                if src.available > 0 { walk.stop(atEndOf: src, needed: 12) } else { walk.stopped = true }
                return false
            }
            let p = src.cursor
            var type = u32(p, 0)
            if p.le32(0) == Pcapng.sectionHeader {
                // The section's byte order, from its magic: the type reads the same either way.
                if p.le32(8) == Pcapng.byteOrderMagic {
                    bigEndian = false
                } else if p.be32(8) == Pcapng.byteOrderMagic {
                    bigEndian = true
                } else {
                    resync(
                        from: src.offset, type: Pcapng.sectionHeader, length: 0,
                        "byte-order magic \(hex(p.le32(8))) is neither 1A2B3C4D nor 4D3C2B1A")
                    continue
                }
                type = Pcapng.sectionHeader
            }
            let length = Int(u32(p, 4))
            let offset = src.offset
            guard length >= 12, length % 4 == 0, length <= Pcapng.maxBlockLength else {
                resync(
                    from: offset, type: type, length: length, "block total length \(length) is not a multiple of 4 between 12 and 16 MiB")
                continue
            }
            guard src.ensure(length) else {
                walk.stop(atEndOf: src, needed: length)
                return false
            }
            let block = src.cursor
            guard u32(block, length - 4) == UInt32(length) else {
                resync(
                    from: offset, type: type, length: length,
                    "its trailing total length \(u32(block, length - 4)) differs from the leading \(length)")
                continue
            }
            if type == Pcapng.enhancedPacket || type == Pcapng.simplePacket || type == Pcapng.obsoletePacket {
                if packet(block, type: type, length: length, offset: offset, into: &record) {
                    src.advance(length)
                    return true
                }
            } else {
                other(block, type: type, length: length, offset: offset)
            }
            src.advance(length)
        }
        return false
    }

    /// A packet block into `record`; false (and a finding) when it does not hold together.
    @inline(__always)
    private func packet(
        _ block: UnsafeRawPointer, type: UInt32, length: Int, offset: Int64, into record: inout CaptureRecord
    ) -> Bool {
        let body = length - 12
        var interfaceID = 0, units: UInt64 = 0, captured = 0, original = 0, dataAt = 8, timed = true
        switch type {
        case Pcapng.enhancedPacket, Pcapng.obsoletePacket:
            guard body >= 20 else { return damagedBlock(offset, type, length, "its body of \(body) bytes is shorter than 20") }
            // The obsolete Packet Block's interface id is 16 bits, a drops count beside it; the same layout otherwise.
            interfaceID = type == Pcapng.enhancedPacket ? Int(u32(block, 8)) : Int(u16(block, 8))
            units = UInt64(u32(block, 12)) << 32 | UInt64(u32(block, 16))
            captured = Int(u32(block, 20))
            original = Int(u32(block, 24))
            dataAt = 28
        default:  // Simple Packet Block: interface 0, no timestamp, the captured length implied.
            guard body >= 4 else { return damagedBlock(offset, type, length, "its body of \(body) bytes is shorter than 4") }
            original = Int(u32(block, 8))
            captured = min(original, body - 4)
            if let first = interfaces.first, first.snapLength > 0 { captured = min(captured, first.snapLength) }
            dataAt = 12
            timed = false
        }
        guard interfaceID < interfaces.count else {
            return damagedBlock(offset, type, length, "interface \(interfaceID) is not described (\(interfaces.count) in this section)")
        }
        guard captured <= length - 4 - dataAt else {
            return damagedBlock(offset, type, length, "its captured length \(captured) runs past the block's end")
        }
        let interface = interfaces[interfaceID]
        let frame = walk.frame &+ 1
        walk.frame = frame
        let packet = UnsafeRawBufferPointer(start: block + dataAt, count: captured)
        let (micros, nanos) = timed ? interface.time(units) : (0, 0)
        record = CaptureRecord(
            frame: frame, timestamp: Timestamp(microseconds: micros), direction: .unknown, kind: .other,
            controllerIndex: UInt16(truncatingIfNeeded: interfaceID), originalLength: original, includedLength: captured,
            fileOffset: offset, rawType: interface.linkType, linkType: interface.linkType, bytes: packet)
        record.stored = packet
        record.extraNanoseconds = nanos
        if captured < original { walk.truncation.note(frame: frame) }
        if type != Pcapng.simplePacket {
            options(block, from: dataAt + (captured + 3) & ~3, to: length - 4, into: &record)
        }
        guard interface.isBluetooth else { return true }
        PcapLinkType.interpret(&record, packet: packet)
        if let indicator = PcapLinkType.nonHCIIndicator(record, packet: packet) {
            walk.nonHCI.note(frame: frame, indicator: indicator)
        }
        return true
    }

    /// A packet's options: its first comment (`opt_comment`) and its direction (`epb_flags` / `pack_flags` bits 0–1:
    /// 01 inbound, 10 outbound), which a link type's own pseudo-header overrides.
    @inline(__always)
    private func options(_ block: UnsafeRawPointer, from start: Int, to end: Int, into record: inout CaptureRecord) {
        var at = start
        while at + 4 <= end {
            let code = u16(block, at), size = Int(u16(block, at + 2))
            if code == 0 || at + 4 + size > end { break }
            if code == Pcapng.optComment, record.comment.count == 0 {
                record.comment = UnsafeRawBufferPointer(start: block + at + 4, count: size)
            } else if code == Pcapng.epbFlags, size == 4 {
                let flags = u32(block, at + 4)
                record.packetFlags = flags
                switch flags & 3 {
                case 1: record.direction = .rx
                case 2: record.direction = .tx
                default: break
                }
            }
            at += 4 + (size + 3) & ~3
        }
    }

    /// The blocks that carry no packet.
    private func other(_ block: UnsafeRawPointer, type: UInt32, length: Int, offset: Int64) {
        switch type {
        case Pcapng.sectionHeader:
            sections += 1
            interfaces.removeAll()
        case Pcapng.interfaceDescription:
            guard length >= 20 else {
                _ = damagedBlock(offset, type, length, "its body of \(length - 12) bytes is shorter than 8")
                return
            }
            var interface = PcapngInterface(linkType: UInt32(u16(block, 8)), snapLength: Int(u32(block, 12)))
            var at = 16
            while at + 4 <= length - 4 {
                let code = u16(block, at), size = Int(u16(block, at + 2))
                if code == 0 || at + 4 + size > length - 4 { break }
                if code == Pcapng.ifTsresol, size == 1 { interface.resolution = block.load(fromByteOffset: at + 4, as: UInt8.self) }
                if code == Pcapng.ifTsoffset, size == 8 {
                    let high = UInt64(u32(block, at + 4)), low = UInt64(u32(block, at + 8))
                    interface.offsetSeconds = Int64(bitPattern: bigEndian ? high << 32 | low : low << 32 | high)
                }
                at += 4 + (size + 3) & ~3
            }
            interfaces.append(interface)
        case Pcapng.nameResolution:
            var at = 8
            while at + 4 <= length - 4 {
                let recordType = u16(block, at), size = Int(u16(block, at + 2))
                if recordType == 0 || at + 4 + size > length - 4 { break }
                resolvedNames += 1
                at += 4 + (size + 3) & ~3
            }
        case Pcapng.decryptionSecrets:
            guard length >= 20 else {
                _ = damagedBlock(offset, type, length, "its body of \(length - 12) bytes is shorter than 8")
                return
            }
            secrets.append((u32(block, 8), Int(u32(block, 12))))
        default:
            break  // statistics, custom and unknown blocks: skipped as the format says
        }
    }

    /// Records a block that holds together as a block but not as its type; the walk steps over it.
    private func damagedBlock(_ offset: Int64, _ type: UInt32, _ length: Int, _ detail: String) -> Bool {
        note(offset: offset, type: type, length: length, detail, resumedAt: offset + Int64(length))
        return false
    }

    private func note(offset: Int64, type: UInt32, length: Int, _ detail: String, resumedAt: Int64?) {
        guard damaged.count < 1000 else { return }
        let frame = walk.frame + 1
        damaged.append(
            Finding(
                .warning,
                .capturePcapngDamagedBlock(
                    offset: offset, block: "\(Pcapng.blockName(type)) (\(length) bytes)", detail: detail, resumedAt: resumedAt),
                frame: frame, offset: offset))
    }

    /// A block whose lengths cannot be trusted: the next 4-byte-aligned place where a known block type starts, with
    /// a sane length and the same length at its end, is where reading goes on; none: the walk ends.
    private func resync(from offset: Int64, type: UInt32, length: Int, _ detail: String) {
        let src = source
        src.advance(4)
        while src.ensure(12) {
            let p = src.cursor
            let isSection = p.le32(0) == Pcapng.sectionHeader
            if isSection || Pcapng.known.contains(u32(p, 0)) {
                let big = isSection ? p.be32(8) == Pcapng.byteOrderMagic : bigEndian
                let n = Int(big ? p.be32(4) : p.le32(4))
                if !isSection || p.le32(8) == Pcapng.byteOrderMagic || p.be32(8) == Pcapng.byteOrderMagic, n >= 12, n % 4 == 0,
                    n <= Pcapng.maxBlockLength, src.ensure(n), (big ? src.cursor.be32(n - 4) : src.cursor.le32(n - 4)) == UInt32(n)
                {
                    note(offset: offset, type: type, length: length, detail, resumedAt: src.offset)
                    return
                }
            }
            src.advance(4)
        }
        note(offset: offset, type: type, length: length, detail, resumedAt: nil)
        walk.stopped = true
    }

    /// The section's interfaces as they stand after the blocks before the first packet (what `open` reports).
    func readInterfacesAhead() -> [PcapngInterface] {
        let src = source
        var all: [PcapngInterface] = []
        var at = 0
        var big = false
        while at + 12 <= src.available {
            let p = src.cursor + at
            if p.le32(0) == Pcapng.sectionHeader { big = p.be32(8) == Pcapng.byteOrderMagic }
            let type = big ? p.be32(0) : p.le32(0)
            let length = Int(big ? p.be32(4) : p.le32(4))
            guard length >= 12, length % 4 == 0, at + length <= src.available else { break }
            if type == Pcapng.interfaceDescription, length >= 20 {
                all.append(
                    PcapngInterface(
                        linkType: UInt32(big ? p.be16(8) : UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt16.self))),
                        snapLength: 0))
            }
            at += length
        }
        return all
    }
}
