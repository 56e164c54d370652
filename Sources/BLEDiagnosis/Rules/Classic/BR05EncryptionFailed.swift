import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let encryptionFailed = FindingCode(
        "BR-05", layer: .classic, severity: .error,
        title: "Encryption failed on a BR/EDR link",
        explain: .init(
            meaning:
                "Starting encryption on a Classic link failed: the link stays unencrypted, and profiles that need security will not start.",
            advice: "Read the status; with 0x05/0x06 the bond is broken (see BR-04): pair again."),
        fold: .device)
}

/// BR-05: encryption failed on a BR/EDR link: Encryption Change with an error status on a BR/EDR connection.
struct BR05EncryptionFailed: DiagnosisRule {
    static let code = FindingCode.encryptionFailed
    static let group = RuleGroup.classic
    static let evidence = "Encryption Change (0x08, 0x59) with status ≠ 0 on a BR/EDR connection"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .encryptionChange(_, let status, _) = ev.kind, status != .success, let c = e.connection(ev.connection), c.isBREDR
            else { return nil }
            let name = e.deviceName(c)
            let chain = e.authenticationChain(peer: c.peerAddress, connection: c.number, before: ev.frame)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message: "Encryption with \(name) failed (\(codeName(status)) at frame \(ev.frame)): the BR/EDR link stays unencrypted.",
                headline: "encryption with \(name) failed (\(hex(status.rawValue)))",
                supporting: chain.compactMap { x in x.kind.chainText.map { CitedFrame(x.frame, $0) } },
                causes: status == .pinOrKeyMissing || status == .authenticationFailure
                    ? ["a link key is missing or does not match (bond lost on one side)"] : ["the peer refused encryption (\(status))"],
                device: name, connection: c.number, fold: "\(name) \(status.rawValue)")
        }
    }
}
