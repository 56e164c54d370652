import BLECore
import BLEProtocols

/// BR-05: encryption failed on a BR/EDR link: Encryption Change with an error status on a BR/EDR connection.
struct BR05EncryptionFailed: DiagnosisRule {
    static let id = "BR-05"
    static let group = RuleGroup.classic
    static let severity = DiagnosisSeverity.error
    static let title = "Encryption failed on a BR/EDR link"
    static let evidence = "Encryption Change (0x08, 0x59) with status ≠ 0 on a BR/EDR connection"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .encryptionChange(_, let status, _) = ev.kind, status != .success, let c = e.connection(ev.connection), c.isBREDR
            else { return nil }
            let name = e.deviceName(c)
            let chain = e.authenticationChain(peer: c.peerAddress, connection: c.number, before: ev.frame)
            return Diagnosis(
                rule: id, severity: severity, frame: ev.frame,
                message: "Encryption with \(name) failed (\(codeName(status)) at frame \(ev.frame)): the BR/EDR link stays unencrypted.",
                headline: "encryption with \(name) failed (\(hex(status.rawValue)))",
                supporting: chain.compactMap { x in x.kind.chainText.map { CitedFrame(x.frame, $0) } },
                causes: status.rawValue == 0x06 || status.rawValue == 0x05
                    ? ["a link key is missing or does not match (bond lost on one side)"] : ["the peer refused encryption (\(status))"],
                device: name, connection: c.number, foldKey: "BR-05 \(name) \(status.rawValue)")
        }
    }
}
