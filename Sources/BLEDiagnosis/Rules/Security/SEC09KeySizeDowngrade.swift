import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let keySizeDowngrade = FindingCode(
        "SEC-09", layer: .security, severity: .error,
        title: "Encryption key size went down",
        explain: .init(
            meaning:
                "A later session with the same device ran with a shorter key than an earlier one. Nothing legitimate lowers a bond's key size between sessions; the KNOB and BLUFFS attacks do exactly this by negotiating it down.",
            advice:
                "Treat as an attack or a broken controller: compare controller firmware between the sessions, enforce a 16-byte minimum on the host, update the controller (KNOB and BLUFFS fixes)."
        ),
        fold: .device, traits: .weakness)
}

/// SEC-09: a later encryption session with the same peer ran with a shorter key than an earlier one: the key size of a
/// bond went down (the KNOB and BLUFFS attacks force exactly this; Core Spec Vol 2, Part C, 4.2.5.4). A longer key after
/// a shorter one is no downgrade. Sessions are compared across the peer's links in frame order.
struct SEC09KeySizeDowngrade: DiagnosisRule {
    static let code = FindingCode.keySizeDowngrade
    static let group = RuleGroup.security
    static let evidence = "each encryption session's key size with the same peer, in order"
    static let anchor = "KNOB (CVE-2019-9506), BLUFFS (CVE-2023-24023)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var byPeer: [String: [(Connection, EncryptionSession, Int)]] = [:]
        var order: [String] = []
        for (c, record) in e.securedLinks {
            let peer = c.peerIdentity ?? c.peerAddress ?? "link #\(c.number)"
            for s in record.sessions {
                guard let size = s.keySize, s.onFrame != nil else { continue }
                if byPeer[peer] == nil { order.append(peer) }
                byPeer[peer, default: []].append((c, s, size))
            }
        }
        return order.compactMap { peer -> Diagnosis? in
            let sessions = byPeer[peer]!.sorted { ($0.1.keySizeFrame ?? 0) < ($1.1.keySizeFrame ?? 0) }
            var best: (Connection, EncryptionSession, Int)? = nil
            var first: Diagnosis? = nil
            for entry in sessions {
                defer { if entry.2 > (best?.2 ?? 0) { best = entry } }
                guard let b = best, entry.2 < b.2, let frame = entry.1.keySizeFrame else { continue }
                if first != nil {
                    first!.occurrences.append(frame)
                    continue
                }
                let (c, s, size) = entry
                first = Diagnosis(
                    rule: Self.code, severity: severity, frame: frame,
                    message:
                        "The encryption key with \(e.deviceName(c)) went down from \(b.2) bytes (link #\(b.0.number), frame \(b.1.keySizeFrame ?? 0)) to \(size) bytes on link #\(c.number) (\(s.keySizeProvenance)): the same bond now runs with a weaker key, the shape of a KNOB or BLUFFS key-size downgrade.",
                    headline: "key size \(b.2) → \(size) bytes with \(e.deviceName(c))",
                    supporting: [CitedFrame(b.1.keySizeFrame ?? 0, "\(b.2)-byte key")],
                    causes: [
                        "an attacker (or a controller) negotiating the key size down (KNOB, BLUFFS)",
                        "a firmware or host change to the minimum key size between sessions",
                    ], device: c.peerAddress, connection: c.number,
                    facts: [UsedFact("key size", "\(size)", s.keySizeSource ?? .assumed)], fold: "\(peer)")
            }
            return first
        }
    }
}
