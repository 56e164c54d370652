import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let insufficientSecurity = FindingCode(
        "SEC-05", layer: .security, severity: .error,
        title: "Attribute needs more security than the link has",
        explain: .init(
            meaning:
                "An attribute asked for more security (encryption or authentication) than the link had; the finding says whether pairing followed and fixed it.",
            advice: "Pair or encrypt before accessing that attribute, or lower its permission if it does not need protection."),
        fold: .never, traits: [.restsOnSetup])
}

/// SEC-05: an attribute needs more security than the link has: ATT Error 0x05 Insufficient Authentication, 0x0F
/// Insufficient Encryption or 0x08 Insufficient Authorization. A warning when pairing followed and the same request then
/// worked; an error when nothing followed, or pairing did not satisfy it and the error came back. One finding per
/// handle and code on a link, every refusal one of its occurrences.
struct SEC05InsufficientSecurity: DiagnosisRule {
    static let code = FindingCode.insufficientSecurity
    static let group = RuleGroup.security
    static let evidence =
        "ATT Error Response 0x05, 0x0F or 0x08 on a handle; whether pairing or encryption followed and whether the same error came back"
    static let anchor = "none"
    static let codes: Set<ATTErrorCode> = [.insufficientAuthentication, .insufficientEncryption, .insufficientAuthorization]

    /// The Encryption Change that encrypted the error's link before it (HCI), or on air the frame the link encrypted
    /// from, when it did.
    static func encryptedBefore(_ ev: EvidenceEvent, index i: Int, _ e: Evidence) -> CitedFrame? {
        let change = e.events[..<i].last { k in
            guard k.connection == ev.connection, case .encryptionChange(_, .success, true) = k.kind else { return false }
            return true
        }
        if let change { return CitedFrame(change.frame, "Encryption Change") }
        if let enc = e.connection(ev.connection)?.linkEncryption, enc.encryptedFrom < ev.frame {
            return CitedFrame(enc.encryptedFrom, "encrypted")
        }
        return nil
    }

    static func causes(_ error: ATTErrorCode, alreadyEncrypted: Bool) -> [String] {
        guard alreadyEncrypted else {
            return [
                "the characteristic needs a higher security level than the pairing achieved",
                "the central ignored the peripheral's Security Request", "the bond is missing",
            ]
        }
        return error == .insufficientAuthorization
            ? ["the server's application refused this client (authorization is decided above the link)"]
            : ["the bond is Just Works or its key too short for this attribute"]
    }

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        var reported = Set<String>()
        for (i, ev) in e.events.enumerated() {
            guard case .attError(let request, let handle, let error, let requestFrame, _) = ev.kind, codes.contains(error)
            else { continue }
            let key = "\(ev.connection ?? 0) \(handle) \(error.rawValue)"
            guard !reported.contains(key) else { continue }
            reported.insert(key)
            let later = e.events[(i + 1)...].filter { $0.connection == ev.connection }
            let secured = later.first { k in
                switch k.kind {
                case .encryptionChange(_, .success, true), .keysDistributed: true
                default: false
                }
            }
            let again = secured.flatMap { s in
                later.first { k in
                    guard k.frame > s.frame, case .attError(_, handle, error, _, _) = k.kind else { return false }
                    return true
                }
            }
            // Every refusal of the same handle with the same code on the link is one more occurrence of this finding.
            let repeats = later.compactMap { k -> Int? in
                guard case .attError(_, handle, error, _, _) = k.kind, k.frame != again?.frame else { return nil }
                return k.frame
            }
            let pairing = later.first { if case .pairingRequest = $0.kind { true } else { false } }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            var supporting: [CitedFrame] = []
            if let f = requestFrame { supporting.append(CitedFrame(f, "\(request)")) }
            let sentence: String
            let sev: DiagnosisSeverity
            var frame = ev.frame
            if let again, let secured {
                supporting.append(CitedFrame(ev.frame, "first \(error)"))
                supporting.append(CitedFrame(secured.frame, "the link was secured"))
                frame = again.frame
                sev = .error
                sentence =
                    "\(hex(handle, width: 4)) on \(device) needs more than the pairing gave: \(error) came back at frame \(again.frame) after the link was secured at frame \(secured.frame)"
                    + (error == .insufficientAuthentication
                        ? " (an authenticated, MITM pairing is needed; Just Works does not satisfy it)." : ".")
            } else if let secured {
                sev = .info
                supporting.append(CitedFrame(secured.frame, "the link was secured"))
                sentence =
                    "\(request) on \(hex(handle, width: 4)) was refused with \(error) (frame \(ev.frame)) until the link was secured at frame \(secured.frame)."
            } else if let before = encryptedBefore(ev, index: i, e) {
                // The link was already encrypted: no pairing can add what is missing (issue 35 point 3).
                sev = .error
                supporting.append(CitedFrame(before.frame, "the link was already encrypted"))
                sentence =
                    "\(request) on \(hex(handle, width: 4)) was refused with \(error) (frame \(ev.frame)) although the link was already encrypted (frame \(before.frame)): "
                    + (error == .insufficientAuthorization
                        ? "authorization is the server application's decision (a permission or a user prompt), not a pairing."
                        : "the existing keys are not strong enough (an authenticated, MITM pairing or a longer key is needed).")
            } else {
                sev = .error
                sentence =
                    "\(request) on \(hex(handle, width: 4)) was refused with \(error) (frame \(ev.frame)), and "
                    + (pairing.map { "the pairing started at frame \($0.frame) never secured the link." }
                        ?? "no pairing or encryption followed.")
            }
            var d = Diagnosis(
                rule: Self.code, severity: sev, frame: frame, message: sentence,
                headline: "\(hex(handle, width: 4)) on \(device) refused: \(error)", supporting: supporting,
                causes: causes(error, alreadyEncrypted: supporting.contains { $0.text == "the link was already encrypted" }),
                device: c?.peerAddress, connection: c?.number)
            d.occurrences += repeats
            out.append(d)
        }
        return out
    }
}
