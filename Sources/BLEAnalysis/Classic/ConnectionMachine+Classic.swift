import BLECore
import BLEProtocols

/// A BR/EDR link's profile channels (SDP, RFCOMM with hands-free AT, AVDTP with A2DP media, AVCTP with AVRCP): each PDU
/// decoded, given to its tracker (``ClassicProfiles``), told in the timeline; what does not decode is a finding with its
/// frame and offset, and the pass goes on. Only the PDUs of these channels come here: LE traffic never does.
extension ConnectionMachine {
    /// Whether `psm` is one of the profiles decoded here.
    static func isClassicProfile(_ psm: L2CAPPSM) -> Bool {
        psm == .sdp || psm == .rfcomm || psm == .avdtp || psm == .avctp
    }

    /// One whole L2CAP PDU of a profile channel (`channel`: its index in the ``ChannelMux``).
    @inline(never)
    func processClassic(_ pdu: L2CAPPDU, psm: L2CAPPSM, channel: Int, direction: Direction, timestamp: Timestamp) {
        if classic == nil { classic = ClassicProfiles() }
        let fromPeer = direction == .rx, frame = pdu.lastFrame
        var reader = ByteReader(pdu.payload, origin: 4)
        do throws(DecodeError) {
            switch psm {
            case .sdp:
                let m = try SDPPDU(parsing: &reader)
                let request = classic!.sdp.feed(m, fromPeer: fromPeer, frame: frame)
                let status: String? = if case .errorResponse(let code) = m.parameters { code.description } else { nil }
                var fields: [(String, Int64)] = [("pdu", Int64(m.id.rawValue)), ("tid", Int64(m.transaction))]
                if case .errorResponse(let code) = m.parameters { fields.append(("error", Int64(code.rawValue))) }
                emitClassic(
                    .sdp, frame, timestamp, direction, code: m.id.rawValue, name: m.id.description, m.summary, request: request,
                    status: status,
                    fields: fields)
            case .rfcomm:
                let f = try RFCOMMFrame(parsing: &reader)
                rfcomm(f, fromPeer: fromPeer, frame: frame, timestamp: timestamp, direction: direction)
            case .avdtp:
                if classic!.avdtp.role(ofChannel: channel, closed: { channels.channels[$0].closeFrame != nil }) {
                    let m = try AVDTPMessage(parsing: &reader)
                    avdtpSignal(m, fromPeer: fromPeer, frame: frame, timestamp: timestamp, direction: direction)
                } else {
                    avdtpMedia(pdu, channel: channel, frame: frame, timestamp: timestamp, direction: direction)
                }
            default:
                let m = try AVCTPMessage(parsing: &reader)
                let request = classic!.feedAVRCP(m, fromPeer: fromPeer, frame: frame)
                let what = m.frame.map { "\($0.code) \($0.what)" } ?? "AVCTP fragment \(m.raw.count) bytes"
                let status = m.frame.flatMap { $0.code.isRefusal ? $0.code.description : nil }
                emitClassic(
                    .avrcp, frame, timestamp, direction, code: m.frame?.opcode ?? 0,
                    name: m.isResponse ? "AVRCP response" : "AVRCP command", what,
                    request: request, status: status, fields: Self.avrcpFields(m))
            }
        } catch {
            sink.findings.append(
                Finding(.warning, .malformed("\(psm.name ?? psm.description) PDU", error), frame: frame, offset: nil))
            emitUndecoded(pdu, psm: psm, direction: direction, timestamp: timestamp)
        }
    }

    private func rfcomm(_ f: RFCOMMFrame, fromPeer: Bool, frame: Int, timestamp: Timestamp, direction: Direction) {
        let step = classic!.rfcomm.feed(f, fromPeer: fromPeer, frame: frame)
        var fields: [(String, Int64)] = [("dlci", Int64(f.dlci)), ("frame_type", Int64(f.type.rawValue)), ("pf", f.pollFinal ? 1 : 0)]
        if let c = f.credits { fields.append(("credits", Int64(c))) }
        fields.append(("length", Int64(f.information.count)))
        emitClassic(.rfcomm, frame, timestamp, direction, code: f.type.rawValue, name: "RFCOMM \(f.type)", f.summary, fields: fields)
        if step.closed { closeOBEX(dlci: f.dlci, frame: frame) }
        guard let data = step.data else { return }
        if classic!.obex.follows(UInt16(f.dlci)) || !classic!.isHandsFree(dlci: f.dlci, data: data) {
            if classic!.isOBEX(dlci: f.dlci, data: data, fromPeer: fromPeer) {
                obex(data, dlci: f.dlci, fromPeer: fromPeer, frame: frame, timestamp: timestamp, direction: direction)
            }
            return
        }
        let lines = classic!.hfp!.feed(data, fromPeer: fromPeer, frame: frame, timestamp: timestamp)
        for line in lines {
            let status = line.kind == .final && line.name != "OK" ? line.text : nil
            emitClassic(
                .hfp, frame, timestamp, direction, code: 0, name: line.isCommand ? "AT command" : "AT result", line.text, status: status,
                fields: [("dlci", Int64(f.dlci))])
        }
    }

