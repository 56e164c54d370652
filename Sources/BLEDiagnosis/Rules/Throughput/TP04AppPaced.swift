import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let appPaced = FindingCode(
        "TP-04", layer: .gatt, severity: .info,
        title: "Throughput paced by the app",
        explain: .init(
            meaning: "A data stream ran well below what its link could carry: the app sent data more slowly than the radio allowed.",
            advice: "Nothing to fix in the link; if more speed is needed, look at how the app queues its data."),
        fold: .never, traits: [.readsPayloads])
}

/// TP-04: the gaps in a transfer come from the app, not the radio: the verdict says the link had room (packets per
/// connection event well below what fits) and the sender waited between values.
struct TP04AppPaced: DiagnosisRule {
    static let code = FindingCode.appPaced
    static let group = RuleGroup.throughput
    static let evidence = "A stream of at least 100 values and 10 kB whose throughput verdict is limited by the app (the radio had room)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.judgedStreams.compactMap { s in
            guard s.packets >= 100, s.valueBytes >= 10_000, [ThroughputLimit.app, .idleGaps].contains(s.verdict.limit) else { return nil }
            let c = s.connection
            let device = e.deviceName(c)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: s.firstFrame,
                message:
                    "\(s.kind.name.capitalized) with \(device) on \(s.handle.map { hex($0, width: 4) } ?? "several handles") was paced by the sender, not the radio: \(s.verdict.text).",
                headline: "throughput with \(device) paced by the app",
                causes: ["the app waits for each callback before the next write", "Android GATT pacing"],
                device: c?.peerAddress, connection: c?.number)
        }
    }
}
