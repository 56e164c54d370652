import BLECapture
import BLECodecs
import BLECore
import BLEProtocols

/// The one driver: feeds capture records through HCI and the link layer, finds or opens each record's link and feeds
/// it (each open link's data path is its ``ConnectionMachine``); everything the pass says goes into its
/// ``AnalysisSink`` (timeline events, findings, evidence, attribute values).
///
/// One pass, streaming: call ``process(_:)`` for each record in order, then ``finish()``.
/// Nothing throws past a record: bad input becomes a ``Finding`` and decoding goes on.
public final class Analyzer {
    public private(set) var options: AnalyzerOptions
    /// What every machine of the pass writes into: findings, timeline events, evidence.
    let sink: AnalysisSink
    public internal(set) var findings: [Finding] {
        get { sink.findings }
        _modify { yield &sink.findings }
    }
    /// Every connection seen, in the order they started (handles are reused, numbers are not), as it stands now: the
    /// open ones as their machines hold them (a copy each call: read it once, at the end of the pass).
    public var connections: [Connection] { table.connections }
    public internal(set) var counters: AnalysisCounters {
        get { sink.counters }
        _modify { yield &sink.counters }
    }
    /// Controller ACL buffers from (LE) Read Buffer Size, per controller: (packet length, packets).
    public var aclBuffers: [UInt16: (length: Int, packets: Int)] { hci.buffers.sizes }

    /// Receives timeline events in frame order (after pairing).
    ///
    /// Handed over owned (`__owned`): a receiver that keeps the event (a batch for the rendering thread) moves it
    /// instead of copying it (a copy retains and later releases each of its references, and walks its ~330 bytes).
    public var onEvent: ((__owned TimelineEvent) -> Void)? {
        get { sink.onEvent }
        set { sink.onEvent = newValue }
    }
    /// Observers of attribute values (transfers, OTA, throughput).
    public var observers: [any AttributeValueObserver] {
        get { sink.observers }
        _modify { yield &sink.observers }
    }

    typealias ConnectionKey = ConnectionTable.Key

    /// The connections, the machines of those open (``ConnectionMachine``) and the lookup by (controller, handle).
    var table: ConnectionTable
    var lastFrame = 0
    var lastTimestamp = Timestamp(microseconds: 0)
    var truncatedACLNoted = false
    /// Keys given and learned (shared with the link-layer tracker, which asks when a link starts encryption).
    let keyStore: LinkKeyStore
    /// Bounded findings: at most this many of each kind are kept.
    public var keptFindingsPerCode: Int {
        get { sink.findingsBound.keptPerCode }
        set { sink.findingsBound.keptPerCode = newValue }
    }
    /// Bound on the connections kept over the whole capture (``connections`` never grows beyond it):
    /// a hostile capture with a Connection Complete per record would otherwise grow it without end.
    public var maxRetainedConnections: Int {
        get { table.maxRetained }
        set { table.maxRetained = newValue }
    }
    var heldBudget: HeldBytesBudget
    /// What was carried against what was decoded, per connection and for the capture; set by ``finish()``.
    public internal(set) var decodeHealth = DecodeHealth()
    /// The capture-wide HCI machine: commands and their answers, controller buffers and identities, vendor activity, the
    /// ISO tracker; it feeds the links through ``HCILinks``.
    lazy var hci = HCIMachine(keyStore: keyStore, links: self, sink: sink)
    /// Air captures' link layer (``LinkLayerTracker``) and what it says of the links.
    lazy var air = AirLinkRouter(keyStore: keyStore, links: self, sink: sink)
    /// Who made each controller (``HCIMachine/identities``).
    public var controllerIdentities: [UInt16: ControllerIdentity] { hci.identities }
    /// Vendor-specific commands and events per controller, counted and named (see ``VendorActivity``).
    public var vendorActivity: VendorActivity { hci.vendorActivity }
    /// Partial work dropped to keep within `maxHeldBytes`: times, and bytes let go.
    public var heldBytesSheds: Int { heldBudget.sheds }
    public var heldBytesDropped: Int { heldBudget.dropped }

