import BLECore

/// Counts of a capture's records by kind and direction, time span and byte totals.
///
/// Pure and allocation-free per record (the controller set grows only when a new index appears).
public struct CaptureStatistics: Hashable, Sendable {
    public var records = 0
    public var commands = 0
    public var events = 0
    public var aclTx = 0, aclRx = 0
    /// SCO records that carry audio (a data length above 0), each way.
    public var scoTx = 0, scoRx = 0
    /// SCO records with no data (Data_Total_Length 0): no audio of any link. Some stacks log them on handle 0x0000, which
    /// no synchronous link holds (BTstack's mSBC gateway log, 503-508: tshark "Rcvd SCO Data" on 0x0000, length 0); they
    /// are counted apart, never as audio received (issue 46). The first one's frame.
    public var scoEmpty = 0
    public var scoEmptyFirstFrame: Int?
    public var isoTx = 0, isoRx = 0
    public var text = 0
    public var monitor = 0
    public var linkLayer = 0
    public var other = 0
    /// HCI data records (ACL/SCO/ISO) whose direction the file does not state (counted as rx above too).
    public var unknownDirection = 0
    /// Timestamp of the first and last record in file order. Notes and headers (`.text`: PacketLogger's, btmon's) are
    /// not records in time: an iOS log opens with header notes dated when the device's details were read, days before
    /// its first HCI record (issue 49). They count only in a file of nothing else.
    public var firstTimestamp: Timestamp? { timed.first }
    public var lastTimestamp: Timestamp? { timed.last }
    /// Earliest and latest timestamps (files are not always in time order).
    public var minTimestamp: Timestamp? { timed.min }
    public var maxTimestamp: Timestamp? { timed.max }
    /// The earliest note's time when the file has records in time too (nil otherwise): `info` says where the notes that
    /// `records` counts but the span leaves out are dated.
    public var earliestNoteTimestamp: Timestamp? { times.count > 0 ? noteTimes.min : nil }
    /// The records in time, or the notes when there is nothing else.
    private var timed: TimeRange { times.count > 0 ? times : noteTimes }
    private var times = TimeRange()
    private var noteTimes = TimeRange()
    /// Records the capturer cut (included length < original length).
    public var truncatedRecords = 0
    public var originalBytes: Int64 = 0
    public var includedBytes: Int64 = 0
    /// Largest btsnoop cumulative-drops value seen (packets the capturer lost).
    public var maxDrops: UInt32 = 0
    /// Where an nRF Sniffer's packet counter skipped values: packets the sniffer sent its host that the file lacks.
    public var nordicSkips = NordicCounterSkips()
    /// Controller indexes seen (Linux monitor index, LT 254 adapter; 0 otherwise), of HCI and link records only.
    public var controllers: Set<UInt16> = []
    /// The last controller index inserted into `controllers` (`.max`: none yet, beyond any UInt16).
    private var lastController: UInt32 = .max

    public init() {}

    /// btmon's HCI_DEV_NONE: the index of its records that belong to no controller.
    public static let noController: UInt16 = 0xFFFF

    /// The "Dropped (capturer)" figure: the file's own count, or what an nRF Sniffer's packet counter shows missing.
    public var droppedText: String {
        let s = nordicSkips
        guard s.skipped > 0, let first = s.firstFrame else { return String(maxDrops) }
        return (maxDrops > 0 ? "\(maxDrops), and " : "")
            + "up to \(s.skipped) (the nRF Sniffer's packet counter skipped \(s.skipped) value\(s.skipped == 1 ? "" : "s") in \(s.places) place\(s.places == 1 ? "" : "s"), first at frame \(first))"
    }

    @inlinable public var acl: Int { aclTx + aclRx }
    @inlinable public var sco: Int { scoTx + scoRx }
    @inlinable public var iso: Int { isoTx + isoRx }

    /// Time from the earliest to the latest record, in µs (0 for fewer than two records).
    public var durationMicroseconds: Int64 {
        guard let a = minTimestamp, let b = maxTimestamp else { return 0 }
        return b.microseconds(since: a)
    }

    public mutating func add(_ record: CaptureRecord) {
        records &+= 1
        let tx = record.direction == .tx
        switch record.kind {
        case .command: commands &+= 1
        case .event: events &+= 1
        case .acl:
            if tx { aclTx &+= 1 } else { aclRx &+= 1 }
            if record.direction == .unknown { unknownDirection &+= 1 }
        case .sco:
            if SCORecord.isEmpty(record.bytes) {
                scoEmpty &+= 1
                if scoEmptyFirstFrame == nil { scoEmptyFirstFrame = record.frame }
            } else if tx {
                scoTx &+= 1
            } else {
                scoRx &+= 1
            }
            if record.direction == .unknown { unknownDirection &+= 1 }
        case .iso:
            if tx { isoTx &+= 1 } else { isoRx &+= 1 }
            if record.direction == .unknown { unknownDirection &+= 1 }
        case .text: text &+= 1
        case .monitor: monitor &+= 1
        case .linkLayer:
            linkLayer &+= 1
            if record.linkType == 272 { nordicSkips.add(record) }
        default: other &+= 1
        }
        if record.kind != .text { times.add(record.timestamp.microseconds) } else { noteTimes.add(record.timestamp.microseconds) }
        if record.includedLength < record.originalLength { truncatedRecords &+= 1 }
        originalBytes &+= Int64(truncatingIfNeeded: record.originalLength)
        includedBytes &+= Int64(truncatingIfNeeded: record.includedLength)
        if record.cumulativeDrops > maxDrops { maxDrops = record.cumulativeDrops }
        // btmon logs its own notes, user logging and control records under index 0xFFFF (HCI_DEV_NONE): no controller.
        if UInt32(record.controllerIndex) != lastController,
            record.controllerIndex != Self.noController || record.kind.isHCI
        {
            lastController = UInt32(record.controllerIndex)
            controllers.insert(record.controllerIndex)
        }
    }
}

/// An SCO data record's header (Core Spec Vol 4, Part E, 5.4.3): handle and flags (2 octets), Data_Total_Length (1).
public enum SCORecord {
    /// True for a whole header whose Data_Total_Length is 0: a record with no audio in it.
    @inlinable public static func isEmpty(_ bytes: UnsafeRawBufferPointer) -> Bool { bytes.count >= 3 && bytes[2] == 0 }
}

/// First, last, earliest and latest of some records' times.
struct TimeRange: Hashable, Sendable {
    var count = 0
    // The four times as plain integers, valid once `count > 0`: per record a min and a max without optionals to
    // test and unwrap (docs/performance.md#capture-statistics).
    private var firstMicroseconds: Int64 = 0
    private var lastMicroseconds: Int64 = 0
    private var minMicroseconds: Int64 = .max
    private var maxMicroseconds: Int64 = .min

    @inline(__always) mutating func add(_ t: Int64) {
        count &+= 1
        if count == 1 { firstMicroseconds = t }
        lastMicroseconds = t
        minMicroseconds = Swift.min(minMicroseconds, t)
        maxMicroseconds = Swift.max(maxMicroseconds, t)
    }

    var first: Timestamp? { count > 0 ? Timestamp(microseconds: firstMicroseconds) : nil }
    var last: Timestamp? { count > 0 ? Timestamp(microseconds: lastMicroseconds) : nil }
    var min: Timestamp? { count > 0 ? Timestamp(microseconds: minMicroseconds) : nil }
    var max: Timestamp? { count > 0 ? Timestamp(microseconds: maxMicroseconds) : nil }
}
