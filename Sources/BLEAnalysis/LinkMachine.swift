import BLECore
import BLEProtocols

/// A change of one link, the same whichever way the capture told it: an HCI event of the controller or an LL control
/// PDU seen on the air is translated into one of these before it reaches the link's ``LinkMachine``, so an air capture
/// and an HCI log of the same connection give the same link facts.
enum LinkInput: Equatable {
    /// Interval, latency and supervision timeout: LE (Enhanced) Connection Complete and LE Connection Update Complete
    /// (Core Spec Vol 4, Part E, 7.7.65.1, 7.7.65.3); on air CONNECT_IND and LL_CONNECTION_UPDATE_IND at its instant
    /// (Vol 6, Part B, 5.1.1).
    case parametersUpdated(ConnectionParameters)
    /// The effective maximum octets and times each way: LE Data Length Change (Vol 4, Part E, 7.7.65.7); on air the
    /// LL_LENGTH_RSP that answers an LL_LENGTH_REQ (Vol 6, Part B, 5.1.9; the effective values of 4.5.10).
    case dataLengthChanged(DataLength)
    /// LE PHY Update Complete (Vol 4, Part E, 7.7.65.12); on air LL_PHY_UPDATE_IND at its instant (Vol 6, Part B, 5.1.10).
    case phyChanged(PHYPair)
    /// The effective ATT_MTU of the LE fixed bearer (an ATT exchange, or inferred from the largest PDU).
    case mtu(Int)
    /// The encryption procedure: the key asked for, given or refused, and the link encrypted or not. HCI: LE Long Term
    /// Key Request, its Reply or Negative Reply, Encryption Change (7.7.65.5, 7.8.25–26, 7.7.8); on air LL_ENC_REQ,
    /// LL_START_ENC_REQ, LL_REJECT_IND, the peripheral's LL_START_ENC_RSP and the central's LL_PAUSE_ENC_RSP
    /// (Vol 6, Part B, 5.1.3).
    case encryption(SecurityTracker.EncryptionInput)
    /// The rest of how the link is secured: the key a start names, the key size, refreshes and pauses, the BR/EDR
    /// pairing's steps (``SecurityInput``), into the link's security record.
    case security(SecurityInput)
    /// A disconnection asked for, the link ended (Disconnection Complete, LL_TERMINATE_IND with its sender) or replaced.
    case lifecycle(ConnectionLifecycle.Input)
    /// The dynamic L2CAP channels the signalling opened or closed, as the link's ``ChannelMux`` holds them now.
    case channelsChanged([DynamicChannel])
    /// A sender on a credit-based channel waited for credits from a K-frame to the receiver's next credits.
    case creditStallEnded(CreditStall)
    /// Android Bluetooth Quality Reports about the link: one as it comes, or those held for its handle before the link
    /// showed itself, which go first.
    case qualityReport(LinkQualitySample)
    case qualityReportsBefore([LinkQualitySample])
    /// The link's transport: from its connection event (LE Connection Complete, Connection Complete), or for a link
    /// inferred from traffic, from the first channel or event only one transport has (``Inference/transportShownBy(frame:what:)``).
    case transport(LinkTransport)
    /// This side's role as the connection event states it (LE) or the paging shows it (BR/EDR: this side paged, central).
    case role(Connection.Role)
    /// A BR/EDR link fact: role switch, mode, subrating, supervision timeout, packet types, the remote's version,
    /// features and name (``ClassicLinkInput``).
    case classic(ClassicLinkInput)
    /// The Connection Complete of a link first seen by its traffic, logged just ahead of it (``LinkAdoption``): the link
    /// starts at the event, its facts' initial values are the spec's from there, not assumed.
    case opened
}

/// What a ``LinkInput`` did that the analyzer acts on: a security verdict (evidence) or the link's end.
enum LinkOutput: Equatable {
    case security(SecurityTracker.Output)
    case lifecycle(ConnectionLifecycle.Output)
}

