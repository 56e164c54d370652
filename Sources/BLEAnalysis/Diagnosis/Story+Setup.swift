import BLECore
import BLEProtocols

extension Story {
    /// `Set-up of link #1 with POWER-0084 (…): interval 18.75 ms, timeout 5 s, then 50 ms (403); ATT_MTU 517 (this side asked
    /// 517, the peer 517; 410); notifications on for 0x0038 (405).`: how the busiest LE link was set up, as the
    /// engineer reading a log looks for it first (the parameters and their updates, the MTU exchange, the
    /// subscriptions), each with its frame. Only what the capture shows: no MTU is stated for a link whose exchange
    /// an air capture may have missed, no parameters for a link that began before the log.
    static func linkSetup(_ e: Evidence) -> StorySentence? {
        let candidates = e.connections.filter { $0.isLE && !$0.inferred && $0.attPDUs > 0 }
        guard let c = candidates.max(by: { ($0.attPDUs, -$0.number) < ($1.attPDUs, -$1.number) }) else { return nil }
        var parts: [String] = []
        var frames: [Int] = []
        if let create = creation(c, e) {
            parts.append("up \(BLEAnalysis.duration(create.microseconds)) after this side's LE Create Connection (\(create.frame))")
            frames.append(create.frame)
        }
        if let p = parameters(c) {
            parts.append(p.text + askedBy(c, e).text)
            frames += p.frames + askedBy(c, e).frames
        }
        if let m = mtu(c, e) { parts.append(m.text); frames += m.frames }
        if let s = subscriptions(c, e) { parts.append(s.text); frames += s.frames }
        guard !parts.isEmpty else { return nil }
        let others = candidates.count > 1 ? " (the busiest of \(candidates.count) LE links with ATT)" : ""
        let text = "Set-up of link #\(c.number) with \(e.deviceName(c))\(others): " + parts.joined(separator: "; ") + "."
        return StorySentence(.setup, text, frames: frames)
    }

    /// `interval 18.75 ms, timeout 5 s, then 7.5 ms (403), then 45 ms, latency 4 (510)`: the values in force first, then
    /// each change (at most three) by what changed, with its frame.
    static func parameters(_ c: Connection) -> (text: String, frames: [Int])? {
        var steps: [Change<ConnectionParameters>] = []
        for change in c.link.parameters.changes where steps.last?.value != change.value { steps.append(change) }
        guard let first = steps.first else { return nil }
        var text = "interval \(milliseconds(first.value.interval))"
        if first.value.latency > 0 { text += ", latency \(first.value.latency)" }
        text += ", timeout " + timeout(first.value.timeout)
        var previous = first.value
        let shown = steps.dropFirst().prefix(3)
        for step in shown {
            let p = step.value
            var changed: [String] = []
            if p.interval != previous.interval { changed.append(milliseconds(p.interval)) }
            if p.latency != previous.latency { changed.append("latency \(p.latency)") }
            if p.timeout != previous.timeout { changed.append("timeout " + timeout(p.timeout)) }
            text += ", then \(changed.joined(separator: ", ")) (\(step.frame))"
            previous = p
        }
        if steps.count - 1 > shown.count { text += ", \(plural(steps.count - 1 - shown.count, "more change", "more changes"))" }
        return (text, shown.map(\.frame))
    }

    /// ` (the peer asked for 21: L2CAP Connection Parameter Update Request at 58689, 58709, 58718, …)`: the peer's
    /// requests for new parameters on the link that this side accepted (L2CAP, Core Vol 3 Part A 4.20–4.21, result 0;
    /// or the LL's Connection Parameter Request, Vol 4 Part E 7.7.65.6, not answered by a Negative Reply), when they
    /// drove its changes: the reader otherwise takes the changes for this side's (the blueprobe band log: 23 changes
    /// on link #10, 21 of them asked by the band). Refused requests are LP-01's; nothing when the peer asked for none.
    static func askedBy(_ c: Connection, _ e: Evidence) -> (text: String, frames: [Int]) {
        var l2cap: [UInt8: Int] = [:], accepted: [Int] = [], ll: [Int] = [], pendingLL: Int?
        for ev in e.events(of: c.number) {
            switch ev.kind {
            case .parameterUpdateRequest(sender: .peer, let identifier, _): l2cap[identifier] = ev.frame
            case .parameterUpdateResponse(sender: .local, let identifier, let result):
                if let f = l2cap.removeValue(forKey: identifier), result == 0 { accepted.append(f) }
            case .remoteParameterRequest:
                if let f = pendingLL { ll.append(f) }
                pendingLL = ev.frame
            case .remoteParameterNegativeReply: pendingLL = nil
            default: break
            }
        }
        if let f = pendingLL { ll.append(f) }
        accepted.sort()
        let all = accepted + ll
        guard !all.isEmpty else { return ("", []) }
        let how = [
            accepted.isEmpty ? nil : "L2CAP Connection Parameter Update Request at \(brief(accepted))",
            ll.isEmpty ? nil : "LE Remote Connection Parameter Request at \(brief(ll))",
        ].compactMap { $0 }
        return (" (the peer asked for \(all.count == 1 ? "one" : String(all.count)): \(how.joined(separator: "; ")))", all)
    }

