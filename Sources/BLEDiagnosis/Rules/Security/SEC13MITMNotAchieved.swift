import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let mitmNotAchieved = FindingCode(
        "SEC-13", layer: .security, severity: .warning,
        title: "MITM protection asked for, not achieved",
        explain: .init(
            meaning:
                "A side asked for protection against a man in the middle, but the IO capabilities left Just Works, so the keys are unauthenticated: nothing proved who was at the other end.",
            advice:
                "Give the device a way to confirm (a display and a button, or a keyboard), or use OOB; a responder that requires MITM should refuse Just Works (Pairing Failed: Authentication Requirements)."
        ),
        fold: .device, traits: .weakness)
}

/// SEC-13: a side asked for MITM protection and the pairing completed without it: the IO capabilities left Just Works
/// (Core Spec Vol 3, Part H, 2.3.5.1: the responder should then fail with Authentication Requirements), or BR/EDR made
/// an unauthenticated link key (Vol 4, Part E, 7.7.24). The keys work, but nothing proves who is at the other end.
/// A warning where the data needed it (an ATT Insufficient Authentication after the pairing); otherwise context
/// (info): phones set the MITM flag on every pairing, and a device without IO ends in Just Works by design.
struct SEC13MITMNotAchieved: DiagnosisRule {
    static let code = FindingCode.mitmNotAchieved
    static let group = RuleGroup.security
    static let evidence = "AuthReq MITM (SMP) or Authentication_Requirements (IO Capability exchange), the model, the link key type"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.compactMap { c, record in
            guard let p = record.pairings.first(where: { $0.mitmRequested && $0.completed && $0.authenticated == false }),
                case .completed(let done) = p.outcome
            else { return nil }
            let device = e.deviceName(c)
            let needed = e.events.first { ev in
                guard ev.connection == c.number, ev.frame > done, case .attError(_, _, let error, _, _) = ev.kind else { return false }
                return error == .insufficientAuthentication
            }
            let io = p.ioCapabilities.count == 2 ? " (IO capabilities \(p.ioCapabilities[0]) and \(p.ioCapabilities[1]))" : ""
            let result = p.linkKeyType.map { "an \($0)" } ?? "unauthenticated keys"
            var supporting = [CitedFrame(p.frame, "pairing started"), CitedFrame(done, "completed")]
            if let needed { supporting.append(CitedFrame(needed.frame, "Insufficient Authentication")) }
            return Diagnosis(
                rule: Self.code, severity: needed == nil ? .info : severity, frame: p.responseFrame ?? p.frame,
                message:
                    "\(e.linkName(c).capitalizedFirst): \(e.mitmAskers(p.mitmAskedBy)) asked for MITM protection, yet the pairing ran \(p.methodText)\(io) and completed at frame \(done) with \(result): nothing authenticated the peer"
                    + (needed.map { "; the data needed it: Insufficient Authentication at frame \($0.frame)." } ?? "."),
                headline: "MITM asked, \(p.model?.rawValue ?? "unauthenticated") pairing with \(device)",
                supporting: supporting,
                causes: [
                    "a side without a display or keyboard (NoInputNoOutput)", "the responder accepts Just Works despite the MITM flag",
                ],
                device: c.peerAddress, connection: c.number, fold: "\(device)")
        }
    }
}
