import BLECore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Settings of a ``ThroughputTracker``.
public struct ThroughputOptions: Sendable {
    /// Sliding window length in µs (default 1 s). Windows advance by a tenth of it.
    public var window: Int64
    /// Gaps between two packets of a stream longer than this are idle gaps (default 500 ms).
    public var idleThreshold: Int64
    /// Most points in a stream's rate-over-time series (older slots merge pairwise to stay under it).
    public var seriesPoints: Int
    /// Most streams tracked (further ones are counted in ``ThroughputTracker/streamsDropped``).
    public var maxStreams: Int
    /// Most steady link periods per stream.
    public var maxPeriods: Int
    /// Count only what the verdicts and the diagnosis rules read: packets, bytes, value sizes, idle gaps and the steady
    /// link periods. The sliding windows, the rate series and the gap histogram (``ThroughputStream/windows``,
    /// ``ThroughputStream/series``, ``ThroughputStream/gapHistogram``, ``ThroughputStream/peakBitsPerSecond``) stay
    /// empty. For `info` and `diagnose`, which print none of them: they were about half of the tracker's time per
    /// value (docs/performance.md#throughput-tracker).
    public var verdictsOnly: Bool

    public init(
        window: Int64 = 1_000_000, idleThreshold: Int64 = 500_000, seriesPoints: Int = 500,
        maxStreams: Int = 4096, maxPeriods: Int = 32, verdictsOnly: Bool = false
    ) {
        self.window = max(10, window)
        self.idleThreshold = max(1, idleThreshold)
        self.seriesPoints = max(2, seriesPoints)
        self.maxStreams = max(1, maxStreams)
        self.maxPeriods = max(1, maxPeriods)
        self.verdictsOnly = verdictsOnly
    }
}

/// Measures the throughput of every stream of attribute values: per (connection, direction, handle, kind),
/// packets and bytes at each layer, average and sliding-window rates, inter-packet gaps, idle gaps, the link
/// parameters in force split into steady periods with the ceiling of each (``ThroughputCeiling``), packets per
/// connection event estimated from the timestamps, and a verdict naming what limits the rate.
///
/// Memory is flat in the number of packets: windows are a ring of ten buckets, rate distributions a sparse
/// log histogram, the chart series a fixed number of slots that merge pairwise as the stream grows.
/// Streams are final after ``finish(frame:timestamp:)``.
public struct ThroughputTracker: AttributeValueObserver {
    public var options: ThroughputOptions
    /// The streams, in ``ThroughputStreamKey`` order; filled by ``finish(frame:timestamp:)``.
    public private(set) var streams: [ThroughputStream] = []
    /// Streams not tracked because ``ThroughputOptions/maxStreams`` were open.
    public private(set) var streamsDropped = 0

    var states: [StreamState] = []
    var index: [ThroughputStreamKey: Int] = [:]
    /// A direct-mapped cache in front of `index`: traffic interleaves a dozen streams or so, and this skips hashing
    /// the key. It was a list of the last 4 streams used, which a capture with about 10 busy streams missed often
    /// enough for `Hasher` to show (docs/performance.md#throughput-tracker).
    var cacheKeys = [ThroughputStreamKey](
        repeating: ThroughputStreamKey(connectionNumber: .min, direction: .unknown, handle: 0, kind: ValueKind(rawValue: 0)),
        count: ThroughputTracker.cacheSlots)
    var cacheIndices = [Int](repeating: -1, count: ThroughputTracker.cacheSlots)
    /// 256 slots, not 64: the benchmark capture's 27 streams collided in 64 and an eighth of its values went to the
    /// dictionary (docs/performance.md#throughput-tracker).
    static let cacheSlots = 256

    public init(options: ThroughputOptions = ThroughputOptions()) {
        self.options = options
    }

    /// Upper bounds (µs, exclusive) of the inter-packet gap histogram buckets: 1-2-5 steps from 100 µs to 10 s;
    /// the histogram has one more bucket for gaps of 10 s and more.
    public static let gapBucketEdges: [Int64] = [
        100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
        1_000_000, 2_000_000, 5_000_000, 10_000_000,
    ]

    /// ATT PDU size for a value of `valueCount` bytes sent as `kind` (Core Spec Vol 3, Part F, 3.4):
    /// opcode 1 + handle 2 (+ offset 2 for Prepare Write, + signature 12 for a signed write; a read response
    /// carries no handle: opcode 1).
    public static func attPDUSize(valueCount: Int, kind: ValueKind) -> Int {
        switch kind {
        case .readResponse, .readBlobResponse, .longRead: 1 + valueCount
        case .creditSDU: valueCount
        case .prepareWrite: 5 + valueCount
        case .signedWriteCommand: 3 + valueCount + 12
        default: 3 + valueCount
        }
    }