    /// `5 s`, `8.33 s`, `420 ms` (the supervision timeout in units of 10 ms).
    static func timeout(_ units: UInt16) -> String {
        let ms = ConnectionTiming.supervisionTimeoutMilliseconds(units)
        if ms % 1000 == 0 { return "\(ms / 1000) s" }
        return ms > 1000 ? "\(String(fractionDigits: 2, Double(ms) / 1000)) s" : "\(ms) ms"
    }

    /// The create this side sent for the link and how long the link took to come up after it: the last LE (Extended)
    /// Create Connection on the link's controller before its Connection Complete, not ended by a cancel or another
    /// completion since (Android's cancelled and re-issued accept-list creates: the one that succeeded).
    static func creation(_ c: Connection, _ e: Evidence) -> (frame: Int, microseconds: Int64)? {
        var create: EvidenceEvent? = nil
        for ev in e.events where ev.controller == c.controller {
            if ev.frame > c.startFrame { break }
            switch ev.kind {
            case .createConnection: create = ev
            case .createConnectionCancel: create = nil
            case .connectionComplete:
                guard ev.frame == c.startFrame else {
                    create = nil
                    continue
                }
                return create.map { ($0.frame, ev.timestamp.microseconds(since: $0.timestamp)) }
            default: continue
            }
        }
        return nil
    }

    /// `18.75 ms`, `50 ms`.
    static func milliseconds(_ units: UInt16) -> String {
        let ms = ConnectionTiming.intervalMilliseconds(units)
        var text = String(fractionDigits: 2, ms)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text + " ms"
    }

    /// `ATT_MTU 517 (this side asked 517, the peer 517; 410)` from the link's last MTU exchange; on an HCI log of a
    /// link seen opening, `no MTU exchange: ATT_MTU 23` (Core Spec Vol 3, Part F, 3.2.8: the default). An air capture
    /// may have missed the exchange, so it says nothing there.
    static func mtu(_ c: Connection, _ e: Evidence) -> (text: String, frames: [Int])? {
        let exchange = e.events.last {
            if $0.connection == c.number, case .mtuExchange = $0.kind { true } else { false }
        }
        guard let exchange, case .mtuExchange(let requester, let client, let server, let effective, _) = exchange.kind else {
            return e.isAirCapture ? nil : ("no MTU exchange: ATT_MTU 23", [])
        }
        let (us, them) = e.isAirCapture ? ("the central", "the peripheral") : ("this side", "the peer")
        guard let client, let effective else {
            return ("ATT_MTU: the server offered \(server) (\(exchange.frame); the request is not in the log)", [exchange.frame])
        }
        let asked = requester == .local ? "\(us) asked \(client), \(them) \(server)" : "\(them) asked \(client), \(us) \(server)"
        return ("ATT_MTU \(effective) (\(asked); \(exchange.frame))", [exchange.frame])
    }

    /// `notifications on for 0x0038 (405)`, `3 subscriptions: notifications on for 0x0038, 0x003B, indications on for
    /// 0x0040 (from 405)`: the CCCD writes that turned a value on, refused ones told as such.
    static func subscriptions(_ c: Connection, _ e: Evidence) -> (text: String, frames: [Int])? {
        var refused = Set<Int>()
        for ev in e.events where ev.connection == c.number {
            if case .attError(.writeRequest, _, _, let request?, _) = ev.kind { refused.insert(request) }
        }
        var notify: [String] = []
        var indicate: [String] = []
        var refusedHandles: [String] = []
        var frames: [Int] = []
        for ev in e.events where ev.connection == c.number {
            guard case .cccdWrite(let cccd, let valueHandle, let value, _, .local) = ev.kind, value != 0 else { continue }
            let handle = hex(valueHandle ?? cccd &- 1, width: 4)
            frames.append(ev.frame)
            if refused.contains(ev.frame) {
                if !refusedHandles.contains(handle) { refusedHandles.append(handle) }
            } else if value & 0x0002 != 0 {
                if !indicate.contains(handle) { indicate.append(handle) }
            } else if !notify.contains(handle) {
                notify.append(handle)
            }
        }
        guard let first = frames.first else { return nil }
        var kinds: [String] = []
        if !notify.isEmpty { kinds.append("notifications on for " + handles(notify)) }
        if !indicate.isEmpty { kinds.append("indications on for " + handles(indicate)) }
        if !refusedHandles.isEmpty { kinds.append("refused for " + handles(refusedHandles)) }
        let count = notify.count + indicate.count + refusedHandles.count
        let head = count > 1 ? "\(count) subscriptions: " : ""
        let at = frames.count > 1 ? "from \(first)" : "\(first)"
        return (head + kinds.joined(separator: ", ") + " (\(at))", [first])
    }

    /// `0x0038, 0x003B, 0x003E and 2 more`.
    static func handles(_ list: [String]) -> String {
        list.count <= 4 ? list.joined(separator: ", ") : list.prefix(3).joined(separator: ", ") + " and \(list.count - 3) more"
    }
}
