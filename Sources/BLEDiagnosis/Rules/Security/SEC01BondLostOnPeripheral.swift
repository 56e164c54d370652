import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let bondLostOnPeripheral = FindingCode(
        "SEC-01", layer: .security, severity: .critical,
        title: "The peripheral lost the bond",
        explain: .init(
            meaning:
                "The central tried to encrypt with its stored key and the peripheral said it has no such key: the peripheral forgot the bond (reset, reflashed, or paired with another phone).",
            advice: "Remove the device from the phone's Bluetooth settings and pair again; firmware should keep bonds across updates."),
        fold: .device)
}

/// SEC-01: this side (central) started encryption with its stored key and the peripheral no longer had the bond:
/// Encryption Change 0x06 PIN or Key Missing (or 0x05 Authentication Failure); on an air capture, the peripheral's
/// LL_REJECT_EXT_IND (LL_ENC_REQ) or LL_REJECT_IND with 0x06 (or 0x05). When this side is the peripheral (it was asked for the
/// key: LE Long Term Key Request), the failure is its own missing key, SEC-02's.
struct SEC01BondLostOnPeripheral: DiagnosisRule {
    static let code = FindingCode.bondLostOnPeripheral
    static let group = RuleGroup.security
    static let evidence =
        "LE Enable Encryption (0x2019), then Encryption Change (0x08 or v2 0x59) with status 0x06 or 0x05, this side central; air: LL_REJECT_EXT_IND (LL_ENC_REQ) or LL_REJECT_IND 0x06/0x05 from the peripheral"
    static let anchor = "hcidoc (LongTermKeyMismatch, no cause text)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        var started: [UInt16: EvidenceEvent] = [:]
        var askedForKey = Set<Int>()  // connections on which this side, the peripheral, was asked for the key
        for ev in e.events {
            switch ev.kind {
            case .encryptionStart(let h):
                started[h] = ev
            case .longTermKeyRequest:
                if let n = ev.connection { askedForKey.insert(n) }
            case .linkLayerRejected(let sender, let procedure, let reason?, _)
            where isKeyMissing(sender: sender, procedure: procedure, reason: reason):
                let c = e.connection(ev.connection)
                let device = e.deviceName(c)
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame,
                        message:
                            "\(device) no longer has the bond: the peripheral refused to encrypt with the stored key (\(codeName(reason)) at frame \(ev.frame)). Remove the pairing on the central and pair again.",
                        headline: "\(device) lost the bond (encryption \(hex(reason.rawValue)))", causes: causes, device: c?.peerAddress,
                        connection: c?.number, fold: "\(device)"))
            case .encryptionChange(let h, let status, _)
            where (status == .pinOrKeyMissing || status == .authenticationFailure) && !isPeripheral(ev.connection, askedForKey, e):
                let c = e.connection(ev.connection)
                let device = e.deviceName(c)
                let start = started[h]
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame,
                        message:
                            "\(device) no longer has the bond: encryption with the stored key failed (\(codeName(status)) at frame \(ev.frame)). Remove the pairing on the phone and pair again.",
                        headline: "\(device) lost the bond (encryption \(hex(status.rawValue)))",
                        supporting: start.map { [CitedFrame($0.frame, "LE Enable Encryption with the stored key")] } ?? [],
                        causes: causes, device: c?.peerAddress, connection: c?.number, fold: "\(device)"))
                started[h] = nil
            case .encryptionChange(let h, _, _):
                started[h] = nil
            default:
                break
            }
        }
        return out
    }

    /// An air capture's LL_REJECT_EXT_IND (LL_ENC_REQ) or LL_REJECT_IND from the peripheral with 0x06 PIN or Key Missing
    /// (or 0x05): it has no key for the central (LL_REJECT_IND rejects only encryption with those codes).
    static func isKeyMissing(sender: EvidenceEvent.Sender, procedure: String, reason: HCIStatus) -> Bool {
        sender == .peer && (reason == .pinOrKeyMissing || reason == .authenticationFailure)
            && (procedure == LLControlOpcode.encReq.name || procedure.hasSuffix("(LL_REJECT_IND)"))
    }

    /// Whether this side is the peripheral of connection `number` (its role, or the key it was asked for).
    static func isPeripheral(_ number: Int?, _ askedForKey: Set<Int>, _ e: Evidence) -> Bool {
        guard let number else { return false }
        return askedForKey.contains(number) || e.connection(number)?.role == .peripheral
    }

    static let causes = [
        "the peripheral was factory reset or wiped its bonds", "its bond slots were full", "it was paired again with another phone",
    ]
}
