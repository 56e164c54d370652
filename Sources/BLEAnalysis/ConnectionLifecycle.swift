import BLECore
import BLEProtocols

/// How one connection ends, as HCI and the link layer tell it: a disconnection this side asked for (HCI Disconnect,
/// Core Spec Vol 4, Part E, 7.1.6), the controller's Disconnection Complete and its reason (7.7.5), an
/// LL_TERMINATE_IND on an air capture (Vol 6, Part B, 5.1.3), or the handle or access address taken by a new
/// connection the capture shows without the old one's end.
///
/// Fed one input at a time; answers when the link is closed, with who ended it. The reason a Disconnection Complete
/// carries says who: 0x16 "terminated by local host" is this side's Disconnect, 0x13–0x15 (remote user, low resources,
/// power off) the peer's, and the link-loss codes (0x08 supervision timeout, 0x22 LL response timeout, 0x3D MIC
/// failure, 0x3E failed to establish …) neither side's: the link itself (Vol 1, Part F, 2).
public struct ConnectionLifecycle: Hashable, Sendable {
    /// Who ended a link.
    public enum EndedBy: String, Hashable, Sendable {
        /// This side (the host whose log it is, or the central of an air capture's LL_TERMINATE_IND sent c2p).
        case local
        case peer
        /// Neither: the link was lost (timeout, MIC failure, failed establishment).
        case link
        /// The capture cannot tell (a reason no side owns, a replaced handle).
        case unknown
    }

    /// How the connection ended.
    public struct Ending: Hashable, Sendable {
        public var frame: Int
        public var timestamp: Timestamp
        /// What outputs show: the reason's name, `LL_TERMINATE_IND: …`, `replaced by a new connection on the same handle`.
        public var reason: String
        /// The error code, when the end carried one.
        public var code: HCIStatus?
        public var endedBy: EndedBy
        /// This side's Disconnect that asked for it, when the capture holds it.
        public var requestFrame: Int?
        /// Not seen but inferred (an air link the sniffer heard nothing more of, ``LinkSilence``): what it was inferred
        /// from. Nil for an end the capture shows.
        public var inferredFrom: String? = nil

        /// `Remote User Terminated Connection (the peer ended it)`: the reason and, when the capture says, who.
        public var text: String {
            switch endedBy {
            case .local: reason + " (this side ended it)"
            case .peer: reason + " (the peer ended it)"
            case .link: reason + " (the link was lost)"
            case .unknown: reason
            }
        }
    }

    public enum Input: Hashable, Sendable {
        /// HCI Disconnect sent by this side's host.
        case disconnectRequested(reason: HCIStatus, frame: Int)
        /// Its Command Status with an error (7.7.15): the controller did not start the disconnection, so an end that
        /// follows is not this side's (a peer leaving at the same time: its 0x13 is the peer's).
        case disconnectRefused(frame: Int)
        /// Disconnection Complete: `status` of the procedure, `reason` the link ended for.
        case disconnected(status: HCIStatus, reason: HCIStatus, frame: Int, timestamp: Timestamp)
        /// LL_TERMINATE_IND (air): sent by the central (`byCentral`), by the peripheral, or unknown (nil).
        case terminated(code: UInt8, byCentral: Bool?, frame: Int, timestamp: Timestamp)
        /// The handle or access address now names another connection; `why` says which.
        case replaced(why: String, frame: Int, timestamp: Timestamp)
        /// An air link the sniffer heard nothing more of while the capture went on (``LinkSilence``).
        case silent(LinkSilence)
        /// An air link the sniffer stopped following after its packet at `frame`: no end, and nothing claimed after it.
        case notFollowed(frame: Int, timestamp: Timestamp)
        /// This side's HCI Reset at `frame`: it ends every link its controller held, with no Disconnection Complete
        /// (Core Spec Vol 4, Part E, 7.3.2).
        case reset(frame: Int, timestamp: Timestamp)
    }

    public enum Output: Hashable, Sendable {
        case closed(Ending)
        /// A Disconnection Complete whose status is an error: the link stays up (7.7.5).
        case disconnectFailed(HCIStatus)
    }

    /// A Disconnect this side's host sent.
    public struct Request: Hashable, Sendable {
        public var frame: Int
        public var reason: HCIStatus
    }

    /// This side's Disconnect still waiting for its Disconnection Complete.
    public private(set) var pendingRequest: Request?
    /// How it ended; nil while open.
    public private(set) var ending: Ending?
    /// An air link with no end in the capture that the sniffer stopped following: its last packet (issue 49, point 7).
    public private(set) var followedUntil: LastHeard?

    /// A link's last packet the capture holds.
    public struct LastHeard: Hashable, Sendable {
        public var frame: Int
        public var timestamp: Timestamp
    }

