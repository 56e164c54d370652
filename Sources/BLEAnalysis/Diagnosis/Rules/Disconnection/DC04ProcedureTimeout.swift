import BLECore
import BLEProtocols

/// DC-04: an LL procedure timed out (0x22, LL Response Timeout: no answer in 40 s, Core Spec Vol 6, Part B, 5.2). On
/// the same side, the usual cause is a request event the host never answered: an LE Long Term Key Request or a Remote
/// Connection Parameter Request with no reply command.
struct DC04ProcedureTimeout: DiagnosisRule {
    static let id = "DC-04"
    static let group = RuleGroup.disconnection
    static let severity = DiagnosisSeverity.critical
    static let title = "Link-layer procedure timed out"
    static let evidence =
        "Disconnection Complete 0x22; an LE Long Term Key Request or Remote Connection Parameter Request event with no reply command before it"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.disconnections.filter { $0.reason.rawValue == 0x22 }.map { d in
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
            if let u = unanswered {
                let what =
                    if case .longTermKeyRequest = u.kind { "LE Long Term Key Request" } else { "Remote Connection Parameter Request" }
                sentence += ": the host never answered the \(what) at frame \(u.frame)."
                supporting.append(CitedFrame(u.frame, "\(what), never answered"))
            } else {
                sentence += "; the capture does not show which procedure (an air capture would)."
            }
            return Diagnosis(
                rule: id, severity: severity, frame: d.frame, message: sentence,
                headline: "link-layer procedure with \(device) timed out (0x22)", supporting: supporting,
                causes: [
                    "the host did not answer an LTK or parameter request (event masked, or a host bug)",
                    "the peer's link layer ignored a procedure it should refuse with LL_UNKNOWN_RSP",
                ],
                device: c?.peerAddress, connection: c?.number, foldKey: "DC-04 \(device)")
        }
    }
}
