import BLECore
import BLEProtocols

/// How a dynamic channel frames its data (Core Spec Vol 3, Part A, 2.4 and 3).
public enum ChannelMode: String, Hashable, Sendable {
    /// BR/EDR connection-oriented channel in basic mode (B-frames): Connection Request 0x02.
    case basic
    /// LE credit-based flow control (K-frames): LE Credit Based Connection Request 0x14.
    case leCredit = "le-credit"
    /// Enhanced credit-based flow control, LE or BR/EDR (K-frames): Credit Based Connection Request 0x17.
    case enhancedCredit = "enhanced-credit"
}

/// One dynamic L2CAP channel: two endpoints, one on each side, each named by the CID its owner receives on.
public struct DynamicChannel: Hashable, Sendable {
    public var psm: L2CAPPSM
    public var mode: ChannelMode
    /// The direction the connection request went in (the side that asked for the channel sent it).
    public var initiator: Direction
    /// The requester's endpoint (its Source CID): data towards the requester carries it.
    public var initiatorCID: UInt16
    /// The responder's endpoint: data towards the responder carries it.
    public var responderCID: UInt16
    /// The largest SDU each side said it can receive (configuration MTU option, or the MTU of a credit-based
    /// request/response); nil until said.
    public var initiatorMTU: Int?
    public var responderMTU: Int?
    public var openFrame: Int
    /// The Disconnection Response that closed it (nil while open).
    public var closeFrame: Int? = nil

    /// The CID a PDU sent in `direction` carries on this channel.
    public func cid(sentIn direction: Direction) -> UInt16 { direction == initiator ? responderCID : initiatorCID }

    /// The MTU both sides can receive: ATT_MTU of an ATT bearer on it (Core Spec Vol 3, Part F, 3.2.8: the
    /// minimum of the two; on BR/EDR a side that names no MTU gets the L2CAP default, 672).
    public var commonMTU: Int? {
        let fallback: Int? = mode == .basic ? L2CAPSignalCommand.defaultBREDRMTU : nil
        guard let a = initiatorMTU ?? fallback, let b = responderMTU ?? fallback else { return initiatorMTU ?? responderMTU }
        return min(a, b)
    }
}

/// What a signalling command did to the channels of a connection.
enum ChannelChange {
    /// Channels opened (several for one Credit Based Connection Response): indices into ``ChannelTable/channels``;
    /// `refused`: the requester's Source CIDs the response turned down, with the direction data towards them would take.
    case opened([Int], refused: [UInt16], towardsRequester: Direction)
    /// An MTU of an open channel changed (Configure Request, Credit Based Reconfigure).
    case mtuChanged([Int])
    /// A channel closed; its slot in ``ChannelTable/channels`` is kept (indices stay valid) but no longer looked up.
    case closed(Int)
    /// A BR/EDR Connection Response refused a Connection Request (result 0x0002 and above, Vol 3, Part A, 4.3).
    case refused(ChannelRefusal)
}

/// A BR/EDR channel the responder would not open: the PSM asked for, the result, and the Pending status before it.
public struct ChannelRefusal: Hashable, Sendable {
    public var psm: UInt16
    public var result: UInt16
    public var requestFrame: Int
    /// The status of a Pending response that came first (0x0001 authentication pending, 0x0002 authorization pending).
    public var pendingStatus: UInt16?
    /// The side that asked (HCI: tx is this side).
    public var requester: Direction
}

/// The dynamic channels of one connection, learnt from its signalling: BR/EDR Connection Request/Response with
/// their PSM, Configure Requests (MTU), Disconnection; LE and enhanced credit-based connections (Core Spec Vol 3,
/// Part A, 4.2–4.7, 4.22–4.23, 4.25–4.28). Requests wait for their response by (direction, identifier).
///
/// Failure cases: a response without its request (capture started mid-signalling) opens nothing; a refused
/// or pending result opens nothing; a Configure Request for an unknown CID changes nothing.
struct ChannelTable {
    struct End: Hashable {
        var direction: Direction
        var cid: UInt16
    }
    struct PendingRequest {
        var psm: UInt16
        var mode: ChannelMode
        var sourceCIDs: [UInt16]
        var mtu: Int?
        var frame: Int
        /// The status of a Pending response to it (Vol 3, Part A, 4.3: 0x0001 authentication, 0x0002 authorization).
        var pendingStatus: UInt16?
    }
    struct RequestKey: Hashable {
        var direction: Direction
        var identifier: UInt8
    }

    private(set) var channels: [DynamicChannel] = []
    /// Open channels by the (direction, CID) a PDU travels with.
    private var ends: [End: Int] = [:]
    private var pending: [RequestKey: PendingRequest] = [:]
    private var pendingReconfigure: [RequestKey: (mtu: Int, cids: [UInt16])] = [:]
    /// Bound on channels remembered per connection (closed ones included): hostile signalling stays flat.
    static let maxChannels = 256

    var isEmpty: Bool { ends.isEmpty }

    /// The open channel a PDU sent in `direction` on `cid` belongs to. A capture without directions matches either end.
    func channel(direction: Direction, cid: UInt16) -> Int? {
        if let i = ends[End(direction: direction, cid: cid)] { return i }
        if direction == .unknown {
            return ends[End(direction: .tx, cid: cid)] ?? ends[End(direction: .rx, cid: cid)]
        }
        return nil
    }

