import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let roleOrSniffRefused = FindingCode(
        "BR-06", layer: .classic, severity: .warning,
        title: "A BR/EDR role switch or sniff request refused",
        explain: .init(
            meaning:
                "The peer or the controller refused a role switch or a power-saving mode (sniff) on a Classic link. The link goes on in its current role and mode; this only matters when a link loss follows.",
            advice: "Nothing to do unless the link was lost right after; then look at the peer's link policy and the controller's logs."),
        fold: .device)
}

/// BR-06: a role switch or a low-power mode (sniff, hold) refused on a BR/EDR link: Role Change or Mode Change with an
/// error status, or Switch Role, Sniff Mode, Exit Sniff Mode refused by the controller. Context (info): the link goes
/// on in its role and mode; a warning when the link was lost within 5 s after.
struct BR06RoleOrSniffRefused: DiagnosisRule {
    static let code = FindingCode.roleOrSniffRefused
    static let group = RuleGroup.classic
    static let evidence =
        "Role Change (0x12) or Mode Change (0x14) with status ≠ 0; Command Status ≠ 0 for Switch Role (0x080B), Sniff Mode (0x0803), Exit Sniff Mode (0x0804), Sniff Subrating (0x0811); info unless a link loss follows within 5 s; Exit Sniff Mode (Sniff Mode) refused 0x0C after a Mode Change to active (sniff) mode: the link was already in it; a command refused 0x02 for a link that had ended: the host asked too late"
    static let anchor = "none"
    static let opcodes: [UInt16: String] = [
        0x080B: "role switch", 0x0803: "sniff request", 0x0804: "exit from sniff", 0x0811: "sniff subrating",
    ]

    /// An exit from sniff refused as Command Disallowed (0x0C) when the link's latest Mode Change, before the refusal,
    /// had made it active (a sniff request: had put it in sniff): the command asked for the mode the link was in, which
    /// the controller refuses (Core Vol 4 Part E 7.2.2, 7.2.3: Sniff Mode and Exit Sniff Mode act on a link in active and
    /// in sniff mode). In BlueZ's A2DP sink log the peer's traffic woke the link (Mode Change to active at 200, 1 ms
    /// after this side's Exit Sniff Mode at 199, refused at 201): the two exits crossed.
    static func alreadyInMode(_ ev: EvidenceEvent, _ e: Evidence) -> (text: String, frame: Int, cite: String, connection: Int?)? {
        guard case .commandFailed(let op, .commandDisallowed, let sent) = ev.kind else { return nil }
        let wanted: UInt8
        switch op.rawValue {
        case 0x0804: wanted = 0
        case 0x0803: wanted = 2
        default: return nil
        }
        let mode = e.last(before: ev.frame) { candidate in
            guard case .modeChange(_, .success, _) = candidate.kind else { return false }
            if let connection = ev.connection { return candidate.connection == connection }
            // A Command Status names no link: a Mode Change between the command and its refusal.
            return sent.map { candidate.frame > $0 } ?? false
        }
        guard let mode, case .modeChange(_, _, wanted) = mode.kind else { return nil }
        let name = wanted == 0 ? "active" : "sniff"
        let crossed = sent.map { mode.frame > $0 } ?? false
        let how = crossed ? ", between the command at \(sent!) and its refusal: the peer's own change crossed it" : ""
        return (
            "the link was already in \(name) mode (Mode Change at frame \(mode.frame)\(how)); the controller refuses a change to the mode a link is in",
            mode.frame, "Mode Change to \(name) mode", mode.connection
        )
    }

    /// Where a command for a link was refused as Unknown Connection Identifier (0x02) after that link had ended: the
    /// frame it ended at. The host asked after the Disconnection Complete (the Ethermind log: the link lost 0x08 at 1492,
    /// Exit Sniff Mode for its handle at 1493, refused 0x02 at 1494), not a refusal by the peer or its policy.
    static func ended(_ ev: EvidenceEvent, _ status: HCIStatus, _ e: Evidence) -> Int? {
        guard status == .unknownConnectionIdentifier, case .commandFailed(_, _, let sent) = ev.kind,
            let end = e.connection(ev.connection)?.endFrame, end < (sent ?? ev.frame)
        else { return nil }
        return end
    }

