import BLECore
import BLEProtocols

/// SEC-03: pairing failed: SMP Pairing Failed with its reason and who sent it (Core Spec Vol 3, Part H, 3.5.5).
struct SEC03PairingFailed: DiagnosisRule {
    static let id = "SEC-03"
    static let group = RuleGroup.security
    static let severity = DiagnosisSeverity.critical
    static let title = "Pairing failed"
    static let evidence = "SMP Pairing Failed (0x05) with its reason; who sent it"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .pairingFailed(let sender, let reason) = ev.kind else { return nil }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            let who = sender == .peer ? device : (e.isAirCapture ? "the central" : "this side")
            let start = e.last(before: ev.frame) { p in
                guard p.connection == ev.connection, case .pairingRequest = p.kind else { return false }
                return true
            }
            return Diagnosis(
                rule: id, severity: severity, frame: ev.frame,
                message:
                    "Pairing with \(device) failed: \(who) sent Pairing Failed \"\(reason)\" (\(hex(reason.rawValue))) at frame \(ev.frame). \(meaning(reason))",
                headline: "pairing with \(device) failed (\(reason))",
                supporting: start.map { [CitedFrame($0.frame, "Pairing Request")] } ?? [], causes: causes(reason), device: c?.peerAddress,
                connection: c?.number, foldKey: "SEC-03 \(device) \(reason.rawValue)")
        }
    }

    static func meaning(_ r: SMPPairingFailedReason) -> String {
        switch r.rawValue {
        case 0x01, 0x04, 0x0B, 0x0C: "The passkey or the confirmation did not match."
        case 0x03: "It demands MITM protection or Secure Connections the IO capabilities cannot give."
        case 0x05: "Pairing is not supported or disabled on that side."
        case 0x06: "The encryption key size offered is too short."
        case 0x09: "Too many attempts: the peer throttles pairing."
        default: ""
        }
    }

    static func causes(_ r: SMPPairingFailedReason) -> [String] {
        switch r.rawValue {
        case 0x01, 0x04, 0x0B, 0x0C: ["a wrong passkey, or the user cancelled the dialog"]
        case 0x03: ["an IO-capability mismatch", "Secure-Connections-only on one side and legacy on the other"]
        case 0x09: ["retry throttling after earlier failures"]
        case 0x05: ["pairing disabled on the peer"]
        default: ["an IO-capability or security-policy mismatch", "the user rejected or cancelled pairing"]
        }
    }
}
