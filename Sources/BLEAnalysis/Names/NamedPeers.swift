import BLECore

/// A peer the diagnosis describes, with the name the capture gave its address.
public struct NamedPeer: Hashable, Sendable {
    public var address: String
    public var name: PeerName
    public init(address: String, name: PeerName) {
        self.address = address
        self.name = name
    }
}

extension Evidence {
    /// The peer as a line after the links' line names it: its name alone (`WH-1000XM4`), shorter than its address, when
    /// the capture gives that name to no other address (the links' line gave it with its address); else
    /// ``deviceName(_:)``.
    public func laterName(_ c: Connection) -> String {
        guard let name = peerName(c), peerNames.addresses(named: name.text) == 1 else { return deviceName(c) }
        return name.shown
    }

    /// The peers the story and the findings describe that the capture names, each once, in the order first described:
    /// the links' peers (the address each used, then its identity), the devices a page failed to reach, then
    /// `devices` (the findings').
    public func namedPeers(also devices: [String] = []) -> [NamedPeer] {
        var described: [String] = []
        for c in connections {
            if let a = c.peerAddress { described.append(a) }
            if let id = c.peerIdentity { described.append(id) }
        }
        for ev in events {
            if case .classicConnectionComplete(_, let status, let peer, _) = ev.kind, status != .success { described.append(peer) }
        }
        described += devices
        var seen: Set<String> = []
        var out: [NamedPeer] = []
        for a in described {
            let address = String(a.prefix(17))
            guard seen.insert(address).inserted, let name = peerNames.name(for: address) else { continue }
            out.append(NamedPeer(address: address, name: name))
        }
        return out
    }
}
