import BLECore
import BLEProtocols

/// One Bluetooth Quality Report with link-quality fields, as recorded on its connection.
public struct LinkQualitySample: Hashable, Sendable {
    public var frame: Int
    public var timestamp: Timestamp
    public var reportID: BQRReportID
    public var quality: BQRLinkQuality

    public init(frame: Int, timestamp: Timestamp, reportID: BQRReportID, quality: BQRLinkQuality) {
        self.frame = frame; self.timestamp = timestamp; self.reportID = reportID; self.quality = quality
    }
}

/// What a connection's quality reports say, summed over the capture: the figures a verdict quotes.
///
/// BQR counters are per reporting interval (they restart at each report), so totals are sums.
public struct LinkQualitySummary: Hashable, Sendable {
    public var reports = 0
    /// Reports that measured a signal (RSSI above ``unmeasuredRSSI``): the RSSI figures are theirs alone.
    public var measuredReports = 0
    public var firstFrame = 0, lastFrame = 0
    /// RSSI over the measured reports (0 when none measured).
    public var minRSSI: Int = 0, maxRSSI: Int = 0
    /// Mean RSSI over the reports, dBm.
    public var meanRSSI: Double = 0
    public var minSNR: Int = 0
    public var retransmissions = 0
    public var nak = 0
    public var noRx = 0
    public var flowOff = 0
    public var crcErrors = 0
    public var txUnacked = 0
    /// The report with the lowest RSSI (first of equals).
    public var worstRSSIFrame = 0
    /// Approaching-LSTO reports: the controller heard nothing for half the supervision timeout.
    public var approachingLSTOFrames: [Int] = []
    /// A2DP, (e)SCO or LE audio choppy reports.
    public var choppyFrames: [Int] = []

    public init?(_ samples: [LinkQualitySample]) {
        guard let first = samples.first else { return nil }
        reports = samples.count
        firstFrame = first.frame
        lastFrame = samples[samples.count - 1].frame
        minSNR = Int(first.quality.snr)
        var sum = 0
        for s in samples {
            let q = s.quality
            let r = Int(q.rssi)
            if r > Self.unmeasuredRSSI {
                if measuredReports == 0 || r < minRSSI { minRSSI = r; worstRSSIFrame = s.frame }
                maxRSSI = measuredReports == 0 ? r : max(maxRSSI, r)
                sum += r
                measuredReports += 1
            }
            minSNR = min(minSNR, Int(q.snr))
            retransmissions += Int(q.retransmissionCount)
            nak += Int(q.nakCount)
            noRx += Int(q.noRxCount)
            flowOff += Int(q.flowOffCount)
            crcErrors += Int(q.v6?.crcErrorPackets ?? 0)
            txUnacked += Int(q.v6?.txUnackedPackets ?? 0)
            if s.reportID == .approachingLSTO { approachingLSTOFrames.append(s.frame) }
            if s.reportID == .a2dpAudioChoppy || s.reportID == .scoVoiceChoppy || s.reportID == .leAudioChoppy {
                choppyFrames.append(s.frame)
            }
        }
        meanRSSI = measuredReports > 0 ? Double(sum) / Double(measuredReports) : 0
    }

    /// The RSSI a controller reports when it received nothing to measure: the bottom of the scale (Android's reports on
    /// links that never came up), never a measurement.
    public static let unmeasuredRSSI = -127

    /// Thresholds of the verdict: below this RSSI (dBm) the radio is weak.
    public static let weakRSSI = -85
    /// Retransmissions per report above which the link is lossy.
    public static let lossyRetransmissionsPerReport = 100

    /// The radio limited the link: weak signal, many retransmissions, or supervision timeout approached.
    /// Never for a link whose reports measured nothing: it received no packet, so there is no radio to judge
    /// (``verdict`` says so).
    public var isRadioLimited: Bool {
        measuredReports > 0
            && (minRSSI <= Self.weakRSSI || !approachingLSTOFrames.isEmpty
                || retransmissions > Self.lossyRetransmissionsPerReport * reports)
    }

    /// `limited by the radio: 913 retransmissions, RSSI −88 dBm, approaching supervision timeout at frame 412`
    /// or `radio fine: 26 reports, RSSI −56…−32 dBm (mean −45), 2,013 retransmissions, 0 NAK`.
    public var verdict: String {
        var parts: [String] = []
        parts.append("\(reports) quality report\(reports == 1 ? "" : "s") (frames \(firstFrame)–\(lastFrame))")
        if measuredReports > 0 {
            parts.append("RSSI \(minRSSI)…\(maxRSSI) dBm (mean \(Int(meanRSSI.rounded())), lowest at frame \(worstRSSIFrame))")
        }
        parts.append(
            "\(grouped(retransmissions)) retransmissions, \(grouped(nak)) NAK, \(grouped(noRx)) no-RX, \(grouped(flowOff)) flow-off")
        if crcErrors > 0 || txUnacked > 0 { parts.append("\(grouped(crcErrors)) CRC errors, \(grouped(txUnacked)) unacknowledged") }
        if let f = approachingLSTOFrames.first {
            parts.append(
                "approaching supervision timeout at frame \(f)"
                    + (approachingLSTOFrames.count > 1 ? " (+\(approachingLSTOFrames.count - 1) more)" : ""))
        }
        if let f = choppyFrames.first { parts.append("choppy audio reported at frame \(f)") }
        if measuredReports == 0 {
            return "no radio measurement: the link received nothing (RSSI \(Self.unmeasuredRSSI) dBm, the bottom of the scale): "
                + parts.joined(separator: ", ")
        }
        return (isRadioLimited ? "limited by the radio: " : "radio fine: ") + parts.joined(separator: ", ")
    }
}

extension FindingKind {
    static func bqrMalformed(_ error: DecodeError) -> FindingKind {
        FindingKind(
            .hciBQRMalformed, message: "Bluetooth Quality Report cannot be decoded: \(error) (event parameters; kept as bytes)")
    }
    static func bqrUnknownReport(_ id: BQRReportID) -> FindingKind {
        FindingKind(
            .hciBQRUnknownReport,
            message: "Bluetooth Quality Report with unknown report id \(hex(id.rawValue)); parameters kept as bytes")
    }
    static func tooManyQualityReports(_ n: Int) -> FindingKind {
        FindingKind(
            .limitQualityReports, message: "more than \(n) quality reports on one connection; later ones are in the timeline only")
    }
}

/// `2,015`: thousands separated, as the reports print counts.
func grouped(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (n < 0 ? "-" : "") + out
}
