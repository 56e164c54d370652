import BLECapture
import BLECore
import BLEProtocols

/// One SCO or eSCO link, or an attempt at one: the call's audio beside its ACL, on a handle of its own with a lifecycle
/// of its own (Core Spec Vol 4, Part E, 7.1.26, 7.1.45, 7.7.35–36; Vol 2, Part B, 4.3–4.4). Its removal is its own
/// Disconnection Complete, never its ACL's end.
public struct SynchronousLink: Hashable, Sendable {
    /// 1-based, in the order the setups and links appear.
    public var number: Int
    /// `SCO` or `eSCO` (the link type of its complete event; what was asked when it failed before one).
    public var linkType: UInt8
    public var isESCO: Bool { linkType == SynchronousLinkType.esco }
    /// Its own handle (nil: the setup failed before one was given).
    public var handle: UInt16?
    public var controller: UInt16
    public var peerAddress: String?
    /// The number of the ACL connection it rides on (``Connection/number``), where the capture shows it.
    public var aclConnection: Int?
    /// The setup or accept command that asked for it, and its name (`Enhanced Setup Synchronous Connection`).
    public var requestFrame: Int?
    public var request: String?
    /// What the host asked on the air, by the request (`transparent`, `mSBC`, `CVSD`): the codec it meant to use.
    public var requestedCoding: String?
    /// The packet types the request allowed (7.1.26: bits of HV1–HV3, EV3–EV5 and the EDR "may not use" bits).
    public var requestedPacketTypes: UInt16?
    /// The event that said how it went: Synchronous Connection Complete (or Connection Complete for SCO), or the
    /// Command Status that refused the request.
    public var resultFrame: Int?
    public var resultTime: Timestamp?
    public var status: HCIStatus
    public var established: Bool { status == .success && handle != nil && startFrame != nil }
    public var startFrame: Int?
    public var startTime: Timestamp?
    /// Its timing and sizes as the controller set them (slots of 0.625 ms; octets per packet).
    public var transmissionInterval: UInt8 = 0
    public var retransmissionWindow: UInt8 = 0
    public var rxPacketLength: UInt16 = 0
    public var txPacketLength: UInt16 = 0
    public var airMode: AirMode?
    /// Synchronous Connection Changed events (frame, status).
    public var changes: [SynchronousChange] = []
    public var endFrame: Int?
    public var endTime: Timestamp?
    public var endReason: HCIStatus?
    /// Ended by this side's HCI Reset at ``endFrame`` (Core Spec Vol 4, Part E, 7.3.2: the reset ends every link of the
    /// controller), not by a Disconnection Complete.
    public var endedByReset = false
    /// SCO data packets and their data bytes (the header's length) each way, where the host carries the audio over HCI (most phones route it on a
    /// vendor path, so none is the usual case and says nothing about the audio).
    public var packets = PerDirection()
    public var bytes = PerDirection()
    /// Received packets by the controller's Packet_Status_Flag (Vol 4, Part E, 5.4.3: 1 possibly invalid, 2 no data
    /// received, 3 partially lost; index 0, correctly received, is not counted here).
    public var receivedFlagged = [0, 0, 0, 0]
    /// Its last data packet each way (received: from the peer): the ACL's activity includes its audio links' traffic
    /// (``DC02PeerEndedLink``'s last packet from the peer).
    public var lastReceived: LinkActivity.Moment?
    public var lastSent: LinkActivity.Moment?

    /// Transmission interval in ms (`7.5 ms` for a usual eSCO link).
    public var intervalMilliseconds: Double { Double(transmissionInterval) * 0.625 }
    public var durationMicroseconds: Int64? {
        guard let s = startTime, let e = endTime else { return nil }
        return e.microseconds(since: s)
    }
}

/// One Synchronous Connection Changed (7.7.36).
public struct SynchronousChange: Hashable, Sendable {
    public var frame: Int
    public var status: HCIStatus
    public var transmissionInterval: UInt8
    public var retransmissionWindow: UInt8
}

/// Follows the SCO and eSCO links of an HCI log: the setup the host asked for, the complete event with its status, air
/// mode and timing, changes, data, and the Disconnection Complete that removes one (by its own handle, so its ACL goes
/// on). One per analyzer, beside the ACL links, as the ISO tracker is for CIS and BIS.
struct SynchronousLinks {
    struct Key: Hashable {
        var controller: UInt16
        var handle: UInt16
    }
    static let maxLinks = 4096

    private(set) var links: [SynchronousLink] = []
    /// Open links by (controller, handle).
    private var open: [Key: Int] = [:]
    /// Setups waiting for their complete event, per controller, oldest first (index into `links`).
    private var pending: [UInt16: [Int]] = [:]
    /// Every (controller, handle) a synchronous link held: its late completions and data are not ACL's.
    private(set) var handles: Set<Key> = []

    /// True when (controller, handle) is an open synchronous link.
    func isOpen(controller: UInt16, handle: UInt16) -> Bool {
        !open.isEmpty && open[Key(controller: controller, handle: handle)] != nil
    }

    /// A setup or accept command: a link asked for (its ACL and peer as the caller knows them).
    mutating func requested(
        _ name: String, coding: String?, packetTypes: UInt16, acl: Int?, peer: String?, controller: UInt16, frame: Int
    ) {
        guard links.count < Self.maxLinks else { return }
        var l = SynchronousLink(number: links.count + 1, linkType: SynchronousLinkType.esco, controller: controller, status: .success)
        l.aclConnection = acl
        l.peerAddress = peer
        l.requestFrame = frame
        l.request = name
        l.requestedCoding = coding
        l.requestedPacketTypes = packetTypes
        links.append(l)
        pending[controller, default: []].append(links.count - 1)
    }

