import BLECore

/// What identifies a throughput stream: values of one kind on one attribute, one way, on one connection.
public struct ThroughputStreamKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// 1-based connection number in the capture (handles are reused; numbers are not).
    public var connectionNumber: Int
    public var direction: Direction
    public var handle: UInt16
    public var kind: ValueKind

    public init(connectionNumber: Int, direction: Direction, handle: UInt16, kind: ValueKind) {
        self.connectionNumber = connectionNumber
        self.direction = direction
        self.handle = handle
        self.kind = kind
    }

    /// `a == b`, field by field and inlined: the synthesized `==` was a call per value
    /// (docs/performance.md#throughput-tracker).
    @inline(__always)
    static func same(_ a: ThroughputStreamKey, _ b: ThroughputStreamKey) -> Bool {
        // Every stored property (a new one must be added here too).
        a.connectionNumber == b.connectionNumber && a.handle == b.handle && a.direction == b.direction && a.kind == b.kind
    }

    /// Connection, then handle, then direction, then kind: the order every report lists streams in.
    public static func < (a: Self, b: Self) -> Bool {
        (a.connectionNumber, a.handle, a.direction.rawValue, a.kind.name)
            < (b.connectionNumber, b.handle, b.direction.rawValue, b.kind.name)
    }

    public var description: String { "#\(connectionNumber) \(direction) \(hex(handle, width: 4)) \(kind)" }
}

/// Distribution of the sliding-window rates of a stream (bits per second of attribute value bytes).
///
/// `median` and `p95` come from a log histogram with 1 % wide bins (clamped to `[min, max]`), so they are
/// within 0.5 % of the exact order statistics; `min`, `max` and `count` are exact.
public struct WindowStats: Hashable, Sendable {
    /// Window length in µs.
    public var windowMicroseconds: Int64
    /// How many windows (one per window/10 step, over the stream's span; none if shorter than one window).
    public var count: Int
    public var min: Double
    public var median: Double
    public var p95: Double
    public var max: Double
}

/// A gap between two packets of a stream longer than the idle threshold.
public struct IdleGap: Hashable, Sendable {
    /// Last frame before the gap and first frame after it.
    public var afterFrame: Int
    public var resumeFrame: Int
    public var startTime: Timestamp
    public var microseconds: Int64
}

/// Packets per connection event, estimated from timestamps: a burst is the packets within one
/// connection interval from the burst's first packet (HCI timestamps are the host's, so this is an estimate;
/// air captures have exact figures in ``LinkLayerStats``).
public struct PacketsPerEvent: Hashable, Sendable {
    /// Bursts seen (estimated connection events that carried this stream).
    public var events: Int
    public var mean: Double
    public var median: Int
    public var p90: Int
    public var max: Int
}

/// Why a stream is not faster: the limiting factor a verdict names.
public struct ThroughputLimit: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// At (≥ 75 % of) the ceiling of the fastest parameters BLE offers: nothing to gain from the link.
    public static let ceiling = ThroughputLimit(rawValue: "ceiling")
    /// Near the ceiling of the link as set: the PHY, data length or MTU holds it back.
    public static let phy = ThroughputLimit(rawValue: "phy")
    public static let dataLength = ThroughputLimit(rawValue: "data-length")
    public static let mtu = ThroughputLimit(rawValue: "mtu")
    /// Each connection event carries only a few packets (the phone's or stack's cap) at this interval.
    public static let packetsPerEvent = ThroughputLimit(rawValue: "packets-per-event")
    /// The values are much smaller than the MTU allows.
    public static let valueSize = ThroughputLimit(rawValue: "value-size")
    /// Long pauses between packets (above the idle threshold).
    public static let idleGaps = ThroughputLimit(rawValue: "idle-gaps")
    /// The sender offers less than the events could carry.
    public static let app = ThroughputLimit(rawValue: "app")
    /// Requests, indications and reads wait for their response: one value per round trip.
    public static let roundTrip = ThroughputLimit(rawValue: "round-trip")
    /// Not enough data (one packet, or the link parameters were never seen).
    public static let unknown = ThroughputLimit(rawValue: "unknown")
    public var description: String { rawValue }
}

/// The verdict on a stream or steady period: the figures and what limits them, in one line.
public struct ThroughputVerdict: Hashable, Sendable, CustomStringConvertible {
    public var limit: ThroughputLimit
    /// `512.0 kbps = 37 % of the 1.38 Mbps ceiling for 2M/251/247 at 30 ms; limited by 6 packets per event …`
    public var text: String
    public var description: String { text }

    /// The figures before the reason: `32.8 kbps = 11 % of the 305.1 kbps ceiling for 1M/27/≥208 (…)`, up to the first
    /// `; ` outside parentheses (the link label's caveat has its own).
    public var head: String {
        var depth = 0
        var previous: Character = " "
        for i in text.indices {
            let c = text[i]
            if c == "(" { depth += 1 } else if c == ")" { depth -= 1 }
            if c == " ", previous == ";", depth == 0 { return String(text[..<text.index(before: i)]) }
            previous = c
        }
        return text
    }
}

