import BLECore

/// What one link carried and how its controller's ACL buffer took it: packets and bytes each way (by original length,
/// so records the capturer cut still count), the host → controller packets not yet reported done by Number Of
/// Completed Packets (Core Spec Vol 4, Part E, 7.7.19), and the periods the controller's buffer (4.1.1) stayed full
/// after this link's send. A value inside the link's ``LinkMachine``, changed only through its `feed` functions.
public struct LinkTraffic: Hashable, Sendable {
    public fileprivate(set) var aclPackets = PerDirection()
    public fileprivate(set) var aclBytes = PerDirection()
    /// ATT PDUs on any bearer.
    public fileprivate(set) var attPDUs = 0
    /// L2CAP Echo Requests (Core Spec Vol 3, Part A, 4.8) either way: l2ping's presence probe, when nothing else ran.
    public fileprivate(set) var echoRequests = 0
    /// Host → controller ACL packets not yet reported done by Number Of Completed Packets.
    public fileprivate(set) var inFlight = 0
    /// The most packets that were in the controller's buffer at once for this link.
    public fileprivate(set) var maxInFlight = 0
    public fileprivate(set) var completedPackets = 0
    /// Periods when the controller's ACL buffer (LE Read Buffer Size) was full after this link sent a packet: the host
    /// could not hand it more data until Number Of Completed Packets.
    public fileprivate(set) var controllerQueueFull: [QueueFullPeriod] = []
    /// Total time the controller's queue was full while this link was sending, µs.
    public fileprivate(set) var controllerQueueFullMicroseconds: Int64 = 0

    /// Bound on ``controllerQueueFull``: a link keeps room for another period while it holds fewer.
    static let maxQueueFullPeriods = 10_000

    /// Packets Number Of Completed Packets reported beyond those in flight, and when. A host's log may write a packet
    /// after the event that reports it sent (Android's btsnoop, from two threads: the LG log's 251 and 2715 each report
    /// a packet logged 1–3 ms later, at 253 and 2716), so the packets logged within ``reorderWindow`` after are those,
    /// already done. Counted as in flight instead, each such packet put the count one above the controller's for the
    /// rest of the link, and the next idle stretch read as a stall (the LG log: "4 packets waited 89.2 s", 3608–3645,
    /// where tshark counts 1,670 sent and 1,670 completed at 3608). Past the window the excess is dropped: packets sent
    /// before the log began, or in a gap of it.
    var completedAhead = 0
    var completedAheadAt = Timestamp(microseconds: 0)
    static let reorderWindow: Int64 = 50_000
}

/// The link's traffic and controller flow control (``LinkTraffic``) and what it carried that the diagnosis reads
/// (``LinkActivity``), fed per packet: the per-packet inputs are functions, not ``LinkInput`` cases, so nothing is
/// built or switched on per packet.
extension LinkMachine {
    /// One ACL packet of `bytes` (original length) sent in `direction` at `moment`, and for host → controller packets
    /// the packets in flight. Returns whether the link keeps room for another ``LinkTraffic/controllerQueueFull`` period.
    @inline(__always)
    mutating func feed(acl direction: Direction, bytes: Int, at moment: LinkActivity.Moment) -> Bool {
        traffic.aclPackets[direction] += 1
        traffic.aclBytes[direction] += bytes
        if direction == .tx {
            if traffic.completedAhead > 0 {
                if moment.timestamp.microseconds(since: traffic.completedAheadAt) <= LinkTraffic.reorderWindow {
                    // Reported sent before it was logged: never in flight.
                    traffic.completedAhead -= 1
                    activity.sent(at: moment)
                    return traffic.controllerQueueFull.count < LinkTraffic.maxQueueFullPeriods
                }
                traffic.completedAhead = 0
            }
            if traffic.inFlight == 0 { activity.waitingSince = moment }
            traffic.inFlight += 1
            traffic.maxInFlight = max(traffic.maxInFlight, traffic.inFlight)
            activity.sent(at: moment)
        } else if direction == .rx {
            activity.received(at: moment)
        }
        return traffic.controllerQueueFull.count < LinkTraffic.maxQueueFullPeriods
    }

    /// One LL data PDU carrying L2CAP on an air capture, `bytes` of payload, sent in `direction`: counted (no host and no
    /// controller buffer on the air).
    @inline(__always)
    mutating func feed(airData direction: Direction, bytes: Int) {
        traffic.aclPackets[direction] += 1
        traffic.aclBytes[direction] += bytes
    }

    /// `packets` host → controller packets reported sent (Number Of Completed Packets) at `moment`.
    @inline(__always)
    mutating func feed(completed packets: Int, at moment: LinkActivity.Moment) {
        let before = traffic.inFlight
        if packets > before {
            let stale = moment.timestamp.microseconds(since: traffic.completedAheadAt) > LinkTraffic.reorderWindow
            traffic.completedAhead = (stale ? 0 : traffic.completedAhead) + packets - before
            traffic.completedAheadAt = moment.timestamp
        }
        traffic.inFlight = max(0, before - packets)
        traffic.completedPackets += packets
        if before > 0 { activity.completed(packetsWaiting: before, stillInFlight: traffic.inFlight, at: moment) }
    }

    /// This link's send filled its controller's buffer at `moment` with `packets` in flight: a full period starts.
    mutating func feed(bufferFilledWith packets: Int, at moment: LinkActivity.Moment) {
        traffic.controllerQueueFull.append(QueueFullPeriod(startFrame: moment.frame, startTime: moment.timestamp, packets: packets))
    }

    /// The buffer this link filled has room again at `moment`: the last full period ends.
    mutating func feed(bufferRoomAgainAt moment: LinkActivity.Moment) {
        guard var period = traffic.controllerQueueFull.popLast() else { return }
        period.endFrame = moment.frame
        period.endTime = moment.timestamp
        // Wrapping: a damaged record's time stamp can be anything; a sum is never worth a trap.
        traffic.controllerQueueFullMicroseconds &+= period.durationMicroseconds ?? 0
        traffic.controllerQueueFull.append(period)
    }

    /// One L2CAP Echo Request.
    mutating func feedEchoRequest() { traffic.echoRequests += 1 }

    /// One ATT PDU, read once (``ATTView``): counted, and what the diagnosis reads noted (``LinkActivity``) against the
    /// ATT_MTU in force; `activity` false for passes that gather no evidence and for PDUs on other bearers.
    @inline(__always)
    mutating func feed(att view: ATTView, at moment: LinkActivity.Moment, direction: Direction, activity noting: Bool) {
        let frame = moment.frame
        traffic.attPDUs += 1
        guard noting else { return }
        if view.isNotifiedValue { noteNotifiedValue(at: frame) }
        activity.note(view, mtu: link.snapshot.mtu, at: moment, direction: direction)
    }
}
