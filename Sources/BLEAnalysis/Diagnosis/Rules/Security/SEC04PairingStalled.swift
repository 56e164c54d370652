import BLECore
import BLEProtocols

/// SEC-04: pairing started but neither failed nor finished: no encryption and no key distribution followed within 30 s
/// (the SMP time-out, Core Spec Vol 3, Part H, 3.4) or before the link ended.
struct SEC04PairingStalled: DiagnosisRule {
    static let id = "SEC-04"
    static let group = RuleGroup.security
    static let severity = DiagnosisSeverity.error
    static let title = "Pairing stalled"
    static let evidence =
        "SMP Pairing Request with no Pairing Failed, no successful Encryption Change and no key distribution within 30 s or before the disconnection"
    static let anchor = "none"
    static let timeout: Int64 = 30_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for (i, ev) in e.events.enumerated() {
            guard case .pairingRequest = ev.kind, let number = ev.connection else { continue }
            var settled = false
            var end: EvidenceEvent? = nil
            for next in e.events[(i + 1)...] where next.connection == number {
                switch next.kind {
                case .pairingFailed, .keysDistributed, .pairingRequest: settled = true
                case .encryptionChange(_, .success, true): settled = true
                case .disconnectionComplete, .linkTerminated: end = next
                default: break
                }
                if settled || end != nil || next.timestamp.microseconds(since: ev.timestamp) > timeout { break }
            }
            guard !settled else { continue }
            let c = e.connection(number)
            // A link that ended without a disconnection event (an air capture's access address taken by a new
            // CONNECT_IND) ended all the same: the pairing stopped there, not 30 s later.
            let closed: (frame: Int, reason: String?)? =
                end.map { ($0.frame, nil) }
                ?? c.flatMap { c in
                    guard let frame = c.endFrame, let time = c.endTime, time.microseconds(since: ev.timestamp) <= timeout else {
                        return nil
                    }
                    return (frame, c.disconnectReason)
                }
            let endTime = end?.timestamp ?? e.lastTime
            guard let endTime, closed != nil || endTime.microseconds(since: ev.timestamp) > timeout else { continue }
            let device = e.deviceName(c)
            out.append(
                Diagnosis(
                    rule: id, severity: severity, frame: closed?.frame ?? ev.frame,
                    message:
                        "Pairing with \(device) started at frame \(ev.frame) but never finished: no encryption or keys followed"
                        + (closed.map { " before the link ended (frame \($0.frame)\($0.reason.map { ": " + $0 } ?? ""))." } ?? " in 30 s."),
                    headline: "pairing with \(device) stalled", supporting: [CitedFrame(ev.frame, "Pairing Request")],
                    causes: [
                        "the user never confirmed the pairing dialog", "the peripheral waited for passkey input",
                        "the peer's SMP got stuck",
                    ],
                    device: c?.peerAddress, connection: number, foldKey: "SEC-04 \(device)"))
        }
        return out
    }
}
