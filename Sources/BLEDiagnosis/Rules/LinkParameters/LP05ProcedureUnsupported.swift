import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let procedureUnsupported = FindingCode(
        "LP-05", layer: .link, severity: .warning,
        title: "Link-layer procedure not supported by the peer",
        explain: .init(
            meaning:
                "The peer does not support a link-layer procedure this side asked for (parameter update, data length, PHY). An optional procedure whose refusal loses nothing (channel classification, subrating, power control) is info.",
            advice: "Check the peer's features before asking; fall back to what it supports."),
        fold: .device)
}

/// LP-05: the peer's link layer refused a procedure it does not support (0x1A Unsupported Remote Feature, 0x11
/// Unsupported Feature; LL_UNKNOWN_RSP / LL_REJECT_EXT_IND on air captures) for a parameter, length or PHY procedure.
/// On air captures, a rejection for another reason is named too (without the fall-back advice), unless it is a missing
/// key (SEC-01) or a collision (DC-06); an optional procedure whose refusal loses nothing (``LLProcedureTable``: channel
/// classification, subrating, power control, sleep clock accuracy, LE Ping) is info, and so is LL_UNKNOWN_RSP to an
/// opcode Core does not define (the crackle captures' 0xFF).
struct LP05ProcedureUnsupported: DiagnosisRule {
    static let code = FindingCode.procedureUnsupported
    static let group = RuleGroup.linkParameters
    static let evidence =
        "Connection Update, Set Data Length or Set PHY failing with 0x1A/0x11; LL_UNKNOWN_RSP or LL_REJECT_EXT_IND / LL_REJECT_IND on an air capture (but a missing key or a collision); info for an optional procedure whose refusal loses nothing (channel classification, subrating, power control, clock accuracy, LE Ping) and for an opcode Core does not define; info for a refusal the link then ran all the same within 2 s (its PHY, data length or parameters changed)"
    static let anchor = "none"
    static let procedures: Set<HCICommand> = [.leConnectionUpdate, .leSetDataLength, .leSetPHY]

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let what: String
            var unsupported = true
            // Who refused: the peer, but on an air capture the central when it sent the LL_REJECT (newcap20's ADI FIT
            // capture: the phone refused the peripheral's LL_CONNECTION_PARAM_REQ five times, each LL_REJECT_EXT_IND
            // central → peripheral; the headline said "refused by Fit").
            var refusedByCentral = false
            var refused: LLProcedure? = nil
            switch ev.kind {
            case .commandFailed(let op, let s, _)
            where procedures.contains(op) && (s == .unsupportedRemoteFeature || s == .unsupportedFeatureOrParameter):
                what = "\(op) failed with \(codeName(s))"
            case .connectionUpdateComplete(_, let s, _) where s == .unsupportedRemoteFeature:
                what = "the connection update failed with \(codeName(s))"
            case .linkLayerRejected(let sender, let procedure, let reason, let opcode):
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
                refusedByCentral = sender == .local
                refused = opcode.flatMap(LLProcedureTable.procedure(opening:))
                if unsupported, let refused, refused.isOptional, refused.lost == nil {
                    let why =
                        "\(refused.name) is optional (feature bit \(refused.featureBit ?? 0); Core Spec Vol 6, Part B, 4.6 and \(refused.section))"
                    return nothingLost(ev, e, sender: sender, procedure: procedure, why: why)
                }
                // An opcode Core does not define (a vendor's own, a fuzzer's): LL_UNKNOWN_RSP is the only answer there is.
                if unsupported, let opcode, opcode.info == nil {
                    let why = "\(hex(opcode.rawValue)) is no LL control opcode Core 5.4 defines (Vol 6, Part B, 2.4.2)"
                    return nothingLost(ev, e, sender: sender, procedure: procedure, why: why)
                }
                what =
                    "\(sender == .peer ? "the peripheral" : "the central") rejected \(procedure)\(reason.map { " (\(codeName($0)))" } ?? "")"
                if !unsupported, let done = ranAnyway(opcode, ev, e.connection(ev.connection)) {
                    return ranAnyway(ev, e, what: what, done: done)
                }
            default:
                return nil
            }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message: "With \(device), \(what) (frame \(ev.frame))"
                    + (!unsupported ? "." : refusedByCentral ? ": the central does not support it." : ": " + Self.consequence(of: refused)),
                headline: refusedByCentral
                    ? "\(device)'s procedure \(unsupported ? "unsupported" : "refused") by the central"
                    : unsupported ? "procedure unsupported by \(device)" : "procedure refused by \(device)",
                causes: unsupported
                    ? ["an older peer link layer", "a host that ignores the fallback"]
                    : refusedByCentral
                        ? ["the central does not accept the values the peripheral asked for (its platform's limits)"]
                        : ["the peer's link layer does not accept the values asked for"],
                device: c?.peerAddress, connection: c?.number, fold: "\(device) \(unsupported)")
        }
    }

    /// What an unsupported procedure costs: the parameter, length and PHY procedures have a fall-back (the HCI
    /// commands name no PDU); another procedure's loss is its table row's, and a mandatory one is the peer's fault.
    static func consequence(of refused: LLProcedure?) -> String {
        guard let refused, refused.opens != [.connectionParamReq], let lost = refused.lost else {
            return "the peer does not support it; fall back (e.g. to the L2CAP parameter update)."
        }
        let mandatory =
            refused.isOptional
            ? "" : " although every link layer must support \(refused.name) (Core Spec Vol 6, Part B, \(refused.section))"
        return "the peer does not support it\(mandatory); the link goes without \(lost)."
    }

    /// An optional procedure (a FeatureSet bit, Core Spec Vol 6, Part B, 4.6) that only tunes what its initiator can do
    /// alone, or a PDU no link layer defines, refused as unsupported: the answer the spec provides, and nothing the link
    /// needs is lost (`why` says which).
    static func nothingLost(
        _ ev: EvidenceEvent, _ e: Evidence, sender: EvidenceEvent.Sender, procedure: String, why: String
    ) -> Diagnosis {
        let c = e.connection(ev.connection)
        let device = e.deviceName(c)
        let (refuser, initiator) = sender == .peer ? ("the peripheral", "the central") : ("the central", "the peripheral")
        return Diagnosis(
            rule: Self.code, severity: .info, frame: ev.frame,
            message:
                "With \(device), \(refuser) does not support \(procedure) (frame \(ev.frame)): \(why), and \(initiator) goes on without it: nothing is lost.",
            headline: "optional procedure unsupported by \(device)",
            causes: ["a feature \(refuser)'s link layer does not have (the answer the spec provides)"],
            device: c?.peerAddress, connection: c?.number, fold: "\(device) optional")
    }
}
