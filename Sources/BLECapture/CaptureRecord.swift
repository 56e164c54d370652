import BLECore

/// One record of a capture file, as the readers hand it out.
///
/// `bytes` is borrowed from the reader's buffer and valid only until the reader's next `next()`
/// call; copy it (`Array(record.bytes)`) to keep it. For HCI kinds it starts at the HCI packet
/// header (no H4 indicator byte, no pseudo-header); for `.text` it is the UTF-8 text; for
/// `.linkLayer` it is the whole record as the link type defines it (pseudo-header included).
public struct CaptureRecord {
    /// 1-based, counting every record of the file, as Wireshark numbers frames.
    public var frame: Int
    public var timestamp: Timestamp
    public var direction: Direction
    public var kind: RecordKind
    /// Controller (adapter) index: Linux monitor index, pcap LT 254 adapter id, pcapng interface id; 0 otherwise.
    public var controllerIndex: UInt16
    /// Length of the record on the wire as the file states it (btsnoop orig_len, pcap len, pklg length).
    public var originalLength: Int
    /// Length of the record as stored in the file (btsnoop incl_len, pcap caplen).
    public var includedLength: Int
    /// Byte offset of the record's header in the (decompressed) file.
    public var fileOffset: Int64
    /// Format-specific record type: btsnoop flags, monitor opcode, pklg type byte, pcap link type.
    public var rawType: UInt32
    /// For `.linkLayer`: the pcap link type (251, 256, 272).
    public var linkType: UInt32
    /// The record's payload, borrowed (see the type's documentation).
    public var bytes: UnsafeRawBufferPointer
    /// btsnoop cumulative drops as the capturer counted them (0 for other formats).
    public var cumulativeDrops: UInt32
    /// The record as the file stores it after its record header, borrowed like `bytes`: a btsnoop packet (H4
    /// indicator included), a pcap packet (pseudo-header included), a PacketLogger record from its type byte.
    /// `bytes` can differ from it (a user-logging or syslog record is handed out as composed text); a writer that must
    /// reproduce the file's packets (`convert` to pcapng) writes these. Empty (nil base) where a reader or a rewriter
    /// (the anonymizer) leaves it unset.
    public var stored: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
    /// Nanoseconds past `timestamp`'s microsecond (0–999), for files that keep them (pcap and pcapng at ns
    /// resolution); 0 otherwise.
    public var extraNanoseconds: UInt16 = 0
    /// pcapng: the packet's comment (`opt_comment`, UTF-8 as written), borrowed like `bytes`; empty otherwise.
    public var comment = UnsafeRawBufferPointer(start: nil, count: 0)
    /// pcapng: the packet's flags word (`epb_flags`; bits 0–1 the direction, which `direction` already holds), 0
    /// otherwise.
    public var packetFlags: UInt32 = 0

    public init(
        frame: Int, timestamp: Timestamp, direction: Direction, kind: RecordKind, controllerIndex: UInt16 = 0,
        originalLength: Int, includedLength: Int, fileOffset: Int64, rawType: UInt32 = 0, linkType: UInt32 = 0,
        bytes: UnsafeRawBufferPointer, cumulativeDrops: UInt32 = 0
    ) {
        self.frame = frame
        self.timestamp = timestamp
        self.direction = direction
        self.kind = kind
        self.controllerIndex = controllerIndex
        self.originalLength = originalLength
        self.includedLength = includedLength
        self.fileOffset = fileOffset
        self.rawType = rawType
        self.linkType = linkType
        self.bytes = bytes
        self.cumulativeDrops = cumulativeDrops
    }

    /// A record of nothing (frame 0, no bytes), for ``CaptureFile/next(into:)`` to write over.
    public static var empty: CaptureRecord {
        CaptureRecord(
            frame: 0, timestamp: Timestamp(microseconds: 0), direction: .unknown, kind: .other, originalLength: 0,
            includedLength: 0, fileOffset: 0, bytes: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// The capturer kept fewer bytes than were on the wire (Android filtered snoop, Windows logs):
    /// count the record with its original length, never decode the cut payload as if whole.
    @inlinable public var isTruncated: Bool { includedLength < originalLength }

    /// A reader over the payload.
    @inlinable public var reader: ByteReader { ByteReader(bytes) }

    /// The payload as text, for `.text` records (invalid UTF-8 repaired, trailing NULs and newlines dropped).
    public var text: String {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0 || bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
    }
}

/// An owned copy of a ``CaptureRecord``, for tests, writers and anything that keeps records.
public struct OwnedRecord: Hashable, Sendable {
    public var frame: Int
    public var timestamp: Timestamp
    public var direction: Direction
    public var kind: RecordKind
    public var controllerIndex: UInt16
    public var originalLength: Int
    public var rawType: UInt32
    public var linkType: UInt32
    public var bytes: [UInt8]

    public init(
        frame: Int = 0, timestamp: Timestamp, direction: Direction, kind: RecordKind, controllerIndex: UInt16 = 0,
        originalLength: Int? = nil, rawType: UInt32 = 0, linkType: UInt32 = 0, bytes: [UInt8]
    ) {
        self.frame = frame
        self.timestamp = timestamp
        self.direction = direction
        self.kind = kind
        self.controllerIndex = controllerIndex
        self.originalLength = originalLength ?? bytes.count
        self.rawType = rawType
        self.linkType = linkType
        self.bytes = bytes
    }

    public init(_ record: CaptureRecord) {
        self.init(
            frame: record.frame, timestamp: record.timestamp, direction: record.direction, kind: record.kind,
            controllerIndex: record.controllerIndex,
            originalLength: record.originalLength - (record.includedLength - record.bytes.count),
            rawType: record.rawType, linkType: record.linkType, bytes: Array(record.bytes))
    }

    public var isTruncated: Bool { bytes.count < originalLength }
}
