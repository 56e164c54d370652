import BLECore
import BLEProtocols

/// Where a link fact comes from: a frame of the capture stated it, it was worked out from what the capture shows, or
/// nothing in the capture says and a default stands in for it. Every verdict built on a fact can say which.
public enum FactSource: Hashable, Sendable {
    /// The frame that set it (an HCI event, an ATT exchange, an LL control PDU).
    case observed(frame: Int)
    /// Worked out from the capture: see ``Inference`` for from what.
    case inferred(Inference)
    /// A default: the capture does not show where the value came from (it started after the connection, or the value
    /// is never announced over HCI).
    case assumed

    /// `observed`, `inferred` or `assumed`: the word outputs use.
    public var kind: String {
        switch self {
        case .observed: "observed"
        case .inferred: "inferred"
        case .assumed: "assumed"
        }
    }

    /// The frame the fact rests on, if one does.
    public var frame: Int? {
        switch self {
        case .observed(let f): f
        case .inferred(let i): i.frame
        case .assumed: nil
        }
    }

    /// `observed at frame 34`, `inferred: initial value, no change since the connection at frame 12`, `assumed (default)`.
    public var description: String {
        switch self {
        case .observed(let f): "observed at frame \(f)"
        case .inferred(let i): "inferred: \(i.description)"
        case .assumed: "assumed (default)"
        }
    }
}

/// What a link fact was inferred from.
public enum Inference: Hashable, Sendable {
    /// The value every connection starts with (Core Spec: ATT_MTU 23, Vol 3 Part F 3.2.8; 1M PHY and 27-octet data
    /// length, Vol 6 Part B 4.5.10 and 4.6.6; unencrypted), and the capture shows the connection from its start at
    /// `connectionFrame` with no change announced since.
    case initialValue(connectionFrame: Int)
    /// At least the size of the largest ATT PDU the bearer carried (at `frame`): no PDU may exceed ATT_MTU
    /// (Core Spec Vol 3, Part F, 3.2.8).
    case largestATTPDU(frame: Int, bytes: Int)
    /// At least the largest link-layer payload a direction carried (at `frame`): the LL cannot send more octets than
    /// its maximum (Core Spec Vol 6, Part B, 4.5.10).
    case largestFragment(frame: Int, octets: Int)
    /// Encrypted from `frame` of an air capture, the first encrypted PDU there is to go by: the procedure's end (the
    /// peripheral's LL_START_ENC_RSP, Core Spec Vol 6, Part B, 5.1.3.1) is encrypted with a key nobody gave, or missing.
    case encryptedPDU(frame: Int)
    /// An encryption key size: the smaller of the two Maximum Encryption Key Sizes of the pairing whose key the link
    /// encrypted with (its Pairing Response at `frame`; Core Spec Vol 3, Part H, 2.3.4, 3.5.1).
    case pairingKeySize(frame: Int)
    /// An encryption key size: that of the pairing on link `connection` (its Pairing Response at `frame`) whose bond the
    /// link encrypted with.
    case bondKeySize(frame: Int, connection: Int)
    /// The link's transport, from what only one transport carries (`what` at `frame`): an L2CAP channel (0x0001
    /// signalling and PSMs are BR/EDR's, 0x0004–0x0006 LE's, Core Spec Vol 3, Part A, 2.1) or a link event of one
    /// transport (Mode Change is BR/EDR's, LE Connection Update LE's).
    case transportShownBy(frame: Int, what: String)
    /// A BR/EDR role from the paging at `frame`: this side paged (Create Connection: central, Vol 2, Part B, 8.3) or
    /// accepted the peer's page (Connection Request, Accept Connection Request: peripheral until a Role Change).
    case paging(frame: Int, accepted: Bool)

    public var frame: Int {
        switch self {
        case .initialValue(let f): f
        case .largestATTPDU(let f, _): f
        case .largestFragment(let f, _): f
        case .encryptedPDU(let f): f
        case .pairingKeySize(let f): f
        case .bondKeySize(let f, _): f
        case .transportShownBy(let f, _): f
        case .paging(let f, _): f
        }
    }

