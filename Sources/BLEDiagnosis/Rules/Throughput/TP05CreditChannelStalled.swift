import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let creditChannelStalled = FindingCode(
        "TP-05", layer: .l2cap, severity: .error,
        title: "Credit-based channel refused or starved",
        explain: .init(
            meaning:
                "An L2CAP credit-based channel was refused, or a sender waited more than 5 s for credits: the receiver stopped granting them.",
            advice: "Check the receiver returns credits as it consumes data, and the channel's PSM and security."),
        fold: .never, traits: [.claimsAbsence, .readsPayloads])
}

/// TP-05: an L2CAP credit-based channel (LE CoC or EATT) was refused, or its sender ran out of credits for long: the
/// receiver granted none for more than 5 s.
struct TP05CreditChannelStalled: DiagnosisRule {
    static let code = FindingCode.creditChannelStalled
    static let group = RuleGroup.throughput
    static let evidence = "LE Credit Based Connection Response result ≠ 0; a sender without credits for more than 5 s"
    static let anchor = "none"
    static let stall: Int64 = 5_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = e.events.compactMap { ev in
            guard case .creditConnectionRefused(let psm, let result) = ev.kind else { return nil }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            let why: String =
                switch result {
                case 0x0002: "the PSM is not supported"
                case 0x0004: "no resources"
                case 0x0005, 0x0008: "insufficient authentication/encryption: pair first"
                case 0x0007: "the encryption key size is too short"
                default: "result \(hex(result, width: 4))"
                }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "\(device) refused the credit-based channel\(psm.map { " to PSM \(hex($0, width: 4))" } ?? "") (frame \(ev.frame)): \(why).",
                headline: "credit-based channel to \(device) refused",
                causes: ["a security level too low", "the peer does not serve the PSM"],
                device: c?.peerAddress, connection: c?.number)
        }
        for c in e.connections {
            guard let worst = c.creditStalls.max(by: { $0.durationMicroseconds < $1.durationMicroseconds }),
                worst.durationMicroseconds > stall
            else { continue }
            let device = e.deviceName(c)
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: worst.endFrame,
                    message:
                        "The credit-based channel \(hex(worst.cid, width: 4)) with \(device) stalled for \(duration(worst.durationMicroseconds)): the receiver granted no credits (frames \(worst.startFrame)–\(worst.endFrame)).",
                    headline: "credit-based channel with \(device) starved", supporting: [CitedFrame(worst.startFrame, "out of credits")],
                    causes: ["the receiving app does not read", "a credit-accounting bug"], device: c.peerAddress, connection: c.number))
        }
        return out
    }
}
