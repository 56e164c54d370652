import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let isochronousSetupFailed = FindingCode(
        "LA-01", layer: .audio, severity: .error,
        title: "CIS or BIG setup failed",
        explain: .init(
            meaning: "Setting up an LE Audio stream (a CIS, or a broadcast BIG or its sync) failed with a status code.",
            advice: "Read the status: parameters the controller does not support, or no resources for another stream."),
        fold: .value)
}

/// LA-01: a CIS, a BIG or a BIG sync could not be set up: LE CIS Established, LE Create BIG Complete or LE BIG Sync
/// Established with a status ≠ 0, or the controller refused LE Create CIS, LE Create BIG or LE BIG Create Sync at once
/// (Command Status ≠ 0). No audio flows on that stream.
struct LA01IsochronousSetupFailed: DiagnosisRule {
    static let code = FindingCode.isochronousSetupFailed
    static let group = RuleGroup.leAudio
    static let evidence =
        "LE CIS Established (v1/v2), LE Create BIG Complete, LE BIG Sync Established with status ≠ 0; Command Status ≠ 0 for LE Create CIS, LE Create BIG, LE BIG Create Sync"
    static let anchor = "btmon decodes the events; none names the failure"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        (e.iso?.events ?? []).compactMap { ev in
            let what: String
            switch ev.kind {
            case .cisFailed: what = "The CIS" + (ev.handle.map { " \(hex($0, width: 4))" } ?? "") + (ev.cigID.map { " of CIG \($0)" } ?? "")
            case .bigFailed: what = "The broadcast (BIG" + (ev.bigHandle.map { " \(hex($0))" } ?? "") + ")"
            case .bigSyncFailed: what = "The sync to the broadcast (BIG" + (ev.bigHandle.map { " \(hex($0))" } ?? "") + ")"
            default: return nil
            }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message: "\(what) could not be set up (\(codeName(ev.status)), frame \(ev.frame)): no audio flows on it.",
                headline: "\(ev.kind.rawValue) (\(codeName(ev.status)))",
                causes: [
                    "the peer rejected the CIS (LE Reject CIS Request) or did not answer LL_CIS_REQ in time",
                    "parameters the controller cannot schedule (SDU interval, latency, RTN, PHY)",
                    "the broadcast went away or its Broadcast_Code is wrong (MIC failure 0x3D)",
                ], fold: "\(ev.kind.rawValue) \(ev.status.rawValue)")
        }
    }
}
