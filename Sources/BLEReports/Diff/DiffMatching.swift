import BLEAnalysis
import BLECore
import BLEProtocols

/// Which connection of A is which of B.
///
/// Peers are matched by identity address (an RPA resolved through an IRK of `--keys`), else by address; connections
/// to one peer pair in the order they opened. Connections left (addresses that differ, a private address without its
/// IRK, an iOS log that names no address) pair by the peer's name (``DiffNames``: a Device Name read, else the Local
/// Name its address advertised), then by their discovered GATT (the same primary services), then by the handles their
/// traffic used, then in order. `--connection` and `--peer` choose.
enum DiffMatching {
    /// The peer a connection is to, as both sides can name it: the identity address when an IRK resolved it.
    static func peerKey(_ c: Connection) -> String? {
        if let identity = c.peerIdentity { return identity.hasPrefix("IRK") ? identity : String(identity.prefix(17)).uppercased() }
        return c.peerAddress.map { String($0.prefix(17)).uppercased() }
    }

    /// The connections with each peer at a resolvable private address named by the identity key that resolves it
    /// (Core Spec Vol 3, Part H, 2.2.2: ah(IRK, prand) is the address's hash), unless the analysis named it already.
    static func resolved(_ connections: [Connection], keys: [IdentityKey]) -> [Connection] {
        guard !keys.isEmpty else { return connections }
        // One resolver per key, so that a key without an identity address still says which key resolved the address.
        var resolvers = keys.map { IdentityResolver([$0]) }
        return connections.map { c in
            guard c.peerIdentity == nil, let peer = c.peerAddress, let value = BDAddress(String(peer.prefix(17)))?.value else { return c }
            for i in resolvers.indices where resolvers[i].identity(of: value) != nil {
                var named = c
                named.peerIdentity = keys[i].identity?.description ?? "IRK \(i + 1)"
                return named
            }
            return c
        }
    }

    /// The primary services a connection's database shows, as a signature (nil without discovery).
    static func gattSignature(_ c: Connection) -> String? {
        let uuids = c.gatt.services.map(\.uuid.uuidString).sorted()
        return uuids.isEmpty ? nil : uuids.joined(separator: ",")
    }

    /// The pairs, and the connections of each side left without a partner (by number).
    static func pair(
        _ fa: FileAnalysis, _ fb: FileAnalysis, options: DiffOptions, names: () -> (DiffNames, DiffNames) = { (DiffNames(), DiffNames()) }
    ) -> (
        pairs: [ConnectionPair], onlyA: [Connection], onlyB: [Connection]
    ) {
        let a = fa.connections, b = fb.connections
        if let chosen = options.connection {
            let ca = a.first { $0.number == chosen.a }, cb = b.first { $0.number == chosen.b }
            guard let ca, let cb else { return ([], ca.map { [$0] } ?? [], cb.map { [$0] } ?? []) }
            return ([ConnectionPair(a: ca.number, b: cb.number, peer: peers(ca, cb), matchedBy: "chosen")], [], [])
        }
        var restA = a, restB = b
        if let peer = options.peer?.uppercased() {
            restA = a.filter { peerKey($0) == peer }
            restB = b.filter { peerKey($0) == peer }
        }
        var pairs: [ConnectionPair] = []
        // By address (or identity), in order per peer.
        pairInOrder(&restA, &restB, into: &pairs, key: { peerKey($0) }, how: { $0.peerIdentity != nil ? "identity" : "address" })
        // By the peer's name (its Device Name read, else what its address advertised), then by the services
        // discovered: addresses that differ (a private address without its IRK) or are missing (an iOS log).
        if !restA.isEmpty && !restB.isEmpty { pairByName(&restA, &restB, into: &pairs, names: names()) }
        pairInOrder(&restA, &restB, into: &pairs, key: { gattSignature($0) }, how: { _ in "gatt" })
        pairBySimilarity(&restA, &restB, into: &pairs, usedA: fa.usage, usedB: fb.usage)
        pairInOrder(&restA, &restB, into: &pairs, key: { _ in "" }, how: { _ in "order" })
        pairs.sort { $0.a < $1.a }
        return (pairs, restA, restB)
    }