/// One link's facts and the machines that change them: its ``LinkState`` (parameters, PHY, data length, ATT_MTU,
/// encryption), its ``SecurityTracker`` (pairing and the encryption procedure), its ``ConnectionLifecycle`` (how it
/// ends), what it carried and its controller's flow control (``LinkTraffic``, ``LinkActivity``), its dynamic channels
/// and credit stalls, its quality reports. Changed only through ``feed(_:frame:timestamp:source:)``,
/// ``feed(smp:sender:)`` and the per-packet `feed` functions (`LinkTraffic.swift`): nothing else writes them, and
/// ``Connection`` reads them from here.
///
/// A value inside ``Connection``; the ``LinkInput``s are rare (link events, not data), so each answers with at most one
/// output; the per-packet inputs answer with a `Bool` at most, and nothing is allocated per packet.
public struct LinkMachine: Hashable, Sendable {
    /// The link facts with their history and sources.
    public private(set) var link: LinkState
    /// How the link ends.
    public private(set) var lifecycle = ConnectionLifecycle()
    /// Pairing and encryption.
    private(set) var security = SecurityTracker()
    /// How the link was secured: its pairings and encryption sessions, each fact with its source.
    public var securityRecord: LinkSecurity { _read { yield security.record } }
    /// A notification or indication at `frame`: noted when a pairing runs in the clear (``LinkSecurity/valuesInClearWhilePairing``).
    @inline(__always)
    mutating func noteNotifiedValue(at frame: Int) {
        if security.pairingInClear { security.record.valuesInClearWhilePairing.note(frame) }
    }
    /// What the link carried and its controller's flow control (``LinkTraffic``; fed per packet, `LinkTraffic.swift`).
    public internal(set) var traffic = LinkTraffic()
    /// What it carried that the diagnosis reads (fed per packet with ``traffic``).
    public internal(set) var activity = LinkActivity()
    /// Dynamic L2CAP channels opened by its signalling, in the order they opened.
    public private(set) var channels: [DynamicChannel] = []
    /// Credit-based channels' senders out of credits (at most 4,096 kept).
    public private(set) var creditStalls: [CreditStall] = []
    /// Android Bluetooth Quality Reports about the link (at most ``Connection/maxQualitySamples``).
    public private(set) var linkQuality: [LinkQualitySample] = []

    /// A link that starts at `startFrame` of the capture, or (nil) one already up when the capture began.
    init(startFrame: Int?) { link = LinkState(startFrame: startFrame) }

    /// One input at `frame`; a fact it sets is observed at that frame unless `source` says otherwise. Returns what the
    /// analyzer must act on, if anything.
    mutating func feed(_ input: LinkInput, frame: Int, timestamp: Timestamp, source: FactSource? = nil) -> LinkOutput? {
        switch input {
        case .parametersUpdated(let p):
            link.apply(.parameters(p), frame: frame, timestamp: timestamp, source: source)
        case .dataLengthChanged(let d):
            link.apply(.dataLength(d), frame: frame, timestamp: timestamp, source: source)
        case .phyChanged(let p):
            link.apply(.phy(p), frame: frame, timestamp: timestamp, source: source)
        case .mtu(let m):
            link.apply(.mtu(m), frame: frame, timestamp: timestamp, source: source)
        case .encryption(let e):
            guard let output = security.feed(e, frame: frame) else { return nil }
            if case .encryption(let on) = output { link.apply(.encryption(on), frame: frame, timestamp: timestamp, source: source) }
            return .security(output)
        case .lifecycle(let l):
            return lifecycle.feed(l).map(LinkOutput.lifecycle)
        case .security(let s):
            security.record(s, frame: frame)
        case .channelsChanged(let now):
            channels = now
        case .creditStallEnded(let stall):
            creditStalls.record(stall)
        case .qualityReport(let sample):
            if linkQuality.count < Connection.maxQualitySamples { linkQuality.append(sample) }
        case .qualityReportsBefore(let held):
            linkQuality.insert(contentsOf: held, at: 0)
        case .transport(let t):
            link.apply(.transport(t), frame: frame, timestamp: timestamp, source: source)
        case .role(let r):
            link.apply(.role(r), frame: frame, timestamp: timestamp, source: source)
        case .classic(let c):
            link.apply(classic: c, frame: frame, timestamp: timestamp, source: source ?? .observed(frame: frame))
        case .opened:
            link.open(at: frame)
        }
        return nil
    }

    /// One SMP PDU sent by `sender` at `frame` (pairing moves on; no link fact changes).
    mutating func feed(smp: SMPPDU, sender: SecurityTracker.Sender, frame: Int, overBREDR: Bool = false) -> SecurityTracker.Output? {
        security.feed(smp: smp, sender: sender, frame: frame, overBREDR: overBREDR)
    }
}
