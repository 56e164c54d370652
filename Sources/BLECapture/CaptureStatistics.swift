import BLECore

/// Counts of a capture's records by kind and direction, time span and byte totals.
///
/// Pure and allocation-free per record (the controller set grows only when a new index appears).
public struct CaptureStatistics: Hashable, Sendable {
    public var records = 0
    public var commands = 0
    public var events = 0
    public var aclTx = 0, aclRx = 0
    public var scoTx = 0, scoRx = 0
    public var isoTx = 0, isoRx = 0
    public var text = 0
    public var monitor = 0
    public var linkLayer = 0
    public var other = 0
    /// HCI data records (ACL/SCO/ISO) whose direction the file does not state (counted as rx above too).
    public var unknownDirection = 0
    /// Timestamp of the first and last record in file order.
    public var firstTimestamp: Timestamp? { records > 0 ? Timestamp(microseconds: firstMicroseconds) : nil }
    public var lastTimestamp: Timestamp? { records > 0 ? Timestamp(microseconds: lastMicroseconds) : nil }
    /// Earliest and latest timestamps (files are not always in time order).
    public var minTimestamp: Timestamp? { records > 0 ? Timestamp(microseconds: minMicroseconds) : nil }
    public var maxTimestamp: Timestamp? { records > 0 ? Timestamp(microseconds: maxMicroseconds) : nil }
    // The four times as plain integers, valid once `records > 0`: per record a min and a max without optionals to
    // test and unwrap (docs/performance.md#capture-statistics).
    private var firstMicroseconds: Int64 = 0
    private var lastMicroseconds: Int64 = 0
    private var minMicroseconds: Int64 = .max
    private var maxMicroseconds: Int64 = .min
    /// Records the capturer cut (included length < original length).
    public var truncatedRecords = 0
    public var originalBytes: Int64 = 0
    public var includedBytes: Int64 = 0
    /// Largest btsnoop cumulative-drops value seen (packets the capturer lost).
    public var maxDrops: UInt32 = 0
    /// Controller indexes seen (Linux monitor index, LT 254 adapter; 0 otherwise).
    public var controllers: Set<UInt16> = []
    /// The last controller index inserted into `controllers` (`.max`: none yet, beyond any UInt16).
    private var lastController: UInt32 = .max

    public init() {}

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
            if tx { scoTx &+= 1 } else { scoRx &+= 1 }
            if record.direction == .unknown { unknownDirection &+= 1 }
        case .iso:
            if tx { isoTx &+= 1 } else { isoRx &+= 1 }
            if record.direction == .unknown { unknownDirection &+= 1 }
        case .text: text &+= 1
        case .monitor: monitor &+= 1
        case .linkLayer: linkLayer &+= 1
        default: other &+= 1
        }
        let t = record.timestamp.microseconds
        if records == 1 { firstMicroseconds = t }
        lastMicroseconds = t
        minMicroseconds = min(minMicroseconds, t)
        maxMicroseconds = max(maxMicroseconds, t)
        if record.includedLength < record.originalLength { truncatedRecords &+= 1 }
        originalBytes &+= Int64(truncatingIfNeeded: record.originalLength)
        includedBytes &+= Int64(truncatingIfNeeded: record.includedLength)
        if record.cumulativeDrops > maxDrops { maxDrops = record.cumulativeDrops }
        if UInt32(record.controllerIndex) != lastController {
            lastController = UInt32(record.controllerIndex)
            controllers.insert(record.controllerIndex)
        }
    }
}
