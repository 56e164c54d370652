import BLECore
import BLEProtocols

/// LP-05: the peer's link layer refused a procedure it does not support (0x1A Unsupported Remote Feature, 0x11
/// Unsupported Feature; LL_UNKNOWN_RSP / LL_REJECT_EXT_IND on air captures) for a parameter, length or PHY procedure.
struct LP05ProcedureUnsupported: DiagnosisRule {
    static let id = "LP-05"
    static let group = RuleGroup.linkParameters
    static let severity = DiagnosisSeverity.warning
    static let title = "Link-layer procedure not supported by the peer"
    static let evidence =
        "Connection Update, Set Data Length or Set PHY failing with 0x1A/0x11; LL_UNKNOWN_RSP or LL_REJECT_EXT_IND on an air capture"
    static let anchor = "none"
    static let procedures: Set<HCICommand> = [.leConnectionUpdate, .leSetDataLength, .leSetPHY]

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let what: String
            switch ev.kind {
            case .commandFailed(let op, let s, _) where procedures.contains(op) && (s.rawValue == 0x1A || s.rawValue == 0x11):
                what = "\(op) failed with \(codeName(s))"
            case .connectionUpdateComplete(_, let s, _) where s.rawValue == 0x1A:
                what = "the connection update failed with \(codeName(s))"
            case .linkLayerRejected(let sender, let procedure, let reason):
                what =
                    "\(sender == .peer ? "the peripheral" : "the central") rejected \(procedure)\(reason.map { " (\(codeName($0)))" } ?? "")"
            default:
                return nil
            }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            return Diagnosis(
                rule: id, severity: severity, frame: ev.frame,
                message:
                    "With \(device), \(what) (frame \(ev.frame)): the peer does not support it; fall back (e.g. to the L2CAP parameter update).",
                headline: "procedure unsupported by \(device)", causes: ["an older peer link layer", "a host that ignores the fallback"],
                device: c?.peerAddress, connection: c?.number, foldKey: "LP-05 \(device)")
        }
    }
}
