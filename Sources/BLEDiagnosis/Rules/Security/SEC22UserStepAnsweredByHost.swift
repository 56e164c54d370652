import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let userStepAnsweredByHost = FindingCode(
        "SEC-22", layer: .security, severity: .warning,
        title: "MITM protection claimed, no user answered",
        explain: .init(
            meaning:
                "The IO capabilities made the pairing Numeric Comparison (or Passkey Entry typed on this side), so the link key is marked authenticated. But this side's host answered the user step within a second of the controller's request: no person compares six digits or types a passkey that fast. A host that confirms every number would confirm a man in the middle's too, so on this side the authenticated key proves nothing about who is at the other end. Inferred from the time: the log shows when the answer came, not who gave it.",
            advice:
                "Let a user answer: show the number and wait for yes or no (or ask for the passkey). A device with no one to ask should declare the IO capabilities it has (NoInputNoOutput): the key is then honestly unauthenticated, and services that need MITM protection refuse it."
        ),
        fold: .device, traits: .weakness)
}

/// SEC-22: a Secure Simple Pairing whose user step claims MITM protection was answered by this side's host, not a
/// person: the model is Numeric Comparison (both sides DisplayYesNo or KeyboardDisplay, MITM asked: Core Spec Vol 3,
/// Part C, 5.2.2.6, Table 5.7; Vol 2, Part H, 7.2.1, the user compares the six digits both devices show) and this
/// side's User Confirmation Request Reply came under a second after the User Confirmation Request (Vol 4, Part E,
/// 7.7.42, 7.1.30), or Passkey Entry typed on this side with the User Passkey Request Reply as fast (a passkey the host
/// knew: fixed or stored). The link key is authenticated (7.7.24) though no one on this side checked. Inferred from the
/// time alone, which the finding says. The car kit's auto-confirm (Marvell, 6.6 ms) and BTstack's auto-accept (83 µs,
/// 6 ms) are the corpus's; the Windows laptop's user took 1.6 s and the moto g04s's 23.2 s (quiet). Quiet for Just Works
/// (no MITM claimed; SEC-13 tells an unmet MITM request), a rejection, a pairing that did not complete. LE's user steps
/// stay in the host's SMP and are not in HCI: cannot tell.
struct SEC22UserStepAnsweredByHost: DiagnosisRule {
    static let code = FindingCode.userStepAnsweredByHost
    static let group = RuleGroup.security
    static let evidence =
        "IO Capability exchange (the model), User Confirmation / Passkey Request and this side's Reply (the time between), Link Key Notification"
    static let anchor = "Core Spec Vol 3, Part C, 5.2.2.6; Vol 2, Part H, 7.2.1"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.flatMap { c, record in
            record.pairings.compactMap { p -> Diagnosis? in
                guard let a = p.userAnswer, a.accepted, a.answeredByHost, p.authenticated != false,
                    case .completed(let done) = p.outcome, let step = claimedStep(p)
                else { return nil }
                let io = p.ioCapabilities.count == 2 ? " (IO capabilities \(p.ioCapabilities[0]) and \(p.ioCapabilities[1]))" : ""
                let key = p.linkKeyType.map { "an \($0)" } ?? "a key its model marks authenticated"
                return Diagnosis(
                    rule: Self.code, severity: severity, frame: a.frame,
                    message:
                        "\(e.linkName(c).capitalizedFirst): the pairing at frame \(p.frame) ran \(p.methodText)\(io), and \(e.thisSide)'s host \(a.verb) \(quickly(a.microseconds)) after the controller asked (\(step.request) at frame \(a.requestFrame), Reply at frame \(a.frame)): no person \(step.person) that fast (inferred from the time). The link key made at frame \(done) is \(key): marked MITM-protected, yet \(e.thisSide) \(step.consequence).",
                    headline: "\(p.model?.rawValue ?? "user step") answered by the host with \(e.deviceName(c))",
                    supporting: [
                        CitedFrame(p.frame, "pairing started"), CitedFrame(a.requestFrame, step.request),
                        CitedFrame(done, "link key made"),
                    ],
                    causes: [
                        "this side's host accepts every \(step.what) (a car kit's or a test tool's auto-accept)",
                        "a device that declares \(p.ioCapabilities.first ?? "DisplayYesNo") with no user to answer",
                    ],
                    device: c.peerAddress, connection: c.number, fold: "\(e.deviceName(c))")
            }
        }
    }

    /// `390 µs`, `7 ms`: a host's answer is often under a millisecond, which `duration` would round to 0.
    private static func quickly(_ microseconds: Int64) -> String {
        microseconds < 1000 ? "\(microseconds) µs" : BLEAnalysis.duration(microseconds)
    }

    /// The user step the model claims, in the finding's words; nil where the model claims none of this side's user.
    private static func claimedStep(_ p: SecurityPairing) -> (request: String, person: String, consequence: String, what: String)? {
        switch p.model {
        case .numericComparison where p.userAnswer?.verb == "confirmed":
            ("User Confirmation Request", "compares six digits", "would have confirmed any number, a man in the middle's too", "number")
        case .passkeyEntry where p.userAnswer?.verb == "typed the passkey" && p.passkey != .shownBy(.local):
            (
                "User Passkey Request", "reads and types a passkey",
                "typed a passkey its host already held (fixed or stored): whoever knows it passes, a man in the middle too",
                "passkey it is asked for"
            )
        default: nil
        }
    }
}
