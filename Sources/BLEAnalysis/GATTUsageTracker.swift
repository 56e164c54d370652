import BLECodecs
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
    /// Handles of the peer's database that no discovery named, named from their values' layout (``ValueLayout``).
    public var layouts: [Int: [UInt16: InferredLayout]] = [:]
    /// Connection number → the first Device Name (0x2A00, Core Spec Vol 3, Part C, 12.1) read from the peer, and the
    /// frame of the read: how `diff` matches peers whose addresses differ.
    public var deviceNames: [Int: DeviceName] = [:]

    /// A peer's name as a read of its Device Name characteristic gave it.
    public struct DeviceName: Hashable, Sendable {
        public var name: String
        public var frame: Int
        public init(name: String, frame: Int) {
            self.name = name
            self.frame = frame
        }
    }

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

    /// Where each (connection, handle, database) is counted in `counts`.
    private var index: [Key: Int] = [:]
    private var counts: [HandleUsage] = []
    /// A direct-mapped cache in front of `index`, as ``ThroughputTracker``'s: it saves one `Dictionary` lookup (and its
    /// `Hasher`) per value (docs/performance.md#trackers).
    private var cacheKeys = [Key](
        repeating: Key(connection: .min, handle: 0, serverIsPeer: false), count: GATTUsageTracker.cacheSlots)
    private var cacheIndices = [Int](repeating: -1, count: GATTUsageTracker.cacheSlots)
    static let cacheSlots = 256

    /// Connection number → handle → usage, for the peer's database.
    public var byConnection: [Int: [UInt16: HandleUsage]] { grouped(peer: true) }
    /// The same for the capturing side's own database (the peer as client).
    public var localByConnection: [Int: [UInt16: HandleUsage]] { grouped(peer: false) }

    /// Which layouts the values of unnamed handles fit (nil: not followed).
    private var layouts: ValueLayoutTracker?
    /// Per entry of `counts`: whether its values are still offered to `layouts` (false once no layout can name it, so
    /// a named or hopeless handle costs nothing more).
    private var layoutsOpen: [Bool] = []
    private var deviceNames: [Int: GATTUsage.DeviceName] = [:]

    /// `codecs`: the loaded specs whose frames may name a handle too; `layouts` false: no handle named from values.
    public init(codecs: CodecRegistry? = nil, layouts: Bool = true) {
        self.layouts = layouts ? ValueLayoutTracker(codecs: codecs) : nil
    }

    /// What the tracker counted, as a value to keep (``CaptureAnalysis/gattUsage``).
    public var result: GATTUsage {
        var usage = GATTUsage(byConnection: byConnection, localByConnection: localByConnection)
        usage.layouts = layouts?.result ?? [:]
        usage.deviceNames = deviceNames
        return usage
    }

    private func grouped(peer: Bool) -> [Int: [UInt16: HandleUsage]] {
        var out: [Int: [UInt16: HandleUsage]] = [:]
        for (k, i) in index where k.serverIsPeer == peer { out[k.connection, default: [:]][k.handle] = counts[i] }
        return out
    }

    /// The position of `key` in `counts`; a new zero entry when `create`, else nil for a key not counted yet.
    @inline(__always)
    private mutating func position(of key: Key, create: Bool) -> Int? {
        let mixed = UInt64(truncatingIfNeeded: key.connection) &<< 17 | UInt64(key.handle) &<< 1 | (key.serverIsPeer ? 1 : 0)
        let slot = Int(truncatingIfNeeded: (mixed &* 0x9E37_79B9_7F4A_7C15) >> 56)
        let cached = cacheIndices[slot], k = cacheKeys[slot]
        if cached >= 0, k.connection == key.connection, k.handle == key.handle, k.serverIsPeer == key.serverIsPeer {
            return cached
        }
        let i: Int
        if let found = index[key] {
            i = found
        } else {
            guard create else { return nil }
            i = counts.count
            counts.append(HandleUsage())
            layoutsOpen.append(true)
            index[key] = i
        }
        cacheKeys[slot] = key
        cacheIndices[slot] = i
        return i
    }

    public mutating func observe(_ event: AttributeValueEvent, value: RawSpan) {
        let key = Key(connection: event.connectionNumber, handle: event.handle, serverIsPeer: event.serverIsPeer)
        // Only the kinds counted here make an entry; a value of another kind may still name a codec on an existing one.
        let kind = event.kind
        let counted =
            kind == .notification || kind == .indication || kind == .writeRequest || kind == .longWrite
            || kind == .writeCommand || kind == .signedWriteCommand || kind == .readResponse || kind == .readBlobResponse
            || kind == .longRead
        guard let i = position(of: key, create: counted) else { return }
        if layoutsOpen[i], layouts != nil { layoutsOpen[i] = layouts!.observe(event, key: key, value: value) }
        switch kind {
        case .notification: counts[i].notifications += 1
        case .indication: counts[i].indications += 1
        case .writeRequest, .longWrite: counts[i].writes += 1
        case .writeCommand, .signedWriteCommand: counts[i].writeCommands += 1
        case .readResponse, .readBlobResponse, .longRead:
            counts[i].reads += 1
            if kind != .readBlobResponse, event.serverIsPeer, event.characteristic == Self.deviceName,
                deviceNames[event.connectionNumber] == nil || kind == .longRead
            {
                // UTF-8, not terminated (Core Spec Vol 3, Part C, 12.1); a long read's whole value replaces its first part.
                let name = value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                if !name.isEmpty { deviceNames[event.connectionNumber] = .init(name: name, frame: event.frame) }
            }
        default: break
        }
        if let codec = event.decoded?.codec, !counts[i].codecs.contains(codec), counts[i].codecs.count < 8 {
            counts[i].codecs.insert(codec)
        }
    }

    static let deviceName = BluetoothUUID(uuid16: 0x2A00)

    public mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {}
    public mutating func finish(frame: Int, timestamp: Timestamp) {}
}