    /// The SCO or eSCO link up on the same ACL link when the refusal came (`the call's eSCO link (1522–1566)`): a peer
    /// that keeps a link active while its audio runs refuses sniff (the moto g04s call log: sniff refused 0x24 at 1547,
    /// 25 s into the call's eSCO link 1522–1566).
    static func audioLink(during frame: Int, on connection: Int?, _ e: Evidence) -> (text: String, frame: Int, cite: String)? {
        guard let connection,
            let l = e.classic.synchronousLinks.last(where: { l in
                l.established && l.aclConnection == connection && l.startFrame! < frame && (l.endFrame ?? .max) > frame
            }), let start = l.startFrame
        else { return nil }
        let kind = l.isESCO ? "eSCO" : "SCO"
        let call = e.connection(connection)?.profiles?.hfp?.showsACall == true ? "the call's" : "the"
        return ("\(call) \(kind) link (\(start)–\(l.endFrame.map(String.init) ?? "the end of the log"))", start, "\(kind) link up")
    }

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let what: String, status: HCIStatus
            switch ev.kind {
            case .roleChange(_, let s, _) where s != .success: (what, status) = ("role switch", s)
            case .modeChange(_, let s, _) where s != .success: (what, status) = ("mode change (sniff/hold)", s)
            case .commandFailed(let op, let s, _) where opcodes[op.rawValue] != nil: (what, status) = (opcodes[op.rawValue]!, s)
            default: return nil
            }
            var peer: String? = nil
            if case .roleChange(let p, _, _) = ev.kind { peer = p }
            let loss = e.first(after: ev.frame) { next in
                guard next.timestamp.microseconds(since: ev.timestamp) <= 5_000_000,
                    case .disconnectionComplete(_, .success, let r) = next.kind, controllerEndedReasons.contains(r)
                else { return false }
                return ev.connection == nil || next.connection == ev.connection
            }
            let within = loss.flatMap { $0.timestamp.microseconds(since: ev.timestamp) <= 5_000_000 ? $0 : nil }
            let already = within == nil ? alreadyInMode(ev, e) : nil
            let connection = ev.connection ?? already?.connection
            let name = peer ?? connection.map { e.deviceName(e.connection($0)) } ?? "a BR/EDR device"
            var text = "The \(what) with \(name) was refused (\(codeName(status)) at frame \(ev.frame))"
            let gone = ended(ev, status, e)
            if let gone {
                text += ": the link had already ended (frame \(gone)); the host asked for a link that was gone."
            } else if let already {
                text += ": \(already.text)."
            } else {
                text += within.map { ", and the link was lost at frame \($0.frame)." } ?? ": the link went on as it was."
            }
            let audio = within == nil && gone == nil && already == nil ? Self.audioLink(during: ev.frame, on: connection, e) : nil
            if let audio { text = String(text.dropLast()) + ", during \(audio.text)." }
            return Diagnosis(
                rule: Self.code, severity: within == nil ? .info : severity, frame: ev.frame, message: text,
                headline: "\(what) with \(name) refused (\(hex(status.rawValue)))",
                supporting: within.map { [CitedFrame($0.frame, "the link was lost")] } ?? gone.map { [CitedFrame($0, "the link ended")] }
                    ?? already.map { [CitedFrame($0.frame, $0.cite)] } ?? audio.map { [CitedFrame($0.frame, $0.cite)] } ?? [],
                causes: [
                    gone != nil
                        ? "the host's command for a link that had ended (seen)"
                        : already == nil
                            ? "the peer's policy or link state does not allow it (\(status))" : "the link was already in that mode"
                ],
                device: peer, connection: connection,
                fold: "\(name) \(what) \(status.rawValue)")
        }
    }
}