    public mutating func observe(_ event: AttributeValueEvent, value: RawSpan) {
        add(ThroughputSample(event, valueBytes: value.byteCount), context: ThroughputContext(event))
    }

    /// Counts one value (what ``observe(_:value:)`` does with an event; ``ThroughputBeside`` calls it on its thread).
    mutating func add(_ sample: ThroughputSample, context: ThroughputContext) {
        let key = ThroughputStreamKey(
            connectionNumber: sample.connectionNumber, direction: sample.direction, handle: sample.handle, kind: sample.kind)
        let slot = Self.cacheSlot(key)
        var i = cacheIndices[slot]
        if i < 0 || !ThroughputStreamKey.same(cacheKeys[slot], key) {
            if let found = index[key] {
                i = found
            } else {
                guard states.count < options.maxStreams else { streamsDropped += 1; return }
                i = states.count
                states.append(StreamState(key: key, sample: sample, context: context, options: options))
                index[key] = i
            }
            cacheKeys[slot] = key
            cacheIndices[slot] = i
        }
        states[i].add(sample, context: context, options: options)
    }

    /// The cache slot of a stream: its fields mixed (a multiplicative hash), the top 8 bits.
    @inline(__always)
    static func cacheSlot(_ key: ThroughputStreamKey) -> Int {
        let mixed =
            UInt64(truncatingIfNeeded: key.connectionNumber) &<< 32 | UInt64(key.handle) &<< 16
            | UInt64(key.direction.rawValue) &<< 8 | UInt64(key.kind.rawValue)
        return Int(truncatingIfNeeded: (mixed &* 0x9E37_79B9_7F4A_7C15) >> 56)
    }

    public mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {}

    /// The gap histogram's bucket of a gap (µs): the first edge it is below, or the last bucket. Unrolled over the
    /// edges of ``gapBucketEdges`` (the test `gapBucketsMatchTheirEdges` checks it against them): the loop over the
    /// global array went through its lazy initializer and bounds checks, up to 17 steps per value.
    @inline(__always)
    static func gapBucket(_ g: Int64) -> Int {
        if g < 1_000 { return g < 100 ? 0 : g < 200 ? 1 : g < 500 ? 2 : 3 }
        if g < 100_000 { return g < 2_000 ? 4 : g < 5_000 ? 5 : g < 10_000 ? 6 : g < 20_000 ? 7 : g < 50_000 ? 8 : 9 }
        if g < 10_000_000 {
            return g < 200_000 ? 10 : g < 500_000 ? 11 : g < 1_000_000 ? 12 : g < 2_000_000 ? 13 : g < 5_000_000 ? 14 : 15
        }
        return 16
    }

    public mutating func finish(frame: Int, timestamp: Timestamp) {
        MTUBackdating.apply(to: &states, idleThreshold: options.idleThreshold)
        streams = states.map { $0.result(options: options) }.sorted { $0.key < $1.key }
    }
}

// MARK: - per-stream state

/// Counts in log bins 1 % wide (for rate quantiles in flat memory).
struct LogHistogram {
    static let ratio = 1.01
    static let logRatio = 0.00995033085316808  // ln(1.01)
    var bins: [Int32: Int] = [:]
    var zeros = 0
    var count = 0
    var minimum = Double.infinity
    var maximum = 0.0

    mutating func add(_ v: Double, times: Int = 1) {
        guard times > 0 else { return }
        count += times
        minimum = Swift.min(minimum, v)
        maximum = Swift.max(maximum, v)
        if v <= 0 { zeros += times; return }
        let b = Int32(clamping: Int((v.logarithm / Self.logRatio).rounded(.down)))
        bins[b, default: 0] += times
    }

    /// The value at quantile `q` (nearest rank), as the geometric middle of its bin clamped to [min, max].
    func quantile(_ q: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = Swift.max(1, Int((q * Double(count)).rounded(.up)))
        if rank <= zeros { return 0 }
        var seen = zeros
        for b in bins.keys.sorted() {
            seen += bins[b]!
            if seen >= rank {
                let mid = (Double(b) + 0.5) * Self.logRatio
                return Swift.min(maximum, Swift.max(minimum, mid.exponential))
            }
        }
        return maximum
    }
}

