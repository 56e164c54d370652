import BLECore
import BLEProtocols

/// Which kind of channel carries an ATT bearer (Core Spec Vol 3, Part F, 3.2.11; Part G, 5.2–5.3).
public enum ATTBearerKind: String, Hashable, Sendable, CustomStringConvertible {
    /// The LE fixed channel, CID 0x0004.
    case leFixed = "le-fixed"
    /// A BR/EDR connection-oriented channel to PSM 0x001F.
    case bredr
    /// An enhanced ATT bearer: an enhanced credit-based channel to PSM 0x0027, over LE or BR/EDR.
    case eatt
    public var description: String { rawValue }
}

/// One ATT bearer of a connection: its own MTU and transactions; the GATT database is the connection's.
///
/// A value kept in its connection's ``ConnectionMachine`` and changed in place there through
/// ``ConnectionMachine/subscript(bearer:)``; the analyzer names a bearer by its ``ATTBearerSlot``.
struct ATTBearer {
    let kind: ATTBearerKind
    /// The dynamic channel it rides on (index into the connection's ``ChannelTable``); nil for the fixed channel.
    let channel: Int?
    /// ATT_MTU of a dynamic bearer, from the L2CAP MTUs of its channel; the fixed bearer uses the connection's
    /// (Exchange MTU). nil while not known: nothing is judged against it.
    var mtu: Int?

    init(kind: ATTBearerKind = .leFixed, channel: Int? = nil, mtu: Int? = nil) {
        self.kind = kind
        self.channel = channel
        self.mtu = mtu
    }

    typealias Pending = ATTTransaction

    /// Request ↔ response pairing on this bearer.
    var transactions = ATTTransactions()
    /// Outstanding requests and indications, by the direction they were sent in.
    var pending: [TransactionKey: Pending] { transactions.pending }
    /// MTU proposed by each side (client in its request, server in its response).
    var clientMTU: Int?
    var serverMTU: Int?
    var longRead = LongReadAssembler()
    var preparedWrites = PreparedWriteAssembler()

    /// Bytes held for the long read and the queued writes.
    var heldBytes: Int { longRead.heldBytes + preparedWrites.heldBytes }

    /// Lets the long read and the queued writes go (the analyzer's memory budget ran out).
    mutating func shed() {
        longRead.drop()
        preparedWrites.drop()
    }
}

/// Where a connection keeps one of its ATT bearers: the LE fixed channel's, or the n-th on a dynamic channel
/// (``ConnectionMachine/bearers``).
enum ATTBearerSlot: Equatable {
    case fixed
    case dynamic(Int)
}

extension FindingKind {
    static func responseOnOtherBearer(
        _ opcode: ATTOpcode, on kind: ATTBearerKind, cid: UInt16, request: ATTOpcode,
        requestBearer: ATTBearerKind, requestFrame: Int
    ) -> FindingKind {
        .init(
            .attResponseOnOtherBearer,
            message: "ATT \(opcode) on the \(kind) bearer (CID \(hex(cid, width: 4))) would answer the \(request) of frame \(requestFrame) "
                + "sent on the \(requestBearer) bearer: a response must come on its request's bearer (Core Spec Vol 3, Part F, 3.3.2); not paired"
        )
    }
}

extension ConnectionMachine {
    /// The kind of a bearer, read in place: `self[bearer: slot].kind` copied the whole ``ATTBearer`` (its pending
    /// dictionary and assemblers: retained, then released) for every ATT PDU of a timeline
    /// (docs/performance.md#analyzer-att).
    @inline(__always)
    func bearerKind(_ slot: ATTBearerSlot) -> ATTBearerKind {
        switch slot {
        case .fixed: bearer.kind
        case .dynamic(let i): bearers[i].kind
        }
    }

    /// `self[bearer: slot].longRead.feed(input)` without the subscript's `_modify` coroutine, whose frame was
    /// allocated and freed on the heap for every ATT PDU of a timeline (docs/performance.md#analyzer-att).
    @inline(__always)
    func feedLongRead(_ input: LongReadAssembler.Input, bearer slot: ATTBearerSlot) -> LongReadAssembler.Output? {
        switch slot {
        case .fixed: bearer.longRead.feed(input)
        case .dynamic(let i): bearers[i].longRead.feed(input)
        }
    }

    /// `self[bearer: slot].preparedWrites.feed(pdu, frame:)` without the coroutine (see ``feedLongRead(_:bearer:)``).
    @inline(__always)
    func feedPreparedWrites(_ pdu: ATTPDU, frame: Int, bearer slot: ATTBearerSlot) -> [PreparedWriteAssembler.LongWrite]? {
        switch slot {
        case .fixed: bearer.preparedWrites.feed(pdu, frame: frame)
        case .dynamic(let i): bearers[i].preparedWrites.feed(pdu, frame: frame)
        }
    }

    /// `self[bearer: slot].transactions.feed(input)` without the coroutine (see ``feedLongRead(_:bearer:)``).
    @inline(__always)
    func feedTransaction(_ input: ATTTransactions.Input, bearer slot: ATTBearerSlot) -> ATTTransactions.Output? {
        switch slot {
        case .fixed: bearer.transactions.feed(input)
        case .dynamic(let i): bearers[i].transactions.feed(input)
        }
    }

    /// ATT_MTU of a bearer, read in place (see ``bearerKind(_:)``): the connection's (`connectionMTU`, from its
    /// ``LinkState``) for the LE fixed one, the channel's for the others.
    @inline(__always)
    func attMTU(_ slot: ATTBearerSlot, connectionMTU: Int) -> Int {
        switch slot {
        case .fixed: bearer.kind == .leFixed ? connectionMTU : (bearer.mtu ?? 23)
        case .dynamic(let i): bearers[i].kind == .leFixed ? connectionMTU : (bearers[i].mtu ?? 23)
        }
    }
}
