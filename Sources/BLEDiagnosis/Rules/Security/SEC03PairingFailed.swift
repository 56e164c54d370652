import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let pairingFailed = FindingCode(
        "SEC-03", layer: .security, severity: .critical,
        title: "Pairing failed",
        explain: .init(
            meaning:
                "Pairing was aborted by one side with a reason code (for example, the IO capabilities cannot give the security asked, or a confirm value did not match).",
            advice: "Read the reason given: align the security requirements with the devices' IO capabilities, check the passkey entry."),
        fold: .device)
}

/// SEC-03: pairing failed: SMP Pairing Failed with its reason and who sent it (Core Spec Vol 3, Part H, 3.5.5).
struct SEC03PairingFailed: DiagnosisRule {
    static let code = FindingCode.pairingFailed
    static let group = RuleGroup.security
    static let evidence = "SMP Pairing Failed (0x05) with its reason; who sent it"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .pairingFailed(let sender, let reason) = ev.kind else { return nil }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            let who = sender == .peer ? device : e.thisSide
            let start = e.last(before: ev.frame) { p in
                guard p.connection == ev.connection, case .pairingRequest = p.kind else { return false }
                return true
            }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "Pairing with \(device) failed: \(who) sent Pairing Failed \"\(reason)\" (\(hex(reason.rawValue))) at frame \(ev.frame). \(meaning(reason))",
                headline: "pairing with \(device) failed (\(reason))",
                supporting: start.map { [CitedFrame($0.frame, "Pairing Request")] } ?? [], causes: causes(reason), device: c?.peerAddress,
                connection: c?.number, fold: "\(device) \(reason.rawValue)")
        }
    }

    static func meaning(_ r: SMPPairingFailedReason) -> String {
        switch r {
        case .passkeyEntryFailed, .confirmValueFailed, .dhKeyCheckFailed, .numericComparisonFailed:
            "The passkey or the confirmation did not match."
        case .authenticationRequirements: "It demands MITM protection or Secure Connections the IO capabilities cannot give."
        case .pairingNotSupported: "Pairing is not supported or disabled on that side."
        case .encryptionKeySize: "The encryption key size offered is too short."
        case .repeatedAttempts: "Too many attempts: the peer throttles pairing."
        default: ""
        }
    }

    static func causes(_ r: SMPPairingFailedReason) -> [String] {
        switch r {
        case .passkeyEntryFailed, .confirmValueFailed, .dhKeyCheckFailed, .numericComparisonFailed:
            ["a wrong passkey, or the user cancelled the dialog"]
        case .authenticationRequirements: ["an IO-capability mismatch", "Secure-Connections-only on one side and legacy on the other"]
        case .repeatedAttempts: ["retry throttling after earlier failures"]
        case .pairingNotSupported: ["pairing disabled on the peer"]
        default: ["an IO-capability or security-policy mismatch", "the user rejected or cancelled pairing"]
        }
    }
}