    /// Pairs the connections of `a` and `b` with the same non-nil key, the first with the first; removes them.
    private static func pairInOrder(
        _ a: inout [Connection], _ b: inout [Connection], into pairs: inout [ConnectionPair],
        key: (Connection) -> String?, how: (Connection) -> String
    ) {
        var usedA = Set<Int>(), usedB = Set<Int>()
        for ca in a {
            guard let k = key(ca), let cb = b.first(where: { !usedB.contains($0.number) && key($0) == k }) else { continue }
            usedA.insert(ca.number)
            usedB.insert(cb.number)
            pairs.append(ConnectionPair(a: ca.number, b: cb.number, peer: peers(ca, cb), matchedBy: how(ca)))
        }
        a.removeAll { usedA.contains($0.number) }
        b.removeAll { usedB.contains($0.number) }
    }

    /// Pairs the connections whose peers have the same name, in order; the pair says the name.
    private static func pairByName(
        _ a: inout [Connection], _ b: inout [Connection], into pairs: inout [ConnectionPair], names: (DiffNames, DiffNames)
    ) {
        var usedA = Set<Int>(), usedB = Set<Int>()
        for ca in a {
            guard let name = names.0.name(ca),
                let cb = b.first(where: { !usedB.contains($0.number) && names.1.name($0) == name })
            else { continue }
            usedA.insert(ca.number)
            usedB.insert(cb.number)
            pairs.append(ConnectionPair(a: ca.number, b: cb.number, peer: peers(ca, cb), matchedBy: "name", name: name))
        }
        a.removeAll { usedA.contains($0.number) }
        b.removeAll { usedB.contains($0.number) }
    }

    /// Pairs connections by the attribute handles their traffic used (an iOS log names no peer and often shows no
    /// discovery; the same device's connections use the same handles): the most alike pair first (the share of the
    /// smaller set the other also used, at least half; then the Jaccard index of the two sets).
    private static func pairBySimilarity(
        _ a: inout [Connection], _ b: inout [Connection], into pairs: inout [ConnectionPair], usedA: GATTUsage, usedB: GATTUsage
    ) {
        func handles(_ c: Connection, _ u: GATTUsage) -> Set<UInt16> { Set((u.byConnection[c.number] ?? [:]).keys) }
        var candidates: [(score: Double, jaccard: Double, a: Connection, b: Connection)] = []
        for ca in a {
            let ha = handles(ca, usedA)
            for cb in b {
                let hb = handles(cb, usedB)
                let smaller = min(ha.count, hb.count), common = Double(ha.intersection(hb).count)
                guard smaller > 0 else { continue }
                let score = common / Double(smaller)
                if score >= 0.5 { candidates.append((score, common / Double(ha.union(hb).count), ca, cb)) }
            }
        }
        candidates.sort { ($0.score, $0.jaccard, -$0.a.number, -$0.b.number) > ($1.score, $1.jaccard, -$1.a.number, -$1.b.number) }
        var usedNumbersA = Set<Int>(), usedNumbersB = Set<Int>()
        for c in candidates where !usedNumbersA.contains(c.a.number) && !usedNumbersB.contains(c.b.number) {
            usedNumbersA.insert(c.a.number)
            usedNumbersB.insert(c.b.number)
            pairs.append(ConnectionPair(a: c.a.number, b: c.b.number, peer: peers(c.a, c.b), matchedBy: "handles used"))
        }
        a.removeAll { usedNumbersA.contains($0.number) }
        b.removeAll { usedNumbersB.contains($0.number) }
    }

    /// The GATT database of the peer of `c` on its side: every connection to that peer merged (a phone that cached
    /// the database discovers it on the first connection only).
    static func peerDatabase(of c: Connection, in connections: [Connection]) -> GATTDatabase {
        guard let key = peerKey(c) else { return c.gatt }
        var db = GATTDatabase()
        for other in connections where peerKey(other) == key { db.merge(other.gatt) }
        return db
    }

    /// The peer both connections name, `A ↔ B` when they name different ones, `-` when neither names one.
    static func peers(_ a: Connection, _ b: Connection) -> String {
        switch (peerKey(a), peerKey(b)) {
        case (let x?, let y?) where x != y: "\(x) ↔ \(y)"
        case (let x, let y): x ?? y ?? "-"
        }
    }

    /// `#3 (C0:11:22:33:44:55)`: a connection as the differences name it.
    static func label(_ c: Connection) -> String {
        "#\(c.number)" + (peerKey(c).map { " (\($0))" } ?? "")
    }
}
