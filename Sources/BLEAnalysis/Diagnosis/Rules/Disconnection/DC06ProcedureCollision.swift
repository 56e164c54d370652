import BLECore
import BLEProtocols

/// DC-06: both sides started link-layer procedures at once and the collision was not resolved (0x23 LL Procedure
/// Collision, 0x2A Different Transaction Collision; Core Spec Vol 6, Part B, 5.3), in a disconnection or as a
/// procedure's completion status, or (air captures) an LL_REJECT_EXT_IND / LL_REJECT_IND.
struct DC06ProcedureCollision: DiagnosisRule {
    static let id = "DC-06"
    static let group = RuleGroup.disconnection
    static let severity = DiagnosisSeverity.error
    static let title = "Link-layer procedure collision"
    static let evidence =
        "Disconnection Complete, Connection Update Complete or PHY Update Complete with 0x23 or 0x2A; air: LL_REJECT_EXT_IND / LL_REJECT_IND with them"
    static let anchor = "W (control_proc_* expert infos)"
    static let codes: Set<UInt8> = [0x23, 0x2A]

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let status: HCIStatus
            let what: String
            switch ev.kind {
            case .disconnectionComplete(_, .success, let reason) where codes.contains(reason.rawValue):
                status = reason
                what = "the link dropped"
            case .connectionUpdateComplete(_, let s, _) where codes.contains(s.rawValue):
                status = s
                what = "a connection update failed"
            case .phyUpdateComplete(_, let s, _) where codes.contains(s.rawValue):
                status = s
                what = "a PHY update failed"
            case .linkLayerRejected(let sender, let procedure, let s?) where codes.contains(s.rawValue):
                status = s
                what = "\(sender == .peer ? "the peripheral" : "the central") rejected \(procedure)"
            default:
                return nil
            }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            return Diagnosis(
                rule: id, severity: severity, frame: ev.frame,
                message:
                    "Both sides started link-layer procedures at the same time with \(device) and \(what) (\(codeName(status)), frame \(ev.frame)).",
                headline: "link-layer procedure collision with \(device) (\(hex(status.rawValue)))",
                causes: [
                    "the peripheral asked for a parameter update while the central ran a PHY, length or encryption procedure",
                    "a collision-handling bug in one link layer",
                ],
                device: c?.peerAddress, connection: c?.number, foldKey: "DC-06 \(device) \(status.rawValue)")
        }
    }
}
