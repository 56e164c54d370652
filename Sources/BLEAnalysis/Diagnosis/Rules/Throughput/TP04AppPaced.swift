import BLECore
import BLEProtocols

/// TP-04: the gaps in a transfer come from the app, not the radio: the verdict says the link had room (packets per
/// connection event well below what fits) and the sender waited between values.
struct TP04AppPaced: DiagnosisRule {
    static let id = "TP-04"
    static let group = RuleGroup.throughput
    static let severity = DiagnosisSeverity.info
    static let title = "Throughput paced by the app"
    static let evidence = "A stream of at least 100 values and 10 kB whose throughput verdict is limited by the app (the radio had room)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.judgedStreams.compactMap { s in
            guard s.packets >= 100, s.valueBytes >= 10_000, [ThroughputLimit.app, .idleGaps].contains(s.verdict.limit) else { return nil }
            let c = s.connection
            let device = e.deviceName(c)
            return Diagnosis(
                rule: id, severity: severity, frame: s.firstFrame,
                message:
                    "\(s.kind.name.capitalized) with \(device) on \(s.handle.map { hex($0, width: 4) } ?? "several handles") was paced by the sender, not the radio: \(s.verdict.text).",
                headline: "throughput with \(device) paced by the app",
                causes: ["the app waits for each callback before the next write", "Android GATT pacing"],
                device: c?.peerAddress, connection: c?.number)
        }
    }
}
