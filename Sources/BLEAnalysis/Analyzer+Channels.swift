import BLECodecs
import BLECore
import BLEProtocols

extension Analyzer {
    /// One whole L2CAP PDU of an open connection, whose decoding state is `state`, to its channel's decoder.
    func processL2CAP(_ pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp, state: ConnectionState) {
        counters.l2capPDUs += 1
        state.decode.l2capPDUs &+= 1
        switch pdu.channel {
        case 0x0004:
            state.decode.att &+= 1
            processFixedChannelATT(pdu, connection: index, direction: direction, timestamp: timestamp, state: state)
        case 0x0005, 0x0001:
            state.decode.signalling &+= 1
            processSignalling(pdu, connection: index, direction: direction, timestamp: timestamp)
        case 0x0006, 0x0007:
            state.decode.smp &+= 1
            processSMP(pdu, connection: index, direction: direction, timestamp: timestamp)
        default:
            processDynamicChannel(pdu, connection: index, direction: direction, timestamp: timestamp, state: state)
        }
    }

    /// A PDU on any other CID: an ATT bearer over BR/EDR (basic mode, PSM 0x001F), a K-frame of a credit-based
    /// channel (EATT SDUs go on to ATT), a channel known by its PSM whose protocol blescope does not decode, or a
    /// CID no decoder claims (counted for the decode health).
    func processDynamicChannel(_ pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp, state: ConnectionState?)
    {
        let cid = pdu.channel
        if let state, let c = state.channels.channel(direction: direction, cid: cid), let b = state.channelBearers[c],
            state.channels.channels[c].mode == .basic
        {
            state.decode.att &+= 1
            processATT(
                ATTInput(
                    payload: pdu.payload, frame: pdu.lastFrame, l2capBytes: pdu.bytes.count, direction: direction,
                    timestamp: timestamp, cid: cid, bearer: .dynamic(b)), connection: index, state: state)
            return
        }
        if processCreditFrame(pdu, connection: index, direction: direction, timestamp: timestamp) {
            state?.decode.creditFrames &+= 1
            return
        }
        if let state {
            if let c = state.channels.channel(direction: direction, cid: cid) {
                state.decode.countKnown(psm: state.channels.channels[c].psm.rawValue)
            } else {
                state.decode.countUnclaimed(cid: cid, bytes: pdu.bytes.count, frame: pdu.lastFrame)
            }
        }
        if options.timeline {
            var name = L2CAPCID(cid).description
            if let state, let c = state.channels.channel(direction: direction, cid: cid) {
                name += " " + state.channels.channels[c].psm.description
            }
            emit(
                TimelineEvent(
                    frame: pdu.lastFrame, timestamp: timestamp, connection: connections[index].handle, direction: direction,
                    layer: .l2cap, code: UInt32(cid), name: name, summary: "\(pdu.payload.count) bytes"))
        }
    }
}