    /// The Command Status of a setup: a failure ends the attempt there (no complete event follows, 7.7.15).
    mutating func commandStatus(_ status: HCIStatus, controller: UInt16, frame: Int, timestamp: Timestamp) {
        guard status != .success, let i = pending[controller]?.last else { return }
        pending[controller]?.removeLast()
        links[i].status = status
        links[i].resultFrame = frame
        links[i].resultTime = timestamp
    }

    /// Synchronous Connection Complete (7.7.35), or Connection Complete with link type SCO (7.7.3): the link is up on
    /// its handle, or the attempt failed with the status. `acl`: the ACL connection to the same peer.
    mutating func completed(
        status: HCIStatus, handle: UInt16, peer: String, linkType: UInt8, timing: (UInt8, UInt8, UInt16, UInt16)?, airMode: AirMode?,
        acl: Int?, controller: UInt16, frame: Int, timestamp: Timestamp
    ) -> Int? {
        var i: Int
        if let queue = pending[controller], let first = queue.first {
            i = first
            pending[controller]?.removeFirst()
        } else {
            guard links.count < Self.maxLinks else { return nil }
            // Asked by the peer (accepted without a command in the log) or before the log began.
            links.append(SynchronousLink(number: links.count + 1, linkType: linkType, controller: controller, status: status))
            i = links.count - 1
        }
        links[i].linkType = linkType
        links[i].status = status
        links[i].resultFrame = frame
        links[i].resultTime = timestamp
        links[i].peerAddress = peer
        if links[i].aclConnection == nil { links[i].aclConnection = acl }
        links[i].airMode = airMode
        if let (interval, window, rx, tx) = timing {
            links[i].transmissionInterval = interval
            links[i].retransmissionWindow = window
            links[i].rxPacketLength = rx
            links[i].txPacketLength = tx
        }
        guard status == .success else { return links[i].number }
        let h = handle & 0x0FFF
        links[i].handle = h
        links[i].startFrame = frame
        links[i].startTime = timestamp
        open[Key(controller: controller, handle: h)] = i
        handles.insert(Key(controller: controller, handle: h))
        return links[i].number
    }

    /// Synchronous Connection Changed (7.7.36).
    mutating func changed(_ c: SynchronousConnectionChanged, controller: UInt16, frame: Int) {
        guard let i = open[Key(controller: controller, handle: c.handle & 0x0FFF)] else { return }
        if links[i].changes.count < 4096 {
            links[i].changes.append(
                SynchronousChange(
                    frame: frame, status: c.status, transmissionInterval: c.transmissionInterval,
                    retransmissionWindow: c.retransmissionWindow))
        }
        guard c.status == .success else { return }
        links[i].transmissionInterval = c.transmissionInterval
        links[i].retransmissionWindow = c.retransmissionWindow
        links[i].rxPacketLength = c.rxPacketLength
        links[i].txPacketLength = c.txPacketLength
    }

    /// A Disconnection Complete: when its handle is an open synchronous link, that link ended (returns its number);
    /// nil: the handle is not one (an ACL's).
    mutating func disconnected(handle: UInt16, status: HCIStatus, reason: HCIStatus, controller: UInt16, frame: Int, timestamp: Timestamp)
        -> SynchronousLink?
    {
        let key = Key(controller: controller, handle: handle & 0x0FFF)
        guard let i = open[key] else { return nil }
        guard status == .success else { return links[i] }
        open[key] = nil
        links[i].endFrame = frame
        links[i].endTime = timestamp
        links[i].endReason = reason
        return links[i]
    }

    /// A SCO data packet (Vol 4, Part E, 5.4.3): counted on its link.
    mutating func data(_ record: CaptureRecord) {
        var r = record.reader
        // A record with no data is no audio of any link (``SCORecord/isEmpty(_:)``).
        guard let raw = try? UInt16(parsingLittleEndian: &r), let length = try? r.readUInt8(), length > 0 else { return }
        guard let i = open[Key(controller: record.controllerIndex, handle: raw & 0x0FFF)] else { return }
        links[i].packets[record.direction] += 1
        links[i].bytes[record.direction] += Int(length)
        if record.direction == .rx, raw >> 12 & 0x3 != 0 { links[i].receivedFlagged[Int(raw >> 12 & 0x3)] += 1 }
        let moment = LinkActivity.Moment(frame: record.frame, timestamp: record.timestamp)
        if record.direction == .rx { links[i].lastReceived = moment } else if record.direction == .tx { links[i].lastSent = moment }
    }

    /// This side's HCI Reset on `controller`: every synchronous link open on it ends there, by the reset (Core Spec Vol 4,
    /// Part E, 7.3.2), whether or not the log shows the ACL it rode on; the setups waiting for their complete event are
    /// cut short with them.
    mutating func reset(controller: UInt16, frame: Int, timestamp: Timestamp) {
        pending[controller] = nil
        for (key, i) in open where key.controller == controller {
            open[key] = nil
            links[i].endFrame = frame
            links[i].endTime = timestamp
            links[i].endedByReset = true
        }
    }

    /// The ACL connection `number` ended: its synchronous links still open end with it (the controller removes them
    /// first, Vol 2, Part B, 4.4; a log that misses the event still shows the ACL's end).
    mutating func aclEnded(_ number: Int, frame: Int, timestamp: Timestamp) {
        for (key, i) in open where links[i].aclConnection == number {
            open[key] = nil
            links[i].endFrame = frame
            links[i].endTime = timestamp
        }
    }
}
