import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let procedureTimeout = FindingCode(
        "DC-04", layer: .link, severity: .critical,
        title: "Link-layer procedure timed out",
        explain: .init(
            meaning:
                "A link-layer procedure (encryption start, parameter request) was not answered within 40 s, so the link was dropped (0x22).",
            advice:
                "The host did not reply to the controller's request (often a missing LTK reply): check the host stack's handling of that event."
        ),
        fold: .device)
}

/// DC-04: an LL procedure timed out (0x22, LL Response Timeout: no answer in 40 s, Core Spec Vol 6, Part B, 5.2). On
/// the same side, the usual cause is a request event the host never answered: an LE Long Term Key Request or a Remote
/// Connection Parameter Request with no reply command. After this side's own HCI Disconnect, the procedure is the
/// termination the peer never acknowledged (info: the link was being closed).
struct DC04ProcedureTimeout: DiagnosisRule {
    static let code = FindingCode.procedureTimeout
    static let group = RuleGroup.disconnection
    static let evidence =
        "Disconnection Complete 0x22; an LE Long Term Key Request or Remote Connection Parameter Request event with no reply command before it"
    static let anchor = "none"

    /// How long after this side's Disconnect a 0x22 is the termination timing out (the LL response timeout is 40 s).
    static let terminationWindow: Int64 = 45_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.disconnections.filter { $0.reason == .llResponseTimeout }.map { d in
            let c = d.connection
            let device = e.deviceName(c)
            let start = c.map { $0.startFrame } ?? 0
            let mine = e.events(of: d.event.connection, from: start, to: d.frame)
            var unanswered: EvidenceEvent? = nil
            for (i, ev) in mine.enumerated() {
                switch ev.kind {
                case .longTermKeyRequest:
                    let replied = mine[(i + 1)...].contains {
                        if case .longTermKeyReply = $0.kind { return true }
                        if case .longTermKeyNegativeReply = $0.kind { return true }
                        return false
                    }
                    if !replied { unanswered = ev }
                case .remoteParameterRequest:
                    let replied = mine[(i + 1)...].contains {
                        if case .remoteParameterNegativeReply = $0.kind { return true }
                        if case .connectionUpdateComplete = $0.kind { return true }
                        return false
                    }
                    if !replied { unanswered = ev }
                default: break
                }
            }
            var sentence = "A link-layer procedure with \(device) timed out (0x22 LL Response Timeout) at frame \(d.frame)"
            var supporting: [CitedFrame] = []
            // This side's own HCI Disconnect before it: the procedure that timed out is the termination itself — the
            // controller sent LL_TERMINATE_IND and the peer never acknowledged it (Core Spec Vol 6, Part B, 5.1.3). The
            // link was being closed anyway: context, not a failure.
            if let asked = d.localCommand, unanswered == nil,
                d.event.timestamp.microseconds(since: asked.timestamp) <= terminationWindow
            {
                return Diagnosis(
                    rule: Self.code, severity: .info, frame: d.frame,
                    message:
                        sentence
                        + ": this side asked to disconnect at frame \(asked.frame) (HCI Disconnect) and the peer never acknowledged the termination (LL_TERMINATE_IND), so the controller ended the link when its response timer ran out.",
                    headline: "the peer never acknowledged the termination (0x22)",
                    supporting: [CitedFrame(asked.frame, "HCI Disconnect by this side")],
                    causes: [
                        "the peer was already gone (out of range, powered off, reset)", "the peer's link layer ignored LL_TERMINATE_IND",
                    ],
                    device: c?.peerAddress, connection: c?.number, fold: "terminate \(device)")
            }
            if let u = unanswered {
                let what =
                    if case .longTermKeyRequest = u.kind { "LE Long Term Key Request" } else { "Remote Connection Parameter Request" }
                sentence += ": the host never answered the \(what) at frame \(u.frame)."
                supporting.append(CitedFrame(u.frame, "\(what), never answered"))
            } else {
                sentence += "; the capture does not show which procedure (an air capture would)."
            }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: d.frame, message: sentence,
                headline: "link-layer procedure with \(device) timed out (0x22)", supporting: supporting,
                causes: [
                    "the host did not answer an LTK or parameter request (event masked, or a host bug)",
                    "the peer's link layer ignored a procedure it should refuse with LL_UNKNOWN_RSP",
                ],
                device: c?.peerAddress, connection: c?.number, fold: "\(device)")
        }
    }
}
