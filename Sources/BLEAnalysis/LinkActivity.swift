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
    /// The packets before those: two close together on one side are a flow (data moving), not one last exchange.
    public var previousReceived: Moment?
    public var previousSent: Moment?
    /// Since when packets in flight have waited for Number Of Completed Packets (nil: none in flight).
    public var waitingSince: Moment?
    /// The longest such wait that ended.
    public var longestWait: Wait?
    /// Notifications and indications received from the peer, per attribute handle.
    public var notified: [UInt16: HandleUse] { notifiedTally.dictionary }
    /// Writes (request or command) this side sent, per attribute handle.
    public var written: [UInt16: HandleUse] { writtenTally.dictionary }
    /// Read Requests this side sent, per attribute handle.
    public var read: [UInt16: HandleUse] { readTally.dictionary }
    /// Of ``written``, the Write Commands: writes whose only possible answer is a notification or a read.
    public var writtenByCommand: [UInt16: HandleUse] { commandWrittenTally.dictionary }
    var readTally = HandleTally()
    var notifiedTally = HandleTally()
    var writtenTally = HandleTally()
    var commandWrittenTally = HandleTally()
    /// Notifications received whose records the capturer cut (their value not captured; in ``notified`` too, with the
    /// cut indications): ``ConnectionMachine/noteCutPDU(_:direction:timestamp:)``.
    public var cutNotifications = 0
    /// Values carried in notifications, indications and writes, and how many filled ATT_MTU − 3 exactly.
    public var values = 0
    public var valuesFillingMTU = 0
    /// The first value that filled ATT_MTU − 3.
    public var firstFullValueFrame: Int?
    /// Read Blob and Prepare Write requests: long values moved in pieces.
    public var longValueRequests = 0
    /// What moving those pieces cost: round trips, their time, how often one handle's value went in pieces.
    public var longValues = LongValueCost()
    /// The largest ATT PDU, bytes, and its frame.
    public var largestATTPDU = 0
    public var largestATTPDUFrame = 0

    public init() {}

    @inline(__always)
    mutating func sent(at moment: Moment) {
        previousSent = lastSent
        lastSent = moment
    }

    @inline(__always)
    mutating func received(at moment: Moment) {
        previousReceived = lastReceived
        lastReceived = moment
    }

    /// Number Of Completed Packets: the wait since ``waitingSince`` ends (the longest is kept), and a new one starts if
    /// packets are still in flight.
    mutating func completed(packetsWaiting: Int, stillInFlight: Int, at moment: Moment) {
        if let since = waitingSince {
            let wait = Wait(start: since, end: moment, packets: packetsWaiting)
            if wait.microseconds > (longestWait?.microseconds ?? -1) { longestWait = wait }
        }
        waitingSince = stillInFlight > 0 ? moment : nil
    }
}

extension LinkActivity {
    /// One ATT PDU (``ATTView``) sent in `direction` when ATT_MTU was `mtu`: the largest PDU, the values and how full
    /// they were, the long-value requests, and per handle the notifications and indications received, the Read Requests
    /// and the writes this side sent.
    @inline(__always)
    mutating func note(_ pdu: ATTView, mtu: Int, at moment: Moment, direction: Direction) {
        let frame = moment.frame
        let size = pdu.size
        if size > largestATTPDU {
            largestATTPDU = size
            largestATTPDUFrame = frame
        }
        if pdu.isNotifiedValue || pdu.isWrite {
            values += 1
            if size == mtu {
                valuesFillingMTU += 1
                if firstFullValueFrame == nil { firstFullValueFrame = frame }
            }
            if let handle = pdu.handle {
                if pdu.isNotifiedValue {
                    if direction == .rx { notifiedTally.note(handle, frame: frame) }
                } else if direction == .tx {
                    writtenTally.note(handle, frame: frame)
                    if pdu.opcode == .writeCommand { commandWrittenTally.note(handle, frame: frame) }
                }
            }
        } else if pdu.opcode == .readRequest {
            if direction == .tx, let handle = pdu.handle { readTally.note(handle, frame: frame) }
        } else if pdu.opcode == .readBlobRequest || pdu.opcode == .prepareWriteRequest {
            longValueRequests += 1
            longValues.request(pdu, at: moment, direction: direction)
        } else if longValues.pending != nil {
            longValues.answer(pdu, at: moment, direction: direction)
        }
    }
}

