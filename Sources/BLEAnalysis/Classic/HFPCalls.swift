import BLECore

/// One call as the HFP exchange tells it: the call and callsetup indicators (HFP 1.9, 4.34.2: callsetup 1 incoming,
/// 2 outgoing, 3 remote alerted, 0 none; call 1 active, 0 none) with the AT commands that started, answered or ended it
/// (ATD, AT+BLDN, RING, ATA, AT+CHUP: 4.15–4.20).
public struct HFPCall: Hashable, Sendable {
    public enum Direction: String, Hashable, Sendable { case incoming, outgoing, unknown }
    public var direction: Direction
    /// What started it: a dial, a redial or a RING; nil when only the indicators show it.
    public var trigger: HFPCallEvent?
    /// callsetup 3: the remote party is being alerted.
    public var alerting: HFPIndicatorChange?
    /// call 1: the call is up.
    public var active: HFPIndicatorChange?
    public var answer: HFPCallEvent?
    /// The hands-free unit's AT+CHUP: hung up, or a call refused or cancelled before it was up.
    public var hangUp: HFPCallEvent?
    /// call 0 (or callsetup 0 before the call was up); nil when the log ends first.
    public var end: HFPIndicatorChange?
    /// The first frame that showed it.
    public var frame: Int

    /// How long it was up, when the log shows both its start and its end.
    public var activeMicroseconds: Int64? {
        guard let active, let end else { return nil }
        return end.time.microseconds(since: active.time)
    }
}

extension HFPSession {
    /// The calls, in order, from the call events and the call state indicators.
    public var calls: [HFPCall] {
        var reader = HFPCallReader()
        let steps = callEvents.map { HFPCallReader.Step.event($0) } + indicatorChanges.map { HFPCallReader.Step.indicator($0) }
        for step in steps.sorted(by: { $0.frame < $1.frame }) { reader.read(step) }
        return reader.finished()
    }
}

/// Walks the call events and indicators in frame order, one call at a time.
struct HFPCallReader {
    enum Step {
        case event(HFPCallEvent)
        case indicator(HFPIndicatorChange)
        var frame: Int {
            switch self {
            case .event(let e): e.frame
            case .indicator(let i): i.frame
            }
        }
    }

    private var calls: [HFPCall] = []
    private var current: HFPCall?
    /// A dial or redial not yet answered by an outgoing callsetup.
    private var dialled: HFPCallEvent?

    mutating func read(_ step: Step) {
        switch step {
        case .event(let e): event(e)
        case .indicator(let i): indicator(i)
        }
    }

    mutating func finished() -> [HFPCall] {
        if let current { calls.append(current) }
        current = nil
        return calls
    }

    private mutating func start(_ direction: HFPCall.Direction, frame: Int, trigger: HFPCallEvent? = nil) {
        guard current == nil else { return }
        current = HFPCall(direction: direction, trigger: trigger, frame: trigger?.frame ?? frame)
    }

    private mutating func event(_ e: HFPCallEvent) {
        switch e.what {
        case let w where w.hasPrefix("dialled") || w.hasPrefix("redial"):
            if current == nil { dialled = e }
        case "ring":
            start(.incoming, frame: e.frame, trigger: e)
        case let w where w.hasPrefix("answered"):
            start(.incoming, frame: e.frame)
            current?.answer = e
        case let w where w.hasPrefix("hung up"):
            current?.hangUp = e
        default:
            break
        }
    }

    private mutating func indicator(_ i: HFPIndicatorChange) {
        switch (i.name.lowercased(), i.value) {
        case ("callsetup", 1), ("call_setup", 1):
            start(.incoming, frame: i.frame)
        case ("callsetup", 2), ("call_setup", 2):
            start(.outgoing, frame: i.frame, trigger: dialled)
            dialled = nil
        case ("callsetup", 3), ("call_setup", 3):
            start(.outgoing, frame: i.frame, trigger: dialled)
            dialled = nil
            current?.alerting = i
        case ("callsetup", 0), ("call_setup", 0):
            // The set-up ended: a call that never came up ends with it; one that is up goes on.
            if let c = current, c.active == nil { close(at: i) }
        case ("call", 1):
            start(dialled == nil ? .unknown : .outgoing, frame: i.frame, trigger: dialled)
            dialled = nil
            if current?.active == nil { current?.active = i }
        case ("call", 0):
            if current != nil { close(at: i) }
        default:
            break
        }
    }

    private mutating func close(at i: HFPIndicatorChange) {
        current?.end = i
        if let c = current { calls.append(c) }
        current = nil
    }
}
