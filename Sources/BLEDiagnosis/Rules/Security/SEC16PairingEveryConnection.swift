import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let pairingEveryConnection = FindingCode(
        "SEC-16", layer: .security, severity: .warning,
        title: "Paired again on every connection",
        explain: .init(
            meaning: "The same device paired again on every connection although bonding was asked: one side does not keep the bond.",
            advice: "Check that the peripheral stores its bonds across resets and that the phone is not removing the bond after an error."),
        fold: .device)
}

/// SEC-16: the same peer paired again on every one of at least three links, bonding asked each time: the bond is not
/// kept (lost on one side after each disconnection), so each connection costs a pairing and its user step.
struct SEC16PairingEveryConnection: DiagnosisRule {
    static let code = FindingCode.pairingEveryConnection
    static let group = RuleGroup.security
    static let evidence = "a completed pairing on each of 3 or more links with the same peer, with bonding"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var byPeer: [String: [(Connection, SecurityPairing)]] = [:]
        var order: [String] = []
        var unpaired = Set<String>()
        for (c, record) in e.securedLinks where !c.inferred {
            let peer = c.peerIdentity ?? c.peerAddress ?? ""
            guard !peer.isEmpty else { continue }
            if byPeer[peer] == nil && !unpaired.contains(peer) { order.append(peer) }
            guard let p = record.pairings.first(where: \.completed) else {
                unpaired.insert(peer)
                continue
            }
            byPeer[peer, default: []].append((c, p))
        }
        return order.compactMap { peer in
            guard !unpaired.contains(peer), let links = byPeer[peer], links.count >= 3, links.contains(where: { $0.1.bonding }) else {
                return nil
            }
            var d = Diagnosis(
                rule: Self.code, severity: severity, frame: links[1].1.frame,
                message:
                    "\(peer) paired again on each of its \(links.count) links (pairings at \(links.map { String($0.1.frame) }.prefix(6).joined(separator: ", "))), bonding asked: the bond is lost after each connection.",
                headline: "\(peer) pairs on every connection (\(links.count)×)",
                supporting: [CitedFrame(links[0].1.frame, "first pairing")],
                causes: [
                    "one side does not store the bond (no flash, or a factory reset each time)",
                    "the phone removes the bond after a failure",
                ],
                device: links[0].0.peerAddress, connection: links[1].0.number, fold: "\(peer)")
            d.occurrences += links.dropFirst(2).map(\.1.frame)
            return d
        }
    }
}
