import BLECore
import BLEProtocols

/// CQ-04: the timeline breaks: time goes backwards (a wall-clock jump), a long silent gap, or records the capturer
/// dropped. Timing rules near it are unreliable.
struct CQ04TimelineBreak: DiagnosisRule {
    static let id = "CQ-04"
    static let group = RuleGroup.captureQuality
    static let severity = DiagnosisSeverity.warning
    static let title = "Timeline break"
    static let evidence = "Timestamps going backwards; a gap of more than 60 s; btsnoop cumulative drops"
    static let anchor = "none"
    static let codes: Set<String> = ["time-backwards", "time-gap", "drops"]

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        (e.completeness?.items ?? []).compactMap { item in
            guard codes.contains(item.code), let frame = item.frame else { return nil }
            return Diagnosis(
                rule: id, severity: item.severity >= .warning ? severity : .info, frame: frame,
                message: item.code == "time-backwards" && item.severity < .warning
                    ? "\(item.message)." : "\(item.message). Timing near it is unreliable.",
                headline: "timeline break (\(item.code))",
                causes: ["a wall-clock (NTP) jump", "the host suspended", "the logger overran"])
        }
    }
}
