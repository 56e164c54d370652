import BLECore
import BLEProtocols

/// A run of consecutive SDUs that did not arrive with data: never delivered (a gap in the packet sequence numbers) or
/// delivered flagged "lost" (Packet_Status_Flag 0b10).
public struct ISOLossBurst: Hashable, Sendable {
    /// The frame at which the run became visible (the packet after a gap, or the first lost-flagged packet).
    public var frame: Int
    public var timestamp: Timestamp
    /// Sequence number of the first SDU of the run.
    public var firstSequence: Int
    /// SDUs in the run.
    public var sdus: Int
    /// The audio missing: SDUs × SDU interval (µs).
    public var durationMicroseconds: Int64
}

/// How one direction of one CIS or BIS fared: SDUs expected against SDUs received, gaps, flagged SDUs, time-stamp
/// jitter and bitrate, and a verdict line. Counted from the HCI ISO data packets (Core Spec Vol 4, Part E, 5.4.5).
///
/// Expected SDUs come from the sequence numbers (last − first + 1) and, as a check, from the SDU interval over the
/// span of the packets; lost SDUs are those never delivered (sequence gaps) plus those delivered flagged lost.
public struct ISOStreamHealth: Hashable, Sendable {
    public var controller: UInt16
    public var handle: UInt16
    public var direction: Direction
    /// The stream this direction belongs to (``ISOStream/number``), nil when the capture shows data on a handle it
    /// never saw established (it started mid-stream).
    public var streamNumber: Int?
    public var kind: ISOStreamKind?
    public var firstFrame: Int
    public var lastFrame: Int
    public var firstTime: Timestamp
    public var lastTime: Timestamp
    /// The SDU interval the stream was configured with (µs), else the one its time stamps show.
    public var sduIntervalMicroseconds: Int64
    public var intervalSource: String
    /// HCI ISO data packets, by packet boundary.
    public var packets: Int
    public var fragmentedSDUs: Int
    /// SDUs whole (complete packets and reassembled fragments).
    public var sdus: Int
    /// Bytes of SDU data received.
    public var sduBytes: Int64
    public var firstSequence: Int?
    public var lastSequence: Int?
    /// last − first + 1 (sequence numbers unwrapped past 0xFFFF).
    public var expectedSDUs: Int
    /// The span of the packets over the SDU interval, + 1.
    public var expectedSDUsByTime: Int
    /// SDUs never delivered: the sum of the sequence gaps.
    public var missingSDUs: Int
    public var sequenceGaps: Int
    /// Packets whose sequence number did not move forward (repeated or earlier).
    public var outOfOrder: Int
    public var valid: Int
    public var possiblyInvalid: Int
    /// SDUs delivered with status lost (no data).
    public var flaggedLost: Int
    /// missing + flagged lost.
    public var lostSDUs: Int
    public var lossBursts: Int
    public var longestBurst: ISOLossBurst?
    /// The longest bursts, longest first (at most ``ISOAccumulator/keptBursts``).
    public var bursts: [ISOLossBurst]
    /// Frames of the first flagged SDUs (at most 32 each).
    public var possiblyInvalidFrames: [Int]
    public var lostFrames: [Int]
    /// The controller time stamps' steps against the SDU interval: the largest deviation and the mean one (µs); nil
    /// when the packets carry no time stamps.
    public var timestampJitterMaxMicroseconds: Int64?
    public var timestampJitterMeanMicroseconds: Double?
    /// The same on the HCI (capture) times.
    public var arrivalJitterMaxMicroseconds: Int64?
    /// SDU data bits over the span (+ one interval), bits/s; and what the configured Max_SDU every SDU interval makes.
    public var bitrate: Double
    public var configuredBitrate: Double?
    /// Bucketed loss over time: SDUs received and lost per ``timeBucketMicroseconds`` from ``firstTime``.
    public var timeBucketMicroseconds: Int64
    public var receivedPerBucket: [Int]
    public var lostPerBucket: [Int]
    /// Reassembly failures (``ISOReassembler``).
    public var reassemblyFindings: Int
    /// The stream ended abnormally (BIG Sync Lost, a CIS lost: any reason but success, 0x13 and 0x16) more than two SDU
    /// intervals after its last SDU: the audio had stopped that long before (µs), about ``silentSDUs`` SDUs.
    public var silenceBeforeEndMicroseconds: Int64?
    public var silentSDUs: Int?
    public var endFrame: Int?
    public var endReason: HCIStatus?

    public var lossRatio: Double { expectedSDUs > 0 ? Double(lostSDUs) / Double(expectedSDUs) : 0 }

    /// `1000 ms (about 99 SDUs)`: the silence before an abnormal end, as the verdict and the diagnosis both say it
    /// (one rounding, so the two never disagree by a millisecond).
    public var silenceText: String? {
        silenceBeforeEndMicroseconds.map { "\(duration($0)) (about \(silentSDUs ?? 0) SDUs)" }
    }

    /// `CIS 0x0002 rx: 24 of 300 SDUs lost (8.0 %) in 4 bursts, longest gap 180 ms at frame 1002; 2 possibly invalid`.
    public func verdict(label: String) -> String {
        var s = "\(label) \(direction == .tx ? "tx" : "rx"): "
        if lostSDUs == 0 {
            s += "\(grouped(expectedSDUs)) of \(grouped(expectedSDUs)) SDUs delivered, none lost"
        } else {
            let pct = String(fractionDigits: 1, lossRatio * 100)
            s +=
                "\(grouped(lostSDUs)) of \(grouped(expectedSDUs)) SDUs lost (\(pct) %) in \(grouped(lossBursts)) burst\(lossBursts == 1 ? "" : "s")"
            if let b = longestBurst {
                s += ", longest gap \(b.durationMicroseconds / 1000) ms at frame \(b.frame)"
            }
        }
        if possiblyInvalid > 0 { s += "; \(possiblyInvalid) possibly invalid" }
        if let silence = silenceText, let end = endFrame, let reason = endReason {
            s += "; then no SDU for \(silence) until it ended (\(reason)) at frame \(end)"
        }
        if outOfOrder > 0 { s += "; \(outOfOrder) out of order" }
        return s
    }
}