    private func avdtpSignal(_ m: AVDTPMessage, fromPeer: Bool, frame: Int, timestamp: Timestamp, direction: Direction) {
        let request = classic!.avdtp.signal(m, fromPeer: fromPeer, frame: frame, timestamp: timestamp)
        let status: String? =
            switch m.messageType {
            case .reject: if case .reject(_, let e) = m.parameters { e.description } else { "rejected" }
            case .generalReject: "general reject"
            default: nil
            }
        emitClassic(
            .avdtp, frame, timestamp, direction, code: m.signal?.rawValue ?? 0, name: "AVDTP \(m.signal?.description ?? "continuation")",
            m.summary,
            request: request, status: status, fields: Self.avdtpFields(m))
    }

    private func avdtpMedia(_ pdu: L2CAPPDU, channel: Int, frame: Int, timestamp: Timestamp, direction: Direction) {
        guard
            case let (seid, rtp)? = classic!.avdtp.media(
                channel: channel, payload: pdu.payload, fromPeer: direction == .rx, frame: frame, timestamp: timestamp)
        else {
            emitUndecoded(pdu, psm: .avdtp, direction: direction, timestamp: timestamp)
            return
        }
        guard sink.timeline else { return }
        let summary =
            rtp.map { "SEID \(seid) seq=\($0.sequence) ts=\($0.timestamp) \(pdu.payload.count) bytes" }
            ?? "SEID \(seid) \(pdu.payload.count) bytes (no RTP header)"
        var fields: [(String, Int64)] = [("seid", Int64(seid)), ("bytes", Int64(pdu.payload.count))]
        if let rtp { fields += [("sequence", Int64(rtp.sequence)), ("rtp_timestamp", Int64(rtp.timestamp))] }
        emitClassic(.a2dp, frame, timestamp, direction, code: 0, name: "A2DP media", summary, fields: fields)
    }

    private func emitClassic(
        _ layer: Layer, _ frame: Int, _ timestamp: Timestamp, _ direction: Direction, code: UInt8, name: String, _ summary: String,
        request: Int? = nil, status: String? = nil, fields: [(String, Int64)]? = nil
    ) {
        guard sink.timeline else { return }
        var e = TimelineEvent(
            frame: frame, timestamp: timestamp, connection: handle, direction: direction, layer: layer, code: UInt32(code), name: name,
            summary: summary)
        e.requestFrame = request
        e.status = status
        e.fields = fields
        emit(e)
    }

    /// An AVDTP message's numbers for the timeline's `fields`: label, message type, signal, the SEID, the codec chosen.
    static func avdtpFields(_ m: AVDTPMessage) -> [(String, Int64)] {
        var f: [(String, Int64)] = [("label", Int64(m.label)), ("message_type", Int64(m.messageType.rawValue))]
        if let s = m.signal { f.append(("signal", Int64(s.rawValue))) }
        switch m.parameters {
        case .seid(let s): f.append(("acp_seid", Int64(s)))
        case .seids(let list): if let s = list.first { f.append(("acp_seid", Int64(s))) }
        case .setConfiguration(let acp, let int, let caps):
            f += [("acp_seid", Int64(acp)), ("int_seid", Int64(int))]
            if let codec = caps.lazy.compactMap(\.codec).first {
                f.append(("codec_type", Int64(codec.codecType)))
                if let b = codec.sbcBitpool { f.append(("sbc_max_bitpool", Int64(b.upperBound))) }
            }
        case .reject(_, let e): f.append(("error", Int64(e.rawValue)))
        default: break
        }
        return f
    }

    /// An AVCTP/AVRCP message's numbers: label, C/R, ctype or response, opcode, PDU, event, operation.
    static func avrcpFields(_ m: AVCTPMessage) -> [(String, Int64)] {
        var f: [(String, Int64)] = [("label", Int64(m.label)), ("cr", m.isResponse ? 1 : 0)]
        guard let av = m.frame else { return f }
        f += [("ctype", Int64(av.code.rawValue)), ("opcode", Int64(av.opcode))]
        if let p = av.passThroughOperation { f.append(("operation", Int64(p.operation))) }
        if case let (pdu, params)? = av.avrcpPDU {
            f.append(("pdu_id", Int64(pdu)))
            // A rejected RegisterNotification carries its error status where a notification has its event (AVRCP 1.6,
            // 6.15.1): tshark's btavrcp.status, not an event id.
            if pdu == 0x31, let e = params.first { f.append((av.code == .rejected ? "status" : "event_id", Int64(e))) }
        }
        return f
    }

    /// The link's profiles as it ends (nil: none ran on it).
    func finishClassic(endFrame: Int?) -> ClassicProfilesResult? {
        guard var c = classic else { return nil }
        classic = nil
        let r = c.finish(connection: number, endFrame: endFrame)
        return r.isEmpty ? nil : r
    }
}
