import BLECore

/// What a connection carried that the diagnosis reads beside its link facts: the last packet each way, how long sent
/// packets waited for the controller, the notifications received and the writes sent per handle, how full the values
/// were. Kept up to date on the per-packet path at the cost of a few stores.
public struct LinkActivity: Hashable, Sendable {
    public struct Moment: Hashable, Sendable {
        public var frame: Int
        public var timestamp: Timestamp
        public init(frame: Int, timestamp: Timestamp) {
            self.frame = frame
            self.timestamp = timestamp
        }
    }
    /// How often a handle was used, and the first and last frame.
    public struct HandleUse: Hashable, Sendable {
        public var count: Int
        public var first: Int
        public var last: Int
    }
    /// A stretch during which host → controller packets waited for Number Of Completed Packets.
    public struct Wait: Hashable, Sendable {
        public var start: Moment
        public var end: Moment
        public var packets: Int
        public var microseconds: Int64 { end.timestamp.microseconds(since: start.timestamp) }
    }

    /// The last ACL packet received from the peer (HCI: controller → host).
    public var lastReceived: Moment?
    /// The last ACL packet the host sent.
    public var lastSent: Moment?
    /// Since when packets in flight have waited for Number Of Completed Packets (nil: none in flight).
    public var waitingSince: Moment?
    /// The longest such wait that ended.
    public var longestWait: Wait?
    /// Notifications and indications received from the peer, per attribute handle.
    public var notified: [UInt16: HandleUse] = [:]
    /// Writes (request or command) this side sent, per attribute handle.
    public var written: [UInt16: HandleUse] = [:]
    /// Values carried in notifications, indications and writes, and how many filled ATT_MTU − 3 exactly.
    public var values = 0
    public var valuesFillingMTU = 0
    /// Read Blob and Prepare Write requests: long values moved in pieces.
    public var longValueRequests = 0
    /// The largest ATT PDU, bytes, and its frame.
    public var largestATTPDU = 0
    public var largestATTPDUFrame = 0
    /// The run of notifications on one handle not yet in ``notified`` (see ``noteNotified(_:frame:)``).
    var runHandle: UInt16 = 0
    var runCount = 0
    var runFirst = 0
    var runLast = 0

    public init() {}

    /// Number Of Completed Packets: the wait since ``waitingSince`` ends (the longest is kept), and a new one starts if
    /// packets are still in flight.
    mutating func completed(packetsWaiting: Int, stillInFlight: Int, at moment: Moment) {
        if let since = waitingSince {
            let wait = Wait(start: since, end: moment, packets: packetsWaiting)
            if wait.microseconds > (longestWait?.microseconds ?? -1) { longestWait = wait }
        }
        waitingSince = stillInFlight > 0 ? moment : nil
    }

    static func note(_ table: inout [UInt16: HandleUse], _ handle: UInt16, frame: Int) {
        if table.count >= 4_096, table[handle] == nil { return }
        if var u = table[handle] {
            u.count += 1
            u.last = frame
            table[handle] = u
        } else {
            table[handle] = HandleUse(count: 1, first: frame, last: frame)
        }
    }
}

extension LinkActivity {
    /// One ATT PDU of `size` bytes when ATT_MTU was `mtu`.
    @inline(__always)
    mutating func notePDU(opcode: UInt8, size: Int, mtu: Int, frame: Int) {
        if size > largestATTPDU {
            largestATTPDU = size
            largestATTPDUFrame = frame
        }
        switch opcode {
        case 0x1B, 0x1D, 0x12, 0x52:
            values += 1
            if size == mtu { valuesFillingMTU += 1 }
        case 0x0C, 0x16:  // Read Blob, Prepare Write
            longValueRequests += 1
        default:
            break
        }
    }

    /// A notification or indication received on `handle`: runs on one handle (bulk data) are counted without a
    /// dictionary access each (``flush()`` settles the run).
    @inline(__always)
    mutating func noteNotified(_ handle: UInt16, frame: Int) {
        if runCount > 0 && handle == runHandle {
            runCount += 1
            runLast = frame
            return
        }
        flush()
        runHandle = handle
        runCount = 1
        runFirst = frame
        runLast = frame
    }

    mutating func noteWritten(_ handle: UInt16, frame: Int) { Self.note(&written, handle, frame: frame) }

    /// Settles the run of notifications on one handle into ``notified``.
    mutating func flush() {
        guard runCount > 0 else { return }
        if var u = notified[runHandle] {
            u.count += runCount
            u.last = runLast
            notified[runHandle] = u
        } else if notified.count < 4_096 {
            notified[runHandle] = HandleUse(count: runCount, first: runFirst, last: runLast)
        }
        runCount = 0
    }
}
