import BLECore
import BLEProtocols

extension ClassicProfiles {
    /// The service classes of OBEX profiles (Assigned Numbers, Service Class UUIDs): IrMC Sync, Object Push, File
    /// Transfer, Imaging (BIP), Phonebook Access (PCE, PSE, profile), Message Access (MAS, MNS, profile).
    static let obexClasses: Set<UInt16> = [
        0x1104, 0x1105, 0x1106, 0x111A, 0x111B, 0x111C, 0x111D, 0x112E, 0x112F, 0x1130, 0x1132, 0x1133, 0x1134,
    ]

    /// Whether RFCOMM data on `dlci` is OBEX: a session is followed there, SDP named an OBEX service on its server
    /// channel, or, with no SDP answer that names it, the data begins with an OBEX Connect (0x80, length, version 1.x:
    /// the first 4 bytes in the DLC's first frame).
    mutating func isOBEX(dlci: UInt8, data: [UInt8], fromPeer: Bool) -> Bool {
        if obex.follows(UInt16(dlci)) { return true }
        guard let first = data.first else { return false }
        let service = sdp.service(onRFCOMMChannel: dlci >> 1)
        let named = Set((service?.classes ?? []).compactMap(\.uuid16) + (service?.profiles ?? []).compactMap(\.profile.uuid16))
        if !named.isEmpty {
            guard !named.isDisjoint(with: Self.obexClasses) else { return false }
        } else if !(data.count >= 4 && first == 0x80 && data[3] >> 4 == 1) {
            return false
        }
        guard obex.start(UInt16(dlci), service: service?.title, firstByte: first, fromPeer: fromPeer) else { return false }
        rfcomm.name(dlci: dlci, service?.title ?? "OBEX")
        return true
    }
}

/// OBEX on a BR/EDR link, over RFCOMM or, GOEP 2.0's way, over an L2CAP channel in Enhanced Retransmission Mode: each
/// packet reassembled from the channel's data, decoded, told in the timeline (layer `obex`); what does not decode is a
/// finding with its frame and its offset in the packet, and the channel is read on.
extension ConnectionMachine {
    func obex(_ data: [UInt8], dlci: UInt8, fromPeer: Bool, frame: Int, timestamp: Timestamp, direction: Direction) {
        let (packets, malformed) = classic!.obex.feed(data, channel: UInt16(dlci), fromPeer: fromPeer, frame: frame)
        report(malformed, on: "RFCOMM DLCI \(dlci)")
        emitOBEX(packets, ("dlci", Int64(dlci)), frame: frame, timestamp: timestamp, direction: direction)
    }

    /// The key of an L2CAP channel in the ``OBEXTracker`` (RFCOMM DLCIs are 0–63).
    static func obexKey(channel: Int) -> UInt16 { 0x100 &+ UInt16(truncatingIfNeeded: channel) }

    /// A PDU of a dynamic channel no decoder takes: OBEX over L2CAP (GOEP 2.1, 5.2; Core Vol 3, Part A, 3.3.2) when the
    /// channel is followed, or when it is a dynamic PSM whose first I-frame (enhanced control field, SAR unsegmented)
    /// holds a whole OBEX Connect, with or without the 2-byte FCS (the Connect's length tells which). False: not OBEX.
    func goep(_ pdu: L2CAPPDU, psm: L2CAPPSM, channel: Int, direction: Direction, timestamp: Timestamp) -> Bool {
        let key = Self.obexKey(channel: channel)
        let p = pdu.payload, fromPeer = direction == .rx, frame = pdu.lastFrame
        if classic?.obex.follows(key) != true {
            guard psm.rawValue >= 0x1001, p.count >= 9, p[0] & 0x01 == 0, p[1] >> 6 == 0, p[2] == 0x80, p[5] >> 4 == 1 else { return false }
            let length = Int(p[3]) << 8 | Int(p[4])
            guard length == p.count - 4 || length == p.count - 2 else { return false }
            if classic == nil { classic = ClassicProfiles() }
            guard classic!.obex.start(key, psm: psm.rawValue, service: nil, firstByte: 0x80, fromPeer: fromPeer) else { return false }
            classic!.goepFCS[key] = length == p.count - 4
        }
        // S-frames (bit 0 set) carry no data; an I-frame sent again with the same TxSeq is a retransmission.
        guard p.count >= 2, p[0] & 0x01 == 0 else { return true }
        let txSeq = p[0] >> 1 & 0x3F, seen = UInt32(key) << 1 | (fromPeer ? 1 : 0)
        if classic!.goepTxSeq[seen] == txSeq { return true }
        classic!.goepTxSeq[seen] = txSeq
        let sar = p[1] >> 6, fcs = classic!.goepFCS[key] == true ? 2 : 0
        let start = sar == 1 ? 4 : 2
        guard p.count >= start + fcs else { return true }
        let data = Array(UnsafeRawBufferPointer(rebasing: p[start..<(p.count - fcs)]))
        let (packets, malformed) = classic!.obex.feed(data, channel: key, fromPeer: fromPeer, frame: frame)
        report(malformed, on: "L2CAP PSM \(hex(psm.rawValue, width: 4))")
        emitOBEX(packets, ("psm", Int64(psm.rawValue)), frame: frame, timestamp: timestamp, direction: direction)
        return true
    }

    private func emitOBEX(
        _ packets: [OBEXTracker.Packet], _ channel: (String, Int64), frame: Int, timestamp: Timestamp, direction: Direction
    ) {
        guard sink.timeline else { return }
        for p in packets {
            let o = p.packet
            let status: String? = o.response.flatMap { $0 == .continue || $0.isSuccess ? nil : $0.description }
            var fields: [(String, Int64)] = [channel]
            if let op = o.opcode { fields.append(("opcode", Int64(op.rawValue))) }
            if let r = o.response { fields.append(("resp_code", Int64(r.rawValue))) }
            fields += [("final", o.final ? 1 : 0), ("length", Int64(o.length))]
            if let id = o.connectionID { fields.append(("connection_id", Int64(id))) }
            if o.bodyBytes > 0 { fields.append(("body_bytes", Int64(o.bodyBytes))) }
            let name = o.opcode.map { "OBEX \($0)" } ?? "OBEX response"
            var e = TimelineEvent(
                frame: frame, timestamp: timestamp, connection: handle, direction: direction, layer: .obex, code: UInt32(o.code),
                name: name, summary: o.summary + (p.firstFrame != frame ? " (from frame \(p.firstFrame))" : ""))
            e.requestFrame = p.requestFrame
            e.status = status
            e.fields = fields
            emit(e)
        }
    }

    /// The DLC closed: its OBEX session ends, a packet left half-sent is reported.
    func closeOBEX(dlci: UInt8, frame: Int) {
        guard classic?.obex.follows(UInt16(dlci)) == true else { return }
        report(classic!.obex.close(UInt16(dlci), frame: frame), on: "RFCOMM DLCI \(dlci)")
    }

    private func report(_ malformed: [OBEXTracker.Malformed], on channel: String) {
        for m in malformed {
            sink.findings.append(
                Finding(
                    .warning, .malformed("OBEX packet on \(channel) (offset \(m.offset) in the packet)", m.error), frame: m.frame,
                    offset: Int64(m.offset)))
        }
    }
}