/// What moving long values in pieces cost a link. Each Read Blob or Prepare Write Request carries one piece of at most
/// ATT_MTU − 1 or ATT_MTU − 5 octets (Core Spec Vol 3, Part F, 3.4.4.5 and 3.4.6.1), so each is one ATT round trip a
/// larger MTU would have spared: their time to the response is the extra time. The runs of pieces (one handle at
/// rising offsets) tell a value read or written once from one moved again and again.
public struct LongValueCost: Hashable, Sendable {
    /// Requests answered (Read Blob Response, Prepare Write Response, or an Error Response to one), and their time to
    /// the answer, µs, summed.
    public var answered = 0
    public var roundTripMicroseconds: Int64 = 0
    /// Runs of pieces: a request to another handle than the last, or at an offset not past the last, starts one.
    public var runs = 0
    /// The first and the last request.
    public var first: LinkActivity.Moment?
    public var last: LinkActivity.Moment?
    /// The request waiting for its answer, and which way it went.
    var pending: LinkActivity.Moment?
    var pendingDirection = Direction.tx
    var lastHandle: UInt16?
    var lastOffset = 0
    /// Runs per handle.
    var runsPerHandle = HandleTally()

    public init() {}

    /// The handle whose value moved in pieces most often, and how many runs it took (nil: none).
    public var mostRepeated: (handle: UInt16, runs: Int)? {
        runsPerHandle.dictionary.max { ($0.value.count, $1.key) < ($1.value.count, $0.key) }.map { ($0.key, $0.value.count) }
    }

    /// A Read Blob or Prepare Write Request (handle at 1, offset at 3: 3.4.4.5, 3.4.6.1).
    mutating func request(_ pdu: ATTView, at moment: LinkActivity.Moment, direction: Direction) {
        if first == nil { first = moment }
        last = moment
        pending = moment
        pendingDirection = direction
        guard let handle = pdu.handle, pdu.size >= 5 else { return }
        let offset = Int(pdu.payload[3]) | Int(pdu.payload[4]) << 8
        if handle != lastHandle || offset <= lastOffset {
            runs += 1
            runsPerHandle.note(handle, frame: moment.frame)
        }
        lastHandle = handle
        lastOffset = offset
    }

    /// A PDU the other way while a request waits: its answer ends the round trip.
    mutating func answer(_ pdu: ATTView, at moment: LinkActivity.Moment, direction: Direction) {
        guard let asked = pending, direction != pendingDirection else { return }
        let answers: Bool
        switch pdu.opcode {
        case .readBlobResponse, .prepareWriteResponse: answers = true
        case .errorResponse:
            let request = pdu.errorResponse?.request
            answers = request == .readBlobRequest || request == .prepareWriteRequest
        default: answers = false
        }
        guard answers else { return }
        pending = nil
        answered += 1
        // Wrapping: a damaged record's time stamp can be anything; a sum is never worth a trap.
        roundTripMicroseconds &+= max(0, moment.timestamp.microseconds(since: asked.timestamp))
    }
}

/// Uses per attribute handle without hashing on the per-packet path: the first 8 handles in place (a connection's
/// bulk data uses one or two), the rest in a bounded dictionary. Counting notifications per handle in a dictionary
/// was ~4 % of `info` on the 1 M-record benchmark capture (perf, 2026-11-26: `Hasher` and bucket lookups).
struct HandleTally: Hashable, Sendable {
    static let inPlace = 8
    var handles = InlineArray<8, UInt16>(repeating: 0)
    var uses = InlineArray<8, LinkActivity.HandleUse>(repeating: .init(count: 0, first: 0, last: 0))
    var used = 0
    var overflow: [UInt16: LinkActivity.HandleUse] = [:]

    @inline(__always)
    mutating func note(_ handle: UInt16, frame: Int) {
        var i = 0
        while i < used {
            if handles[i] == handle {
                uses[i].count += 1
                uses[i].last = frame
                return
            }
            i += 1
        }
        if used < Self.inPlace {
            handles[used] = handle
            uses[used] = .init(count: 1, first: frame, last: frame)
            used += 1
        } else if var u = overflow[handle] {
            u.count += 1
            u.last = frame
            overflow[handle] = u
        } else if overflow.count < 4_096 {
            overflow[handle] = .init(count: 1, first: frame, last: frame)
        }
    }

    var dictionary: [UInt16: LinkActivity.HandleUse] {
        var d = overflow
        for i in 0..<used { d[handles[i]] = uses[i] }
        return d
    }

    static func == (a: Self, b: Self) -> Bool { a.dictionary == b.dictionary }
    func hash(into hasher: inout Hasher) { hasher.combine(dictionary) }
}
