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
        if obex.follows(dlci: dlci) { return true }
        guard let first = data.first else { return false }
        let service = sdp.service(onRFCOMMChannel: dlci >> 1)
        let named = Set((service?.classes ?? []).compactMap(\.uuid16) + (service?.profiles ?? []).compactMap(\.profile.uuid16))
        if !named.isEmpty {
            guard !named.isDisjoint(with: Self.obexClasses) else { return false }
        } else if !(data.count >= 4 && first == 0x80 && data[3] >> 4 == 1) {
            return false
        }
        guard obex.start(dlci: dlci, service: service?.title, firstByte: first, fromPeer: fromPeer) else { return false }
        rfcomm.name(dlci: dlci, service?.title ?? "OBEX")
        return true
    }
}

/// OBEX over RFCOMM on a BR/EDR link: each packet reassembled from the DLC's data, decoded, told in the timeline (layer
/// `obex`); what does not decode is a finding with its frame and its offset in the packet, and the DLC is read on.
extension ConnectionMachine {
    func obex(_ data: [UInt8], dlci: UInt8, fromPeer: Bool, frame: Int, timestamp: Timestamp, direction: Direction) {
        let (packets, malformed) = classic!.obex.feed(data, dlci: dlci, fromPeer: fromPeer, frame: frame)
        report(malformed)
        guard sink.timeline else { return }
        for p in packets {
            let o = p.packet
            let status: String? = o.response.flatMap { $0 == .continue || $0.isSuccess ? nil : $0.description }
            var fields: [(String, Int64)] = [("dlci", Int64(dlci))]
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
        guard classic?.obex.follows(dlci: dlci) == true else { return }
        report(classic!.obex.close(dlci: dlci, frame: frame))
    }

    private func report(_ malformed: [OBEXTracker.Malformed]) {
        for m in malformed {
            sink.findings.append(
                Finding(
                    .warning, .malformed("OBEX packet on RFCOMM DLCI \(m.dlci) (offset \(m.offset) in the packet)", m.error),
                    frame: m.frame, offset: Int64(m.offset)))
        }
    }
}