    /// One signalling command sent in `direction`.
    mutating func feed(_ signal: L2CAPSignal, direction: Direction, frame: Int) -> ChannelChange? {
        let key = RequestKey(direction: direction, identifier: signal.identifier)
        let requestKey = RequestKey(direction: direction.reversed, identifier: signal.identifier)
        switch signal.command {
        case let .connectionRequest(psm, scid):
            remember(key, PendingRequest(psm: psm, mode: .basic, sourceCIDs: [scid], mtu: nil, frame: frame))
        case let .leCreditBasedConnectionRequest(spsm, scid, mtu, _, _):
            remember(key, PendingRequest(psm: spsm, mode: .leCredit, sourceCIDs: [scid], mtu: Int(mtu), frame: frame))
        case let .creditBasedConnectionRequest(spsm, mtu, _, _, scids):
            remember(key, PendingRequest(psm: spsm, mode: .enhancedCredit, sourceCIDs: scids, mtu: Int(mtu), frame: frame))
        case let .connectionResponse(dcid, scid, result, status):
            guard result != 1 else {  // pending: the final response follows
                pending[requestKey]?.pendingStatus = status
                return nil
            }
            guard let request = pending.removeValue(forKey: requestKey), request.sourceCIDs == [scid] else { return nil }
            guard result == 0 else {
                return .refused(
                    ChannelRefusal(
                        psm: request.psm, result: result, requestFrame: request.frame, pendingStatus: request.pendingStatus,
                        requester: direction.reversed))
            }
            return open(request, responderCIDs: [dcid], responderMTU: nil, initiator: direction.reversed, frame: frame)
        case let .leCreditBasedConnectionResponse(dcid, mtu, _, _, result):
            guard let request = pending.removeValue(forKey: requestKey) else { return nil }
            return open(
                request, responderCIDs: [result == 0 ? dcid : 0], responderMTU: Int(mtu), initiator: direction.reversed, frame: frame)
        case let .creditBasedConnectionResponse(mtu, _, _, _, dcids):
            // Each non-zero Destination CID pairs with the Source CID at the same place; 0 refuses that one (4.26).
            guard let request = pending.removeValue(forKey: requestKey) else { return nil }
            return open(request, responderCIDs: dcids, responderMTU: Int(mtu), initiator: direction.reversed, frame: frame)
        case let .configureRequest(dcid, _, options):
            // The sender names the MTU it can receive; dcid is the other side's endpoint, where the sender sends.
            guard let i = ends[End(direction: direction, cid: dcid)] else { return nil }
            let mtu = L2CAPSignalCommand.mtuOption(options).map(Int.init) ?? L2CAPSignalCommand.defaultBREDRMTU
            if channels[i].initiator == direction { channels[i].initiatorMTU = mtu } else { channels[i].responderMTU = mtu }
            return .mtuChanged([i])
        case let .creditBasedReconfigureRequest(mtu, _, dcids):
            pendingReconfigure[key] = (Int(mtu), dcids)
        case let .creditBasedReconfigureResponse(result):
            guard let r = pendingReconfigure.removeValue(forKey: requestKey), result == 0 else { return nil }
            // The requester sends on the destination CIDs it names and can now receive `mtu` (4.27).
            var changed: [Int] = []
            for dcid in r.cids {
                guard let i = ends[End(direction: direction.reversed, cid: dcid)] else { continue }
                if channels[i].initiator == direction.reversed {
                    channels[i].initiatorMTU = r.mtu
                } else {
                    channels[i].responderMTU = r.mtu
                }
                changed.append(i)
            }
            return changed.isEmpty ? nil : .mtuChanged(changed)
        case let .disconnectionResponse(dcid, scid):
            // Sent by the side whose endpoint is dcid: it receives on dcid, the requester on scid.
            guard let i = ends[End(direction: direction.reversed, cid: dcid)] ?? ends[End(direction: direction, cid: scid)] else {
                return nil
            }
            let c = channels[i]
            ends.removeValue(forKey: End(direction: c.initiator, cid: c.responderCID))
            ends.removeValue(forKey: End(direction: c.initiator.reversed, cid: c.initiatorCID))
            if channels[i].closeFrame == nil { channels[i].closeFrame = frame }
            return .closed(i)
        default:
            break
        }
        return nil
    }

    private mutating func remember(_ key: RequestKey, _ request: PendingRequest) {
        if pending.count >= Self.maxChannels { pending.removeAll() }
        pending[key] = request
    }

    private mutating func open(
        _ request: PendingRequest, responderCIDs: [UInt16], responderMTU: Int?, initiator: Direction,
        frame: Int
    ) -> ChannelChange? {
        var opened: [Int] = []
        var refused: [UInt16] = []
        for (i, scid) in request.sourceCIDs.enumerated() where i >= responderCIDs.count || responderCIDs[i] == 0 { refused.append(scid) }
        for (scid, dcid) in zip(request.sourceCIDs, responderCIDs) where dcid != 0 && channels.count < Self.maxChannels {
            let c = DynamicChannel(
                psm: L2CAPPSM(request.psm), mode: request.mode, initiator: initiator, initiatorCID: scid,
                responderCID: dcid, initiatorMTU: request.mtu, responderMTU: responderMTU, openFrame: frame)
            channels.append(c)
            let i = channels.count - 1
            ends[End(direction: initiator, cid: dcid)] = i
            ends[End(direction: initiator.reversed, cid: scid)] = i
            opened.append(i)
        }
        return opened.isEmpty && refused.isEmpty ? nil : .opened(opened, refused: refused, towardsRequester: initiator.reversed)
    }
}