extension Double {
    var logarithm: Double { log(self) }
    var exponential: Double { exp(self) }
}

struct PeriodState {
    var link: LinkSnapshot
    var firstFrame: Int
    var lastFrame: Int
    var firstTime: Timestamp
    var lastTime: Timestamp
    var packets = 0
    var valueBytes = 0
    var l2capBytes = 0
    var idle: Int64 = 0
    // Bursts (estimated connection events).
    var burstStart: Int64 = .min
    var burstCount = 0
    /// Bursts by size (index 64: 64 and more).
    var bursts: [Int] = []

    init(link: LinkSnapshot, frame: Int, time: Timestamp) {
        self.link = link
        firstFrame = frame
        lastFrame = frame
        firstTime = time
        lastTime = time
    }

    /// `a == b`, field by field and inlined: the synthesized `==` was a call per value
    /// (docs/performance.md#throughput-tracker).
    @inline(__always)
    static func sameLink(_ a: LinkSnapshot, _ b: LinkSnapshot) -> Bool {
        // Every stored property of LinkSnapshot (a new one must be added here too).
        a.mtu == b.mtu && a.encrypted == b.encrypted && a.phy == b.phy && a.dataLength == b.dataLength
            && a.parameters == b.parameters && a.unseen == b.unseen
    }

    mutating func add(frame: Int, time: Timestamp, valueBytes v: Int, l2cap: Int, gap: Int64?, idleThreshold: Int64) {
        if let gap, gap > idleThreshold, packets > 0 { idle += gap }
        packets += 1
        valueBytes += v
        l2capBytes += l2cap
        lastFrame = frame
        lastTime = time
        if let ci = link.parameters?.intervalMicroseconds, ci > 0 {
            let t = time.microseconds
            if burstCount > 0, t &- burstStart < Int64(ci) {
                burstCount += 1
            } else {
                closeBurst()
                burstStart = t
                burstCount = 1
            }
        }
    }

    mutating func closeBurst() {
        guard burstCount > 0 else { return }
        if bursts.isEmpty { bursts = Array(repeating: 0, count: 65) }
        bursts[min(64, burstCount)] += 1
        burstCount = 0
    }

    var packetsPerEvent: PacketsPerEvent? {
        guard !bursts.isEmpty else { return nil }
        let events = bursts.reduce(0, +)
        guard events > 0 else { return nil }
        var total = 0
        for (n, c) in bursts.enumerated() { total += n * c }
        func quantile(_ q: Double) -> Int {
            let rank = max(1, Int((q * Double(events)).rounded(.up)))
            var seen = 0
            for (n, c) in bursts.enumerated() {
                seen += c
                if seen >= rank { return n }
            }
            return 64
        }
        return PacketsPerEvent(
            events: events, mean: Double(total) / Double(events), median: quantile(0.5),
            p90: quantile(0.9), max: bursts.lastIndex { $0 > 0 } ?? 0)
    }
}

struct StreamState {
    let key: ThroughputStreamKey
    let connection: UInt16
    /// ATT PDU bytes besides the value for this stream's kind.
    let attOverhead: Int
    var characteristic: BluetoothUUID?
    var service: BluetoothUUID?
    var psm: UInt16?
    var packets = 0
    var valueBytes = 0
    var attBytes = 0
    var l2capBytes = 0
    var firstFrame: Int
    var lastFrame: Int
    let first: Timestamp
    var last: Timestamp
    var minValue = Int.max
    var maxValue = 0
    /// Values of exactly `maxValue` bytes (a run of same-size chunks: ``ThroughputStream/valuesAtMaxSize``).
    var atMaxValue = 0
    // Sliding windows: ring of the last 10 completed steps.
    let step: Int64
    var bucket: Int64 = 0
    var bucketBytes = 0
    /// Inline (as `gaps`), not an `Array`: an array inside a struct inside the tracker's array of streams cost a
    /// uniqueness check and a call per write.
    var ring = InlineArray<10, Int>(repeating: 0)
    var ringPosition = 0
    var ringSum = 0
    var completedBuckets: Int64 = 0
    var windowRates = LogHistogram()
    var peakBytes = 0
    // Gaps.
    var gaps = InlineArray<17, Int>(repeating: 0)  // ThroughputTracker.gapBucketEdges.count + 1
    var idleCount = 0
    var idleTotal: Int64 = 0
    var longestIdle: [IdleGap] = []
    // Periods: the closed ones, and the open one that every value goes to kept out of the array (reached through the
    // array, each value paid a uniqueness check and bounds checks: docs/performance.md#throughput-tracker).
    var closedPeriods: [PeriodState] = []
    var period: PeriodState
    var periodsNotSplit = 0
    // Series.
    var slot: Int64
    var series: [Int] = []

