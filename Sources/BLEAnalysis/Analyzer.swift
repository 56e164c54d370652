import BLECapture
import BLECodecs
import BLECore
import BLEProtocols

/// What the analyzer should do besides tracking state.
public struct AnalyzerOptions: Sendable {
    /// Build a ``TimelineEvent`` for every decoded packet (costly; off for statistics-only passes).
    public var timeline: Bool
    /// Codecs for attribute values (SIG built-ins and YAML specs); nil decodes nothing.
    public var codecs: CodecRegistry?
    /// A user-supplied handle map for connections without discovery in the capture.
    public var gattMap: GATTMap?
    /// Bound on the events waiting for their response (memory stays flat whatever the capture holds).
    public var queueCapacity: Int
    /// Bound on tracked connections and open reassemblies.
    public var maxConnections: Int
    /// Bound on the bytes held for unfinished work across all connections: partial L2CAP PDUs, credit-based
    /// SDUs, long reads and prepared writes (32 MiB by default). 4,096 connections each holding three 64 KiB partial PDUs would
    /// otherwise take 800 MB; past the bound the partial work is dropped with a `limit.held-bytes` finding.
    public var maxHeldBytes: Int
    /// Keys for encrypted LE links in air captures (`--ltk`, `--keys`, `--keys-from`); keys learned from
    /// pairings in the capture are added as the analysis goes.
    public var keys: LinkKeyMaterial
    /// Bound on the TKs the MIC searches of one capture may try in all (legacy pairings whose CONNECT_IND the capture
    /// lacks, ``defaultMaxKeySearchCandidates``): past it a pairing is left encrypted and its finding says why.
    public var maxKeySearchCandidates: Int
    /// Gather the diagnosis's evidence (``Analyzer/evidence(throughput:)``): the HCI commands and events, the ATT
    /// activity per connection and handle, the security exchanges. Off for passes that print no diagnosis
    /// (`throughput`, `timeline`, `gatt`, `transfers`, `ota`, `iso`): it is 7 % of `throughput`'s instructions on the
    /// 1 M-record benchmark capture (callgrind, 2026-11-26: 1.905 G → 1.772 G).
    public var evidence: Bool

    public init(
        timeline: Bool = true, codecs: CodecRegistry? = nil, gattMap: GATTMap? = nil,
        queueCapacity: Int = 65_536, maxConnections: Int = 4096, maxHeldBytes: Int = 32 << 20,
        keys: LinkKeyMaterial = LinkKeyMaterial(), maxKeySearchCandidates: Int = AnalyzerOptions.defaultMaxKeySearchCandidates,
        evidence: Bool = true
    ) {
        self.evidence = evidence
        self.keys = keys
        self.maxKeySearchCandidates = maxKeySearchCandidates
        self.maxHeldBytes = maxHeldBytes
        self.timeline = timeline
        self.codecs = codecs
        self.gattMap = gattMap
        self.queueCapacity = queueCapacity
        self.maxConnections = maxConnections
    }

    /// TKs one capture's MIC searches may try in all: two full searches, under 1 s of CPU (a full search of 10^6 TKs
    /// costs 0.37 s in a release build, 0.42 s when the capture gives no direction and both are tried; callgrind 5.3 G
    /// and 6.2 G instructions; `BenchmarkTests.legacyMICSearchWorstCase`), so a capture with many pairings cut from
    /// their CONNECT_IND costs about a second, not minutes. TK 0 (Just Works) is tried even when it is spent.
    public static let defaultMaxKeySearchCandidates = 2_000_000
}

/// Counts over the whole capture.
public struct AnalysisCounters: Sendable {
    public var records = 0
    public var commands = 0
    public var events = 0
    public var aclFragments = 0
    public var l2capPDUs = 0
    public var attPDUs = 0
    /// ATT PDUs by opcode.
    public var attByOpcode = [Int](repeating: 0, count: 256)
    public var smpPDUs = 0
    public var signallingPDUs = 0
    public var linkLayerRecords = 0
    /// HCI ISO data packets.
    public var isoPackets = 0
    public init() {}
}

