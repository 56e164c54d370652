import BLECore
import BLEProtocols

/// Resolvable private addresses changing over a capture (Core Spec Vol 6, Part B, 1.3.2.2; Vol 3, Part C, 10.7, and
/// Appendix A's T_GAP(private_addr_int), 15 minutes recommended): this side's own as its host set them (LE Set Random
/// Address), and each peer identity seen behind more than one. A fact, not a fault.
public struct AddressRotation: Hashable, Sendable {
    /// An LE Set Random Address that gave this side a new resolvable private address.
    public struct OwnAddress: Hashable, Sendable {
        public var controller: UInt16
        public var frame: Int
        public var timestamp: Timestamp
        public var address: String
    }

    /// A peer's resolvable private address on one link.
    public struct PeerAddress: Hashable, Sendable {
        public var connection: Int
        public var address: String
        public var frame: Int
    }

    /// One peer identity (resolved by the controller, or with an IRK the log distributed or a key file gave) and the
    /// resolvable private addresses it used, in link order (two or more).
    public struct Peer: Hashable, Sendable {
        public var identity: String
        public var addresses: [PeerAddress]
    }

    /// This side's resolvable private addresses, each a change (the same address set again is not one), in order.
    public var own: [OwnAddress] = []
    /// How many were left out past ``ownLimit``.
    public var ownOmitted = 0
    public var peers: [Peer] = []
    static let ownLimit = 1_000

    public init() {}

    public var isEmpty: Bool { own.isEmpty && peers.isEmpty }

    /// The controller whose host set the most resolvable private addresses, and those addresses.
    public var busiestOwn: [OwnAddress] {
        let byController = Dictionary(grouping: own, by: \.controller)
        return byController.max { $0.value.count < $1.value.count || ($0.value.count == $1.value.count && $0.key > $1.key) }?.value ?? []
    }

    /// The median time between successive changes of ``busiestOwn``, in seconds; nil below two addresses.
    public var ownMedianIntervalSeconds: Double? {
        let a = busiestOwn
        guard a.count >= 2 else { return nil }
        let gaps = zip(a, a.dropFirst()).map { Double($1.timestamp.microseconds(since: $0.timestamp)) / 1_000_000 }.sorted()
        let mid = gaps.count / 2
        return gaps.count % 2 == 1 ? gaps[mid] : (gaps[mid - 1] + gaps[mid]) / 2
    }

    /// Each peer identity behind two or more resolvable private addresses on the LE links.
    static func peers(_ connections: [Connection]) -> [Peer] {
        var order: [String] = []
        var byIdentity: [String: [PeerAddress]] = [:]
        for c in connections where c.isLE {
            guard let seen = c.machine.securityRecord.addresses[.peer], seen.kind == .resolvablePrivate,
                let identity = seen.identity ?? c.peerIdentity, let address = seen.address
            else { continue }
            if byIdentity[identity] == nil { order.append(identity) }
            if byIdentity[identity]?.contains(where: { $0.address == address }) ?? false { continue }
            byIdentity[identity, default: []].append(PeerAddress(connection: c.number, address: address, frame: seen.frame))
        }
        return order.compactMap { id in byIdentity[id].flatMap { $0.count >= 2 ? Peer(identity: id, addresses: $0) : nil } }
    }
}
