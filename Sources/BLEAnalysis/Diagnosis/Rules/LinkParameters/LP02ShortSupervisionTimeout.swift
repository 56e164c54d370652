import BLECore
import BLEProtocols

/// LP-02: the supervision timeout in force leaves no margin: at most 2 × the effective interval (a spec violation,
/// Core Spec Vol 6, Part B, 4.5.2), not more than 3 effective intervals (Apple's accessory guideline: interval max ×
/// (latency + 1) × 3 < timeout), or under 1 s — one short fade drops the link (a DC-01 risk).
struct LP02ShortSupervisionTimeout: DiagnosisRule {
    static let id = "LP-02"
    static let group = RuleGroup.linkParameters
    static let severity = DiagnosisSeverity.warning
    static let title = "Supervision timeout too short"
    static let evidence =
        "The connection parameters in force (with where they came from): timeout ≤ 2 × (1 + latency) × interval, ≤ 3 effective intervals, or < 1 s"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.connections.compactMap { c in
            guard let change = c.link.parameters.changes.first(where: { Self.tooShort($0.value) != nil }),
                let why = Self.tooShort(change.value)
            else { return nil }
            let p = change.value
            let device = e.deviceName(c)
            let timeout = ConnectionTiming.supervisionTimeoutMilliseconds(p.timeout)
            return Diagnosis(
                rule: id, severity: severity, frame: change.frame,
                message:
                    "The supervision timeout with \(device) is only \(timeout) ms (\(why); frame \(change.frame)): one short fade drops the link.",
                headline: "supervision timeout with \(device) too short",
                causes: ["host defaults (BlueZ: 420 ms)", "an aggressive peripheral request"], device: c.peerAddress, connection: c.number,
                facts: [UsedFact("supervision timeout", "\(timeout) ms", change.source)], foldKey: "LP-02 \(device) \(p.timeout)")
        }
    }

    static func tooShort(_ p: ConnectionParameters) -> String? {
        let interval = ConnectionTiming.intervalMilliseconds(p.interval)
        let effective = interval * Double(Int(p.latency) + 1)
        let timeout = Double(ConnectionTiming.supervisionTimeoutMilliseconds(p.timeout))
        if timeout <= 2 * effective { return "at most 2 effective intervals of \(effective.formatted2) ms, below the spec's minimum" }
        if timeout <= 3 * effective { return "at most 3 effective intervals of \(effective.formatted2) ms (Apple asks for more)" }
        if timeout < 1000 { return "under 1 s" }
        return nil
    }
}