/// The one driver: feeds capture records through HCI, L2CAP, ATT/SMP and GATT state, and hands
/// out timeline events and attribute values.
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
    /// Every connection seen, in the order they started (handles are reused, numbers are not).
    public internal(set) var connections: [Connection] {
        get { table.connections }
        _modify { yield &table.connections }
    }
    public internal(set) var counters = AnalysisCounters()
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
    public var observers: [any AttributeValueObserver] = []

    typealias ConnectionKey = ConnectionTable.Key

    /// The connections, their decoding state (reassemblers, ATT bearers) and the lookup by (controller, handle).
    var table = ConnectionTable()
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
        for (i, state) in table.states.enumerated() {
            guard let state else { continue }
            state.finishReassembly(findings: &findings, frame: lastFrame)
            connections[i].decode = state.decode
        }

        decodeHealth = DecodeHealth(connections: connections, vendorTrace: hci.vendorTrace)
        findings += decodeHealth.findings
        hci.finish()
        for (i, state) in table.states.enumerated() {
            guard let state else { continue }
            for (key, p) in state.allBearers.flatMap({ $0.pending.map { $0 } }).sorted(by: { $0.value.frame < $1.value.frame }) {
                findings.append(
                    Finding(.info, .requestUnanswered(p.opcode, handle: p.handle, end: "the end of the capture"), frame: p.frame))
                evidence(
                    .attUnanswered(
                        request: p.opcode, handle: p.handle, sender: key.sender, ended: .endOfCapture, endFrame: lastFrame,
                        waited: lastTimestamp.microseconds(since: p.timestamp)), frame: p.frame, timestamp: p.timestamp,
                    connection: connections[i].number)
            }
        }
        for i in observers.indices { observers[i].finish(frame: lastFrame, timestamp: lastTimestamp) }
        sink.drain(now: nil, force: true)
        sink.finishFindings()
        IdentityResolver.nameIdentities(of: &connections, keys: keyStore.identities)
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
            event.connectionNumber = table.states[i]?.number ?? connections[i].number
        }
        return sink.emit(event, waiting: waiting)
    }

    // MARK: connections

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
        let (controller, handle) = (key.controller, key.handle)
        guard table.canRetainAnother else {
            noteLimit(.tooManyConnectionsInCapture(maxRetainedConnections), frame: frame)
            return nil
        }
        guard table.openCount < options.maxConnections else {
            findings.append(Finding(.warning, .tooManyConnections(options.maxConnections), frame: frame))
            return nil
        }
        var c = Connection(
            number: connections.count + 1, handle: handle, controller: controller, inferred: true,
            startFrame: frame, startTime: timestamp)
        if let map = options.gattMap { c.gatt = map.database }
        let index = table.open(c, key: key)
        identify(index)
        if table.noteInferred(key) {
            findings.append(Finding(.info, .connectionInferred(handle), frame: frame))
        }
        return index
    }

    func openConnection(
        controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp, isLE: Bool,
        configure: (inout Connection) -> Void
    ) {
        let key = ConnectionKey(controller: controller, handle: handle)
        if let old = table.lookup(key) {
            // A new Connection Complete on a handle still open: the previous one ended unseen.
            feedLink(
                .lifecycle(.replaced(why: "replaced by a new connection on the same handle", frame: frame, timestamp: timestamp)),
                connection: old, frame: frame, timestamp: timestamp)
        }
        guard table.canRetainAnother else {
            noteLimit(.tooManyConnectionsInCapture(maxRetainedConnections), frame: frame)
            return
        }
        var c = Connection(
            number: connections.count + 1, handle: handle, controller: controller, inferred: false,
            startFrame: frame, startTime: timestamp)
        c.isLE = isLE
        configure(&c)
        if c.gatt.isEmpty, let peer = c.peerAddress, var earlier = table.earlierDatabase(peer: peer) {
            earlier.source = .earlierConnection
            c.gatt = earlier
        } else if c.gatt.isEmpty, let map = options.gattMap {
            c.gatt = map.database
        }
        identify(table.open(c, key: key))
    }

    /// Connection `index` ended as its lifecycle says (``ConnectionLifecycle/Ending``): its end written, its partial
    /// work and unanswered requests said, its decoding state dropped, the observers told.
    func closeConnection(index: Int, ending: ConnectionLifecycle.Ending) {
        let number = connections[index].number
        let frame = ending.frame, timestamp = ending.timestamp, reason = ending.reason
        if let state = table.states[index] {
            state.finishReassembly(findings: &findings, frame: frame)
            connections[index].decode = state.decode
            for (key, p) in state.allBearers.flatMap({ $0.pending.map { $0 } }).sorted(by: { $0.value.frame < $1.value.frame }) {
                findings.append(Finding(.info, .requestUnanswered(p.opcode, handle: p.handle, end: "the disconnection"), frame: p.frame))
                if let id = p.eventID { sink.queue.settle(id) }
                evidence(
                    .attUnanswered(
                        request: p.opcode, handle: p.handle, sender: key.sender, ended: .disconnection, endFrame: frame,
                        waited: timestamp.microseconds(since: p.timestamp)), frame: p.frame, timestamp: p.timestamp, connection: number)
            }
        }

        table.close(index)
        for i in observers.indices {
            observers[i].connectionEnded(connectionNumber: number, frame: frame, timestamp: timestamp, reason: reason)
        }
    }
}

