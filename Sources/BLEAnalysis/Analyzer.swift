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

    /// The connections, the machines of those open (``ConnectionMachine``) and the lookup by (controller, handle).
    let table: ConnectionTable
    var lastFrame = 0
    /// The log's first text records: who wrote the log (``PlatformClues``).
    public private(set) var platformNotes: [PlatformNote] = []
    /// Commands and their answers the logger wrote twice (``RepeatedRecords``).
    private var repeated = RepeatedRecords()
    /// The first HCI commands and their frames: a stack's start-up names it (``PlatformClues/startupCommands``).
    public private(set) var startupCommands: [(command: HCICommand, frame: Int)] = []
    var lastTimestamp = Timestamp(microseconds: 0)
    var truncatedACLNoted = false
    /// ACL after a reset on a handle no link holds, until its Connection Complete (``EarlyACLAfterReset``).
    var earlyACL = EarlyACLAfterReset()
    /// A Broadcom controller's LMP trace records, where their layout proves itself.
    var lmp = BroadcomLMPTrace()
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
    /// What was carried against what was decoded, per connection and for the capture; set by ``finish()``.
    public internal(set) var decodeHealth = DecodeHealth()
    /// The capture-wide HCI machine: commands and their answers, controller buffers and identities, vendor activity, the
    /// ISO tracker; it feeds the links through ``HCILinks``.
    lazy var hci = HCIMachine(keyStore: keyStore, links: table, sink: sink)
    /// Air captures' link layer (``LinkLayerTracker``) and what it says of the links.
    lazy var air = AirLinkRouter(keyStore: keyStore, links: table, sink: sink)
    /// Who made each controller (``HCIMachine/identities``).
    public var controllerIdentities: [UInt16: ControllerIdentity] { hci.identities }
    /// The parameters the log's first LE (Extended) Create Connection asked, and its frame.
    public var firstCreate: (parameters: LEConnectionParameters, frame: Int)? { hci.firstCreate }
    /// This side's resolvable private addresses and the peers seen behind more than one (after ``finish()``).
    public var addressRotation: AddressRotation {
        var r = hci.localAddresses.rotation
        r.peers = AddressRotation.peers(connections)
        return r
    }
    /// The name each controller's host gave it (``HCIMachine/localNames``).
    public var localNames: [UInt16: LocalName] { hci.localNames }
    /// Vendor-specific commands and events per controller, counted and named (see ``VendorActivity``).
    public var vendorActivity: VendorActivity { hci.vendorActivity }
    /// Partial work dropped to keep within `maxHeldBytes`: times, and bytes let go.
    /// Everything held for unfinished work, across connections and credit-based channels.
    public var heldBytes: Int { table.heldBytes }
    public var heldBytesSheds: Int { table.heldBudget.sheds }
    public var heldBytesDropped: Int { table.heldBudget.dropped }

    /// Receives every air record blescope decrypted with a key, rewritten in the clear (frame, record bytes):
    /// what `convert --decrypt` writes in place of the encrypted record.
    public var onDecryptedRecord: ((Int, [UInt8]) -> Void)? {
        get { air.tracker.onDecryptedRecord }
        set { air.tracker.onDecryptedRecord = newValue }
    }

    /// Every key the analysis knows at the end: those given, and those learned from pairings, key distribution
    /// and HCI commands in the capture (what `--keys-from` reads from a phone's log).
    public var knownKeys: LinkKeyMaterial { keyStore.material }

    public init(options: AnalyzerOptions = AnalyzerOptions()) {
        self.options = options
        sink = AnalysisSink(timeline: options.timeline, evidence: options.evidence, queueCapacity: options.queueCapacity)
        keyStore = LinkKeyStore(options.keys, micSearchLimit: options.maxKeySearchCandidates)
        table = ConnectionTable(
            sink: sink, capture: CaptureContext(codecs: options.codecs, keyStore: keyStore, eventValues: options.eventValues))
        table.maxConnections = options.maxConnections
        table.gattMap = options.gattMap
        table.heldBudget = HeldBytesBudget(limit: options.maxHeldBytes)
        table.qualityReportsBefore = { [unowned(unsafe) self] in self.hci.vendorTally.takeReports(controller: $0, handle: $1, claim: $2) }
    }

    // MARK: driving

    /// Feeds one record.
    public func process(_ record: CaptureRecord) {
        counters.records += 1
        lastFrame = record.frame
        lastTimestamp = record.timestamp
        table.now = record.timestamp
        // Only HCI records name a controller: a pcapng's Ethernet or sniffer interface is none (HH-07).
        if record.controllerIndex != sink.evidenceLog.lastController, record.kind.isHCI {
            sink.evidenceLog.noteController(record.controllerIndex, frame: record.frame, timestamp: record.timestamp)
        }
        if repeated.repeats(record, findings: &findings) { return }
        switch record.kind {
        case .command:
            counters.commands += 1
            if startupCommands.count < PlatformClues.keptStartupCommands, let opcode = record.commandOpcode {
                startupCommands.append((opcode, record.frame))
            }
            hci.command(record)
        case .event:
            counters.events += 1
            hci.event(record)
            if !earlyACL.isEmpty { replayEarlyACL(record) }
        case .acl: processACL(record)
        case .iso:
            counters.isoPackets &+= 1
            if let e = hci.iso.data(record, timeline: options.timeline, findings: &findings) { table.emit(e, waiting: false) }
        case .text:
            if platformNotes.count < PlatformClues.keptNotes { platformNotes.append(PlatformNote(frame: record.frame, text: record.text)) }
            if options.timeline {
                table.emit(
                    TimelineEvent(
                        frame: record.frame, timestamp: record.timestamp, connection: nil, direction: .unknown,
                        layer: .note, code: nil, name: "Note", summary: record.text), waiting: false)
            }
        case .linkLayer:
            counters.linkLayerRecords += 1
            air.process(record)
        case .monitor:
            hci.monitor(record)
        case .sco:
            hci.synchronous.data(record)
        case .other:
            processLMP(record)
        default:
            break
        }
        if options.timeline {
            if record.comment.count > 0 { emitComment(record) }
            sink.drain(now: record.timestamp)
        }
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
        hci.finish(lastTimestamp: lastTimestamp)
        for machine in table.machines { machine?.finishRequests(frame: lastFrame, timestamp: lastTimestamp, endOfCapture: true) }
        for i in observers.indices { observers[i].finish(frame: lastFrame, timestamp: lastTimestamp) }
        sink.drain(now: nil, force: true)
        sink.finishFindings()
        IdentityResolver.nameIdentities(in: table, keys: keyStore.identities)
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
}

extension CaptureRecord {
    /// A command record's opcode (its first two bytes, little-endian); nil when it is shorter.
    var commandOpcode: HCICommand? { bytes.count >= 2 ? HCICommand(UInt16(bytes[0]) | UInt16(bytes[1]) << 8) : nil }
}