    public var description: String {
        switch self {
        case .initialValue(let f): "initial value, no change since the connection at frame \(f)"
        case .largestATTPDU(let f, let n): "at least the \(n)-byte ATT PDU at frame \(f)"
        case .largestFragment(let f, let n): "at least the \(n)-octet link-layer payload at frame \(f)"
        case .encryptedPDU(let f):
            "encrypted PDUs from frame \(f) (the peripheral's LL_START_ENC_RSP that ends the start is unreadable or missing)"
        case .pairingKeySize(let f): "the smaller Maximum Encryption Key Size of the pairing (Pairing Response at frame \(f))"
        case .bondKeySize(let f, let c):
            "the key size of the bond's pairing on link #\(c) (Pairing Response at frame \(f))"
        case .transportShownBy(let f, let what): "\(what) at frame \(f)"
        case .paging(let f, let accepted): accepted ? "the peer paged this side (frame \(f))" : "this side paged the peer (frame \(f))"
        }
    }
}

/// One link fact of a connection over time: every value set (with its frame and source) and the one in force.
public struct LinkFact<Value: Hashable & Sendable>: Hashable, Sendable {
    /// Every value set, in frame order (bounded: past 4,096 the last entry is replaced, so the value in force stays right).
    public private(set) var changes: [Change<Value>] = []
    /// The value before any change: the spec's initial value, or nil when there is none (connection parameters).
    public let initial: Value?
    /// Where ``initial`` comes from.
    public let initialSource: FactSource

    init(initial: Value?, source: FactSource) {
        self.initial = initial
        self.initialSource = source
    }

    /// The value in force now (nil: not known). Read in place: `changes.last` copied the whole last change, its
    /// source's text retained and released, for every ATT PDU's MTU check (docs/performance.md#link-state).
    public var value: Value? { changes.isEmpty ? initial : changes[changes.count - 1].value }
    /// Where ``value`` comes from.
    public var source: FactSource { changes.isEmpty ? initialSource : changes[changes.count - 1].source }
    /// The value in force at `frame`: the last change at or before it, else the initial value (a BR/EDR role before
    /// and after a role switch).
    public func value(atFrame frame: Int) -> Value? {
        changes.last { $0.frame <= frame }.map(\.value) ?? initial
    }
    /// Whether a frame of the capture set the value in force.
    public var isObserved: Bool { if case .observed = source { true } else { false } }

    mutating func set(_ value: Value, frame: Int, timestamp: Timestamp, source: FactSource) {
        changes.record(Change(frame: frame, timestamp: timestamp, value: value, source: source))
    }
}

/// A change of one link fact, as ``LinkState/apply(_:frame:timestamp:source:)`` takes it.
public enum LinkUpdate: Hashable, Sendable {
    case parameters(ConnectionParameters)
    case phy(PHYPair)
    case dataLength(DataLength)
    /// The effective ATT_MTU of the LE fixed bearer (min of both sides' Exchange MTU values).
    case mtu(Int)
    case encryption(Bool)
    /// The radio the link runs on: set once, when the link opens or its first transport-specific event shows it.
    case transport(LinkTransport)
    /// This side's role.
    case role(Connection.Role)
}

/// A connection's link facts in one place: connection parameters, PHY, data length, ATT_MTU (of the LE fixed bearer;
/// dynamic bearers have their channel's) and encryption, each with its history and where its value came from.
///
/// Changed only through ``apply(_:frame:timestamp:source:)``, which appends the history, records the source and
/// refreshes ``snapshot`` (the copy handed to the trackers with each value): nothing else holds a copy to keep in step.
public struct LinkState: Hashable, Sendable {
    public private(set) var parameters: LinkFact<ConnectionParameters>
    public private(set) var phy: LinkFact<PHYPair>
    public private(set) var dataLength: LinkFact<DataLength>
    public private(set) var mtu: LinkFact<Int>
    public private(set) var encryption: LinkFact<Bool>
    /// LE or BR/EDR (nil: the capture has not shown it yet, a link inferred from traffic). Once BR/EDR, the LE facts
    /// (PHY, data length, ATT_MTU of the fixed channel) are unknown for good: they do not exist on that link.
    public private(set) var transport = LinkFact<LinkTransport>(initial: nil, source: .assumed)
    /// This side's role (nil: not shown).
    public private(set) var role = LinkFact<Connection.Role>(initial: nil, source: .assumed)
    /// A BR/EDR link's own facts (nil on LE links and links whose transport is not known).
    public internal(set) var classic: ClassicLinkFacts?
    /// Where the link starts in the capture (nil: before it), for the initial values of facts set later.
    let startFrame: Int?
    /// The values in force, as the trackers take them with each attribute value.
    public private(set) var snapshot = LinkSnapshot(parameters: nil, phy: .le1M, dataLength: .default, mtu: 23, encrypted: false)

