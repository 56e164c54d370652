import BLECore
import BLEProtocols

extension FindingCode {
    static let procedureUnsupported = FindingCode(
        "LP-05", layer: .link, severity: .warning,
        title: "Link-layer procedure not supported by the peer",
        explain: .init(
            meaning: "The peer does not support a link-layer procedure this side asked for (parameter update, data length, PHY).",
            advice: "Check the peer's features before asking; fall back to what it supports."),
        fold: .device)
}

/// LP-05: the peer's link layer refused a procedure it does not support (0x1A Unsupported Remote Feature, 0x11
/// Unsupported Feature; LL_UNKNOWN_RSP / LL_REJECT_EXT_IND on air captures) for a parameter, length or PHY procedure.
/// On air captures, a rejection for another reason is named too (without the fall-back advice), unless it is a missing
/// key (SEC-01) or a collision (DC-06).
struct LP05ProcedureUnsupported: DiagnosisRule {
    static let code = FindingCode.procedureUnsupported
    static let group = RuleGroup.linkParameters
    static let evidence =
        "Connection Update, Set Data Length or Set PHY failing with 0x1A/0x11; LL_UNKNOWN_RSP or LL_REJECT_EXT_IND / LL_REJECT_IND on an air capture (but a missing key or a collision)"
    static let anchor = "none"
    static let procedures: Set<HCICommand> = [.leConnectionUpdate, .leSetDataLength, .leSetPHY]

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let what: String
            var unsupported = true
            switch ev.kind {
            case .commandFailed(let op, let s, _)
            where procedures.contains(op) && (s == .unsupportedRemoteFeature || s == .unsupportedFeatureOrParameter):
                what = "\(op) failed with \(codeName(s))"
            case .connectionUpdateComplete(_, let s, _) where s == .unsupportedRemoteFeature:
                what = "the connection update failed with \(codeName(s))"
            case .linkLayerRejected(let sender, let procedure, let reason):
                // A refusal other rules explain (a missing key: SEC-01; a collision: DC-06) is theirs. Any other reason
                // than "unsupported" (0x3B unacceptable parameters, 0x1E invalid parameters…) is no missing feature:
                // named, without the advice to fall back.
                if let reason,
                    SEC01BondLostOnPeripheral.isKeyMissing(sender: sender, procedure: procedure, reason: reason)
                        || DC06ProcedureCollision.codes.contains(reason)
                {
                    return nil
                }
                unsupported = reason.map { $0 == .unsupportedRemoteFeature || $0 == .unsupportedFeatureOrParameter } ?? true
                what =
                    "\(sender == .peer ? "the peripheral" : "the central") rejected \(procedure)\(reason.map { " (\(codeName($0)))" } ?? "")"
            default:
                return nil
            }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message: "With \(device), \(what) (frame \(ev.frame))"
                    + (unsupported ? ": the peer does not support it; fall back (e.g. to the L2CAP parameter update)." : "."),
                headline: unsupported ? "procedure unsupported by \(device)" : "procedure refused by \(device)",
                causes: unsupported
                    ? ["an older peer link layer", "a host that ignores the fallback"]
                    : ["the peer's link layer does not accept the values asked for"],
                device: c?.peerAddress, connection: c?.number, fold: "\(device) \(unsupported)")
        }
    }
}
