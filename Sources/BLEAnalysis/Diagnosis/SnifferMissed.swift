import BLECore

/// On an air capture, an ATT request the capture shows no answer to, across connection events the sniffer missed,
/// packets it heard with a bad CRC, or a packet of the responder's that the requester's NESN acknowledged and the capture
/// does not hold (``SnifferMisses``): the answer may have gone there. "Response not captured", at info
/// (issue 49, point 4). A request unanswered while the sniffer heard every event of its link after it stays what the rule
/// says, and so does one on an HCI log, which holds every packet the host sent and received.
enum SnifferMissed {
    /// Rules whose verdict rests on an ATT answer being absent.
    static let rules: Set<String> = ["GATT-01", "GATT-02"]

    /// Who sent each request the capture shows unanswered, by its frame: a packet the capture lacks hides an answer
    /// only when the responder sent it. Empty unless an air capture has such a finding above info.
    static func requesters(_ e: Evidence, _ found: [Diagnosis]) -> [Int: EvidenceEvent.Sender] {
        guard e.isAirCapture, found.contains(where: { rules.contains($0.rule) && $0.severity > .info }) else { return [:] }
        var out: [Int: EvidenceEvent.Sender] = [:]
        for ev in e.events {
            if case .attUnanswered(_, _, let sender, _, _, _) = ev.kind { out[ev.frame] = sender }
        }
        return out
    }

    static func qualify(_ d: inout Diagnosis, _ e: Evidence, requesters: [Int: EvidenceEvent.Sender] = [:]) {
        guard e.isAirCapture, rules.contains(d.rule), d.severity > .info, let c = e.connection(d.connection),
            let ll = c.linkLayer
        else { return }
        let misses = ll.missed
        let frames = d.frames + [d.frame]
        // A file that kept only packets with payload (``LinkLayerTracker/packetsBeforeJudgingEmpties``): its connection
        // events cannot be counted, and the answer may be among what it left out (the Ph0wn H-Band capture's request 9:
        // "the sniffer missed 1494 connection events" of a link the file shows none of the empty packets of).
        if ll.emptyPDUs == 0, ll.packets > LinkLayerTracker.packetsBeforeJudgingEmpties {
            notCaptured(
                &d,
                "the capture kept only packets with payload (no empty PDU among \(ll.packets) of link #\(c.number)), so the answer may be among what it left out"
            )
            return
        }
        // A packet its receiver's acknowledgement shows was sent counts when the responder sent it (not the requester).
        let requester = frames.lazy.compactMap { requesters[$0] }.first
        guard let from = frames.min(), let to = frames.max(),
            let windows = misses.within(from, to)?.filter({ w in w.unheard == nil || w.unheard != requester }),
            let first = windows.first
        else { return }
        let events = windows.reduce(0) { $0 + $1.events }
        let bad = windows.filter { $0.events == 0 && $0.unheard == nil }.count
        var what: [String] = []
        if events > 0 { what.append("\(events) connection event\(events == 1 ? "" : "s")") }
        if bad > 0 { what.append("\(bad) packet\(bad == 1 ? "" : "s") with a bad CRC") }
        for side in [EvidenceEvent.Sender.peer, .local] {
            let n = windows.filter { $0.unheard == side }.count
            let (sender, receiver) = side == .peer ? ("peripheral", "central") : ("central", "peripheral")
            if n > 0 {
                what.append(
                    "\(n) packet\(n == 1 ? "" : "s") the \(sender) sent (the \(receiver)'s NESN acknowledged \(n == 1 ? "it" : "them"))")
            }
        }
        if what.isEmpty { what.append("part of the link (more gaps than kept)") }
        notCaptured(
            &d,
            "the sniffer missed \(what.joined(separator: " and ")) of link #\(c.number) between frames \(from) and \(to) (the first between frames \(first.after) and \(first.at)), where the answer may have gone"
        )
    }

    /// The finding told as a response the capture did not hold: info, `why` first, then what it shows.
    private static func notCaptured(_ d: inout Diagnosis, _ why: String) {
        d.severity = .info
        d.message = "Response not captured: \(why). What it shows: " + d.message
        d.headline = "response not captured (air capture): " + d.headline
        if !d.foldKey.isEmpty { d.foldKey += " not captured" }
    }
}
