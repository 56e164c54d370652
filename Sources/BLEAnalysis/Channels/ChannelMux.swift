import BLECore
import BLEProtocols

/// The L2CAP channels of one connection: which decoder each whole L2CAP PDU goes to, and what the signalling does to
/// the channels (Core Spec Vol 3, Part A).
///
/// Fed every PDU the connection's reassemblers complete (``feed(_:direction:timestamp:)``), it names what the PDU is:
/// - on a fixed channel (2.1): ATT on 0x0004, SMP on 0x0006 (LE) or 0x0007 (BR/EDR), signalling on 0x0005 (LE) or 0x0001
///   (BR/EDR), whose commands it applies (``ChannelTable``: connection request/response, configuration, credit-based
///   connections 4.22–4.28, disconnection 4.6–4.7) and names what each changed (``ChannelEvent``);
/// - on a dynamic channel: ATT on a BR/EDR channel to PSM 0x001F in basic mode (B-frames, 3.1); a K-frame of an LE or
///   enhanced credit-based channel (3.4), counted against its credits (10.1: a K-frame needs a credit; 4.24: LE Flow
///   Control Credit gives more) and reassembled into SDUs (3.4.3: the first K-frame of an SDU carries its length), an
///   SDU of an enhanced ATT bearer (PSM 0x0027) naming its bearer (Part G, 5.3.2: one SDU is one ATT PDU);
///   a PDU of a channel to a PSM blescope does not decode; a CID no channel claims.
///
/// Failure cases, named rather than dropped: signalling that does not decode (``ChannelOutput/malformedSignalling(_:)``);
/// a K-frame sent without a credit, a first K-frame too short for the SDU length, an SDU longer than it announced
/// (``KFrameOutcome``); a credit-based channel past the capture-wide ``CreditChannelBudget``
/// (``ChannelEvent/creditChannelLimit``); a PDU on a CID no channel claims (``ChannelOutput/unknownCID``).
struct ChannelMux {
    /// Dynamic channels learnt from the signalling.
    private(set) var table = ChannelTable()
    /// Each direction of the open credit-based channels, with its credits and partial SDU.
    private(set) var credit: CreditChannelTable
    /// Channel index → index of the ATT bearer on it (``ChannelEvent/bearerOpened(_:kind:channel:mtu:)`` names it).
    private(set) var channelBearers: [Int: Int] = [:]
    private(set) var bearerCount = 0
    /// The SPSM of the LE Credit Based Connection Request waiting for its response (4.22–4.23).
    private(set) var pendingSPSM: UInt16?

    init(creditBudget: CreditChannelBudget) { credit = CreditChannelTable(budget: creditBudget) }

    /// The dynamic channels, closed ones included (their indices stay valid).
    var channels: [DynamicChannel] { table.channels }

    /// One whole L2CAP PDU sent in `direction`.
    @inline(__always)
    mutating func feed(_ pdu: L2CAPPDU, direction: Direction, timestamp: Timestamp) -> ChannelOutput {
        switch pdu.channel {
        case 0x0004: .att(.fixed)
        case 0x0005, 0x0001: signalling(pdu, direction: direction, timestamp: timestamp)
        case 0x0006, 0x0007: .smp
        default: dynamic(pdu, direction: direction, timestamp: timestamp)
        }
    }

    /// Bytes held for partial SDUs of credit-based channels.
    var heldBytes: Int { credit.heldBytes }

    /// Lets every partial SDU go (the analyzer's memory budget ran out); returns the bytes let go.
    mutating func dropPartialSDUs() -> Int { credit.dropAll() }

    /// The connection ended: its credit-based channels give their places back to the budget.
    mutating func close() { credit.closeAll() }

    // MARK: dynamic channels

    @inline(never)
    private mutating func dynamic(_ pdu: L2CAPPDU, direction: Direction, timestamp: Timestamp) -> ChannelOutput {
        let cid = pdu.channel
        let known = table.channel(direction: direction, cid: cid)
        if let c = known, let b = channelBearers[c], table.channels[c].mode == .basic {
            return .att(.dynamic(b))
        }
        let kframe = CreditChannelState.KFrame(
            payload: pdu.payload, l2capBytes: pdu.bytes.count, firstFrame: pdu.firstFrame, frame: pdu.lastFrame, timestamp: timestamp)
        if let (spsm, out) = credit.feed(CreditKey(direction: direction, cid: cid), kframe) {
            var bearer: Int? = nil
            if out.sdu != nil, spsm == L2CAPPSM.eatt.rawValue, let c = known { bearer = channelBearers[c] }
            return .kframe(
                KFrameOutcome(
                    spsm: spsm, withoutCredit: out.withoutCredit, tooShortToStart: out.tooShortToStart, overMPS: out.overMPS,
                    overMTU: out.overMTU, sdu: out.sdu, bearer: bearer))
        }
        if let c = known { return .undecoded(table.channels[c].psm, channel: c) }
        return .unknownCID
    }

