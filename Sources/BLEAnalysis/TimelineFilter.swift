import BLECore

/// Which timeline events to keep (`timeline --conn/--address/--handle/--uuid/--layer/--from/--to`).
public struct TimelineFilter: Sendable {
    /// A bound on time (seconds from the first record) or on frame numbers.
    public enum Bound: Sendable, Equatable {
        case seconds(Double)
        case frame(Int)

        /// `12.5` (seconds from the first record) or `#120` / `f120` (frame).
        public init?(_ text: String) {
            if text.hasPrefix("#") || text.hasPrefix("f") {
                guard let f = Int(text.dropFirst()), f > 0 else { return nil }
                self = .frame(f)
            } else {
                guard let s = Double(text), s >= 0 else { return nil }
                self = .seconds(s)
            }
        }
    }

    public var connections: Set<UInt16> = []
    public var addresses: Set<String> = []
    public var handles: Set<UInt16> = []
    public var uuids: Set<BluetoothUUID> = []
    public var layers: Set<Layer> = []
    public var from: Bound?
    public var to: Bound?

    public init() {}

    public var isEmpty: Bool {
        connections.isEmpty && addresses.isEmpty && handles.isEmpty && uuids.isEmpty && layers.isEmpty && from == nil && to == nil
    }

    /// - Parameters:
    ///   - origin: the first record's time, for `.seconds` bounds.
    ///   - peerAddress: the peer of the event's connection, when known.
    public func matches(_ e: TimelineEvent, origin: Timestamp?, peerAddress: String?) -> Bool {
        if !layers.isEmpty, !layers.contains(e.layer) { return false }
        if !connections.isEmpty {
            guard let c = e.connection, connections.contains(c) else { return false }
        }
        if !addresses.isEmpty {
            guard let a = peerAddress?.uppercased(), addresses.contains(a) else { return false }
        }
        if !handles.isEmpty {
            guard let h = e.handle, handles.contains(h) else { return false }
        }
        if !uuids.isEmpty {
            guard let u = e.uuid, uuids.contains(u) else { return false }
        }
        if let from, !Self.after(e, from, origin: origin) { return false }
        if let to, !Self.before(e, to, origin: origin) { return false }
        return true
    }

    static func seconds(_ e: TimelineEvent, _ origin: Timestamp?) -> Double {
        Double(e.timestamp.microseconds(since: origin ?? e.timestamp)) / 1e6
    }

    static func after(_ e: TimelineEvent, _ b: Bound, origin: Timestamp?) -> Bool {
        switch b {
        case .frame(let f): e.frame >= f
        case .seconds(let s): seconds(e, origin) >= s
        }
    }

    static func before(_ e: TimelineEvent, _ b: Bound, origin: Timestamp?) -> Bool {
        switch b {
        case .frame(let f): e.frame <= f
        case .seconds(let s): seconds(e, origin) <= s
        }
    }
}
