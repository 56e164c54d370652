import BLECore

/// LA-05: a broadcast receiver lost its synchronization to a BIG (LE BIG Sync Lost, reason ≠ 0x16): timeout (0x08),
/// the source ended the BIG (0x13), or a MIC failure (0x3D, a wrong Broadcast_Code).
struct LA05BIGSyncLost: DiagnosisRule {
    static let id = "LA-05"
    static let group = RuleGroup.leAudio
    static let severity = DiagnosisSeverity.error
    static let title = "Broadcast sync lost"
    static let evidence = "LE BIG Sync Lost with a reason other than 0x16 (the host's own terminate)"
    static let anchor = "btmon decodes the event"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        guard let iso = e.iso else { return [] }
        return iso.events.compactMap { ev in
            guard ev.kind == .bigSyncLost, ev.status.rawValue != 0x16 else { return nil }
            let streams = iso.streams.filter { $0.kind == .bis && $0.bigHandle == ev.bigHandle && $0.endFrame == ev.frame }
            let last = streams.compactMap { s in iso.health.first { $0.streamNumber == s.number }?.lastFrame }.max()
            let cause: [String] =
                switch ev.status.rawValue {
                case 0x3D: ["the Broadcast_Code is wrong (MIC failure)"]
                case 0x13: ["the source ended its broadcast"]
                default: ["the receiver moved out of range of the source", "the source stopped or changed its BIG"]
                }
            return Diagnosis(
                rule: id, severity: severity, frame: ev.frame,
                message:
                    "The broadcast receiver lost its sync to BIG \(hex(ev.bigHandle ?? 0)) (\(codeName(ev.status)), frame \(ev.frame))"
                    + (last.map { "; the last SDU had come at frame \($0)." } ?? "."),
                headline: "BIG sync lost (\(codeName(ev.status)))",
                supporting: last.map { [CitedFrame($0, "last SDU received")] } ?? [], causes: cause,
                foldKey: "LA-05 \(ev.status.rawValue)")
        }
    }
}