    /// Receives every air record blescope decrypted with a key, rewritten in the clear (frame, record bytes):
    /// what `convert --decrypt` writes in place of the encrypted record.
    public var onDecryptedRecord: ((Int, [UInt8]) -> Void)? {
        get { air.tracker.onDecryptedRecord }
        set { air.tracker.onDecryptedRecord = newValue }
    }

    /// Every key the analysis knows at the end: those given, and those learned from pairings, key distribution
    /// and HCI commands in the capture (what `--keys-from` reads from a phone's log).
    public var knownKeys: LinkKeyMaterial { keyStore.material }

    /// Records a `limit.*` finding the first time the bound is hit.
    func noteLimit(_ kind: FindingKind, frame: Int) { sink.noteLimit(kind, frame: frame) }

    public init(options: AnalyzerOptions = AnalyzerOptions()) {
        self.options = options
        sink = AnalysisSink(timeline: options.timeline, evidence: options.evidence, queueCapacity: options.queueCapacity)
        heldBudget = HeldBytesBudget(limit: options.maxHeldBytes)
        keyStore = LinkKeyStore(options.keys, micSearchLimit: options.maxKeySearchCandidates)
        table = ConnectionTable(sink: sink, capture: CaptureContext(codecs: options.codecs, keyStore: keyStore))
    }

    // MARK: driving

    /// Feeds one record.
    public func process(_ record: CaptureRecord) {
        counters.records += 1
        lastFrame = record.frame
        lastTimestamp = record.timestamp
        if record.controllerIndex != sink.evidenceLog.lastController {
            sink.evidenceLog.noteController(record.controllerIndex, frame: record.frame, timestamp: record.timestamp)
        }
        switch record.kind {
        case .command:
            counters.commands += 1
            hci.command(record)
        case .event:
            counters.events += 1
            hci.event(record)
        case .acl: processACL(record)
        case .iso:
            counters.isoPackets &+= 1
            if let e = hci.iso.data(record, timeline: options.timeline, findings: &findings) { emit(e) }
        case .text:
            if options.timeline {
                emit(
                    TimelineEvent(
                        frame: record.frame, timestamp: record.timestamp, connection: nil, direction: .unknown,
                        layer: .note, code: nil, name: "Note", summary: record.text))
            }
        case .linkLayer:
            counters.linkLayerRecords += 1
            air.process(record)
        case .monitor:
            hci.monitor(record)
        default:
            break
        }
        if options.timeline { sink.drain(now: record.timestamp) }
        sink.boundFindings()
    }

    /// Builds timeline events from the next record on (`on`), or stops (what waits for a response is handed out now).
    /// A pass that needs the timeline only around some frames (the report's evidence windows) runs as a statistics pass
    /// elsewhere.
    public func setTimeline(_ on: Bool) {
        guard on != options.timeline else { return }
        if !on { sink.drain(now: nil, force: true) }
        options.timeline = on
        sink.timeline = on
    }

    /// Ends the pass: reports what was left open and flushes the timeline.
    public func finish() {
        air.finish(frame: lastFrame, timestamp: lastTimestamp)
        hci.iso.finish(findings: &findings, frame: lastFrame)
        for (i, machine) in table.machines.enumerated() {
            guard let machine else { continue }
            table[i].decode = machine.finish(frame: lastFrame, timestamp: lastTimestamp, endOfCapture: true)
        }

        decodeHealth = DecodeHealth(connections: connections, vendorTrace: hci.vendorTrace)
        findings += decodeHealth.findings
        hci.finish()
        for machine in table.machines { machine?.finishRequests(frame: lastFrame, timestamp: lastTimestamp, endOfCapture: true) }
        for i in observers.indices { observers[i].finish(frame: lastFrame, timestamp: lastTimestamp) }
        sink.drain(now: nil, force: true)
        sink.finishFindings()
        IdentityResolver.nameIdentities(in: &table, keys: keyStore.identities)
    }