    // MARK: signalling

    @inline(never)
    private mutating func signalling(_ pdu: L2CAPPDU, direction: Direction, timestamp: Timestamp) -> ChannelOutput {
        var reader = ByteReader(pdu.payload)
        let signals: [L2CAPSignal]
        do { signals = try L2CAPSignal.parseAll(&reader) } catch { return .malformedSignalling(error) }
        return .signalling(signals.map { apply($0, direction: direction, frame: pdu.lastFrame, timestamp: timestamp) })
    }

    /// One signalling command: the channel table's change first, then what the command does to the credit-based channels.
    mutating func apply(_ s: L2CAPSignal, direction: Direction, frame: Int, timestamp: Timestamp) -> SignalOutcome {
        var events: [ChannelEvent] = []
        if let change = table.feed(s, direction: direction, frame: frame) {
            apply(change, signal: s, into: &events)
        }
        // Data towards the requester arrives on its source CIDs; the credits are the responder's to send with.
        let towardsRequester = direction.reversed
        switch s.command {
        case .creditBasedConnectionRequest(let spsm, let mtu, let mps, let credits, let sourceCIDs):
            // As for the LE request below, for each channel asked for (4.25).
            for cid in sourceCIDs {
                open(CreditKey(direction: towardsRequester, cid: cid), spsm: spsm, credits: credits, limits: (mtu, mps), &events)
            }
        case .leCreditBasedConnectionRequest(let spsm, let sourceCID, let mtu, let mps, let credits):
            // The requester receives on its source CID, within the MTU and MPS it states (4.22).
            open(CreditKey(direction: towardsRequester, cid: sourceCID), spsm: spsm, credits: credits, limits: (mtu, mps), &events)
            pendingSPSM = spsm
        case .leCreditBasedConnectionResponse(let destinationCID, let mtu, let mps, let credits, let result):
            if result != 0 { events.append(.creditConnectionRefused(psm: pendingSPSM, result: result)) }
            if result == 0, let spsm = pendingSPSM {
                open(
                    CreditKey(direction: towardsRequester, cid: destinationCID), spsm: spsm, credits: credits, limits: (mtu, mps), &events)
            }
        case .flowControlCreditIndication(let cid, let credits):
            // The receiver gives credits for the channel it receives on (its own CID).
            if let since = credit.credit(CreditKey(direction: towardsRequester, cid: cid), Int(credits)) {
                events.append(
                    .creditStallEnded(
                        CreditStall(cid: cid, startFrame: since.frame, startTime: since.time, endFrame: frame, endTime: timestamp)))
            }
        case .connectionParameterUpdateRequest(let minimum, let maximum, let latency, let timeout):
            events.append(
                .parameterUpdateRequest(ParameterRequest(intervalMin: minimum, intervalMax: maximum, latency: latency, timeout: timeout)))
        case .connectionParameterUpdateResponse(let result):
            events.append(.parameterUpdateResponse(result: result))
        case .disconnectionResponse(let dcid, let scid):
            for cid in [dcid, scid] {
                credit.close(CreditKey(direction: .tx, cid: cid))
                credit.close(CreditKey(direction: .rx, cid: cid))
            }
        default:
            break
        }
        return SignalOutcome(signal: s, events: events)
    }

    /// Opens the ATT bearers and credit-based reassembly of channels the signalling opened; follows MTU changes.
    private mutating func apply(_ change: ChannelChange, signal: L2CAPSignal, into events: inout [ChannelEvent]) {
        switch change {
        case .opened(let list, let refused, let towardsRequester):
            for cid in refused { credit.close(CreditKey(direction: towardsRequester, cid: cid)) }
            for i in list {
                let channel = table.channels[i]
                if channel.mode == .enhancedCredit,
                    case .creditBasedConnectionResponse(let mtu, let mps, let credits, _, _) = signal.command
                {
                    // Data towards the responder, with the credits its response gave (the other way was opened at the request).
                    open(
                        CreditKey(direction: channel.initiator, cid: channel.responderCID), spsm: channel.psm.rawValue, credits: credits,
                        limits: (mtu, mps), &events)
                }
                let kind: ATTBearerKind? =
                    switch (channel.psm, channel.mode) {
                    case (.att, .basic): .bredr
                    case (.eatt, .enhancedCredit): .eatt
                    default: nil
                    }
                if let kind, bearerCount < ChannelTable.maxChannels {
                    channelBearers[i] = bearerCount
                    events.append(.bearerOpened(bearerCount, kind: kind, channel: i, mtu: channel.commonMTU))
                    bearerCount += 1
                }
            }
            if list.isEmpty { return }
        case .mtuChanged(let list):
            for i in list { if let b = channelBearers[i] { events.append(.bearerMTU(b, mtu: table.channels[i].commonMTU)) } }
        case .closed:
            break
        case .refused(let refusal):
            events.append(.connectionRefused(refusal))
            return
        }
        events.append(.channelsChanged)
    }

