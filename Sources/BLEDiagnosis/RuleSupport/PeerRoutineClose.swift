import BLEAnalysis
import BLECore
import BLEProtocols

/// What a peer's end of a link cut short (issue 48, severity by what the user lost): a request still unanswered, a
/// procedure under way, or data still moving. With none of these, an LE peer's 0x13 is a routine close, info, whether
/// or not the log saw the link set up: a cuff closing 1.9 s after its last confirmed measurement (the Galaxy S23 log,
/// 10132 after 10070), a lock 8 s after its last indication (yeelock 522, 685), a phone's idle links 15–24 s after their
/// last exchange (dartparser 6836, 8291, 8690). A BR/EDR link keeps ``orderlyTeardown(_:in:)``: its profiles' channels
/// and streams say whether it was in use (the Honda log's 3923, with media still flowing, stays a warning).
extension DC02PeerEndedLink {
    /// How recent the link's last packet may be for the close to have cut data still moving, µs. An ended LE link's
    /// LL_TERMINATE_IND takes a few connection events; a stream the peer cut shows its last packets within them.
    static let transferTail: Int64 = 500_000

    /// What was outstanding on the link when the peer ended it (the frame that left it open), or nil when nothing was.
    static func outstanding(_ d: DisconnectionStory, in e: Evidence) -> CitedFrame? {
        guard let c = d.connection else { return nil }
        if let request = unansweredRequest(d, in: e) { return request }
        if let procedure = pendingProcedure(d, since: c.startFrame, in: e) { return procedure }
        return dataMoving(d, c.activity)
    }

    /// The last packet of a flow the end cut: the last two packets one side sent both within ``transferTail`` of the
    /// end (a notification stream, a run of writes). One last exchange (a request and its answer, an indication and
    /// its confirmation, a lone report after a silence) is no flow.
    static func dataMoving(_ d: DisconnectionStory, _ a: LinkActivity) -> CitedFrame? {
        let end = d.event.timestamp
        func recent(_ m: LinkActivity.Moment?) -> LinkActivity.Moment? {
            guard let m, m.frame < d.frame, end.microseconds(since: m.timestamp) <= transferTail else { return nil }
            return m
        }
        let flows = [(recent(a.lastReceived), recent(a.previousReceived)), (recent(a.lastSent), recent(a.previousSent))]
            .compactMap { last, previous in previous == nil ? nil : last }
        guard let last = flows.max(by: { $0.timestamp.microseconds < $1.timestamp.microseconds }) else { return nil }
        return CitedFrame(
            last.frame, "data still moving (its last packet \(duration(end.microseconds(since: last.timestamp))) before the end)")
    }

    /// How an end with nothing failed and no other reading (update, assistant, orderly teardown, power off) is read.
    struct EndReading {
        /// What the end cut short, if anything.
        var cut: CitedFrame?
        /// The link began before the log (CQ-01): why it ended, if nothing was cut, is before the log.
        var unseen: Bool
        /// An LE link's 0x13 with nothing outstanding: the routine end of its use.
        var routine: Bool
        var benign: Bool { (unseen && cut == nil) || routine }
        var causes: [String]? {
            unseen
                ? ["cannot tell: the link's set-up and use are not in the log"]
                : routine ? ["the peer's app or firmware closed the link once done with it (its routine end)"] : nil
        }
        var foldSuffix: String { unseen ? " unseen" : routine ? " routine" : "" }
    }

    /// Reads an end nothing else explains, and says so in `sentence` with what it cites in `supporting`.
    static func readEnd(_ d: DisconnectionStory, in e: Evidence, sentence: inout String, supporting: inout [CitedFrame])
        -> EndReading
    {
        let cut = outstanding(d, in: e)
        if let cut {
            supporting.append(cut)
            sentence += " It ended with \(cut.text) (frame \(cut.frame))."
        }
        let unseen = d.connection?.inferred == true
        if unseen, let c = d.connection {
            sentence += " The link started before the log (first seen at frame \(c.startFrame)): why the peer ended it cannot be told."
        }
        let routine =
            !unseen && cut == nil && d.reason == .remoteUserTerminatedConnection && d.connection.map { !$0.isBREDR } == true
        if routine {
            sentence += " Nothing was outstanding (no request unanswered, no procedure under way, no data moving): a routine close."
        }
        return EndReading(cut: cut, unseen: unseen, routine: routine)
    }

    /// An ATT request or indication the disconnection ended the wait for (older than ``window``: a newer one is the
    /// failure cited).
    static func unansweredRequest(_ d: DisconnectionStory, in e: Evidence) -> CitedFrame? {
        let wait = e.last(before: d.frame) { ev in
            guard ev.connection == d.event.connection, case .attUnanswered(_, _, _, .disconnection, let end, _) = ev.kind else {
                return false
            }
            return end == d.frame
        }
        guard let wait, case .attUnanswered(let request, _, _, _, _, _) = wait.kind else { return nil }
        return CitedFrame(wait.frame, "\(request) still unanswered")
    }

    /// A pairing, encryption or parameter update started on the link and not finished before its end.
    static func pendingProcedure(_ d: DisconnectionStory, since start: Int, in e: Evidence) -> CitedFrame? {
        var pairing: EvidenceEvent?
        var encryption: EvidenceEvent?
        var update: [UInt8: EvidenceEvent] = [:]
        for ev in e.events where ev.frame >= start && ev.connection == d.event.connection {
            if ev.frame >= d.frame { break }
            switch ev.kind {
            case .pairingRequest, .securityRequest: pairing = pairing ?? ev
            case .keysDistributed, .pairingFailed: pairing = nil
            case .encryptionStart, .longTermKeyRequest: encryption = encryption ?? ev
            case .encryptionChange:
                pairing = nil
                encryption = nil
            case .parameterUpdateRequest(_, let id, _): update[id] = ev
            case .parameterUpdateResponse(_, let id, _): update[id] = nil
            default: break
            }
        }
        if let pairing { return CitedFrame(pairing.frame, "pairing still under way") }
        if let encryption { return CitedFrame(encryption.frame, "encryption still starting") }
        if let first = update.values.min(by: { $0.frame < $1.frame }) {
            return CitedFrame(first.frame, "connection parameter update request still unanswered")
        }
        return nil
    }
}
