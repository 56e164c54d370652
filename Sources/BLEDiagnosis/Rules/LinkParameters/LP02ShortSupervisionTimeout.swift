import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let shortSupervisionTimeout = FindingCode(
        "LP-02", layer: .link, severity: .warning,
        title: "Supervision timeout too short",
        explain: .init(
            meaning: "The supervision timeout is too short for the connection interval and latency: a few missed events lose the link.",
            advice: "Use a supervision timeout well above (1 + latency) × interval × 2; a few seconds is usual."),
        fold: .device, traits: [.restsOnSetup])
}

/// LP-02: the supervision timeout in force leaves no margin: at most 2 × the effective interval (a spec violation,
/// Core Spec Vol 6, Part B, 4.5.2), under 1 s, or, on a link whose central's platform the log names and the platform
/// table gives a higher margin (Apple's accessory guideline: interval max × (latency + 1) × 3 < timeout), not above
/// that margin — one short fade drops the link (a DC-01 risk). One platform's margin is not assumed of another's link:
/// an Android central accepting 2.7 effective intervals meets the spec (S23 log, frame 748; issue 48).
struct LP02ShortSupervisionTimeout: DiagnosisRule {
    static let code = FindingCode.shortSupervisionTimeout
    static let group = RuleGroup.linkParameters
    static let evidence =
        "The connection parameters in force (with where they came from): timeout ≤ 2 × (1 + latency) × interval, < 1 s, or ≤ the margin the platform table gives the named central's platform (Apple: 3 effective intervals); a warning only when the link was then lost to a supervision timeout (0x08), info when it survived"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.connections.compactMap { c in
            // A link never established carried no packet: its timeout never had a fade to survive (DC-10 or the HCI
            // event says why it failed; warning about it as well buried that).
            guard c.lifecycle.ending?.code != .connectionFailedToBeEstablished else { return nil }
            // A short timeout a later setting of the link replaced with a safe one was a passing state the link
            // survived (a connection opened at the central's default, then raised at the peripheral's request): judged
            // from the settings after the last safe one. Of those, the shortest (a later update may have shortened
            // the first one), and the first short one when it differs: the worst case, with how the link got there.
            let changes = c.link.parameters.changes
            let margin = Self.centralMargin(c, e)
            let sinceLastSafe =
                changes.lastIndex { Self.tooShort($0.value, margin: margin) == nil }.map { changes[($0 + 1)...] } ?? changes[...]
            let short = sinceLastSafe.filter { Self.tooShort($0.value, margin: margin) != nil }
            guard let change = short.min(by: { $0.value.timeout < $1.value.timeout }),
                let why = Self.tooShort(change.value, margin: margin)
            else { return nil }
            let earlier = short.first.flatMap { $0.frame < change.frame && $0.value.timeout != change.value.timeout ? $0 : nil }
            let earlierText =
                earlier.map {
                    " Before that it was \(ConnectionTiming.supervisionTimeoutMilliseconds($0.value.timeout)) ms (frame \($0.frame))."
                } ?? ""
            let p = change.value
            let device = e.deviceName(c)
            let timeout = ConnectionTiming.supervisionTimeoutMilliseconds(p.timeout)
            // The request that asked for this timeout, when the capture holds it: the evidence decides who set it.
            let asked = Self.request(for: p.timeout, before: change.frame, c, e)
            let askedText = asked.map { " \($0.who.capitalizedFirst) asked for it at frame \($0.frame) (\($0.what))." } ?? ""
            var causes = ["host defaults (BlueZ: 420 ms)", "an aggressive peripheral request"]
            if let asked { causes = ["\(asked.who) asked for it (\(asked.what), frame \(asked.frame))"] }
            // The timeout this side's platform gives every connection it creates, unchanged since: its routine, context.
            let routine = asked == nil ? Self.platformDefault(change, of: c, e) : nil
            if let routine { causes = ["\(routine.platform)'s default for the connections it creates (\(routine.source))"] }
            let routineText =
                routine.map {
                    " That is the \(e.platform?.name ?? $0.platform.rawValue) default for the connections it creates (\($0.versions)), not a choice of this app or device; the peripheral can ask for a longer one."
                } ?? ""
            // The peer created the link (or an air capture, where no side is this one): a central stack's own default,
            // when the table has one of that value, is the likely source.
            let centralDefault = asked == nil && routine == nil ? Self.centralDefault(change, of: c, e) : nil
            if let centralDefault {
                causes = ["the central's stack default (\(centralDefault.platform): \(timeout) ms for the connections it creates)"] + causes
            }
            let lost = c.lifecycle.ending.flatMap { $0.code == .connectionTimeout ? $0 : nil }
            return Diagnosis(
                rule: Self.code, severity: routine == nil && lost != nil ? severity : .info, frame: change.frame,
                message:
                    "The supervision timeout with \(device) is only \(timeout) ms (\(why); frame \(change.frame)): one short fade \(lost == nil ? "would drop" : "drops") the link."
                    + askedText + earlierText + routineText + Self.outcome(c, lost: lost, e),
                headline: "supervision timeout with \(device) too short",
                supporting: (asked.map { [CitedFrame($0.frame, "\($0.what) by \($0.who)")] } ?? [])
                    + (earlier.map { [CitedFrame($0.frame, "the first short timeout")] } ?? []), causes: causes,
                device: c.peerAddress, connection: c.number,
                facts: [UsedFact("supervision timeout", "\(timeout) ms", change.source)],
                fold: "\(device) \(p.timeout)\(lost == nil ? "" : " lost")")
        }
    }

    /// What became of the link: lost to a supervision timeout (the short timeout explains it), or not.
    static func outcome(_ c: Connection, lost: ConnectionLifecycle.Ending?, _ e: Evidence) -> String {
        if let lost { return " The link was lost to a supervision timeout (0x08) at frame \(lost.frame)." }
        guard let end = c.lifecycle.ending else {
            return e.isAirCapture
                ? " The link was not lost to it in the capture, which holds no end of it."
                : " The link was not lost to it: still up when the log ends."
        }
        if end.inferredFrom != nil && end.endedBy == .unknown {
            return " The link ended at frame \(end.frame) (\(end.reason)): whether a timeout ended it the capture cannot tell."
        }
        return " The link was not lost to it: it ended at frame \(end.frame) (\(end.reason))."
    }

    /// The platform row (``PlatformTable``) whose central default this timeout is, when the peer (or, on air, the
    /// central) created the link with it and it is the value the link started with. Inferred: the table names the
    /// value, not the central's platform.
    static func centralDefault(_ change: Change<ConnectionParameters>, of c: Connection, _ e: Evidence) -> PlatformFact? {
        guard c.role != .central, c.link.parameters.changes.first?.frame == change.frame else { return nil }
        let ms = Double(ConnectionTiming.supervisionTimeoutMilliseconds(change.value.timeout))
        return PlatformTable.rows.first { $0.behaviour == .supervisionTimeout && $0.value.milliseconds == ms }
    }

    /// The platform row (``PlatformTable``) whose default supervision timeout this is, when this side is the central
    /// that created the link on a platform the log names, and the value is the one the connection started with.
    static func platformDefault(_ change: Change<ConnectionParameters>, of c: Connection, _ e: Evidence)
        -> PlatformFact?
    {
        guard c.role == .central, let platform = e.platform?.seen, c.link.parameters.changes.first?.frame == change.frame else {
            return nil
        }
        let ms = Double(ConnectionTiming.supervisionTimeoutMilliseconds(change.value.timeout))
        return PlatformTable.defaultDuration(.supervisionTimeout, ms, for: platform)
    }

    /// The last parameter request of the connection before `frame` that asked for this timeout: an L2CAP Connection
    /// Parameter Update Request (Core Spec Vol 3, Part A, 4.20) or an LE Remote Connection Parameter Request (the
    /// peer's LL_CONNECTION_PARAM_REQ, Vol 4, Part E, 7.7.65.6).
    static func request(
        for timeout: UInt16, before frame: Int, _ c: Connection, _ e: Evidence
    ) -> (frame: Int, who: String, what: String)? {
        var found: (frame: Int, who: String, what: String)? = nil
        for ev in e.events where ev.connection == c.number && ev.frame <= frame {
            switch ev.kind {
            case .parameterUpdateRequest(let sender, _, let r) where r.timeout == timeout:
                let who = sender == .peer ? (c.role == .peripheral ? "the central" : "the peripheral") : "this side"
                found = (ev.frame, who, "L2CAP Connection Parameter Update Request, \(r.description)")
            case .remoteParameterRequest(_, let r) where r.timeout == timeout:
                found = (ev.frame, "the peer", "LE Remote Connection Parameter Request, \(r.description)")
            default:
                break
            }
        }
        return found
    }

    /// The margin the platform table gives the central's platform, when the log names it and this side is the central
    /// (the platform identified is this side's; the peer's is never assumed).
    static func centralMargin(_ c: Connection, _ e: Evidence) -> PlatformFact? {
        guard c.role == .central, let platform = e.platform?.seen else { return nil }
        return PlatformTable.fact(.supervisionTimeoutMargin, for: platform)
    }

    static func tooShort(_ p: ConnectionParameters, margin: PlatformFact? = nil) -> String? {
        let interval = ConnectionTiming.intervalMilliseconds(p.interval)
        let effective = interval * Double(Int(p.latency) + 1)
        let timeout = Double(ConnectionTiming.supervisionTimeoutMilliseconds(p.timeout))
        if timeout <= 2 * effective { return "at most 2 effective intervals of \(effective.formatted2) ms, below the spec's minimum" }
        if let margin, let factor = margin.value.factor, timeout <= factor * effective {
            return
                "at most \(Int(factor)) effective intervals of \(effective.formatted2) ms: \(margin.platform), the central here, asks for more (\(margin.source))"
        }
        if timeout < 1000 { return "under 1 s" }
        return nil
    }
}
