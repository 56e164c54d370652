import BLECore

/// Where a sniffer missed part of one link: connection events it did not hear (the nRF Sniffer's event counter skipped
/// some, or the time since the link's previous event spans more than one interval), packets it heard with a bad CRC, and
/// packets it did not hear inside an event that the other side's acknowledgement bits show were sent.
/// A response, an acknowledgement or a terminate the capture does not hold may have gone there, so an absence a finding
/// claims across such a window is one the capture cannot show (issue 49, point 4).
///
/// The central transmits at every connection event (Core Spec Vol 6, Part B, 4.5.1), latency or not: an event the
/// sniffer has no packet of is one it missed.
public struct SnifferMisses: Hashable, Sendable {
    /// A stretch of the link the sniffer missed: between its packets at frames `after` and `at`, `events` connection events
    /// (0: the packet at `at` was heard but its CRC failed), or with `unheard` one packet that side sent: the other
    /// side's NESN at `at` moved on since its previous packet at `after` with none of the sender's in the capture between
    /// (Core Spec Vol 6, Part B, 4.5.9: NESN moves only when a new packet was received).
    public struct Window: Hashable, Sendable {
        public var after: Int
        public var at: Int
        public var events: Int
        /// Who sent the packet the capture does not hold (local: the central, peer: the peripheral); nil for events and CRCs.
        public var unheard: EvidenceEvent.Sender?
    }

    /// The windows in frame order, up to ``limit``.
    public private(set) var windows: [Window] = []
    /// Every window, and every event missed, kept or not.
    public private(set) var count = 0
    public private(set) var events = 0
    /// More windows than kept: a question about a later stretch cannot be answered ("could have missed").
    public var overflowed: Bool { count > windows.count }
    static let limit = 100_000

    public init() {}

    mutating func note(after: Int, at: Int, events missed: Int, unheard: EvidenceEvent.Sender? = nil) {
        count &+= 1
        events &+= missed
        if windows.count < Self.limit { windows.append(Window(after: after, at: at, events: missed, unheard: unheard)) }
    }

    /// Whether a window ends after `frame` (a gap already noted since the packet there).
    func noted(since frame: Int) -> Bool { (windows.last?.at ?? Int.min) > frame }

    /// The windows between frames `from` and `to` (a window whose missed stretch lies after `from` and before `to`), or
    /// nil when none; an overflowed list answers with what it has, or a window of the whole span past what it kept.
    public func within(_ from: Int, _ to: Int) -> [Window]? {
        let found = windows.filter { $0.at > from && $0.after < to }
        if !found.isEmpty { return found }
        if overflowed, let last = windows.last, last.at < to { return [Window(after: max(from, last.at), at: to, events: 0)] }
        return nil
    }
}
