import BLECore
import BLEProtocols

/// Follows RFCOMM on one BR/EDR link (RFCOMM 1.2; TS 07.10): each DLC opened (SABM, UA), refused (DM) or closed
/// (DISC), its parameters (PN: frame size, credit-based flow control), modem status (MSC), credits given and used, and
/// its data frames; the AT lines of a hands-free DLC go on to the ``HFPTracker``.
struct RFCOMMTracker {
    private(set) var channels: [RFCOMMChannel] = []
    private var index: [UInt8: Int] = [:]
    /// Credits each sender holds per DLC (credit-based flow control, RFCOMM 1.2, 6.5): [dlci][sender is the peer].
    private var credits: [UInt16: Int] = [:]
    static let maxChannels = 64

    /// What one frame did, for the timeline and the profile above.
    struct Step {
        var dlci: UInt8
        /// UIH data on a DLC (not DLCI 0): its information bytes.
        var data: [UInt8]?
        var opened = false
        var closed = false
    }

    mutating func feed(_ f: RFCOMMFrame, fromPeer: Bool, frame: Int) -> Step {
        var step = Step(dlci: f.dlci)
        guard let i = channel(f.dlci, opening: f.type == .sabm) else { return step }
        if !f.fcsValid { channels[i].badFCS.append(frame) }
        let d: Direction = fromPeer ? .rx : .tx
        switch f.type {
        case .sabm:
            channels[i].openRequestFrame = frame
        case .ua:
            if channels[i].openRequestFrame != nil, channels[i].openFrame == nil, channels[i].closeFrame == nil {
                channels[i].openFrame = frame
                step.opened = true
            }
        case .dm:
            if channels[i].openFrame == nil {
                channels[i].refusedFrame = frame
            } else if channels[i].closeFrame == nil {
                channels[i].closeFrame = frame
                step.closed = true
            }
        case .disc:
            if channels[i].closeFrame == nil {
                channels[i].closeFrame = frame
                channels[i].closedByPeer = fromPeer
                step.closed = true
            }
        case .uih:
            if f.dlci == 0 {
                for m in f.controlMessages ?? [] { control(m, fromPeer: fromPeer, frame: frame) }
            } else {
                uih(f, channel: i, direction: d, frame: frame, step: &step)
            }
        default:
            break
        }
        return step
    }

    private mutating func uih(_ f: RFCOMMFrame, channel i: Int, direction d: Direction, frame: Int, step: inout Step) {
        let key = UInt16(f.dlci) << 1 | (d == .rx ? 1 : 0)
        if let c = f.credits {
            channels[i].creditsGiven[d] += Int(c)
            // Credits given by a side are for the other side's sending.
            let other = UInt16(f.dlci) << 1 | (d == .rx ? 0 : 1)
            credits[other, default: 0] += Int(c)
        }
        guard !f.information.isEmpty else { return }
        channels[i].frames[d] += 1
        channels[i].bytes[d] += f.information.count
        if channels[i].creditFlow {
            let left = credits[key, default: 0]
            if left <= 0, channels[i].withoutCredit.count < 4096 { channels[i].withoutCredit.append(frame) }
            credits[key] = left - 1
        }
        step.data = f.information
    }

    private mutating func control(_ m: RFCOMMControlMessage, fromPeer: Bool, frame: Int) {
        if let pn = m.parameterNegotiation, let i = channel(pn.dlci) {
            channels[i].maxFrameSize = pn.maxFrameSize
            if !m.isCommand {
                // The response decides (0xE: credit flow agreed, RFCOMM 1.2, 5.5.3); its window is the responder's credits
                // for the requester, the command's the requester's for the responder.
                channels[i].creditFlow = pn.typeAndLayer >> 4 == 0xE
                if channels[i].creditFlow {
                    let responder: Direction = fromPeer ? .rx : .tx
                    credits[UInt16(pn.dlci) << 1 | (responder == .rx ? 0 : 1), default: 0] += Int(pn.window)
                    channels[i].creditsGiven[responder] += Int(pn.window)
                }
            } else if pn.creditFlow {
                let requester: Direction = fromPeer ? .rx : .tx
                credits[UInt16(pn.dlci) << 1 | (requester == .rx ? 0 : 1), default: 0] = Int(pn.window)
                channels[i].creditsGiven[requester] += Int(pn.window)
            }
        }
        if let msc = m.modemStatus, m.isCommand, msc.flowControl, let i = channel(msc.dlci), channels[i].flowStops.count < 4096 {
            channels[i].flowStops.append(frame)
        }
    }

    /// The DLC's entry, made on first sight (a SABM on a DLC closed before opens a new one).
    private mutating func channel(_ dlci: UInt8, opening: Bool = false) -> Int? {
        if let i = index[dlci], channels[i].closeFrame == nil || !opening { return i }
        guard channels.count < Self.maxChannels else { return nil }
        channels.append(RFCOMMChannel(dlci: dlci))
        index[dlci] = channels.count - 1
        return channels.count - 1
    }

    mutating func name(dlci: UInt8, _ service: String) {
        if let i = index[dlci], channels[i].service == nil { channels[i].service = service }
    }
}
