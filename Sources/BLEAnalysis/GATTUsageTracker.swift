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

/// Counts reads, writes, notifications and indications per (connection, handle).
public struct GATTUsageTracker: AttributeValueObserver {
    /// Connection number → handle → usage, for the peer's database.
    public private(set) var byConnection: [Int: [UInt16: HandleUsage]] = [:]
    /// The same for the capturing side's own database (the peer as client).
    public private(set) var localByConnection: [Int: [UInt16: HandleUsage]] = [:]

    public init() {}

    public mutating func observe(_ event: AttributeValueEvent) {
        var u = (event.serverIsPeer ? byConnection : localByConnection)[event.connectionNumber, default: [:]][event.handle, default: HandleUsage()]
        switch event.kind {
        case .notification: u.notifications += 1
        case .indication: u.indications += 1
        case .writeRequest, .longWrite: u.writes += 1
        case .writeCommand, .signedWriteCommand: u.writeCommands += 1
        case .readResponse, .readBlobResponse, .longRead: u.reads += 1
        default: break
        }
        if let codec = event.decoded?.codec, u.codecs.count < 8 { u.codecs.insert(codec) }
        if event.serverIsPeer {
            byConnection[event.connectionNumber, default: [:]][event.handle] = u
        } else {
            localByConnection[event.connectionNumber, default: [:]][event.handle] = u
        }
    }

    public mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {}
    public mutating func finish(frame: Int, timestamp: Timestamp) {}
}
