import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let phyUpdateFailed = FindingCode(
        "LP-04", layer: .link, severity: .error,
        title: "PHY update failed",
        explain: .init(
            meaning: "Changing the PHY (1M, 2M, Coded) failed, or the link was lost right after a PHY change.",
            advice: "Check both sides support the PHY asked; keep 1M if the peer is unreliable on 2M."),
        fold: .value)
}

/// LP-04: a PHY change failed (LE Set PHY refused, LE PHY Update Complete ≠ 0), or the link was lost within 3 s of a
/// successful one.
struct LP04PHYUpdateFailed: DiagnosisRule {
    static let code = FindingCode.phyUpdateFailed
    static let group = RuleGroup.linkParameters
    static let evidence =
        "LE Set PHY Command Status ≠ 0; LE PHY Update Complete status ≠ 0; a link loss (0x08) within 3 s after a PHY change"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        var lastChange: [Int: EvidenceEvent] = [:]
        for ev in e.events {
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            switch ev.kind {
            case .commandFailed(.leSetPHY, let status, _):
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame,
                        message: "The controller refused to change the PHY (\(codeName(status)), frame \(ev.frame)).",
                        headline: "PHY change refused", causes: ["the PHY asked for is not supported"], fold: "set"))
            case .phyUpdateComplete(_, let status, let phy):
                if status == .success, let n = ev.connection {
                    lastChange[n] = ev
                } else if !DC06ProcedureCollision.codes.contains(status) {
                    out.append(
                        Diagnosis(
                            rule: Self.code, severity: severity, frame: ev.frame,
                            message: "The PHY update with \(device) failed (\(codeName(status)), frame \(ev.frame)).",
                            headline: "PHY update with \(device) failed",
                            causes: ["the peer lacks 2M or Coded PHY", "a controller PHY bug"],
                            device: c?.peerAddress, connection: c?.number, fold: "\(device)"))
                }
                _ = phy
            case .disconnectionComplete(_, .success, let reason) where reason == .connectionTimeout:
                guard let n = ev.connection, let change = lastChange[n], case .phyUpdateComplete(_, _, let phy?) = change.kind,
                    ev.timestamp.microseconds(since: change.timestamp) <= 3_000_000
                else { continue }
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame,
                        message:
                            "The link to \(device) died \(duration(ev.timestamp.microseconds(since: change.timestamp))) after switching to \(phy) (frame \(change.frame)).",
                        headline: "link to \(device) died after a PHY change",
                        supporting: [CitedFrame(change.frame, "PHY changed to \(phy)")],
                        causes: ["the peer's radio on the new PHY", "a controller PHY bug"], device: c?.peerAddress, connection: c?.number))
            default:
                break
            }
        }
        return out
    }
}
