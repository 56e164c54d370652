import BLECore
import BLEProtocols

/// SEC-01: this side (central) started encryption with its stored key and the peripheral no longer had the bond:
/// Encryption Change 0x06 PIN or Key Missing (or 0x05 Authentication Failure).
struct SEC01BondLostOnPeripheral: DiagnosisRule {
    static let id = "SEC-01"
    static let group = RuleGroup.security
    static let severity = DiagnosisSeverity.critical
    static let title = "The peripheral lost the bond"
    static let evidence = "LE Enable Encryption (0x2019), then Encryption Change (0x08 or v2 0x59) with status 0x06 or 0x05"
    static let anchor = "hcidoc (LongTermKeyMismatch, no cause text)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        var started: [UInt16: EvidenceEvent] = [:]
        for ev in e.events {
            switch ev.kind {
            case .encryptionStart(let h):
                started[h] = ev
            case .encryptionChange(let h, let status, _) where status.rawValue == 0x06 || status.rawValue == 0x05:
                let c = e.connection(ev.connection)
                let device = e.deviceName(c)
                let start = started[h]
                out.append(
                    Diagnosis(
                        rule: id, severity: severity, frame: ev.frame,
                        message:
                            "\(device) no longer has the bond: encryption with the stored key failed (\(codeName(status)) at frame \(ev.frame)). Remove the pairing on the phone and pair again.",
                        headline: "\(device) lost the bond (encryption \(hex(status.rawValue)))",
                        supporting: start.map { [CitedFrame($0.frame, "LE Enable Encryption with the stored key")] } ?? [],
                        causes: [
                            "the peripheral was factory reset or wiped its bonds", "its bond slots were full",
                            "it was paired again with another phone",
                        ],
                        device: c?.peerAddress, connection: c?.number, foldKey: "SEC-01 \(device)"))
                started[h] = nil
            case .encryptionChange(let h, _, _):
                started[h] = nil
            default:
                break
            }
        }
        return out
    }
}
