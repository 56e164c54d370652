import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let keySizeBelowFull = FindingCode(
        "SEC-08", layer: .security, severity: .error,
        title: "Encryption key shorter than 16 bytes",
        explain: .init(
            meaning:
                "The link ran encrypted with a key shorter than 16 bytes. Each byte less divides an attacker's search by 256; below 7 bytes (the smallest the specification allows since the KNOB attack) the key is found by brute force in real time.",
            advice:
                "Set the maximum key size to 16 on both sides (SMP Maximum Encryption Key Size; on BR/EDR the controller's minimum), and refuse links under 16 where the data matters (Android and BlueZ check Read Encryption Key Size)."
        ),
        fold: .value, traits: .weakness)
}

/// SEC-08: a link ran encrypted with a key shorter than 16 bytes (error below 7, the smallest the specification allows:
/// Core Spec Vol 3, Part H, 2.3.4 for LE; Vol 2, Part C, 4.2.5.4 and the KNOB erratum for BR/EDR). Read from each
/// encryption session's key size in force (Read Encryption Key Size, Encryption Change v2, or the pairing's agreed
/// maximum); one finding per link, at its smallest key.
struct SEC08KeySizeBelowFull: DiagnosisRule {
    static let code = FindingCode.keySizeBelowFull
    static let group = RuleGroup.security
    static let evidence =
        "each encryption session's key size: Read Encryption Key Size, Encryption Change v2, SMP Maximum Encryption Key Size"
    static let anchor = "KNOB (CVE-2019-9506)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.compactMap { c, record in
            guard let (size, s) = record.smallestKeySize, size < 16, let frame = s.keySizeFrame else { return nil }
            let below = size < 7
            let device = e.deviceName(c)
            var supporting: [CitedFrame] = []
            if let on = s.onFrame, on != frame { supporting.append(CitedFrame(on, "encryption on")) }
            let others = record.sessions.filter { ($0.keySize ?? 16) < 16 }.compactMap(\.keySizeFrame).filter { $0 != frame }
            var d = Diagnosis(
                rule: Self.code, severity: below ? .error : .warning, frame: frame,
                message:
                    "\(e.linkName(c).capitalizedFirst) ran encrypted with a \(size)-byte key (\(s.keySizeProvenance))"
                    + (below
                        ? ": below the 7 bytes the specification allows; a key this short is found by brute force (KNOB)."
                        : ": weaker than the full 16 bytes (each byte less divides the search by 256)."),
                headline: "\(size)-byte encryption key with \(device)", supporting: supporting,
                causes: [
                    "a side offered a reduced Maximum Encryption Key Size", "the controller negotiated a short key (KNOB-style downgrade)",
                ], device: c.peerAddress, connection: c.number,
                facts: [UsedFact("key size", "\(size)", s.keySizeSource ?? .assumed)], fold: "\(device) \(size)")
            d.occurrences += others
            return d
        }
    }
}