    public init() {}

    /// One input; the answer when it closed the link or a disconnection failed. Inputs after the end change nothing.
    public mutating func feed(_ input: Input) -> Output? {
        guard ending == nil else { return nil }
        switch input {
        case .disconnectRequested(let reason, let frame):
            pendingRequest = Request(frame: frame, reason: reason)
            return nil
        case .disconnectRefused:
            pendingRequest = nil
            return nil
        case .disconnected(let status, let reason, let frame, let timestamp):
            guard status == .success else {
                pendingRequest = nil
                return .disconnectFailed(status)
            }
            // A supervision timeout ends the link whoever asked to close it: the peer went unheard for the whole
            // timeout (Core Vol 6 Part B 4.5.2), which a termination this side began cannot cause in less time.
            let by = pendingRequest != nil && reason != .connectionTimeout ? EndedBy.local : Self.endedBy(reason)
            return close(
                Ending(
                    frame: frame, timestamp: timestamp, reason: reason.description, code: reason, endedBy: by,
                    requestFrame: pendingRequest?.frame))
        case .terminated(let code, let byCentral, let frame, let timestamp):
            let status = HCIStatus(rawValue: code)
            // On air there is no host: the side that sent it ended it, when the capture says which.
            let by: EndedBy = Self.endedBy(status) == .link ? .link : byCentral.map { $0 ? .local : .peer } ?? .unknown
            return close(
                Ending(
                    frame: frame, timestamp: timestamp, reason: "LL_TERMINATE_IND: " + status.description, code: status,
                    endedBy: by, requestFrame: nil))
        case .replaced(let why, let frame, let timestamp):
            return close(Ending(frame: frame, timestamp: timestamp, reason: why, code: nil, endedBy: .unknown, requestFrame: nil))
        case .silent(let silence):
            return close(silence.ending)
        case .notFollowed(let frame, let timestamp):
            followedUntil = LastHeard(frame: frame, timestamp: timestamp)
            return nil
        case .reset(let frame, let timestamp):
            return close(
                Ending(
                    frame: frame, timestamp: timestamp, reason: "HCI Reset at frame \(frame)", code: nil, endedBy: .local, requestFrame: nil
                ))
        }
    }

    private mutating func close(_ e: Ending) -> Output {
        ending = e
        pendingRequest = nil
        return .closed(e)
    }

    /// Who a Disconnection Complete reason (or LL_TERMINATE_IND error code) names, without a request in the capture.
    static func endedBy(_ reason: HCIStatus) -> EndedBy {
        switch reason {
        case .connectionTerminatedByLocalHost: .local
        case .remoteUserTerminatedConnection, .remoteLowResources, .remotePowerOff: .peer
        case .connectionTimeout, .llResponseTimeout, .instantPassed, .connectionTerminatedMICFailure, .connectionFailedToBeEstablished,
            .pageTimeout, .differentTransactionCollision:
            .link
        default: .unknown
        }
    }
}

/// An air link the sniffer heard nothing more of for longer than its supervision timeout while the capture went on, its
/// peripheral advertising again after it: no end (LL_TERMINATE_IND) is in the capture, so how it ended is inferred from
/// what the capture does show. (Silence without the advertising may be the sniffer's alone: no end is inferred then.)
///
/// A live link carries a packet from the central at every connection event (Core Spec Vol 6, Part B, 4.5.1), so a
/// sniffer that keeps following it hears it at least every interval. Silence alone cannot tell a lost link from a
/// sniffer that lost the link's hopping; the peripheral's own advertising can: a peripheral advertises connectably
/// again only once it is out of the link (4.5.2: a link with no packet in its first six intervals failed to be
/// established; 4.5.2: one silent for its supervision timeout is lost).
public struct LinkSilence: Hashable, Sendable {
    /// The peripheral heard advertising: the frame, its time, and whether a scanner's SCAN_REQ to it showed it.
    public struct Advertising: Hashable, Sendable {
        public var frame: Int
        public var timestamp: Timestamp
        public var byScanRequest: Bool
        public init(frame: Int, timestamp: Timestamp, byScanRequest: Bool) {
            self.frame = frame
            self.timestamp = timestamp
            self.byScanRequest = byScanRequest
        }
    }

