import BLECore

/// What every machine of one pass writes into: the findings (bounded per kind), the timeline events (in frame order,
/// behind the requests that wait for their response), the diagnosis's evidence, the attribute values (to the
/// observers) and the capture-wide counts.
///
/// One per ``Analyzer``, shared by reference with the machines it feeds (the router, each link's machine), so a machine
/// writes its outputs without going through the analyzer and without an array allocated per PDU. A class, not a
/// protocol: the per-packet writers call its methods directly (no existential, no closure per PDU).
final class AnalysisSink {
    /// The pass's findings so far (compacted past ``FindingsBound/threshold``; sorted by ``Analyzer/finish()``).
    var findings: [Finding] = []
    var findingsBound = FindingsBound()
    /// Timeline events waiting for their partner (a request for its response), or for the ones ahead of them.
    var queue: EventQueue
    /// Receives timeline events in frame order (after pairing), handed over owned: see ``Analyzer/onEvent``.
    var onEvent: ((__owned TimelineEvent) -> Void)?
    /// What the diagnosis reads, recorded as the pass goes (``EvidenceEvent``).
    var evidenceLog = EvidenceLog()
    /// Build a ``TimelineEvent`` for every decoded packet (``AnalyzerOptions/timeline``; changed by
    /// ``Analyzer/setTimeline(_:)``).
    var timeline: Bool
    /// Gather the diagnosis's evidence (``AnalyzerOptions/evidence``).
    let recordsEvidence: Bool
    /// Observers of attribute values (``Analyzer/observers``).
    var observers: [any AttributeValueObserver] = []
    /// Counts over the whole capture (``Analyzer/counters``).
    var counters = AnalysisCounters()
    /// The peers' names, one per address, from whichever machine read them (``PeerNames``).
    var names = PeerNames()

    init(timeline: Bool, evidence: Bool, queueCapacity: Int) {
        self.timeline = timeline
        recordsEvidence = evidence
        queue = EventQueue(capacity: queueCapacity)
    }

    /// Hands `event` on (or queues it behind a request that waits for its response); returns its queue id, -1 if sent.
    ///
    /// `consuming` and moved all the way to ``onEvent``: the copies made on the way (at the caller's `if let`, at the
    /// receiver's append) were a large share of `timeline --format jsonl` (docs/performance.md#analyzer).
    @discardableResult
    @inline(__always)
    func emit(_ event: consuming TimelineEvent, waiting: Bool = false) -> Int {
        // Nothing waiting ahead of it: hand it out now instead of copying it through the queue.
        if !waiting && queue.isEmpty {
            onEvent?(event)
            return -1
        }
        return queue.append(event, waiting: waiting)
    }

    /// Hands out the queued events that no longer wait (or waited past the timeout at `now`); with `force`, all.
    func drain(now: Timestamp?, force: Bool = false) {
        queue.drain(now: now, force: force) { onEvent?($0) }
    }

    /// One attribute value to every observer (`value` borrowed for the call: see ``AttributeValueObserver``).
    @inline(__always)
    func deliver(_ event: AttributeValueEvent, value: RawSpan) {
        for i in observers.indices { observers[i].observe(event, value: value) }
    }

    /// Records an evidence event (when the pass gathers evidence).
    func evidence(_ kind: EvidenceEvent.Kind, frame: Int, timestamp: Timestamp, controller: UInt16 = 0, connection: Int? = nil) {
        guard recordsEvidence else { return }
        evidenceLog.append(EvidenceEvent(frame: frame, timestamp: timestamp, controller: controller, connection: connection, kind: kind))
    }

    /// Records a `limit.*` finding the first time the bound is hit.
    func noteLimit(_ kind: FindingKind, frame: Int) {
        if findingsBound.firstTime(kind) { findings.append(Finding(.warning, kind, frame: frame)) }
    }

    /// Keeps the findings within their bound (called once per record: a comparison unless the list grew past it).
    @inline(__always)
    func boundFindings() {
        if findings.count > findingsBound.threshold { findingsBound.compact(&findings) }
    }

    /// The findings at the end of the pass: compacted, with one note per kind left out, in frame order.
    func finishFindings() {
        findingsBound.compact(&findings)
        findings += findingsBound.omissions()
        findings.sort { ($0.frame ?? 0, $0.offset ?? 0) < ($1.frame ?? 0, $1.offset ?? 0) }
    }
}
