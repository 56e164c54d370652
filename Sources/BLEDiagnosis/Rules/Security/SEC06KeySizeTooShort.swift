import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let keySizeTooShort = FindingCode(
        "SEC-06", layer: .security, severity: .error,
        title: "Encryption key size too short",
        explain: .init(
            meaning: "The key negotiated is shorter than the attribute or the peer accepts.",
            advice: "Negotiate a 16-byte key (set the maximum key size in the pairing request)."),
        fold: .device, traits: .weakness)
}

/// SEC-06: the encryption key is too short for what was asked: ATT Error 0x0C Encryption Key Size Too Short, or SMP
/// Pairing Failed 0x06 Encryption Key Size.
struct SEC06KeySizeTooShort: DiagnosisRule {
    static let code = FindingCode.keySizeTooShort
    static let group = RuleGroup.security
    static let evidence = "ATT Error Response 0x0C; SMP Pairing Failed 0x06"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let what: String
            switch ev.kind {
            case .attError(let request, let handle, let error, _, _) where error == .encryptionKeySizeTooShort:
                what = "\(request) on \(hex(handle, width: 4)) was refused: the encryption key is too short"
            case .pairingFailed(_, let reason) where reason == .encryptionKeySize:
                what = "pairing failed: the encryption key size offered is too short"
            default:
                return nil
            }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame, message: "With \(device), \(what) (frame \(ev.frame)).",
                headline: "key size too short with \(device)",
                causes: ["the peer offers a reduced key size", "a key-size policy (KNOB hardening)"],
                device: c?.peerAddress, connection: c?.number, fold: "\(device)")
        }
    }
}
