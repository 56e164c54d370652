import BLEAnalysis
import BLECore

extension FindingCode {
    static let bigSyncLost = FindingCode(
        "LA-05", layer: .audio, severity: .error,
        title: "Broadcast sync lost",
        explain: .init(
            meaning: "A receiver lost its synchronization to a broadcast audio stream.",
            advice: "Usually range or the broadcaster stopping; check the reason code."),
        fold: .value)
}

/// LA-05: a broadcast receiver lost its synchronization to a BIG (LE BIG Sync Lost, reason ≠ 0x16): timeout (0x08),
/// the source ended the BIG (0x13), or a MIC failure (0x3D, a wrong Broadcast_Code). One finding per loss, naming
/// each BIS of the BIG with its silence before the loss (LA-04 leaves those BISes to this rule).
struct LA05BIGSyncLost: DiagnosisRule {
    static let code = FindingCode.bigSyncLost
    static let group = RuleGroup.leAudio
    static let evidence = "LE BIG Sync Lost with a reason other than 0x16 (the host's own terminate)"
    static let anchor = "btmon decodes the event"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        guard let iso = e.iso else { return [] }
        return iso.events.compactMap { ev in
            guard reported(ev) else { return nil }
            let streams = iso.streams.filter { $0.kind == .bis && $0.bigHandle == ev.bigHandle && $0.endFrame == ev.frame }
            let health = streams.flatMap { s in iso.health.filter { $0.streamNumber == s.number } }.sorted { $0.lastFrame < $1.lastFrame }
            let cause: [String] =
                switch ev.status {
                case .connectionTerminatedMICFailure: ["the Broadcast_Code is wrong (MIC failure)"]
                case .remoteUserTerminatedConnection: ["the source ended its broadcast"]
                default: ["the receiver moved out of range of the source", "the source stopped or changed its BIG"]
                }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message: "The broadcast receiver lost its sync to BIG \(hex(ev.bigHandle ?? 0)) (\(codeName(ev.status)), frame \(ev.frame))"
                    + before(health, iso: iso),
                headline: "BIG sync lost (\(codeName(ev.status)))",
                supporting: health.map { CitedFrame($0.lastFrame, "last SDU of \(iso.label(of: $0))") }, causes: cause,
                fold: "\(ev.status.rawValue)")
        }
    }

    /// A loss of sync this rule reports: not the host's own terminate (0x16).
    static func reported(_ ev: ISOLifecycleEvent) -> Bool { ev.kind == .bigSyncLost && ev.status != .connectionTerminatedByLocalHost }

    /// The reported BIG Sync Lost that ended `stream`, if one did: LA-04 leaves such a BIS to this rule.
    static func syncLoss(ending stream: ISOStream, in iso: ISOAnalysis) -> ISOLifecycleEvent? {
        guard stream.kind == .bis, let end = stream.endFrame else { return nil }
        return iso.events.first { reported($0) && $0.frame == end && $0.bigHandle == stream.bigHandle }
    }

    /// What the BISes received before the loss: `; BIS 0x0200 and BIS 0x0201 had received nothing for 1000 ms (about
    /// 99 SDUs; last SDUs at frames 590 and 591).`, each BIS on its own when their silences differ.
    static func before(_ health: [ISOStreamHealth], iso: ISOAnalysis) -> String {
        guard let last = health.last else { return "." }
        let silent = health.filter { $0.silenceText != nil }
        guard !silent.isEmpty else { return "; the last SDU had come at frame \(last.lastFrame)." }
        let texts = silent.compactMap(\.silenceText)
        if Set(texts).count == 1, silent.count > 1 {
            let labels = silent.map { iso.label(of: $0) }.joined(separator: " and ")
            let frames = silent.map { String($0.lastFrame) }.joined(separator: " and ")
            return "; \(labels) had received nothing for \(texts[0]) before it (last SDUs at frames \(frames))."
        }
        return "; "
            + silent.map { "\(iso.label(of: $0)) had received nothing for \($0.silenceText ?? "") (last SDU at frame \($0.lastFrame))" }
            .joined(separator: "; ") + "."
    }
}
