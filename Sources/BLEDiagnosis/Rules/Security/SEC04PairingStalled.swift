import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let pairingStalled = FindingCode(
        "SEC-04", layer: .security, severity: .error,
        title: "Pairing stalled",
        explain: .init(
            meaning:
                "Pairing started but neither finished nor failed: one side stopped answering (a prompt nobody accepted, a stack waiting for the user).",
            advice: "Check for a pairing dialog on the phone and for the peer's handling of the pairing request."),
        fold: .device, traits: [.restsOnSetup, .claimsAbsence])
}

/// SEC-04: pairing started but neither failed nor finished: no encryption and no key distribution followed within 30 s
/// (the SMP time-out, Core Spec Vol 3, Part H, 3.4) or before the link ended.
struct SEC04PairingStalled: DiagnosisRule {
    static let code = FindingCode.pairingStalled
    static let group = RuleGroup.security
    static let evidence =
        "SMP Pairing Request with no Pairing Failed, no successful Encryption Change and no key distribution within 30 s or before the disconnection"
    static let anchor = "none"
    static let timeout: Int64 = 30_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        // A Pairing Request sent again before any answer is the same attempt asked again: judged from its last request,
        // told from its first.
        for attempt in PairingAttempt.all(e.events, include: { $0 != nil }) {
            guard let number = attempt.connection else { continue }
            let first = e.events[attempt.firstEvent], last = e.events[attempt.lastEvent]
            var settled = false
            var end: EvidenceEvent? = nil
            for next in e.events[(attempt.lastEvent + 1)...] where next.connection == number {
                switch next.kind {
                case .pairingFailed, .keysDistributed, .pairingRequest: settled = true
                case .encryptionChange(_, .success, true): settled = true
                case .disconnectionComplete, .linkTerminated: end = next
                default: break
                }
                if settled || end != nil || next.timestamp.microseconds(since: last.timestamp) > timeout { break }
            }
            guard !settled else { continue }
            let c = e.connection(number)
            // A link that ended without a disconnection event (an air capture's access address taken by a new
            // CONNECT_IND) ended all the same: the pairing stopped there, not 30 s later.
            let closed: (frame: Int, reason: String?)? =
                end.map { ($0.frame, nil) }
                ?? c.flatMap { c in
                    guard let frame = c.endFrame, let time = c.endTime, time.microseconds(since: last.timestamp) <= timeout else {
                        return nil
                    }
                    return (frame, c.disconnectReason)
                }
            let endTime = end?.timestamp ?? e.lastTime
            guard let endTime, closed != nil || endTime.microseconds(since: last.timestamp) > timeout else { continue }
            out.append(finding(e, attempt, first: first, closed: closed, connection: c))
        }
        return out
    }

    /// Unanswered: no Pairing Response ever came (the peer ignored SMP); answered: the pairing stopped after it.
    static func finding(
        _ e: Evidence, _ attempt: PairingAttempt, first: EvidenceEvent, closed: (frame: Int, reason: String?)?, connection c: Connection?
    ) -> Diagnosis {
        let device = e.deviceName(c)
        // The side that ended the link mid-pairing walked away: said, and its likely cause first (the Blue2thprinting
        // cafe capture's central ended the link 1.7 ms after the peripheral's Pairing Response).
        let ender = c?.lifecycle.ending.flatMap { $0.endedBy == .local && $0.frame == closed?.frame ? e.thisSide : nil }
        let ending =
            closed.map {
                " before \(ender ?? "the link") ended \(ender == nil ? "" : "the link ")(frame \($0.frame)\($0.reason.map { ": " + $0 } ?? ""))."
            }
            ?? " in 30 s."
        let walkedAway = ender.map { ["\($0) ended the link during the pairing (its app or stack gave up)"] } ?? []
        let n = attempt.requests.count
        let message =
            attempt.answered
            ? "Pairing with \(device) started at frame \(first.frame) but never finished: no encryption or keys followed" + ending
            : "Pairing with \(device) was asked \(n == 1 ? "once" : "\(n) times") from frame \(first.frame)"
                + (n > 1 ? " (\(Story.list(attempt.requests)))" : "") + " and never answered: no Pairing Response or Pairing Failed"
                + ending
        return Diagnosis(
            rule: Self.code, severity: severity, frame: closed?.frame ?? first.frame, message: message,
            headline: attempt.answered ? "pairing with \(device) stalled" : "pairing with \(device) never answered",
            supporting: attempt.requests.prefix(6).map { CitedFrame($0, "Pairing Request") },
            causes: walkedAway
                + (attempt.answered
                    ? [
                        "the user never confirmed the pairing dialog", "the peripheral waited for passkey input",
                        "the peer's SMP got stuck",
                    ]
                    : [
                        "the peer does not answer SMP (no pairing support, or it waits for its own application)",
                        "the peer's SMP got stuck",
                    ] + (e.isAirCapture ? ["the sniffer missed its answers"] : [])),
            device: c?.peerAddress, connection: c?.number, fold: "\(device)")
    }
}
