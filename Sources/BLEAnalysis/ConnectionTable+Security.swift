import BLECore

/// Bonds across links: a link whose pairing completed with bonding leaves its keys to the peer's next link, whose
/// sessions with a stored key then run with that pairing's key size (``LinkSecurity/bond``).
extension ConnectionTable {
    /// Keeps the last completed bonding pairing of a closing link, by peer.
    func noteBond(of c: Connection) {
        guard let peer = c.peerAddress,
            let p = c.machine.securityRecord.pairings.last(where: {
                $0.completed && ($0.bonding || !$0.distributed.isEmpty || $0.linkKeyType != nil)
            })
        else { return }
        bondsByPeer[peer] = LinkSecurity.Bond(connection: c.number, pairing: p)
    }

    /// Hands a new link the bond its peer left, if any.
    func giveBond(link index: Int, frame: Int, timestamp: Timestamp) {
        guard !bondsByPeer.isEmpty, let peer = self[index].peerAddress, let bond = bondsByPeer[peer] else { return }
        _ = self[index].machine.feed(.security(.bond(bond)), frame: frame, timestamp: timestamp)
    }
}
