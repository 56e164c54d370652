import BLECore

/// One direction of an LE or enhanced credit-based channel (Core Spec Vol 3, Part A, 3.4.3 and 10.1): its credits, and
/// the SDU being reassembled from K-frames (the first K-frame of an SDU carries its 2-byte length, the following ones
/// only payload).
struct CreditChannelState {
    var spsm: UInt16
    /// The receiver's limits from its connection request or response (Vol 3, Part A, 4.22–4.26): the largest SDU (MTU)
    /// and the largest K-frame payload (MPS) it takes; nil when the capture did not show them.
    var mtu: Int?
    var mps: Int?
    var sduExpected = 0
    var sdu: [UInt8] = []
    var firstFrame = 0
    /// L2CAP bytes (headers included) of the K-frames carrying the SDU so far.
    var kframeBytes = 0
    /// K-frames the sender may still send: initial credits from the connection request/response, plus LE Flow Control
    /// Credit indications, minus one per K-frame.
    var credits: Int
    /// Set while the sender has no credit left: it must wait for the receiver's credits.
    var stalledSince: (frame: Int, time: Timestamp)?

    init(spsm: UInt16, credits: Int, mtu: Int? = nil, mps: Int? = nil) {
        self.spsm = spsm
        self.credits = credits
        self.mtu = mtu
        self.mps = mps
    }

    /// One K-frame's payload (its L2CAP header already read).
    struct KFrame {
        var payload: UnsafeRawBufferPointer
        /// Bytes of the L2CAP PDU, header included.
        var l2capBytes: Int
        /// The frames its first and last fragments came in.
        var firstFrame: Int
        var frame: Int
        var timestamp: Timestamp
    }

    /// A whole SDU.
    struct SDU {
        var bytes: [UInt8]
        /// The frame of its first K-frame.
        var firstFrame: Int
        var kframeBytes: Int
        /// The length its first K-frame announced: fewer bytes than came (the extra ones are kept).
        var announced: Int
    }

    /// What one K-frame did.
    struct Output {
        /// Sent without a credit (Vol 3, Part A, 10.1: a protocol error).
        var withoutCredit = false
        /// The first K-frame of an SDU, too short for the SDU length: skipped, the channel waits for the next one.
        var tooShortToStart = false
        /// The K-frame's payload is longer than the receiver's MPS (Vol 3, Part A, 3.4.3: a protocol error): its length.
        var overMPS: Int?
        /// The SDU length its first K-frame announced is more than the receiver's MTU (3.4.3): that length.
        var overMTU: Int?
        var sdu: SDU?
    }

    mutating func feed(_ k: KFrame) -> Output {
        var out = Output()
        credits -= 1
        if credits < 0 {
            out.withoutCredit = true
            credits = 0
        }
        if credits == 0, stalledSince == nil { stalledSince = (k.frame, k.timestamp) }
        if let mps, k.payload.count > mps { out.overMPS = k.payload.count }
        if sduExpected == 0 {
            guard k.payload.count >= 2 else {
                out.tooShortToStart = true
                return out
            }
            sduExpected = Int(k.payload[0]) | Int(k.payload[1]) << 8
            if let mtu, sduExpected > mtu { out.overMTU = sduExpected }
            sdu = Array(k.payload[2...])
            firstFrame = k.firstFrame
            kframeBytes = k.l2capBytes
        } else {
            sdu += k.payload
            kframeBytes += k.l2capBytes
        }
        guard sdu.count >= sduExpected else { return out }
        out.sdu = SDU(bytes: sdu, firstFrame: firstFrame, kframeBytes: kframeBytes, announced: sduExpected)
        sduExpected = 0
        sdu = []
        kframeBytes = 0
        return out
    }

    /// Bytes held for the SDU so far.
    var heldBytes: Int { sdu.count }

    /// Lets the partial SDU go (the analyzer's memory budget ran out); the next K-frame starts an SDU.
    mutating func drop() {
        sdu = []
        sduExpected = 0
    }

    /// Credits the receiver gave (LE Flow Control Credit): when they end a stall, its start.
    mutating func credit(_ n: Int) -> (frame: Int, time: Timestamp)? {
        credits += n
        guard let since = stalledSince, credits > 0 else { return nil }
        stalledSince = nil
        return since
    }
}

/// One direction of a credit-based channel within a connection: the direction its data travels in, and the CID it
/// carries (the receiver's endpoint).
struct CreditKey: Hashable {
    var direction: Direction
    var cid: UInt16
}

/// How many credit-based channel directions are open across every connection of a capture, against
/// ``CreditChannelTable/maxChannels``: one count shared by the tables of all connections (each may hold a partial SDU of
/// up to 64 KiB), so hostile signalling on many connections stays as flat as on one.
final class CreditChannelBudget {
    private(set) var open = 0
    let limit: Int

    init(limit: Int = CreditChannelTable.maxChannels) { self.limit = limit }

    /// Takes one place; false when `limit` are taken.
    func take() -> Bool {
        guard open < limit else { return false }
        open += 1
        return true
    }

    func give(_ n: Int = 1) { open -= n }
}

/// The open credit-based channels of one connection, by (direction of the data, CID), within the capture-wide
/// ``CreditChannelBudget`` of ``maxChannels`` (Core Spec Vol 3, Part A, 4.22–4.26 open them, 4.24 credits them, 4.7
/// closes them).
struct CreditChannelTable {
    static let maxChannels = 1024

    private(set) var channels: [CreditKey: CreditChannelState] = [:]
    let budget: CreditChannelBudget

    init(budget: CreditChannelBudget) { self.budget = budget }

    /// Opens (or reopens) a channel; false when the budget's ``maxChannels`` are open already.
    mutating func open(_ key: CreditKey, spsm: UInt16, credits: Int, mtu: Int? = nil, mps: Int? = nil) -> Bool {
        guard channels[key] != nil || budget.take() else { return false }
        channels[key] = CreditChannelState(spsm: spsm, credits: credits, mtu: mtu, mps: mps)
        return true
    }

    mutating func close(_ key: CreditKey) {
        if channels.removeValue(forKey: key) != nil { budget.give() }
    }

    /// Every channel (the connection ended): their places go back to the budget.
    mutating func closeAll() {
        budget.give(channels.count)
        channels = [:]
    }

    /// One K-frame on `key`'s channel; nil when no such channel is open. The channel's SPSM comes with what it did.
    mutating func feed(_ key: CreditKey, _ kframe: CreditChannelState.KFrame) -> (spsm: UInt16, output: CreditChannelState.Output)? {
        // Taken out of the table while it grows, so appending does not copy the partial SDU each time.
        guard var channel = channels.removeValue(forKey: key) else { return nil }
        let output = channel.feed(kframe)
        channels[key] = channel
        return (channel.spsm, output)
    }

    /// Credits the receiver gave on `key`'s channel: when they end a stall, its start.
    mutating func credit(_ key: CreditKey, _ n: Int) -> (frame: Int, time: Timestamp)? {
        channels[key]?.credit(n)
    }

    /// Bytes held for partial SDUs.
    var heldBytes: Int {
        if channels.isEmpty { return 0 }
        return channels.values.reduce(0) { $0 + $1.heldBytes }
    }

    /// Lets every partial SDU go (the analyzer's memory budget ran out); returns the bytes let go.
    mutating func dropAll() -> Int {
        var dropped = 0
        for key in channels.keys where channels[key]!.heldBytes > 0 {
            dropped += channels[key]!.heldBytes
            channels[key]!.drop()
        }
        return dropped
    }
}
