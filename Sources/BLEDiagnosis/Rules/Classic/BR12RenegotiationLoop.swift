import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let codecRenegotiationLoop = FindingCode(
        "BR-12", layer: .classic, severity: .warning,
        title: "Codec renegotiation in a loop",
        explain: .init(
            meaning:
                "The two sides negotiated the codec again and again without the audio coming up between: they disagree, and the user hears nothing or delays.",
            advice: "Compare what each side offers and selects at each round; one of them retries a configuration the other rejects."),
        fold: .value)
}

/// BR-12: codec renegotiation in a loop: three or more HFP codec selections (+BCS) on one link within 30 s with no
/// eSCO link up between them, or three or more AVDTP configurations or reconfigurations of one end point within 30 s.
struct BR12RenegotiationLoop: DiagnosisRule {
    static let code = FindingCode.codecRenegotiationLoop
    static let group = RuleGroup.classic
    static let evidence =
        "≥ 3 +BCS within 30 s on a link with no Synchronous Connection Complete (success) between them; ≥ 3 Set Configuration / Reconfigure accepted for one SEID within 30 s"
    static let anchor = "none"
    static let window: Int64 = 30_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for c in e.connections where c.isBREDR {
            guard let p = c.profiles else { continue }
            let name = e.deviceName(c)
            let selections = (p.hfp?.codecSelections ?? []).map { (frame: $0.frame, time: $0.time) }
            let up = e.classic.synchronousLinks.filter { $0.established && $0.aclConnection == c.number }.compactMap(\.startFrame)
            if let run = loop(selections, breaks: up) {
                out.append(
                    diagnosis(
                        c, name, run, what: "HFP codec selections (+BCS)", headline: "HFP codec renegotiated \(run.count)× with \(name)"))
            }
            for seid in Set(p.a2dp.streams.map(\.acpSEID)) {
                let configured = p.a2dp.streams.filter { $0.acpSEID == seid }.flatMap { s in
                    [(frame: s.configurationFrame, time: s.configurationTime)] + s.reconfigurations.map { (frame: $0.frame, time: $0.time) }
                }
                if let run = loop(configured.sorted { $0.frame < $1.frame }, breaks: []) {
                    out.append(
                        diagnosis(
                            c, name, run, what: "AVDTP configurations of SEID \(seid)",
                            headline: "A2DP reconfigured \(run.count)× with \(name)"))
                }
            }
        }
        return out
    }

    /// The first run of ≥ 3 frames within the window with none of `breaks` between its first and last.
    static func loop(_ items: [(frame: Int, time: Timestamp)], breaks: [Int]) -> [Int]? {
        guard items.count >= 3 else { return nil }
        for i in 0...(items.count - 3) {
            var run = [items[i].frame]
            for j in (i + 1)..<items.count {
                guard items[j].time.microseconds(since: items[i].time) <= window else { break }
                if breaks.contains(where: { $0 > run.last! && $0 < items[j].frame }) { break }
                run.append(items[j].frame)
            }
            if run.count >= 3 { return run }
        }
        return nil
    }

    static func diagnosis(_ c: Connection, _ name: String, _ run: [Int], what: String, headline: String) -> Diagnosis {
        Diagnosis(
            rule: Self.code, severity: severity, frame: run[2],
            message:
                "\(run.count) \(what) with \(name) within 30 s (frames \(run.map(String.init).joined(separator: ", "))) without the audio coming up in between: the two sides do not agree.",
            headline: headline, supporting: run.map { CitedFrame($0, what) },
            causes: [
                "each side retries a configuration the other cannot use", "the audio link fails each time and the gateway starts over",
            ],
            device: c.peerAddress, connection: c.number, fold: "\(name) \(what)")
    }
}
