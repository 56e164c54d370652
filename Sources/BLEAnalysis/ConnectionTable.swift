import BLECore

/// The connections of one capture and how the per-packet path finds them: every connection seen (numbers are not
/// reused), the machines of those still open (each holds its link's record until the link ends and hands it over),
/// and the caches in front of the lookup by (controller, handle).
///
/// HCI names a connection by its handle (Core Spec Vol 4, Part E, 5.4.2), which a controller reuses once the
/// connection ends, so the table keeps two views: `connections` in the order they started, and `open`, the one
/// connection each (controller, handle) names now. Almost every record continues the connection of the record before
/// it, so ``lookup(_:)`` answers from the last lookup, then from a small direct-mapped cache, and only then hashes.
final class ConnectionTable {
    /// A connection as HCI names it: the controller (the capture's interface) and the connection handle.
    struct Key: Hashable {
        var controller: UInt16
        var handle: UInt16
    }

    /// Every connection's record, in the order they started: an ended link's as its machine handed it over, an open
    /// link's as it opened (its machine holds the live one; ``subscript(_:)`` reads the right one).
    private var records: [Connection] = []
    /// The machine of each open connection (``ConnectionMachine``), parallel to `records`; nil once closed.
    var machines: [ConnectionMachine?] = []
    /// Bound on the connections kept over the whole capture (``connections`` never grows beyond it): a hostile
    /// capture with a Connection Complete per record would otherwise grow it without end.
    var maxRetained = 65_536
    /// Open connections by key (index into `connections`).
    private(set) var open: [Key: Int] = [:]
    /// The last lookup's key and answer (most records continue the same connection).
    private var lastKey: Key?
    private var lastIndex = 0
    /// Direct-mapped cache in front of `open` (by handle): captures interleave a few connections, and hashing the key
    /// for every ACL packet and completed-packets entry showed in profiles.
    private var slots = [(key: Key, index: Int)](repeating: (ConnectionTable.noKey, 0), count: 32)
    /// The latest connection on each handle (any controller), for naming events.
    private var latestByHandle: [UInt16: Int] = [:]
    /// Keys whose connection was inferred from traffic once already (the finding says so once per key).
    private var inferredNoted = Set<Key>()
    /// The database each peer's last discovered connection ended with, for a later connection without discovery.
    private var databasesByPeer: [String: GATTDatabase] = [:]
    /// The bonding pairing each peer's last link completed (`ConnectionTable+Security.swift`).
    var bondsByPeer: [String: LinkSecurity.Bond] = [:]

    /// A key no connection has (controller and handle out of range), marking an empty cache slot.
    static let noKey = Key(controller: .max, handle: .max)

    /// The places for credit-based channels, shared by every connection's ``ChannelMux``.
    let creditBudget = CreditChannelBudget()
    /// What every machine writes into, and what it needs from the capture.
    let sink: AnalysisSink
    let capture: CaptureContext
    /// Links open at once beyond which traffic on a new handle opens none (``AnalyzerOptions/maxConnections``).
    var maxConnections = Int.max
    /// The user's GATT map, the database of a link that discovered none (``AnalyzerOptions/gattMap``).
    var gattMap: GATTMap?
    /// Bytes held for unfinished work across the links (``AnalyzerOptions/maxHeldBytes``).
    var heldBudget = HeldBytesBudget(limit: .max)
    /// The time of the record being processed (a held air PDU's fragment may be older).
    var now = Timestamp(microseconds: 0)
    /// The quality reports a controller sent on a handle before its link showed itself (controller, handle, whether
    /// traffic opened the link): the HCI machine's, which opens links through this table.
    var qualityReportsBefore: ((UInt16, UInt16, Bool) -> [LinkQualitySample])?

    init(sink: AnalysisSink, capture: CaptureContext) {
        self.sink = sink
        self.capture = capture
    }

