import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let legacyPairingCrackable = FindingCode(
        "SEC-10", layer: .security, severity: .warning,
        title: "Legacy pairing: keys recoverable from the capture",
        explain: .init(
            meaning:
                "The devices paired with LE legacy pairing (Just Works or a 6-digit passkey) or a BR/EDR PIN: whoever captured the pairing over the air computes its keys offline (crackle does it in a second), then decrypts every session that uses them.",
            advice: "Enable LE Secure Connections on both sides (the SC flag) and, for BR/EDR, Secure Simple Pairing; then pair again."),
        fold: .device, traits: .weakness)
}

/// SEC-10: LE legacy pairing with Just Works or Passkey Entry, or BR/EDR legacy PIN pairing: anyone who captured the
/// pairing can compute its keys offline (the TK is 0 or one of 10^6 passkeys, Core Spec Vol 3, Part H, 2.3.5.2–3; a
/// PIN is short), then decrypt every session that uses them. Says when blescope itself recovered the key from this
/// capture. LE Secure Connections, and legacy OOB with a secret TK, are not passively crackable.
struct SEC10LegacyPairingCrackable: DiagnosisRule {
    static let code = FindingCode.legacyPairingCrackable
    static let group = RuleGroup.security
    static let evidence = "Pairing Request/Response without the SC flag on both sides, Just Works or Passkey Entry; BR/EDR PIN Code Request"
    static let anchor = "crackle"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.compactMap { c, record in
            guard
                let p = record.pairings.first(where: { p in
                    (p.procedure == .leLegacy && (p.model == .justWorks || p.model == .passkeyEntry)) || p.procedure == .legacyPIN
                })
            else { return nil }
            let device = e.deviceName(c)
            let recovered = c.linkEncryption?.key.flatMap { k -> String? in
                switch k.source {
                case .legacyPairing(let passkey, _), .legacyPairingMIC(let passkey, _, _, _, _):
                    passkey == 0 ? "TK 0" : "passkey \(String(passkey).leftPadded(to: 6, with: "0"))"
                default: nil
                }
            }
            let how =
                p.procedure == .legacyPIN
                ? "BR/EDR legacy PIN pairing: the link key follows from the PIN and the pairing's random values, and short PINs are tried in seconds"
                : p.model == .justWorks
                    ? "LE legacy Just Works pairing: its TK is 0, so anyone who captured the pairing computes the STK and every key it distributes"
                    : "LE legacy Passkey Entry: its TK is one of a million passkeys, tried in about a second against the Pairing Confirm"
            let said =
                recovered.map { " blescope recovered it from this capture (\($0)) and decrypted the link." }
                ?? (e.isAirCapture ? "" : " An air capture of this pairing is all an eavesdropper needs.")
            var supporting: [CitedFrame] = []
            if let r = p.responseFrame { supporting.append(CitedFrame(r, "Pairing Response")) }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: p.frame,
                message: "\(e.linkName(c).capitalizedFirst) paired with \(how).\(said)",
                headline: "legacy pairing with \(device)\(recovered == nil ? "" : ": key recovered")", supporting: supporting,
                causes: Self.causes(e, p),
                device: c.peerAddress, connection: c.number, fold: "\(device)")
        }
    }

    /// Why the pairing ran legacy, from what the pairing itself shows: on LE the sides whose Pairing Request or Response
    /// did not set the SC flag (both frames cited); on BR/EDR a legacy PIN pairing means a side without Secure Simple
    /// Pairing.
    static func causes(_ e: Evidence, _ p: SecurityPairing) -> [String] {
        guard p.procedure == .leLegacy, let response = p.responseFrame else {
            return p.procedure == .legacyPIN
                ? ["a side without Secure Simple Pairing (Simple Pairing Mode off, or a BR/EDR 2.0 device): the controller asked for a PIN"]
                : ["a side without LE Secure Connections (SC flag) support or with it turned off"]
        }
        let initiator = p.initiator ?? .local
        let responder: EvidenceEvent.Sender = initiator == .local ? .peer : .local
        let unset = [(initiator, "Pairing Request, frame \(p.frame)"), (responder, "Pairing Response, frame \(response)")]
            .filter { !p.secureConnectionsAskedBy.contains($0.0) }
        let who = unset.map { "\(e.side($0.0)) (\($0.1))" }
        return switch who.count {
        case 2: ["neither side set the Secure Connections flag: \(who[0]) and \(who[1])"]
        case 1:
            [
                "\(who[0].capitalizedFirst) did not set the Secure Connections flag: without LE Secure Connections support or with it turned off"
            ]
        default: ["a side without LE Secure Connections (SC flag) support or with it turned off"]
        }
    }
}