    /// The initial state of a connection that starts at `startFrame` in the capture, or (nil) one that was already up
    /// when the capture started: then every initial value is only assumed.
    public init(startFrame: Int?) {
        let initial: FactSource = startFrame.map { .inferred(.initialValue(connectionFrame: $0)) } ?? .assumed
        parameters = LinkFact(initial: nil, source: .assumed)
        phy = LinkFact(initial: .le1M, source: initial)
        dataLength = LinkFact(initial: .default, source: initial)
        mtu = LinkFact(initial: 23, source: initial)
        encryption = LinkFact(initial: false, source: initial)
        self.startFrame = startFrame
        if startFrame == nil { snapshot.unseen = [.mtuAssumed, .dataLengthAssumed, .phyAssumed] }
    }

    /// Sets one fact from `frame` on (observed at that frame unless `source` says otherwise).
    public mutating func apply(_ update: LinkUpdate, frame: Int, timestamp: Timestamp, source: FactSource? = nil) {
        let source = source ?? .observed(frame: frame)
        switch update {
        case .parameters(let p):
            parameters.set(p, frame: frame, timestamp: timestamp, source: source)
            snapshot.parameters = p
        case .phy(let p):
            phy.set(p, frame: frame, timestamp: timestamp, source: source)
            snapshot.phy = p
            snapshot.unseen.remove(.phyAssumed)
        case .dataLength(let d):
            dataLength.set(d, frame: frame, timestamp: timestamp, source: source)
            snapshot.dataLength = d
            snapshot.unseen.remove(.dataLengthAssumed)
        case .mtu(let m):
            mtu.set(m, frame: frame, timestamp: timestamp, source: source)
            snapshot.mtu = m
            snapshot.unseen.remove(.mtuAssumed)
            if case .inferred(.largestATTPDU) = source { snapshot.unseen.insert(.mtuAtLeast) } else { snapshot.unseen.remove(.mtuAtLeast) }
        case .encryption(let on):
            encryption.set(on, frame: frame, timestamp: timestamp, source: source)
            snapshot.encrypted = on
        case .transport(let t):
            guard transport.value == nil else { return }
            transport.set(t, frame: frame, timestamp: timestamp, source: source)
            snapshot.transport = t
            if t == .bredr { becomeBREDR() }
        case .role(let r):
            role.set(r, frame: frame, timestamp: timestamp, source: source)
        }
    }

    /// The link a Connection Complete at `frame` opens after its first packets were logged (``LinkAdoption``): its
    /// initial values are the spec's from that frame; what those packets set stays, in order; its transport is left to
    /// the event (the packets only suggested it).
    mutating func open(at frame: Int) {
        var opened = LinkState(startFrame: frame)
        for c in parameters.changes { opened.apply(.parameters(c.value), frame: c.frame, timestamp: c.timestamp, source: c.source) }
        for c in phy.changes { opened.apply(.phy(c.value), frame: c.frame, timestamp: c.timestamp, source: c.source) }
        for c in dataLength.changes { opened.apply(.dataLength(c.value), frame: c.frame, timestamp: c.timestamp, source: c.source) }
        for c in mtu.changes { opened.apply(.mtu(c.value), frame: c.frame, timestamp: c.timestamp, source: c.source) }
        for c in encryption.changes { opened.apply(.encryption(c.value), frame: c.frame, timestamp: c.timestamp, source: c.source) }
        for c in role.changes { opened.apply(.role(c.value), frame: c.frame, timestamp: c.timestamp, source: c.source) }
        self = opened
    }

    /// A BR/EDR link has no LE PHY, data length or fixed-channel ATT_MTU: their facts are unknown (nil), never defaults;
    /// its own facts start.
    private mutating func becomeBREDR() {
        phy = LinkFact(initial: nil, source: .assumed)
        dataLength = LinkFact(initial: nil, source: .assumed)
        mtu = LinkFact(initial: nil, source: .assumed)
        snapshot.unseen = []
        classic = ClassicLinkFacts(startFrame: startFrame)
    }

    /// One BR/EDR fact (ignored on a link not known to be BR/EDR).
    mutating func apply(classic input: ClassicLinkInput, frame: Int, timestamp: Timestamp, source: FactSource) {
        if case .roleSwitched(let r) = input {
            if let old = role.value, old != r, var c = classic, c.roleSwitchFrames.count < 4096 {
                // A switch before the link opened is fed at its Connection Complete, its Role Change the source.
                if case .observed(let event) = source { c.roleSwitchFrames.append(event) } else { c.roleSwitchFrames.append(frame) }
                classic = c
            }
            role.set(r, frame: frame, timestamp: timestamp, source: source)
            return
        }
        classic?.apply(input, frame: frame, timestamp: timestamp, source: source)
    }
}
