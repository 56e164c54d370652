import BLECore
import BLEProtocols

extension FindingCode {
    package static let timelineBreak = FindingCode(
        "CQ-04", layer: .capture, severity: .warning,
        title: "Timeline break",
        explain: .init(
            meaning:
                "Time in the log jumps backwards or leaves a long gap, or the capturer says it dropped records: what happened in the break is unknown.",
            advice: "Read the findings near the break with care; capture again with enough buffer, or to a file rather than memory."),
        fold: .never, traits: [.describesCapture])
}

/// CQ-04: the timeline breaks: time goes backwards (a wall-clock jump), a long silent gap, or records the capturer
/// dropped. Timing rules near it are unreliable.
package struct CQ04TimelineBreak: DiagnosisRule {
    package static let code = FindingCode.timelineBreak
    package static let group = RuleGroup.captureQuality
    package static let evidence =
        "Timestamps going backwards on one interface's clock; a gap of more than 60 s; btsnoop cumulative drops; info for an nRF Sniffer's packet counter skipping values, for steps back of 10 ms or less and for records of one interface dated behind another's (two clocks), and for a gap the host slept through (PacketLogger's note) or the controller only scanned through, or neither scanned nor held a link through (scanning turned off), with no link open"
    package static let anchor = "none"
    package static let codes: Set<FindingCode> = [.timeBackwards, .timeGap, .drops]

    package static func evaluate(_ e: Evidence) -> [Diagnosis] {
        (e.completeness?.items ?? []).compactMap { item in
            guard codes.contains(item.code), let frame = item.frame else { return nil }
            // The longest gap slept through, as the log's own power note says: time ran on, nothing is missing.
            if item.code == .timeGap, let note = e.completeness?.hostAsleep[frame] {
                return Diagnosis(
                    rule: Self.code, severity: .info, frame: frame, message: item.message + ".", headline: "the host slept",
                    causes: ["the host asleep (PacketLogger's \"System Sleep\" note at frame \(note), seen)"])
            }
            if let quiet = Self.quiet(item, frame: frame, e) { return quiet }
            return Diagnosis(
                rule: Self.code, severity: item.severity >= .warning ? severity : .info, frame: frame,
                message: (item.code == .timeBackwards || item.code == .drops) && item.severity < .warning
                    ? "\(item.message)." : "\(item.message). Timing near it is unreliable.",
                headline: "timeline break (\(item.code))", causes: Self.causes(item, e))
        }
    }

    /// Why the timeline breaks there: a step back within the jitter limit, or a record of another interface behind the
    /// sniffer's, is clocks that disagree; packets an air capture's sniffer counted and the file lacks were lost on the way
    /// to the host (the LED capture's nRF Sniffer counter, 4145 → 12970); else the host's clock or logger.
    static func causes(_ item: CaptureCompleteness.Item, _ e: Evidence) -> [String] {
        if item.code == .timeBackwards && item.severity < .warning {
            return ["clocks that disagree by that much (the capturer's, or two interfaces'): no record is missing"]
        }
        if item.code == .drops && e.isAirCapture && item.severity < .warning {
            return [
                "packets the sniffer's host did not write: lost on the way, or left out (another device's while following one, an RSSI filter); the capture cannot tell which",
                "the firmware's own events (they take counter values too)",
            ]
        }
        return ["a wall-clock (NTP) jump", "the host suspended", "the logger overran"]
    }
}
