import BLECore
import BLEProtocols

/// The story's OBEX lines: per service a link ran (PBAP, MAP, FTP, OPP), who pulled or pushed what, in how many
/// operations, how it ended, with the frames.
extension Story {
    /// A device's OBEX sessions, one sentence per service (folded over its links like the other profiles).
    static func obexLines(_ ps: [ClassicProfilesResult], who: String) -> [StorySentence] {
        var services: [String] = []
        for p in ps { for s in p.obex where !services.contains(s.service ?? "OBEX") { services.append(s.service ?? "OBEX") } }
        return services.flatMap { service in
            folded(
                ps.compactMap { p in
                    obexLine(p.obex.filter { ($0.service ?? "OBEX") == service }, service: service, who: who, rfcomm: p.rfcomm)
                })
        }
    }

    /// `PBAP with …: the peer pulled the phone book and call history from this side in 10 Gets (2795–3209), all Success
    /// (200): telecom/pb.vcf 272 bytes (2 entries), …; connected at 2776 on RFCOMM channel 19, no Disconnect in the log.`
    static func obexLine(_ sessions: [OBEXSession], service: String, who: String, rfcomm: [RFCOMMChannel] = []) -> StorySentence? {
        guard let first = sessions.first else { return nil }
        let ops = sessions.flatMap(\.operations).filter { $0.opcode != .connect && $0.opcode != .disconnect }
        let transfers = ops.filter { $0.opcode == .get || $0.opcode == .put }
        var text = "\(service) with \(who)"
        var frames = sessions.compactMap(\.connectFrame)
        if let gets = transferSentence(transfers, client: first.thisSideIsClient) {
            text += ": " + gets.text
            frames += gets.frames
        } else {
            text += ": no object read or sent" + (ops.isEmpty ? "" : " (\(opcodeCounts(ops)))")
        }
        let refused = ops.filter { $0.response.map { !$0.isSuccess } ?? false }
        if !refused.isEmpty {
            let list = refused.prefix(3).map { "\($0.opcode)\($0.name.map { " " + $0 } ?? "") \($0.response!) at \($0.responseFrame!)" }
            text += "; \(plural(refused.count, "refusal")): " + list.joined(separator: ", ")
            frames += refused.compactMap(\.responseFrame)
        }
        text += "; " + connections(sessions, rfcomm: rfcomm)
        return StorySentence(.classic, text + ".", frames: frames)
    }

    /// `the peer pulled the phone book and call history from this side in 10 Gets (2795–3209), all Success (200): …`.
    static func transferSentence(_ ops: [OBEXOperation], client thisSide: Bool) -> (text: String, frames: [Int])? {
        guard let firstOp = ops.first, let lastOp = ops.last else { return nil }
        let puts = ops.contains { $0.opcode == .put }, gets = ops.contains { $0.opcode == .get }
        let what = objects(ops.compactMap { $0.name ?? $0.type })
        var verb = gets && !puts ? "pulled" : puts && !gets ? "pushed" : "exchanged"
        verb += " " + (what ?? "objects")
        let (who, other) = thisSide ? ("this side", "the peer") : ("the peer", "this side")
        let direction = gets && !puts ? "from" : puts && !gets ? "to" : "with"
        let end = lastOp.responseFrame ?? lastOp.lastRequestFrame
        var text = "\(who) \(verb) \(direction) \(other) in \(opcodeCounts(ops)) (\(firstOp.firstFrame)–\(end))"
        let unanswered = ops.filter { $0.response == nil }.count
        if ops.allSatisfy({ $0.response == .success }) {
            text += ", all Success (200)"
        } else if unanswered > 0 {
            text += ", \(unanswered) with no final response in the log"
        }
        // Each object once, in the order first asked: its body bytes in all and the size a PBAP answer gave.
        var names: [String] = []
        var bytes: [String: Int] = [:], sizes: [String: Int] = [:]
        for op in ops {
            let name = op.name ?? op.type ?? "(unnamed)"
            if bytes[name] == nil { names.append(name) }
            bytes[name, default: 0] += op.bodyBytes
            if let s = op.phonebookSize { sizes[name] = s }
        }
        let listed = names.prefix(6).map { n in
            "\(n) \(plural(bytes[n]!, "byte"))" + (sizes[n].map { " (size \($0))" } ?? "")
        }
        text += ": " + listed.joined(separator: ", ") + (names.count > 6 ? " and \(names.count - 6) more" : "")
        return (text, [firstOp.firstFrame, end])
    }

