import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let a2dpStreamStalled = FindingCode(
        "BR-07", layer: .classic, severity: .warning,
        title: "An A2DP stream stalled while playing",
        explain: .init(
            meaning:
                "The phone stopped sending media packets for more than 200 ms while an A2DP stream was playing, so the listener heard a dropout. On a phone's HCI log the cause is on the host side (the audio path or the controller's buffers), not the radio.",
            advice:
                "Look at what the phone did at that moment (CPU load, Wi-Fi, another profile's traffic) and at the controller's buffer and quality reports."
        ),
        fold: .device, traits: [.claimsAbsence])
}

/// BR-07: an A2DP stream went silent while started: no media packet for more than 200 ms between its Start and its
/// Suspend (the host stopped feeding the link; on a phone's log, the audio the listener heard stopped).
struct BR07A2DPStreamStalled: DiagnosisRule {
    static let code = FindingCode.a2dpStreamStalled
    static let group = RuleGroup.classic
    static let evidence =
        "AVDTP Start accepted, then a gap of more than 200 ms between two media packets (RTP on the stream's transport channel) before a Suspend, Close or Abort; the link's sniff mode across the longest gap (Mode Change) is its first cause"
    static let anchor = "none"

    /// The link in sniff mode across a stall: the Mode Change to sniff in force at the stall's last silent frame, and
    /// the one back to active after it, when the log has it. In sniff, packets wait for the anchor points (Core Vol 2
    /// Part B 8.7): the UE BOOM log's laptop streamed while the link sniffed at 500 ms (Mode Change 710), asked to leave
    /// it at 722, and the media came back with the Mode Change to active at 729 (a 437 ms gap, 726–728).
    static func sniffing(_ stall: A2DPStall, _ c: Connection, _ e: Evidence) -> (since: Int, until: Int?)? {
        let mode = e.last(before: stall.toFrame) { ev in
            guard ev.connection == c.number, case .modeChange(_, .success, _) = ev.kind else { return false }
            return true
        }
        guard let mode, case .modeChange(_, _, 2) = mode.kind else { return nil }
        let active = e.first(after: stall.fromFrame) { ev in
            guard ev.connection == c.number, case .modeChange(_, .success, 0) = ev.kind else { return false }
            return true
        }
        return (mode.frame, active?.frame)
    }

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for c in e.connections where c.isBREDR {
            for s in c.profiles?.a2dp.streams ?? [] where !s.media.stalls.isEmpty {
                let stalls = s.media.stalls
                let longest = stalls.max { $0.microseconds < $1.microseconds }!
                let name = e.deviceName(c)
                let codec = s.codec?.name ?? "A2DP"
                let sniff = sniffing(longest, c, e)
                let sniffCause = sniff.map { s in
                    "the link was in sniff mode (Mode Change at \(s.since)\(s.until.map { ", active again at \($0)" } ?? "")): packets wait for the sniff anchor points (seen)"
                }
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: stalls[0].toFrame,
                        message:
                            "The \(codec) stream to \(name) went silent \(stalls.count) time\(stalls.count == 1 ? "" : "s") while playing: the longest gap between media packets was \(longest.microseconds / 1000) ms (frames \(longest.fromFrame)–\(longest.toFrame)).",
                        headline: "A2DP stream to \(name) stalled \(stalls.count)×",
                        supporting: stalls.prefix(8).map { CitedFrame($0.toFrame, "media resumed after \($0.microseconds / 1000) ms") }
                            + (sniff.map { [CitedFrame($0.since, "Mode Change to sniff")] } ?? []),
                        causes: (sniffCause.map { [$0] } ?? []) + [
                            "the source's audio path underran (CPU load, a busy app, Wi-Fi coexistence on a shared antenna)",
                            "the controller's buffers were full (the link's retransmissions, range)",
                        ], device: c.peerAddress, connection: c.number, fold: "\(name)"))
            }
        }
        return out
    }
}
