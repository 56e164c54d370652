import BLECore

/// A link's first ACL logged a few milliseconds ahead of the Connection Complete that opens it (issue 49, "a stale
/// event makes a link"): Windows BTVS logs a link's first Security Request 3 ms before its LE Connection Complete (the
/// OpenSnek Razer log's 125 before 126 and 26520 before 26521). The ACL opened a link inferred from traffic; the
/// Connection Complete adopts it (one machine owns the link from its first packet) instead of ending it unseen and
/// opening a second. Only when the inferred link is that young: traffic on a handle long before any Connection
/// Complete is a link from before the log, and a Connection Complete after the handle's Disconnection Complete opens a
/// new link (the disconnection closed the inferred one).
enum LinkAdoption {
    /// How long before its Connection Complete a link's first packet may be logged and still be that link's, µs. BTVS
    /// shows 3 ms; a link up before the log shows its traffic for far longer before any event names the handle again.
    static let window: Int64 = 1_000_000

    /// Whether `c`, open on the handle a Connection Complete at `timestamp` names, is that connection seen early.
    static func adopts(_ c: Connection, at timestamp: Timestamp) -> Bool {
        c.inferred && adopts(since: c.startTime, at: timestamp)
    }

    /// Whether traffic first seen at `first` is early sight of a link whose Connection Complete comes at `timestamp`.
    static func adopts(since first: Timestamp, at timestamp: Timestamp) -> Bool {
        let early = timestamp.microseconds(since: first)
        return early >= 0 && early < window
    }
}

extension ConnectionTable {
    /// Link `index`, inferred from traffic just before the Connection Complete at `frame`, becomes the link that event
    /// opens: it starts there, its transport is the event's, `configure` sets what the event says, and the inference's
    /// finding goes. Returns false (nothing changed) when the link is no such early sight (``LinkAdoption``).
    func adopt(
        _ index: Int, frame: Int, timestamp: Timestamp, isLE: Bool, configure: (inout Connection) -> Void
    ) -> Bool {
        let first = self[index]
        guard LinkAdoption.adopts(first, at: timestamp) else { return false }
        self[index].inferred = false
        self[index].startFrame = frame
        self[index].startTime = timestamp
        _ = self[index].machine.feed(.opened, frame: frame, timestamp: timestamp)
        _ = self[index].machine.feed(.transport(isLE ? .le : .bredr), frame: frame, timestamp: timestamp)
        configure(&self[index])
        if self[index].gatt.isEmpty, let peer = self[index].peerAddress, var earlier = earlierDatabase(peer: peer) {
            earlier.source = .earlierConnection
            self[index].gatt = earlier
        }
        giveBond(link: index, frame: frame, timestamp: timestamp)
        let key = Key(controller: first.controller, handle: first.handle)
        let inferredFinding = Finding(.info, .connectionInferred(first.handle), frame: first.startFrame)
        if let i = sink.findings.lastIndex(of: inferredFinding) {
            sink.findings.remove(at: i)
            forgetInferred(key)
        }
        return true
    }
}
