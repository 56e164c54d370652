import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let nonZeroDiversifier = FindingCode(
        "SEC-12", layer: .security, severity: .warning,
        title: "Non-zero EDIV/Rand with a Secure Connections key or an STK",
        explain: .init(
            meaning:
                "Encryption started with a key that the specification names by EDIV and Rand zero (an LE Secure Connections LTK, or the STK of a legacy pairing), with non-zero values. A peripheral that accepts it does not check what key it is asked for.",
            advice: "Fix the central's key storage (Secure Connections keys have no EDIV/Rand); a peripheral should reject the request."),
        fold: .device, traits: .weakness)
}

/// SEC-12: encryption started with a key from a pairing that requires EDIV and Rand zero, with non-zero ones: an LTK
/// from LE Secure Connections (Core Spec Vol 3, Part H, 2.4.4 and 3.6.1: no Central Identification is distributed; the
/// key is named by EDIV 0 and Rand 0) or a legacy STK (2.4.4.1). Whether the peripheral accepted it is said: a
/// peripheral that encrypts anyway does not check (SweynTooth's STM32WB55 case).
struct SEC12NonZeroDiversifier: DiagnosisRule {
    static let code = FindingCode.nonZeroDiversifier
    static let group = RuleGroup.security
    static let evidence =
        "LL_ENC_REQ, LE Enable Encryption or LE Long Term Key Request's EDIV and Rand, and the pairing whose key it starts"
    static let anchor = "SweynTooth (non-compliance)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.compactMap { c, record in
            for s in record.sessions where !s.zeroDiversifier {
                guard let start = s.startFrame, let key = keyOfPairing(s, record) else { continue }
                let accepted =
                    s.onFrame.map { "the peripheral accepted it (encryption on at frame \($0))" }
                    ?? s.acceptedFrame.map { "the peripheral accepted it (frame \($0)); the capture shows no end of the start" }
                    ?? "the capture shows no acceptance"
                var supporting = [CitedFrame(key.responseFrame ?? key.frame, "\(key.procedure?.rawValue ?? "pairing")")]
                if let on = s.onFrame { supporting.append(CitedFrame(on, "encryption on")) }
                let ediv = hex(s.ediv ?? 0, width: 4), rand = hex(s.rand ?? 0, width: 16)
                return Diagnosis(
                    rule: Self.code, severity: severity, frame: start,
                    message:
                        "\(e.linkName(c).capitalizedFirst): encryption started at frame \(start) with EDIV \(ediv) and Rand \(rand) for the key of the \(key.procedure?.rawValue ?? "") pairing at frame \(key.frame), which the specification names by EDIV and Rand zero; \(accepted).",
                    headline:
                        "non-zero EDIV/Rand for a \(key.procedure == .leSecureConnections ? "Secure Connections LTK" : "legacy STK") with \(e.deviceName(c))",
                    supporting: supporting,
                    causes: [
                        "the central's stack stores a Secure Connections key like a legacy one", "a fuzzer or test tool (SweynTooth)",
                    ],
                    device: c.peerAddress, connection: c.number, fold: "\(e.deviceName(c))")
            }
            return nil
        }
    }

    /// The pairing whose key requires EDIV/Rand zero that the session starts: this link's (its STK, or its Secure
    /// Connections LTK), or a Secure Connections bond's.
    static func keyOfPairing(_ s: EncryptionSession, _ record: LinkSecurity) -> SecurityPairing? {
        switch s.origin {
        case .pairing(let f)?:
            return record.pairings.last { $0.frame == f && $0.procedure?.isLE == true }
        case .stored?:
            guard let b = record.bond?.pairing, b.procedure == .leSecureConnections else { return nil }
            return b
        case nil:
            return nil
        }
    }
}
