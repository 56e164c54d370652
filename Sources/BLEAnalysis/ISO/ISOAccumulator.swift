import BLECore
import BLEProtocols

/// Counts one direction of one ISO stream, packet by packet, in constant memory: the per-record path of ISO data.
///
/// Each packet updates a few counters (no allocation once the stream's buckets exist); the bursts kept are the
/// longest ``keptBursts``, the loss-over-time buckets at most ``maxBuckets`` (their width doubles when the capture is
/// longer), the flagged frames the first 32 of each kind.
struct ISOAccumulator {
    static let keptBursts = 8
    static let maxBuckets = 1024
    static let keptFrames = 32

    let controller: UInt16
    let handle: UInt16
    let direction: Direction
    /// The configured SDU interval (µs), 0 until the stream's parameters are known.
    var interval: Int64 = 0
    var reassembler = ISOReassembler()
    var reassemblyFindings = 0

    var packets = 0
    var fragmentedSDUs = 0
    var sdus = 0
    var sduBytes: Int64 = 0
    var firstFrame = 0
    var lastFrame = 0
    var firstTime = Timestamp(microseconds: 0)
    var lastTime = Timestamp(microseconds: 0)

    /// The sequence numbers, unwrapped past 0xFFFF.
    var firstSequence: Int?
    var lastSequence = 0
    var missing = 0
    var gaps = 0
    var outOfOrder = 0
    var valid = 0
    var possiblyInvalid = 0
    var flaggedLost = 0
    var possiblyInvalidFrames: [Int] = []
    var lostFrames: [Int] = []

    /// The loss run in progress and the runs ended.
    var run: ISOLossBurst?
    var bursts = 0
    var longestBursts: [ISOLossBurst] = []

    /// Time stamp steps: the previous SDU's (sequence, controller µs, capture µs), and the step extremes.
    var lastStamp: (sequence: Int, controller: UInt32?, host: Int64)?
    var stampDeviationMax: Int64 = -1
    var stampDeviationSum: Double = 0
    var stampSteps = 0
    var stampStepMin = Int64.max
    var stampStepMax = Int64.min
    var hostStepMin = Int64.max
    var hostStepMax = Int64.min

    var bucketWidth: Int64 = 1_000_000
    var received: [Int] = []
    var lost: [Int] = []

    init(controller: UInt16, handle: UInt16, direction: Direction) {
        self.controller = controller
        self.handle = handle
        self.direction = direction
    }

    /// One HCI ISO data packet of this stream.
    @inline(__always)
    mutating func add(_ header: ISOHeader, frame: Int, timestamp: Timestamp, findings: inout [Finding]) {
        packets &+= 1
        if firstFrame == 0 {
            firstFrame = frame
            firstTime = timestamp
        }
        lastFrame = frame
        lastTime = timestamp
        let fragment = ISOFragment(
            header: header, payload: UnsafeRawBufferPointer(start: nil, count: 0), frame: frame, timestamp: timestamp)
        let before = findings.count
        let sdu = reassembler.feed(fragment, findings: &findings)
        if findings.count != before { reassemblyFindings &+= findings.count - before }
        if let sdu { count(sdu, frame: frame, timestamp: timestamp) }
    }

    /// A whole SDU: its sequence number against the previous one, its status, its time stamps.
    mutating func count(_ sdu: ISOSDU, frame: Int, timestamp: Timestamp) {
        sdus &+= 1
        if sdu.fragments > 1 { fragmentedSDUs &+= 1 }
        sduBytes &+= Int64(sdu.received)
        let sequence: Int
        if firstSequence != nil {
            let delta = Int((sdu.sequenceNumber &- UInt16(truncatingIfNeeded: lastSequence)))
            if delta == 0 || delta >= 0x8000 {
                outOfOrder &+= 1
                return  // a repeat or an older SDU: neither a gap nor a step
            }
            sequence = lastSequence + delta
            if delta > 1 {
                gaps &+= 1
                missing &+= delta - 1
                extendRun(by: delta - 1, from: lastSequence + 1, frame: frame, timestamp: timestamp)
            }
        } else {
            sequence = Int(sdu.sequenceNumber)
            firstSequence = sequence
        }
        lastSequence = sequence
        switch sdu.status {
        case .valid: valid &+= 1
        case .possiblyInvalid:
            possiblyInvalid &+= 1
            if possiblyInvalidFrames.count < Self.keptFrames { possiblyInvalidFrames.append(frame) }
        default:
            flaggedLost &+= 1
            if lostFrames.count < Self.keptFrames { lostFrames.append(frame) }
        }
        if sdu.status == .lost || sdu.status.rawValue == 3 {
            extendRun(by: 1, from: sequence, frame: frame, timestamp: timestamp)
        } else {
            endRun()
        }
        bucket(timestamp, received: sdu.status == .lost ? 0 : 1)
        step(sequence: sequence, controller: sdu.controllerTimestamp, host: sdu.timestamp.microseconds)
    }