    /// The link's last packet (or its connect request, when it carried none).
    public var lastFrame: Int
    public var lastTimestamp: Timestamp
    /// Whether any packet was heard on the link after its connect request.
    public var carriedPackets: Bool
    /// The peripheral's first connectable advertisement after `lastFrame` (or a scanner's SCAN_REQ to it); nil when the
    /// link's own last exchange shows its end (``encryptedTerminate``).
    public var readvertised: Advertising?
    /// The link's supervision timeout and connection interval (nil when not known), in microseconds.
    public var supervisionTimeout: Int64
    public var interval: Int64?
    /// How long the capture went on after `lastTimestamp`, in microseconds.
    public var silence: Int64
    /// The first of the link's PDUs that could not be decrypted: its LL_TERMINATE_IND may be among them.
    public var undecryptedFrom: Int? = nil
    /// The link's last PDU was encrypted, no key opened it, and its size is an LL_TERMINATE_IND's (2 octets and the
    /// MIC), acknowledged or not: with the silence after it, probably the terminate (issue 49).
    public var encryptedTerminate: EncryptedTerminate? = nil

    public struct EncryptedTerminate: Hashable, Sendable {
        public var frame: Int
        public var byCentral: Bool
        /// The other side's packet that acknowledged it (its NESN past the PDU's SN), if the capture holds one.
        public var acknowledgedAt: Int?
        public init(frame: Int, byCentral: Bool, acknowledgedAt: Int?) {
            self.frame = frame
            self.byCentral = byCentral
            self.acknowledgedAt = acknowledgedAt
        }
    }

    public init(
        lastFrame: Int, lastTimestamp: Timestamp, carriedPackets: Bool,
        readvertised: Advertising?,
        supervisionTimeout: Int64, interval: Int64?, silence: Int64
    ) {
        self.lastFrame = lastFrame
        self.lastTimestamp = lastTimestamp
        self.carriedPackets = carriedPackets
        self.readvertised = readvertised
        self.supervisionTimeout = supervisionTimeout
        self.interval = interval
        self.silence = silence
    }

    /// The end the capture implies, at the link's last packet.
    public var ending: ConnectionLifecycle.Ending {
        let last = carriedPackets ? "the link's last packet (frame \(lastFrame))" : "the connect request (frame \(lastFrame))"
        let reason: String, code: HCIStatus?, by: ConnectionLifecycle.EndedBy
        let after = readvertised.map { $0.timestamp.microseconds(since: lastTimestamp) } ?? silence
        var evidence = readvertised.map { again in
            let how = again.byScanRequest ? "a scanner's SCAN_REQ to it" : "its advertisement"
            return "the peripheral was advertising again at frame \(again.frame) (\(how)), \(duration(after)) after \(last)"
        }
        if let t = encryptedTerminate, carriedPackets {
            let sender = t.byCentral ? "central" : "peripheral"
            let acknowledged = t.acknowledgedAt.map { "acknowledged at frame \($0)" } ?? "not acknowledged in the capture"
            evidence =
                "the \(sender)'s encrypted control PDU at frame \(t.frame) has an LL_TERMINATE_IND's size (2 octets and the MIC; no key opened it), \(acknowledged), and the link was silent after it for \(duration(silence))"
                + (evidence.map { "; " + $0 } ?? "")
            var e = ConnectionLifecycle.Ending(
                frame: t.frame, timestamp: lastTimestamp, reason: Self.encryptedTerminateReason, code: nil,
                endedBy: t.byCentral ? .local : .peer, requestFrame: nil)
            e.inferredFrom = evidence
            return e
        }
        if !carriedPackets {
            (reason, code, by) = (Self.notEstablished, HCIStatus(rawValue: 0x3E), .link)
        } else if let from = undecryptedFrom {
            // Its end may be an LL_TERMINATE_IND among the PDUs no key decrypted.
            evidence =
                (evidence ?? "the link went silent")
                + "; the link's PDUs from frame \(from) could not be decrypted and may hold its LL_TERMINATE_IND"
            (reason, code, by) = (Self.endedUnseen, nil, .unknown)
        } else if let interval, after < interval {
            // Before the next connection event: no LL_TERMINATE_IND can have been exchanged after the last packet.
            (reason, code, by) = (Self.peripheralLeft, nil, .peer)
        } else {
            // A terminate the sniffer missed, a loss, or the peripheral leaving: the capture cannot tell which.
            (reason, code, by) = (Self.endedUnseen, nil, .unknown)
        }
        var e = ConnectionLifecycle.Ending(
            frame: lastFrame, timestamp: lastTimestamp, reason: reason, code: code, endedBy: by, requestFrame: nil)
        e.inferredFrom = evidence ?? "the link was silent after \(last) for \(duration(silence))"
        return e
    }

    /// The reasons an inferred end carries (``ConnectionLifecycle/Ending/reason``).
    public static let notEstablished = "Connection Failed to be Established"
    public static let peripheralLeft = "the peripheral left the link without LL_TERMINATE_IND"
    public static let endedUnseen = "no LL_TERMINATE_IND in the capture"
    public static let encryptedTerminateReason = "probably LL_TERMINATE_IND (encrypted)"
}