extension Analyzer {
    /// Everything held for unfinished work, across connections and credit-based channels.
    public var heldBytes: Int {
        var total = 0
        for state in table.states { if let state { total += state.heldBytes + state.channels.heldBytes } }
        return total
    }

    /// Counts what is held (``HeldBytesBudget``) and, past the bound, drops the partial work of the largest holders
    /// (connections, then every credit-based channel if that is not enough), with one `limit.held-bytes` finding.
    func enforceHeldBytes(frame: Int) {
        let shedding = heldBudget.check(held: heldBytes) {
            table.states.indices.compactMap { i in table.states[i].flatMap { $0.heldBytes > 0 ? .init(bytes: $0.heldBytes, index: i) : nil }
            }
        }
        guard let shedding else { return }
        noteLimit(.heldBytes(options.maxHeldBytes), frame: frame)
        for i in shedding.holders { table.states[i]?.shed() }
        if shedding.rest {
            var dropped = 0
            for state in table.states { if let state { dropped += state.channels.dropPartialSDUs() } }
            heldBudget.droppedElsewhere(dropped)
        }
    }
}

extension FindingKind {
    static func heldBytes(_ n: Int) -> FindingKind {
        .init(
            code: "limit.held-bytes",
            message:
                "unfinished PDUs, SDUs, long reads and prepared writes held more than \(n >> 20) MiB: the partial ones were dropped (see the report's counts) and decoding went on"
        )
    }
    static let commandUnanswered = FindingKind(
        code: "hci.command-unanswered", message: "HCI command never answered (no Command Complete or Command Status)")
    static func connectionInferred(_ handle: UInt16) -> FindingKind {
        .init(
            code: "hci.connection-inferred",
            message:
                "ACL traffic on handle \(hex(handle, width: 4)) without a Connection Complete: connection inferred (capture started mid-connection?)"
        )
    }
    static func tooManyConnections(_ n: Int) -> FindingKind {
        .init(code: "limit.connections", message: "more than \(n) connections open at once: further handles are not tracked")
    }
    static func tooManyConnectionsInCapture(_ n: Int) -> FindingKind {
        .init(
            code: "limit.connections-total",
            message: "more than \(n) connections in the capture: later connections are not tracked (their packets are counted, not decoded)"
        )
    }
    static func tooManyCreditChannels(_ n: Int) -> FindingKind {
        .init(
            code: "limit.credit-channels",
            message: "more than \(n) LE credit-based channels open at once: further channels are not reassembled")
    }
    static func tooManyPendingCommands(_ n: Int) -> FindingKind {
        .init(
            code: "limit.pending-commands",
            message: "more than \(n) HCI commands waiting for an answer at once: further ones are not paired")
    }
    static func requestUnanswered(_ opcode: ATTOpcode, handle: UInt16?, end: String) -> FindingKind {
        .init(
            code: "att.request-unanswered",
            message: "ATT \(opcode)\(handle.map { " on handle " + hex($0, width: 4) } ?? "") got no response before \(end)")
    }
    static func truncatedACL(_ n: Int) -> FindingKind {
        .init(
            code: "hci.acl-cut-by-capturer",
            message:
                "ACL packet cut by the capturer (\(n) bytes kept, e.g. Android filtered snoop): counted with its original length, not decoded"
        )
    }
    static func malformed(_ what: String, _ error: DecodeError) -> FindingKind {
        .init(code: "decode.malformed", message: "malformed \(what): \(error)")
    }
}

extension Connection {
    /// The direction of a packet as the link sees it: central → peripheral or back. Air captures say `.tx` for
    /// central → peripheral; HCI captures say `.tx` for host → controller, which is central → peripheral when the
    /// local controller is central.
    func centralToPeripheral(_ direction: Direction) -> Bool {
        role == .peripheral ? direction == .rx : direction != .rx
    }

    /// The central's and the peripheral's 48-bit addresses, where the capture shows them.
    var centralAddressValue: UInt64? {
        if let a = centralAddress { return Connection.addressValue(a) }
        return nil
    }
    var peripheralAddressValue: UInt64? {
        peerAddress.flatMap(Connection.addressValue)
    }

    static func addressValue(_ text: String) -> UInt64? {
        BDAddress(String(text.prefix(17))).map(\.value)
    }
}