    /// Runs a whole capture file through a new analyzer; `progress` is called with (frame, bytes read) at every
    /// 65,536th frame.
    public static func analyze(
        _ capture: CaptureFile, options: AnalyzerOptions = AnalyzerOptions(),
        progress: ((Int, Int64) -> Void)? = nil,
        configure: (Analyzer) -> Void = { _ in }
    ) -> Analyzer {
        let analyzer = Analyzer(options: options)
        configure(analyzer)
        var record = CaptureRecord.empty
        while capture.next(into: &record) {
            analyzer.process(record)
            // Every 65,536 frames, the only ones ``ProgressReporter`` draws (see ``CaptureAnalysis/analyze``).
            if record.frame & 0xFFFF == 0 { progress?(record.frame, capture.bytesConsumed) }
        }
        analyzer.finish()
        return analyzer
    }

    // MARK: events

    /// Hands `event` to the sink (``AnalysisSink/emit(_:waiting:)``) with the number of the connection its handle
    /// names; returns its queue id, -1 if sent.
    @discardableResult
    func emit(_ event: consuming TimelineEvent, waiting: Bool = false) -> Int {
        if event.connectionNumber == nil, let h = event.connection, let i = table.latest(onHandle: h) {
            event.connectionNumber = table[i].number
        }
        return sink.emit(event, waiting: waiting)
    }

    // MARK: connections

    /// The peer address of connection `number` (1-based) as far as the pass has read (a timeline filter asks per event).
    func peerAddress(ofConnection number: Int) -> String? {
        number >= 1 && number <= table.count ? table[number - 1].peerAddress : nil
    }

    /// The open connection on (controller, handle); with `infer`, one opened for traffic without a Connection Complete.
    /// The lookup is inlined into the per-packet callers (out of line it showed in profiles:
    /// docs/performance.md#analyzer); opening stays out of line.
    @inline(__always)
    func connectionIndex(controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp, infer: Bool) -> Int? {
        let key = ConnectionKey(controller: controller, handle: handle)
        if let i = table.lookup(key) { return i }
        guard infer else { return nil }
        return inferConnection(key, frame: frame, timestamp: timestamp)
    }

    /// A connection opened for traffic on a key no Connection Complete named (within the bounds), with its finding.
    @inline(never)
    private func inferConnection(_ key: ConnectionKey, frame: Int, timestamp: Timestamp) -> Int? {
        guard table.canRetainAnother else {
            noteLimit(.tooManyConnectionsInCapture(maxRetainedConnections), frame: frame)
            return nil
        }
        guard table.openCount < options.maxConnections else {
            findings.append(Finding(.warning, .tooManyConnections(options.maxConnections), frame: frame))
            return nil
        }
        let index = table.openLink(key: key, frame: frame, timestamp: timestamp, inferred: true, gattMap: options.gattMap) { _ in }
        identify(index)
        if table.noteInferred(key) {
            findings.append(Finding(.info, .connectionInferred(key.handle), frame: frame))
        }
        return index
    }
}

extension Analyzer {
    /// Everything held for unfinished work, across connections and credit-based channels.
    public var heldBytes: Int { table.heldBytes }

    /// Counts what is held (``HeldBytesBudget``) and, past the bound, drops the partial work of the largest holders
    /// (``ConnectionTable/shed(_:)``), with one `limit.held-bytes` finding.
    func enforceHeldBytes(frame: Int) {
        guard let shedding = heldBudget.check(held: table.heldBytes, holders: { table.holders() }) else { return }
        noteLimit(.heldBytes(options.maxHeldBytes), frame: frame)
        heldBudget.droppedElsewhere(table.shed(shedding))
    }
}