    init(key: ThroughputStreamKey, sample: ThroughputSample, context: ThroughputContext, options: ThroughputOptions) {
        self.key = key
        connection = sample.connection
        attOverhead = ThroughputTracker.attPDUSize(valueCount: 0, kind: key.kind)
        characteristic = context.characteristic
        service = context.service
        psm = context.psm
        firstFrame = sample.frame
        lastFrame = sample.frame
        first = sample.timestamp
        last = sample.timestamp
        step = max(1, options.window / 10)
        slot = step
        period = PeriodState(link: context.link, frame: sample.frame, time: sample.timestamp)
    }

    mutating func add(_ sample: ThroughputSample, context: ThroughputContext, options: ThroughputOptions) {
        let t = sample.timestamp
        let n = Int(sample.valueBytes)
        let l2cap = Int(sample.l2capBytes)
        var gap: Int64? = nil
        if packets > 0 {
            let g = max(0, t.microseconds(since: last))
            gap = g
            if !options.verdictsOnly { gaps[ThroughputTracker.gapBucket(g)] += 1 }
            if g > options.idleThreshold {
                idleCount += 1
                idleTotal &+= g  // wrapping: a damaged record's time can be anything
                let gapRecord = IdleGap(afterFrame: lastFrame, resumeFrame: sample.frame, startTime: last, microseconds: g)
                if longestIdle.count < 20 {
                    longestIdle.append(gapRecord)
                } else if let m = longestIdle.indices.min(by: { longestIdle[$0].microseconds < longestIdle[$1].microseconds }),
                    longestIdle[m].microseconds < g
                {
                    longestIdle[m] = gapRecord
                }
            }
        }
        if characteristic == nil { characteristic = context.characteristic }
        if service == nil { service = context.service }
        packets += 1
        valueBytes += n
        attBytes += n + attOverhead
        l2capBytes += l2cap
        minValue = min(minValue, n)
        if n >= maxValue {
            atMaxValue = n == maxValue ? atMaxValue + 1 : 1
            maxValue = n
        }
        lastFrame = sample.frame
        if t > last { last = t }
        if !options.verdictsOnly { addToCharts(n, offset: max(0, t.microseconds(since: first)), options: options) }

        // Periods (the open one was made by `init` from the stream's first value, which it takes with no gap).
        let sameLink = PeriodState.sameLink(period.link, context.link)
        if sameLink || closedPeriods.count + 1 >= options.maxPeriods {
            if !sameLink { periodsNotSplit += 1 }
            period.add(
                frame: sample.frame, time: t, valueBytes: n, l2cap: l2cap, gap: gap,
                idleThreshold: options.idleThreshold)
        } else {
            period.closeBurst()
            closedPeriods.append(period)
            period = PeriodState(link: context.link, frame: sample.frame, time: t)
            period.add(frame: sample.frame, time: t, valueBytes: n, l2cap: l2cap, gap: nil, idleThreshold: options.idleThreshold)
        }
    }

    /// Counts `n` bytes at `offset` µs into the stream in the sliding windows and the rate series.
    @inline(__always)
    mutating func addToCharts(_ n: Int, offset: Int64, options: ThroughputOptions) {
        // Windows.
        let b = offset / step
        if b > bucket { advance(to: b) }
        bucketBytes += n

        // Series.
        var s = offset / slot
        while s >= Int64(options.seriesPoints) {
            var merged = [Int](repeating: 0, count: (series.count + 1) / 2)
            for (i, v) in series.enumerated() { merged[i / 2] += v }
            series = merged
            slot *= 2
            s = offset / slot
        }
        if s >= Int64(series.count) { series.append(contentsOf: repeatElement(0, count: Int(s) - series.count + 1)) }
        series[Int(s)] += n
    }

    /// Completes the steps up to (not including) step `b`.
    mutating func advance(to b: Int64) {
        closeStep(bucketBytes)
        bucketBytes = 0
        var next = bucket + 1
        // After ten empty steps every window is empty: count the rest at once.
        while next < b && ringSum > 0 {
            closeStep(0)
            next += 1
        }
        if next < b {
            let empty = b - next
            completedBuckets += empty
            if completedBuckets >= 10 {
                windowRates.add(0, times: Int(min(empty, completedBuckets - 9)))
            }
        }
        bucket = b
    }

