import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let connectionFailed = FindingCode(
        "BR-02", layer: .classic, severity: .warning,
        title: "A BR/EDR connection failed",
        explain: .init(
            meaning:
                "A Classic (BR/EDR) connection attempt failed for a reason other than a page timeout: the status code says which (authentication, a limit reached, refused by the peer, cancelled by this side).",
            advice:
                "Read the status: 0x05/0x06 point at the bond (see BR-04), 0x0D–0x0F at the peer refusing, 0x16 at this side cancelling."),
        fold: .device)
}

/// BR-02: a BR/EDR connection failed for another reason than a page timeout (BR-01): Connection Complete with an error
/// status, folded per device and status.
struct BR02ConnectionFailed: DiagnosisRule {
    static let code = FindingCode.connectionFailed
    static let group = RuleGroup.classic
    static let evidence =
        "Connection Complete (0x03) with status ≠ 0 and ≠ 0x04 (0x05/0x06 authentication, 0x08 timeout, 0x09 limit, 0x0B exists, 0x0D–0x0F refused, 0x16 cancelled, 0x1A unsupported, 0x22 LMP timeout); info when the link to the same peer comes up within 2 s (with 0x3A or 0x0B, a page collision)"
    static let anchor = "hcidoc (\"ConnectionComplete error S for addr\")"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .classicConnectionComplete(_, let status, let peer, let linkType) = ev.kind, status != .success,
                status != .pageTimeout
            else { return nil }
            let link = linkType == 0 ? "SCO" : "ACL"
            let page = e.last(before: ev.frame) { if case .pageRequested(peer) = $0.kind { true } else { false } }
            // Cancelled by this side (0x02 after Create Connection Cancel, 0x16): asked for, not a failure.
            let cancelled = status == .connectionTerminatedByLocalHost || status == .unknownConnectionIdentifier
            var supporting = page.map { [CitedFrame($0.frame, "Create Connection to \(peer)")] } ?? []
            var cause = classicConnectionFailureCause(status)
            if status == .authenticationFailure, let pin = pinPairing(with: peer, before: ev.frame, after: page?.frame ?? 0, e) {
                // The controller asked for a PIN during this attempt: the legacy pairing failed, not a stored key.
                cause = "the legacy PIN pairing (PIN Code Request at frame \(pin)) failed: the PINs on the two sides did not match"
                supporting.append(CitedFrame(pin, "PIN Code Request"))
            }
            // The link to the same peer up within 2 s: the failed attempt cost nothing. With Controller Busy or
            // Connection Already Exists, the two sides paged each other at once (the blueprobe midlog: 0x3A at 6063,
            // the buds' Connection Request at 6066, their link up at 6070).
            let up = e.events.first { x in
                guard x.frame > ev.frame, x.timestamp.microseconds(since: ev.timestamp) <= 2_000_000,
                    case .classicConnectionComplete(_, .success, peer, _) = x.kind
                else { return false }
                return true
            }
            if let up {
                let collision = status == .controllerBusy || status == .connectionAlreadyExists
                cause =
                    (collision ? "a page collision: the peer was connecting to this side at the same moment" : cause)
                    + "; the link to it came up at frame \(up.frame)"
                supporting.append(CitedFrame(up.frame, "Connection Complete: success"))
            }
            return Diagnosis(
                rule: Self.code, severity: cancelled || up != nil ? .info : severity, frame: ev.frame,
                message: "The BR/EDR \(link) connection with \(peer) failed (\(codeName(status)) at frame \(ev.frame)): \(cause).",
                headline: "BR/EDR connection with \(peer) failed (\(hex(status.rawValue)))",
                supporting: supporting, causes: [cause], device: peer, fold: "\(peer) \(status.rawValue)")
        }
    }

    /// The PIN Code Request for `peer` during the attempt (after its page, before its failure), when no stored key
    /// was asked for after it (Link Key Request: the key, not the PIN, decided).
    static func pinPairing(with peer: String, before frame: Int, after start: Int, _ e: Evidence) -> Int? {
        var pin: Int?
        for ev in e.events where ev.frame > start && ev.frame < frame {
            switch ev.kind {
            case .pinCodeRequest(peer): pin = ev.frame
            case .linkKeyRequest(peer): pin = nil
            default: break
            }
        }
        return pin
    }
}
