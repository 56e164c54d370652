import BLECore

/// How a handle was used during a connection (for `blescope gatt`).
public struct HandleUsage: Hashable, Sendable {
    public var reads = 0
    public var writes = 0
    public var writeCommands = 0
    public var notifications = 0
    public var indications = 0
    /// Codecs that decoded values on this handle.
    public var codecs: Set<String> = []
    public init() {}
    public var isEmpty: Bool { reads + writes + writeCommands + notifications + indications == 0 }
    public var description: String {
        var parts: [String] = []
        if reads > 0 { parts.append("\(reads) read\(reads == 1 ? "" : "s")") }
        if writes > 0 { parts.append("\(writes) write\(writes == 1 ? "" : "s")") }
        if writeCommands > 0 { parts.append("\(writeCommands) write-cmd") }
        if notifications > 0 { parts.append("\(notifications) notif.") }
        if indications > 0 { parts.append("\(indications) indic.") }
        return parts.joined(separator: ", ")
    }
}

/// How each attribute handle was used, per connection: the result of a ``GATTUsageTracker``.
public struct GATTUsage: Hashable, Sendable {
    /// Connection number → handle → usage, for the peer's database.
    public var byConnection: [Int: [UInt16: HandleUsage]]
    /// The same for the capturing side's own database (the peer as client).
    public var localByConnection: [Int: [UInt16: HandleUsage]]

    public init(byConnection: [Int: [UInt16: HandleUsage]] = [:], localByConnection: [Int: [UInt16: HandleUsage]] = [:]) {
        self.byConnection = byConnection
        self.localByConnection = localByConnection
    }
}

/// Counts reads, writes, notifications and indications per (connection, handle).
public struct GATTUsageTracker: AttributeValueObserver {
    struct Key: Hashable {
        var connection: Int
        var handle: UInt16
        var serverIsPeer: Bool
    }

    /// One flat table, updated in place: one hash per value.
    private var usage: [Key: HandleUsage] = [:]

    /// Connection number → handle → usage, for the peer's database.
    public var byConnection: [Int: [UInt16: HandleUsage]] { grouped(peer: true) }
    /// The same for the capturing side's own database (the peer as client).
    public var localByConnection: [Int: [UInt16: HandleUsage]] { grouped(peer: false) }

    public init() {}

    /// What the tracker counted, as a value to keep (``CaptureAnalysis/gattUsage``).
    public var result: GATTUsage { GATTUsage(byConnection: byConnection, localByConnection: localByConnection) }

    private func grouped(peer: Bool) -> [Int: [UInt16: HandleUsage]] {
        var out: [Int: [UInt16: HandleUsage]] = [:]
        for (k, u) in usage where k.serverIsPeer == peer { out[k.connection, default: [:]][k.handle] = u }
        return out
    }

    public mutating func observe(_ event: AttributeValueEvent, value: RawSpan) {
        let key = Key(connection: event.connectionNumber, handle: event.handle, serverIsPeer: event.serverIsPeer)
        switch event.kind {
        case .notification: usage[key, default: HandleUsage()].notifications += 1
        case .indication: usage[key, default: HandleUsage()].indications += 1
        case .writeRequest, .longWrite: usage[key, default: HandleUsage()].writes += 1
        case .writeCommand, .signedWriteCommand: usage[key, default: HandleUsage()].writeCommands += 1
        case .readResponse, .readBlobResponse, .longRead: usage[key, default: HandleUsage()].reads += 1
        default: break
        }
        if let codec = event.decoded?.codec, usage[key]?.codecs.contains(codec) == false, (usage[key]?.codecs.count ?? 0) < 8 {
            usage[key]?.codecs.insert(codec)
        }
    }

    public mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {}
    public mutating func finish(frame: Int, timestamp: Timestamp) {}
}