/// The link parameters were steady from `firstFrame` to `lastFrame` for this stream.
public struct ThroughputPeriod: Hashable, Sendable {
    public var link: LinkSnapshot
    public var firstFrame: Int
    public var lastFrame: Int
    public var firstTime: Timestamp
    public var lastTime: Timestamp
    public var packets: Int
    public var valueBytes: Int
    public var l2capBytes: Int
    /// Time spent in gaps above the idle threshold within the period.
    public var idleMicroseconds: Int64
    /// The notification / write-without-response ceiling for this link and direction (nil for other kinds,
    /// or when the PHY is unknown), from ``ThroughputCeiling/ceiling(for:direction:)``.
    public var ceilingBitsPerSecond: Double?
    public var packetsPerEvent: PacketsPerEvent?
    public var verdict: ThroughputVerdict

    public var durationMicroseconds: Int64 { lastTime.microseconds(since: firstTime) }
    /// Value bits per second over the period (first to last packet).
    public var rateBitsPerSecond: Double? {
        let d = durationMicroseconds
        return d > 0 ? Double(valueBytes) * 8 * 1_000_000 / Double(d) : nil
    }
    /// The same, with the idle gaps left out.
    public var activeRateBitsPerSecond: Double? {
        let d = durationMicroseconds - idleMicroseconds
        return d > 0 ? Double(valueBytes) * 8 * 1_000_000 / Double(d) : nil
    }
    /// Achieved share of the ceiling (0…1+).
    public var share: Double? {
        guard let r = rateBitsPerSecond, let c = ceilingBitsPerSecond, c > 0 else { return nil }
        return r / c
    }
}

/// One point of a stream's rate over time (for charts).
public struct RatePoint: Hashable, Sendable {
    /// Start of the slot.
    public var time: Timestamp
    /// Length of the slot the rate is over: the series' slot, except a last slot the stream left at least half way
    /// through, which counts up to the last packet (so a stream's end does not show as a false drop).
    public var microseconds: Int64
    public var bitsPerSecond: Double
}

/// Everything measured about one stream (see ``ThroughputTracker``).
///
/// Rates are attribute value bits per second over the stream's span (first to last packet), like
/// ``Transfer/rateBitsPerSecond``: `valueBytes · 8 / (lastTime − firstTime)`; nil for a single packet.
public struct ThroughputStream: Hashable, Sendable {
    public var key: ThroughputStreamKey
    public var connection: UInt16
    public var characteristic: BluetoothUUID?
    /// An LE credit-based channel's stream (kind `l2cap-sdu`, `handle` = CID): its PSM.
    public var psm: UInt16? = nil
    public var service: BluetoothUUID?
    public var packets: Int
    /// Attribute value bytes (what the application sent).
    public var valueBytes: Int
    /// ATT PDU bytes (opcode + handle + value, + the 12-byte signature of a signed write; + offset for blobs).
    public var attBytes: Int
    /// L2CAP SDU bytes: basic header (4) + ATT PDU, as carried over ACL or the link layer.
    public var l2capBytes: Int
    public var firstFrame: Int
    public var lastFrame: Int
    public var firstTime: Timestamp
    public var lastTime: Timestamp
    public var minValueSize: Int
    public var maxValueSize: Int
    /// How many values were exactly ``maxValueSize`` bytes: nearly all of them in a chunked transfer (a firmware image
    /// written in same-size pieces, the last one shorter).
    public var valuesAtMaxSize: Int = 0
    /// Sliding-window rates; nil when the stream is shorter than one window.
    public var windows: WindowStats?
    /// Highest rate over one window/10 step (the short-term peak).
    public var peakBitsPerSecond: Double
    /// Inter-packet gaps by ``ThroughputTracker/gapBucketEdges`` (count i: gaps < edge i and ≥ edge i−1; the last: ≥ the last edge).
    public var gapHistogram: [Int]
    public var idleThresholdMicroseconds: Int64
    /// Gaps above the idle threshold: how many, their total, and the longest (at most 20, longest first).
    public var idleGapCount: Int
    public var idleMicroseconds: Int64
    public var longestIdleGaps: [IdleGap]
    /// Steady link periods, in order.
    public var periods: [ThroughputPeriod]
    /// Link changes past the period cap that were not split out (0 normally).
    public var periodsNotSplit: Int
    /// Rate over time: at most ``ThroughputOptions/seriesPoints`` points, each over `seriesSlotMicroseconds`.
    public var series: [RatePoint]
    public var seriesSlotMicroseconds: Int64
    /// The verdict of the period that carried the most bytes.
    public var verdict: ThroughputVerdict

    public var durationMicroseconds: Int64 { lastTime.microseconds(since: firstTime) }

    public var rateBitsPerSecond: Double? { rate(valueBytes) }
    public var attRateBitsPerSecond: Double? { rate(attBytes) }
    public var l2capRateBitsPerSecond: Double? { rate(l2capBytes) }

    func rate(_ bytes: Int) -> Double? {
        let d = durationMicroseconds
        return d > 0 ? Double(bytes) * 8 * 1_000_000 / Double(d) : nil
    }

    /// The period that carried the most value bytes (its link is the stream's "link" in short reports).
    public var mainPeriod: ThroughputPeriod? {
        periods.max { ($0.valueBytes, -$0.firstFrame) < ($1.valueBytes, -$1.firstFrame) }
    }

    /// The main period's ceiling.
    public var ceilingBitsPerSecond: Double? { mainPeriod?.ceilingBitsPerSecond }
}