    mutating func extendRun(by n: Int, from sequence: Int, frame: Int, timestamp: Timestamp) {
        if run == nil {
            run = ISOLossBurst(frame: frame, timestamp: timestamp, firstSequence: sequence, sdus: 0, durationMicroseconds: 0)
        }
        run!.sdus &+= n
        bucket(timestamp, lost: n)
    }

    mutating func endRun() {
        guard var r = run else { return }
        run = nil
        bursts &+= 1
        r.durationMicroseconds = Int64(r.sdus) * interval
        if longestBursts.count < Self.keptBursts {
            longestBursts.append(r)
        } else if let i = longestBursts.indices.min(by: { longestBursts[$0].sdus < longestBursts[$1].sdus }),
            longestBursts[i].sdus < r.sdus
        {
            longestBursts[i] = r
        }
    }

    /// The longest time step or span the health figures add and subtract (about 73,000 years): a damaged record's time
    /// is clamped to it so that no figure overflows.
    static let longestStep: Int64 = Int64.max / 4

    /// Time-stamp steps between consecutive SDUs, per SDU interval elapsed.
    mutating func step(sequence: Int, controller: UInt32?, host: Int64) {
        defer { lastStamp = (sequence, controller, host) }
        guard let last = lastStamp else { return }
        let n = Int64(sequence - last.sequence)
        guard n > 0 else { return }
        // A damaged record can carry any time stamp: a step that does not fit in 64 bits is no measurement.
        let (hostDelta, overflow) = host.subtractingReportingOverflow(last.host)
        guard !overflow else { return }
        let hostStep = min(max(hostDelta / n, -Self.longestStep), Self.longestStep)
        hostStepMin = min(hostStepMin, hostStep)
        hostStepMax = max(hostStepMax, hostStep)
        guard let c = controller, let lc = last.controller else { return }
        let stamp = Int64(c &- lc) / n  // wraps past 2^32 µs as the controller clock does
        stampStepMin = min(stampStepMin, stamp)
        stampStepMax = max(stampStepMax, stamp)
        if interval > 0 {
            let (expected, tooLong) = n.multipliedReportingOverflow(by: interval)
            guard !tooLong else { return }
            let deviation = abs(Int64(c &- lc) - expected)
            stampDeviationMax = max(stampDeviationMax, deviation)
            stampDeviationSum += Double(deviation)
            stampSteps &+= 1
        }
    }

    /// Adds to the loss-over-time bucket of `timestamp`, halving the resolution when the capture outgrows the buckets.
    mutating func bucket(_ timestamp: Timestamp, received r: Int = 0, lost l: Int = 0) {
        // A damaged record's time can be anything: an offset past 64 bits is counted in the last bucket there is.
        let (offset, overflow) = timestamp.microseconds.subtractingReportingOverflow(firstTime.microseconds)
        let since = overflow ? 0 : max(0, offset)
        var i = Int(since / bucketWidth)
        while i >= Self.maxBuckets {
            halveResolution()
            i = Int(since / bucketWidth)
        }
        while received.count <= i {
            received.append(0)
            lost.append(0)
        }
        received[i] &+= r
        lost[i] &+= l
    }