    mutating func closeStep(_ bytes: Int) {
        ringSum += bytes - ring[ringPosition]
        ring[ringPosition] = bytes
        ringPosition = ringPosition == 9 ? 0 : ringPosition + 1
        completedBuckets += 1
        peakBytes = max(peakBytes, bytes)
        if completedBuckets >= 10 {
            windowRates.add(Double(ringSum) * 8 * 1_000_000 / Double(step * 10))
        }
    }

    func result(options: ThroughputOptions) -> ThroughputStream {
        var copy = self
        copy.closeStep(copy.bucketBytes)  // the step holding the last packet ends the last window
        let h = copy.windowRates
        let windows: WindowStats? =
            h.count == 0
            ? nil
            : WindowStats(
                windowMicroseconds: step * 10, count: h.count, min: h.minimum, median: h.quantile(0.5), p95: h.quantile(0.95),
                max: h.maximum)
        let averageValue = packets > 0 ? Double(valueBytes) / Double(packets) : 0
        var periodResults: [ThroughputPeriod] = []
        for var p in closedPeriods + [period] {
            p.closeBurst()
            let ceiling = ThroughputVerdict.hasCeiling(key.kind) ? ThroughputCeiling.ceiling(for: p.link, direction: key.direction) : nil
            var period = ThroughputPeriod(
                link: p.link, firstFrame: p.firstFrame, lastFrame: p.lastFrame, firstTime: p.firstTime, lastTime: p.lastTime,
                packets: p.packets, valueBytes: p.valueBytes, l2capBytes: p.l2capBytes, idleMicroseconds: p.idle,
                ceilingBitsPerSecond: ceiling, packetsPerEvent: p.packetsPerEvent,
                verdict: ThroughputVerdict(limit: .unknown, text: ""))
            let avg = p.packets > 0 ? Double(p.valueBytes) / Double(p.packets) : averageValue
            period.verdict = ThroughputVerdict.judge(
                kind: key.kind, direction: key.direction, link: p.link, packets: p.packets,
                durationMicroseconds: period.durationMicroseconds, idleMicroseconds: p.idle,
                valueBytes: p.valueBytes, averageValueSize: avg, uniformValueSize: packets > 0 && minValue == maxValue,
                packetsPerEvent: p.packetsPerEvent,
                idleThreshold: options.idleThreshold)
            periodResults.append(period)
        }
        var stream = ThroughputStream(
            key: key, connection: connection, characteristic: characteristic, service: service, packets: packets,
            valueBytes: valueBytes, attBytes: attBytes, l2capBytes: l2capBytes, firstFrame: firstFrame, lastFrame: lastFrame,
            firstTime: first, lastTime: last, minValueSize: packets > 0 ? minValue : 0, maxValueSize: maxValue,
            valuesAtMaxSize: atMaxValue,
            windows: windows, peakBitsPerSecond: Double(copy.peakBytes) * 8 * 1_000_000 / Double(step),
            gapHistogram: (0..<gaps.count).map { gaps[$0] }, idleThresholdMicroseconds: options.idleThreshold, idleGapCount: idleCount,
            idleMicroseconds: idleTotal,
            longestIdleGaps: longestIdle.sorted { ($0.microseconds, $1.afterFrame) > ($1.microseconds, $0.afterFrame) },
            periods: periodResults, periodsNotSplit: periodsNotSplit,
            series: series.enumerated().map { i, bytes in
                // Wrapping: a damaged record's time stamp can be anything, and a series point is never worth a trap.
                let start = first.microseconds &+ Int64(i) &* slot
                var length = slot
                if i == series.count - 1 {
                    let covered = last.microseconds &- start
                    if covered >= slot / 2 && covered < slot { length = covered }
                }
                return RatePoint(
                    time: Timestamp(microseconds: start), microseconds: length,
                    bitsPerSecond: Double(bytes) * 8 * 1_000_000 / Double(length))
            },
            seriesSlotMicroseconds: slot, verdict: ThroughputVerdict(limit: .unknown, text: ""))
        stream.psm = psm
        if let main = stream.mainPeriod {
            stream.verdict = main.verdict
            if periodResults.count > 1 {
                stream.verdict.text += " (in the busiest of \(periodResults.count) link periods)"
            }
        }
        return stream
    }
}