    /// Open connections.
    var openCount: Int { open.count }
    /// Connections seen.
    var count: Int { records.count }
    var indices: Range<Int> { records.indices }
    /// Whether another connection may be kept (``maxRetained``).
    var canRetainAnother: Bool { records.count < maxRetained }

    /// Connection `index` as it stands: its machine's record while the link is open, the handed-over one after.
    subscript(index: Int) -> Connection {
        @inline(__always) _read {
            if let machine = machines[index] { yield machine.connection } else { yield records[index] }
        }
        @inline(__always) _modify {
            if let machine = machines[index] { yield &machine.connection } else { yield &records[index] }
        }
    }

    /// Every connection as it stands, in the order they started (a new array: for the end of the pass).
    var connections: [Connection] { records.indices.map { self[$0] } }

    /// The open connection `key` names, through the last-lookup and slot caches.
    @inline(__always)
    func lookup(_ key: Key) -> Int? {
        if key == lastKey { return lastIndex }
        let slot = Self.slot(key)
        let index: Int
        if slots[slot].key == key {
            index = slots[slot].index
        } else {
            guard let i = open[key] else { return nil }
            slots[slot] = (key, i)
            index = i
        }
        lastKey = key
        lastIndex = index
        return index
    }

    /// The machine of connection `index`, not retained (nil once closed): valid while the table keeps it, i.e. until
    /// the connection is closed (``close(_:)``).
    @inline(__always)
    func unmanagedMachine(_ index: Int) -> Unmanaged<ConnectionMachine>? {
        machines[index].map { Unmanaged.passUnretained($0) }
    }

    /// `body` on link `index`'s machine, in place. The subscript's `_modify` allocated its coroutine frame (40 bytes)
    /// on every call, and the ACL path calls it once per record: 4.4 % of `diagnose` on the benchmark
    /// (docs/performance.md#analyzer-hci). The open link's owner is reached unretained, as ``ACLPath`` feeds fragments.
    @inline(__always)
    func withLinkMachine<R>(_ index: Int, _ body: (inout LinkMachine) -> R) -> R {
        if let owner = unmanagedMachine(index) { return owner._withUnsafeGuaranteedRef { body(&$0.connection.machine) } }
        return body(&self[index].machine)
    }

    /// The open connection on `handle` of any controller (air captures have no controller; the first found).
    func openIndex(handle: UInt16) -> Int? {
        open.first(where: { $0.key.handle == handle })?.value
    }

    /// The open BR/EDR (or not yet known) link to `peer` on `controller`: BR/EDR events name the address (Role Change,
    /// Remote Name Request Complete); the latest if several. Few links are open at once: a scan, not an index.
    func openLink(controller: UInt16, peer: String) -> Int? {
        open.filter { $0.key.controller == controller && !self[$0.value].isLE && self[$0.value].peerAddress == peer }.map(\.value).max()
    }

    /// The latest connection (open or closed) on `handle` of any controller.
    func latest(onHandle handle: UInt16) -> Int? { latestByHandle[handle] }

    /// The database a discovered connection with `peer` ended with, if any.
    func earlierDatabase(peer: String) -> GATTDatabase? { databasesByPeer[peer] }

    /// Opens `connection` under `key` with a new machine; returns its index. A connection still open under the
    /// key must be closed first (``close(_:)``).
    func open(_ connection: Connection, key: Key) -> Int {
        let index = records.count
        records.append(connection)
        machines.append(ConnectionMachine(connection, creditBudget: creditBudget, sink: sink, capture: capture))
        open[key] = index
        forgetSlot(key)
        latestByHandle[key.handle] = index
        return index
    }

    /// True the first time a connection under `key` is inferred from traffic.
    func noteInferred(_ key: Key) -> Bool { inferredNoted.insert(key).inserted }
    /// The inference under `key` was no link from before the log (``LinkAdoption``): a later one is noted again.
    func forgetInferred(_ key: Key) { inferredNoted.remove(key) }