    /// `limits`: the receiver's MTU and MPS.
    private mutating func open(
        _ key: CreditKey, spsm: UInt16, credits: UInt16, limits: (mtu: UInt16, mps: UInt16), _ events: inout [ChannelEvent]
    ) {
        if !credit.open(key, spsm: spsm, credits: Int(credits), mtu: Int(limits.mtu), mps: Int(limits.mps)) {
            events.append(.creditChannelLimit)
        }
    }
}

/// What one L2CAP PDU of a connection is (``ChannelMux/feed(_:direction:timestamp:)``).
enum ChannelOutput {
    /// An ATT PDU, the L2CAP PDU's payload, on the bearer named: the LE fixed channel, or a BR/EDR channel in basic mode.
    case att(ATTBearerSlot)
    /// An SMP PDU, the L2CAP PDU's payload.
    case smp
    /// The signalling commands the PDU held, in order, each with what it changed.
    case signalling([SignalOutcome])
    /// Signalling that did not decode: nothing changed.
    case malformedSignalling(DecodeError)
    /// A K-frame of a credit-based channel, and the SDU it completed.
    case kframe(KFrameOutcome)
    /// A PDU of a channel opened to a PSM the mux does not decode itself (the profiles by PSM, `channel` its index:
    /// ``ConnectionMachine/processClassic(_:psm:channel:direction:timestamp:)``; others undecoded).
    case undecoded(L2CAPPSM, channel: Int)
    /// A PDU on a CID no fixed channel, open dynamic channel or credit-based channel claims.
    case unknownCID
}

/// One signalling command and what it changed.
struct SignalOutcome {
    var signal: L2CAPSignal
    var events: [ChannelEvent]
}

/// What a signalling command changed on the connection's channels, or said about the link.
enum ChannelEvent: Equatable {
    /// The dynamic channels changed (``ChannelMux/channels``): opened, reconfigured or closed.
    case channelsChanged
    /// An ATT bearer opened on channel `channel` (index into ``ChannelMux/channels``): the connection's bearer number
    /// `index` (0 for the first dynamic one), of `kind`, with the MTU both sides can receive.
    case bearerOpened(Int, kind: ATTBearerKind, channel: Int, mtu: Int?)
    /// The MTU of bearer `index` changed.
    case bearerMTU(Int, mtu: Int?)
    /// A credit-based channel was asked for past the capture-wide budget: its K-frames are not reassembled.
    case creditChannelLimit
    /// An LE Credit Based Connection Response refused the request (to `psm`, when the request was seen).
    case creditConnectionRefused(psm: UInt16?, result: UInt16)
    /// A BR/EDR Connection Response refused the channel.
    case connectionRefused(ChannelRefusal)
    /// LE Flow Control Credit ended a wait of the sender for credits.
    case creditStallEnded(CreditStall)
    /// Connection Parameter Update Request (4.20) and its response (4.21).
    case parameterUpdateRequest(ParameterRequest)
    case parameterUpdateResponse(result: UInt16)
}

/// What one K-frame did: the channel's SPSM, its failures, and the SDU it completed.
struct KFrameOutcome {
    var spsm: UInt16
    /// Sent without a credit (Vol 3, Part A, 10.1: a protocol error).
    var withoutCredit: Bool
    /// The first K-frame of an SDU, too short for the 2-byte SDU length: skipped.
    var tooShortToStart: Bool
    /// The K-frame's payload length, when more than the receiver's MPS; the announced SDU length, when more than its MTU
    /// (Vol 3, Part A, 3.4.3: both protocol errors; the bytes are still decoded).
    var overMPS: Int?
    var overMTU: Int?
    var sdu: CreditChannelState.SDU?
    /// The enhanced ATT bearer the SDU is an ATT PDU of (its index in the connection's dynamic bearers).
    var bearer: Int?

    /// The SDU came with more bytes than its first K-frame announced (the extra ones are kept).
    var sduLongerThanAnnounced: Bool { sdu.map { $0.bytes.count > $0.announced } ?? false }
}