    /// `10 Gets`, `1 Put`, `3 Set Paths and 1 Get`.
    static func opcodeCounts(_ ops: [OBEXOperation]) -> String {
        var order: [OBEXOpcode] = []
        var n: [OBEXOpcode: Int] = [:]
        for op in ops {
            if n[op.opcode] == nil { order.append(op.opcode) }
            n[op.opcode, default: 0] += 1
        }
        return order.map { plural(n[$0]!, $0.description) }.joined(separator: " and ")
    }

    /// `the phone book and call history` from PBAP's object names (PBAP 1.2, 5.1.2: pb, ich, och, mch, cch, spd, fav), or
    /// BIP's types for AVRCP cover art (`x-bt/img-thm`, `x-bt/img-img`).
    static func objects(_ names: [String]) -> String? {
        var kinds: [String] = []
        for n in names {
            let file = n.split(separator: "/").last.map(String.init) ?? n
            let kind: String? =
                switch file {
                case "pb.vcf": "the phone book"
                case "ich.vcf", "och.vcf", "mch.vcf", "cch.vcf": "call history"
                case "fav.vcf": "favourites"
                case "spd.vcf": "speed dials"
                case "img-thm": "cover art thumbnails"
                case "img-img": "cover art images"
                default: nil
                }
            if let kind, !kinds.contains(kind) { kinds.append(kind) }
        }
        guard !kinds.isEmpty else { return nil }
        return kinds.count == 1 ? kinds[0] : kinds.dropLast().joined(separator: ", ") + " and " + kinds.last!
    }

    /// `connected at 2776 on RFCOMM channel 19, no Disconnect in the log` / `3 sessions (2649, 3551, 11326), each disconnected`.
    static func connections(_ sessions: [OBEXSession], rfcomm: [RFCOMMChannel] = []) -> String {
        let channel = sessions[0].channelText
        let connects = sessions.compactMap(\.connectFrame)
        let refused = sessions.filter { $0.connectResult.map { !$0.isSuccess } ?? false }
        let disconnected = sessions.filter { $0.disconnectFrame != nil }.count
        var text =
            connects.isEmpty
            ? "on \(channel), its Connect before the log"
            : connects.count == 1
                ? "connected at \(connects[0]) on \(channel)" : "\(connects.count) sessions on \(channel) (connected at \(list(connects)))"
        if let r = refused.first { text += ", Connect refused \(r.connectResult!) at \(r.connectResponseFrame ?? 0)" }
        // No OBEX Disconnect, but the channel under it closed: the session ended with it (the BTVS laptop log's DISC at 607).
        let closed =
            sessions.count == 1 && sessions[0].psm == nil ? rfcomm.last { $0.dlci == sessions[0].dlci && $0.closeFrame != nil } : nil
        if disconnected == 0, let closed, let frame = closed.closeFrame {
            let by = closed.closedByPeer.map { $0 ? " by the peer" : " by this side" } ?? ""
            text += ", no OBEX Disconnect: the RFCOMM channel closed at \(frame)\(by)"
        } else if disconnected == 0 {
            text += ", no Disconnect in the log"
        } else if disconnected == sessions.count {
            text += sessions.count == 1 ? ", disconnected at \(sessions[0].disconnectFrame!)" : ", each disconnected"
        } else {
            text += ", \(disconnected) disconnected"
        }
        return text
    }
}