    mutating func halveResolution() {
        bucketWidth *= 2
        received = stride(from: 0, to: received.count, by: 2).map { received[$0] + (($0 + 1 < received.count) ? received[$0 + 1] : 0) }
        lost = stride(from: 0, to: lost.count, by: 2).map { lost[$0] + (($0 + 1 < lost.count) ? lost[$0 + 1] : 0) }
    }
}

extension ISOAccumulator {
    /// The result, once the capture ended (an open loss run counts as a burst).
    mutating func health(stream: ISOStream?) -> ISOStreamHealth {
        let configured = stream.map { Int64($0.sduInterval(direction)) }
        let observed = stampStepMin != .max ? stampStepMin : hostStepMin != .max ? hostStepMin : 0
        if interval == 0 { interval = configured ?? observed }
        endRun()
        // A damaged record's time can be anything: a span past 64 bits, or backwards, is no duration.
        let (rawSpan, spanOverflow) = lastTime.microseconds.subtractingReportingOverflow(firstTime.microseconds)
        let span = spanOverflow || rawSpan < 0 ? 0 : min(rawSpan, Self.longestStep)
        let expected = firstSequence.map { lastSequence - $0 + 1 } ?? 0
        let bursts = longestBursts.map { b in
            var b = b
            b.durationMicroseconds = Int64(b.sdus) * interval
            return b
        }.sorted { ($0.sdus, $1.frame) > ($1.sdus, $0.frame) }
        var silence: Int64? = nil
        if let s = stream, let end = s.endTime, let reason = s.endReason,
            ![HCIStatus.success, .remoteUserTerminatedConnection, .connectionTerminatedByLocalHost].contains(reason),
            interval > 0, case let (gap, overflow) = end.microseconds.subtractingReportingOverflow(lastTime.microseconds),
            !overflow, gap > 2 * interval
        {
            silence = gap
        }
        let configuredBitrate = stream?.maxSDU(direction).flatMap { sdu -> Double? in
            interval > 0 ? Double(sdu) * 8 * 1_000_000 / Double(interval) : nil
        }
        return ISOStreamHealth(
            controller: controller, handle: handle, direction: direction, streamNumber: stream?.number, kind: stream?.kind,
            firstFrame: firstFrame, lastFrame: lastFrame, firstTime: firstTime, lastTime: lastTime,
            sduIntervalMicroseconds: interval, intervalSource: configured != nil ? "configured" : "observed",
            packets: packets, fragmentedSDUs: fragmentedSDUs, sdus: sdus, sduBytes: sduBytes, firstSequence: firstSequence,
            lastSequence: firstSequence == nil ? nil : lastSequence, expectedSDUs: expected,
            expectedSDUsByTime: interval > 0 && packets > 0 ? Int((span + interval / 2) / interval) + 1 : 0,
            missingSDUs: missing, sequenceGaps: gaps, outOfOrder: outOfOrder, valid: valid, possiblyInvalid: possiblyInvalid,
            flaggedLost: flaggedLost, lostSDUs: missing + flaggedLost, lossBursts: self.bursts, longestBurst: bursts.first,
            bursts: bursts, possiblyInvalidFrames: possiblyInvalidFrames, lostFrames: lostFrames,
            timestampJitterMaxMicroseconds: stampDeviationMax >= 0 ? stampDeviationMax : nil,
            timestampJitterMeanMicroseconds: stampSteps > 0 ? stampDeviationSum / Double(stampSteps) : nil,
            arrivalJitterMaxMicroseconds: hostStepMax != .min && interval > 0
                ? max(hostStepMax - interval, interval - hostStepMin) : nil,
            bitrate: span + interval > 0 ? Double(sduBytes) * 8 * 1_000_000 / Double(span + interval) : 0,
            configuredBitrate: configuredBitrate, timeBucketMicroseconds: bucketWidth, receivedPerBucket: received,
            lostPerBucket: lost, reassemblyFindings: reassemblyFindings, silenceBeforeEndMicroseconds: silence,
            silentSDUs: silence.map { Int($0 / interval) }, endFrame: silence != nil ? stream?.endFrame : nil,
            endReason: silence != nil ? stream?.endReason : nil)
    }
}
