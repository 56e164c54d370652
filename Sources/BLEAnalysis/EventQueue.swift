import BLECore

/// Keeps timeline events in frame order until the ones waiting for a partner are paired.
///
/// A request is printed with its `response_frame`, which is only known when the response arrives,
/// so events after a pending request wait here. The wait is bounded: by the ATT transaction
/// timeout (30 s, Core Spec Vol 3, Part F, 3.3.3) of capture time, and by `capacity` events, so
/// memory stays flat whatever the capture holds.
struct EventQueue {
    /// Optional so that ``drain(now:force:emit:)`` moves each event out (`take()`) instead of copying it.
    private var events: [TimelineEvent?] = []
    private var waiting: [Bool] = []
    private var head = 0
    private var firstID = 0
    let capacity: Int
    let timeout: Int64

    init(capacity: Int = 65_536, timeoutMicroseconds: Int64 = 30_000_000) {
        self.capacity = capacity
        timeout = timeoutMicroseconds
    }

    var isEmpty: Bool { head == events.count }

    /// Adds an event; returns its id for ``update(_:_:)`` and ``settle(_:)``.
    mutating func append(_ event: consuming TimelineEvent, waiting isWaiting: Bool) -> Int {
        events.append(event)
        waiting.append(isWaiting)
        return firstID + events.count - 1
    }

    /// Changes a queued event (no-op once it has been emitted).
    mutating func update(_ id: Int, _ body: (inout TimelineEvent) -> Void) {
        let i = id - firstID
        guard i >= head, i < events.count else { return }
        body(&events[i]!)
    }

    mutating func settle(_ id: Int) {
        let i = id - firstID
        guard i >= head, i < events.count else { return }
        waiting[i] = false
    }

    /// Emits every event that no longer waits; `now` releases events that waited longer than the timeout.
    mutating func drain(now: Timestamp?, force: Bool = false, emit: (__owned TimelineEvent) -> Void) {
        // Nothing queued (the usual case, drained after every record): no reset of the empty arrays below.
        if events.isEmpty { return }
        while head < events.count {
            if waiting[head] && !force {
                let overdue = now.map { $0.microseconds(since: events[head]!.timestamp) > timeout } ?? false
                if !overdue && events.count - head < capacity { break }
            }
            emit(events[head].take()!)
            head += 1
        }
        if head == events.count {
            firstID += events.count
            events.removeAll(keepingCapacity: true)
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096 && head * 2 > events.count {
            firstID += head
            events.removeFirst(head)
            waiting.removeFirst(head)
            head = 0
        }
    }
}