    /// Closes connection `index`: its machine hands over the link's record and goes, its key names no connection, and
    /// a database discovered on it is kept for the peer's next connection.
    func close(_ index: Int) {
        if let machine = machines[index] {
            machine.channels.close()
            records[index] = machine.connection
            machines[index] = nil
        }
        let c = records[index]
        let key = Key(controller: c.controller, handle: c.handle)
        if let peer = c.peerAddress, !c.gatt.isEmpty, c.gatt.source == .discovery {
            databasesByPeer[peer] = c.gatt
        }
        noteBond(of: c)
        open.removeValue(forKey: key)
        forgetSlot(key)
        if lastKey == key { lastKey = nil }
    }

    @inline(__always)
    static func slot(_ key: Key) -> Int { Int(key.handle ^ key.controller &* 7) & 31 }

    private func forgetSlot(_ key: Key) {
        let slot = Self.slot(key)
        if slots[slot].key == key { slots[slot].key = Self.noKey }
    }
}

extension ConnectionTable {
    /// Everything the open connections hold for unfinished work, their credit-based channels' SDUs included.
    var heldBytes: Int {
        var total = 0
        for machine in machines { if let machine { total += machine.heldBytes + machine.channels.heldBytes } }
        return total
    }

    /// The connections holding partial work (``HeldBytesBudget/check(held:holders:)`` asks only past the bound).
    func holders() -> [HeldBytesBudget.Holder] {
        machines.indices.compactMap { i in machines[i].flatMap { $0.heldBytes > 0 ? .init(bytes: $0.heldBytes, index: i) : nil } }
    }

    /// Drops the partial work `shedding` names: the holders', then, if that is not enough, every credit-based channel's
    /// partial SDUs; returns the bytes the channels let go.
    func shed(_ shedding: HeldBytesBudget.Shedding) -> Int {
        for i in shedding.holders { machines[i]?.shed() }
        guard shedding.rest else { return 0 }
        var dropped = 0
        for machine in machines { if let machine { dropped += machine.channels.dropPartialSDUs() } }
        return dropped
    }
}

extension ConnectionTable {
    /// A new link under `key` (``open(_:key:)``), its record numbered after every connection seen; its peer's GATT
    /// database the one an earlier connection with the peer discovered, else the user's map, unless `configure` (what
    /// the opening event says) gave one.
    func openLink(
        key: Key, frame: Int, timestamp: Timestamp, inferred: Bool, gattMap: GATTMap?, configure: (inout Connection) -> Void
    ) -> Int {
        var c = Connection(
            number: count + 1, handle: key.handle, controller: key.controller, inferred: inferred, startFrame: frame,
            startTime: timestamp)
        configure(&c)
        if c.gatt.isEmpty, let peer = c.peerAddress, var earlier = earlierDatabase(peer: peer) {
            earlier.source = .earlierConnection
            c.gatt = earlier
        } else if c.gatt.isEmpty, let map = gattMap {
            c.gatt = map.database
        }
        let index = open(c, key: key)
        giveBond(link: index, frame: frame, timestamp: timestamp)
        // Its own reports when traffic opened it (it was up before the capture began), no link's when an event did.
        if let held = qualityReportsBefore?(c.controller, c.handle, inferred), !held.isEmpty {
            _ = self[index].machine.feed(.qualityReportsBefore(held), frame: frame, timestamp: timestamp)
        }
        return index
    }

    /// Link `index` ended as its lifecycle says (``ConnectionLifecycle/Ending``): its machine says its partial work and
    /// unanswered requests and hands over its record with what it decoded (``close(_:)``); the observers are told.
    func end(_ index: Int, ending: ConnectionLifecycle.Ending) {
        let number = self[index].number
        if let machine = machines[index] {
            self[index].decode = machine.finish(frame: ending.frame, timestamp: ending.timestamp, endOfCapture: false)
        }
        close(index)
        for i in sink.observers.indices {
            sink.observers[i].connectionEnded(
                connectionNumber: number, frame: ending.frame, timestamp: ending.timestamp, reason: ending.reason)
        }
    }
}
