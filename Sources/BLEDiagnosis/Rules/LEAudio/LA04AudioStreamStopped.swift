import BLEAnalysis
import BLECore

extension FindingCode {
    static let audioStreamStopped = FindingCode(
        "LA-04", layer: .audio, severity: .error,
        title: "Audio stream stopped",
        explain: .init(
            meaning: "An audio stream stopped carrying packets well before its link ended.",
            advice: "Look at what happened at the last packet: the source stopped, or the link failed."),
        fold: .value, traits: [.claimsAbsence])
}

/// LA-04: a received audio stream stopped: no SDU for more than two SDU intervals before the stream ended abnormally
/// (BIG Sync Lost, a CIS lost with a reason other than 0x13/0x16). The audio was gone that long before the controller
/// said so. A BIS that stopped at a BIG Sync Lost is not named here: the loss of sync is one event, LA-05's finding,
/// which names each BIS with its silence.
struct LA04AudioStreamStopped: DiagnosisRule {
    static let code = FindingCode.audioStreamStopped
    static let group = RuleGroup.leAudio
    static let evidence =
        "HCI ISO data: the last SDU of a CIS/BIS direction, then Disconnection Complete (reason ∉ 0x13, 0x16) more than two SDU intervals later (a BIS that stops at a BIG Sync Lost is LA-05's)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        guard let iso = e.iso else { return [] }
        return iso.health.compactMap { h in
            guard let silence = h.silenceBeforeEndMicroseconds, let text = h.silenceText, let end = h.endFrame, let reason = h.endReason
            else { return nil }
            if let stream = iso.stream(of: h), LA05BIGSyncLost.syncLoss(ending: stream, in: iso) != nil { return nil }
            let label = iso.label(of: h)
            let c = e.connection(iso.stream(of: h)?.connectionNumber)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: end,
                message:
                    "\(label) \(h.direction == .tx ? "tx" : "rx") stopped: its last SDU came at frame \(h.lastFrame), then nothing for \(text) until the stream ended (\(codeName(reason)), frame \(end)).",
                headline: "\(label) stopped \(duration(silence)) before it ended (\(codeName(reason)))",
                supporting: [CitedFrame(h.lastFrame, "last SDU")],
                causes: [
                    "the receiver lost the source: out of range, the source stopped or moved its BIG",
                    "the source's controller stopped transmitting (a stalled host, a stack restart)",
                ], device: c?.peerAddress, connection: c?.number, fold: "\(label)")
        }
    }
}
