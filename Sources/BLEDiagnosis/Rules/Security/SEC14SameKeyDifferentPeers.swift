import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let sameKeyDifferentPeers = FindingCode(
        "SEC-14", layer: .security, severity: .error,
        title: "Same key with different peers",
        explain: .init(
            meaning:
                "The same long-term or link key was used with different devices. Keys are made per pairing, so this is a fixed or derived key: one compromised device gives it away for all.",
            advice: "Remove factory or address-derived keys; let every pairing generate its own."),
        fold: .value, traits: .weakness)
}

/// SEC-14: the same LTK or link key used with two or more different peers: keys are per bond (Core Spec Vol 3,
/// Part H, 2.4.2: each LTK is generated per pairing), so one key for several devices is a fixed or derived key
/// (a factory key, a key from the address alone) that one compromised device gives away for all. Compared by a
/// fingerprint of the keys the host handed its controller; the keys are never printed.
struct SEC14SameKeyDifferentPeers: DiagnosisRule {
    static let code = FindingCode.sameKeyDifferentPeers
    static let group = RuleGroup.security
    static let evidence =
        "LE Enable Encryption, LE Long Term Key Request Reply, Link Key Request Reply and Link Key Notification keys, by peer"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var peersByKey: [UInt64: [(peer: String, c: Connection, use: LinkSecurity.KeyUse)]] = [:]
        var order: [UInt64] = []
        for (c, record) in e.securedLinks {
            // A resolvable private address no IRK resolved may be the same device under a new address.
            guard let peer = c.peerIdentity ?? c.peerAddress, c.peerIdentity != nil || !c.peerIsUnresolvedRPA else { continue }
            for use in record.keysUsed where !use.fingerprint.isZeroKeyFingerprint {
                if peersByKey[use.fingerprint] == nil { order.append(use.fingerprint) }
                if !(peersByKey[use.fingerprint]?.contains { $0.peer == peer } ?? false) {
                    peersByKey[use.fingerprint, default: []].append((peer, c, use))
                }
            }
        }
        return order.compactMap { key in
            guard let uses = peersByKey[key], uses.count >= 2 else { return nil }
            let peers = uses.map(\.peer)
            var d = Diagnosis(
                rule: Self.code, severity: severity, frame: uses[1].use.frame,
                message:
                    "The same \(uses[0].use.kind) was used with \(uses.count) different peers (\(peers.prefix(4).joined(separator: ", "))\(peers.count > 4 ? ", …" : ""); frames \(uses.map { String($0.use.frame) }.prefix(6).joined(separator: ", "))): keys are made per bond, so this is a fixed or derived key that one device gives away for all.",
                headline: "one \(uses[0].use.kind) for \(uses.count) peers",
                supporting: [CitedFrame(uses[0].use.frame, "\(uses[0].use.kind) for \(uses[0].peer)")],
                causes: ["a factory-programmed or address-derived key", "a test key left in production"],
                device: uses[1].c.peerAddress, connection: uses[1].c.number, fold: "\(key)")
            d.occurrences += uses.dropFirst(2).map(\.use.frame)
            return d
        }
    }
}

extension UInt64 {
    /// The fingerprint of an all-zero key (a placeholder some logs write, not a key anyone uses).
    var isZeroKeyFingerprint: Bool { self == LinkSecurity.KeyUse(frame: 0, kind: "", key: [UInt8](repeating: 0, count: 16)).fingerprint }
}
