import BLECapture
import BLECodecs
import BLECore
import BLEProtocols

/// Which trackers a pass over a capture runs (nil: not run), and where.
///
/// `CaptureAnalysis.analyze(capture, observing: .init(throughput: ThroughputOptions()))` gives the throughput streams
/// in ``CaptureAnalysis/throughput``; each tracker asked for has its typed result there, none is fished out of
/// ``Analyzer/observers`` by a downcast.
public struct Observing: Sendable {
    public var throughput: ThroughputOptions?
    public var transfers: TransferOptions?
    /// Follow firmware updates; gaps longer than this are stalls (µs, ``OTATracker/stallThreshold``).
    public var otaStallThreshold: Int64?
    public var gattUsage: Bool
    /// Follow the audio profiles on GATT (ASCS, BASS): ``CaptureAnalysis/leAudio``.
    public var leAudio: Bool
    /// Run the trackers on a second thread beside the decoder (``BackgroundObservers``): the same results, sooner
    /// when several trackers run.
    public var inBackground: Bool
    /// Let the throughput tracker move to a second thread, fed plain samples (``ThroughputBeside``), once the pass
    /// sees a core idle (``AnalysisPass/offerSecondCore()``): the same streams, sooner. Not with `inBackground`
    /// (whose worker runs it).
    public var throughputBeside: Bool

    public init(
        throughput: ThroughputOptions? = nil, transfers: TransferOptions? = nil, otaStallThreshold: Int64? = nil,
        gattUsage: Bool = false, inBackground: Bool = false, throughputBeside: Bool = false, leAudio: Bool = false
    ) {
        self.throughput = throughput
        self.transfers = transfers
        self.otaStallThreshold = otaStallThreshold
        self.gattUsage = gattUsage
        self.leAudio = leAudio
        self.inBackground = inBackground
        self.throughputBeside = throughputBeside
    }

    /// No tracker: connections, findings, counters and the timeline only.
    public static let nothing = Observing()

    /// What the diagnosis rules read besides the analyzer's evidence: the throughput tracker's streams (the one
    /// computation of a stream's packets, bytes, duration, rate and verdict, the same `throughput` prints) and the
    /// firmware updates (a reboot after a successful update), the LE Audio profiles (an ASE operation refused).
    /// `info`, `diagnose` and `report` run at least these, so their findings agree. The throughput streams without
    /// their charts (``ThroughputOptions/verdictsOnly``): the rules read the counts, periods and verdicts only.
    public static let diagnosis = Observing(
        throughput: ThroughputOptions(verdictsOnly: true), otaStallThreshold: OTATracker().stallThreshold, throughputBeside: true,
        leAudio: true)

    var isEmpty: Bool { throughput == nil && transfers == nil && otaStallThreshold == nil && !gattUsage && !leAudio }
}

/// What one pass over a capture found: the analyzer's connections, findings and counters, and the result of each
/// tracker ``Observing`` asked for (nil for those it did not).
public struct CaptureAnalysis: Sendable {
    /// Every connection, in the order they started (``Analyzer/connections``).
    public var connections: [Connection]
    /// The analyzer's findings (the capture reader's are ``CaptureFile/findings``), sorted by frame.
    public var findings: [Finding]
    public var counters: AnalysisCounters
    /// Controller ACL buffers from (LE) Read Buffer Size, per controller: (packet length, packets).
    public var aclBuffers: [UInt16: (length: Int, packets: Int)]
    public var decodeHealth: DecodeHealth
    /// Throughput streams (``ThroughputTracker/streams``) and how many were not kept.
    public var throughput: (streams: [ThroughputStream], streamsDropped: Int)?
    /// Reassembled messages (``ChunkedTransferTracker``) and the tracker's findings.
    public var transfers: (transfers: [Transfer], findings: [Finding])?
    /// Firmware updates, each told across its connections (``OTAUpdateStory/link(_:connections:)``).
    public var otaSessions: [OTASession]?
    /// How each attribute handle was used, per connection.
    public var gattUsage: GATTUsage?
    /// The isochronous channels: CIS/BIS streams, their life and the health of their ISO data (always run).
    public var iso = ISOAnalysis()
    /// SCO/eSCO links beside their ACL (``ClassicAnalysis``).
    public var classic = ClassicAnalysis()
    /// ASE states and operations, BASS operations (``Observing/leAudio``).
    public var leAudio: LEAudioProfiles?
    /// The controllers the log names (Read Local Version Information, a monitor's index info) and their vendor commands
    /// and events: what `info` shows, so that every output that shows them reads the same pass.
    public var controllerIdentities: [UInt16: ControllerIdentity] = [:]
    public var vendorActivity = VendorActivity()
    public var addressRotation = AddressRotation()
    /// The log's first text records (PacketLogger and monitor notes): what names the platform (``PlatformClues``).
    public var platformNotes: [PlatformNote] = []
    /// The log's first HCI commands, in order (``PlatformClues/startupCommands``).
    public var startupCommands: [(command: HCICommand, frame: Int)] = []
    /// The parameters the log's first LE (Extended) Create Connection asked, and its frame (``PlatformClues/firstCreate``).
    public var firstCreate: (parameters: LEConnectionParameters, frame: Int)?
    /// What the diagnosis reads (``Evidence``), without what only the caller knows: add the capture reader's findings
    /// and the completeness verdict (``Evidence/completeness``) before ``DiagnosisEngine/diagnose(_:rules:)``.
    public var evidence: Evidence

    /// The buffers of the lowest-numbered controller: what the throughput report shows.
    public var firstACLBuffers: (length: Int, packets: Int)? { aclBuffers.sorted { $0.key < $1.key }.first?.value }

    /// Runs a whole capture through one analyzer with the trackers `observing` asks for.
    ///
    /// `onEvent` receives the timeline (when `options.timeline`), in frame order, with the pass so far (the peer of a
    /// connection, ``AnalysisPass/peerAddress(ofConnection:)``); `onRecord` sees each record before the analyzer does
    /// (statistics of the same single pass). `progress` is called with (frame, bytes read) at every 65,536th frame.
    public static func analyze(
        _ capture: CaptureFile, options: AnalyzerOptions = AnalyzerOptions(), observing: Observing = .nothing,
        progress: ((Int, Int64) -> Void)? = nil, onRecord: ((CaptureRecord) -> Void)? = nil,
        onEvent: ((__owned TimelineEvent, AnalysisPass) -> Void)? = nil
    ) -> CaptureAnalysis {
        let pass = AnalysisPass(options: options, observing: observing)
        // `unowned(unsafe)`: `pass` outlives every call (the loop below); a checked `unowned` cost a strong retain and
        // release per event.
        if let onEvent { pass.analyzer.onEvent = { [unowned(unsafe) pass] e in onEvent(e, pass) } }
        var record = CaptureRecord.empty  // written in place (``CaptureFile/next(into:)``)
        while capture.next(into: &record) {
            onRecord?(record)
            pass.analyzer.process(record)
            // Every 65,536 frames, the only ones ``ProgressReporter`` draws: asked per record, the reader's position
            // (a protocol witness) and the closure cost time (see docs/performance.md#capture-analysis).
            if record.frame & 0xFFFF == 0 {
                progress?(record.frame, capture.bytesConsumed)
                pass.offerSecondCore()
            }
        }
        return pass.finish()
    }
}

/// One analyzer and the trackers it feeds, for a caller that drives the records itself; ``finish()`` gives the
/// typed results.
///
/// The trackers are reached through a box the pass keeps (``TrackerSet``), never by casting ``Analyzer/observers``.
public final class AnalysisPass {
    public let analyzer: Analyzer
    private let trackers: TrackerBox?
    /// The throughput tracker may still move to a second thread (``Observing/throughputBeside``).
    private var throughputMayMove: Bool

    public init(options: AnalyzerOptions = AnalyzerOptions(), observing: Observing = .nothing) {
        analyzer = Analyzer(options: options)
        throughputMayMove =
            observing.throughputBeside && !observing.inBackground && observing.throughput != nil && secondThreadAvailable
        guard !observing.isEmpty else {
            trackers = nil
            return
        }
        let box = TrackerBox(TrackerSet(observing, codecs: options.codecs))
        trackers = box
        let observer = BoxedTrackers(box: box)
        analyzer.observers = observing.inBackground ? [BackgroundObservers([observer])] : [observer]
    }

    public func process(_ record: CaptureRecord) { analyzer.process(record) }

    /// Moves the throughput tracker to a second thread if ``Observing/throughputBeside`` allows it and a core is idle
    /// now (one `/proc/stat` sample, no wait; `BLESCOPE_THREADS=2`: at once). Call it now and then: ``CaptureAnalysis``
    /// does every 65,536 frames, so captures shorter than that never start a thread.
    ///
    /// Why at run time and not at the start: the tracker is a large share of `report` and `throughput`, and on its own
    /// thread it makes them sooner with a core idle but not with the other core busy; deciding at the start needs
    /// ``secondCoreIdle(samples:)``'s 5 ms of sampling, a third of the gain (see docs/performance.md#capture-analysis).
    public func offerSecondCore() {
        guard throughputMayMove, trackers != nil else { return }
        guard secondThreadForced || secondCoreIdle(samples: 1) else { return }
        moveThroughputBeside()
    }

    /// Moves the throughput tracker to a second thread now (tests choose the batches' sizes).
    func moveThroughputBeside(batchSize: Int = 8192, contextCapacity: Int = 256) {
        throughputMayMove = false
        trackers?.set.moveThroughputBeside(batchSize: batchSize, contextCapacity: contextCapacity)
    }

    /// The peer address of connection `number` (1-based) as far as the pass has read.
    public func peerAddress(ofConnection number: Int) -> String? {
        analyzer.table.peerAddress(ofConnection: number)
    }

    /// Ends the pass (``Analyzer/finish()``) and collects every result.
    public func finish() -> CaptureAnalysis {
        analyzer.finish()
        let set = trackers?.set
        // Built once: the open links' records come from their machines (``Analyzer/connections``).
        let connections = analyzer.connections
        var result = CaptureAnalysis(
            connections: connections, findings: analyzer.findings, counters: analyzer.counters,
            aclBuffers: analyzer.aclBuffers, decodeHealth: analyzer.decodeHealth,
            throughput: set?.throughput.map { ($0.streams, $0.streamsDropped) },
            transfers: set?.transfers.map { ($0.transfers, $0.findings) },
            otaSessions: set?.ota.map { OTAUpdateStory.link($0.sessions, connections: connections) },
            gattUsage: set?.gattUsage?.result,
            evidence: Evidence(pass: analyzer, throughput: set?.throughput?.streams))
        result.iso = analyzer.isoAnalysis
        result.classic = analyzer.classicAnalysis
        result.leAudio = set?.leAudio?.result
        result.controllerIdentities = analyzer.controllerIdentities
        result.vendorActivity = analyzer.vendorActivity
        result.addressRotation = analyzer.addressRotation
        result.platformNotes = analyzer.platformNotes
        result.startupCommands = analyzer.startupCommands
        result.firstCreate = analyzer.firstCreate
        result.evidence.iso = result.iso
        result.evidence.leAudio = result.leAudio
        result.evidence.otaSessions = result.otaSessions
        return result
    }
}

/// The trackers of one pass, each optional, fed in a fixed order; one observer instead of several existentials.
struct TrackerSet: AttributeValueObserver {
    /// The throughput tracker counting inline, or (once finished) the one that counted on its own thread.
    var throughput: ThroughputTracker?
    /// The throughput tracker on its own thread, until finished.
    var throughputBeside: ThroughputBeside?
    var transfers: ChunkedTransferTracker?
    var ota: OTATracker?
    var gattUsage: GATTUsageTracker?
    var leAudio: LEAudioTracker?

    init(_ observing: Observing, codecs: CodecRegistry? = nil) {
        throughput = observing.throughput.map { ThroughputTracker(options: $0) }
        transfers = observing.transfers.map { ChunkedTransferTracker(options: $0) }
        ota = observing.otaStallThreshold.map { OTATracker(stallThreshold: $0) }
        gattUsage = observing.gattUsage ? GATTUsageTracker(codecs: codecs) : nil
        leAudio = observing.leAudio ? LEAudioTracker() : nil
    }

    /// Hands the throughput tracker, as it stands, to a thread of its own (``ThroughputBeside``).
    mutating func moveThroughputBeside(batchSize: Int = 8192, contextCapacity: Int = 256) {
        guard let tracker = throughput else { return }
        throughput = nil
        throughputBeside = ThroughputBeside(tracker: tracker, batchSize: batchSize, contextCapacity: contextCapacity)
    }

    mutating func observe(_ event: AttributeValueEvent, value: RawSpan) {
        throughput?.observe(event, value: value)
        throughputBeside?.observe(event, valueBytes: value.byteCount)
        transfers?.observe(event, value: value)
        ota?.observe(event, value: value)
        gattUsage?.observe(event, value: value)
        leAudio?.observe(event, value: value)
    }

    mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {
        throughput?.connectionEnded(connectionNumber: connectionNumber, frame: frame, timestamp: timestamp, reason: reason)
        transfers?.connectionEnded(connectionNumber: connectionNumber, frame: frame, timestamp: timestamp, reason: reason)
        ota?.connectionEnded(connectionNumber: connectionNumber, frame: frame, timestamp: timestamp, reason: reason)
        gattUsage?.connectionEnded(connectionNumber: connectionNumber, frame: frame, timestamp: timestamp, reason: reason)
        leAudio?.connectionEnded(connectionNumber: connectionNumber, frame: frame, timestamp: timestamp, reason: reason)
    }

    mutating func finish(frame: Int, timestamp: Timestamp) {
        throughput?.finish(frame: frame, timestamp: timestamp)
        if var beside = throughputBeside {
            throughputBeside = nil
            throughput = beside.finish(frame: frame, timestamp: timestamp)
        }
        transfers?.finish(frame: frame, timestamp: timestamp)
        ota?.finish(frame: frame, timestamp: timestamp)
        gattUsage?.finish(frame: frame, timestamp: timestamp)
    }
}

/// Holds the trackers where the pass can read them after the analyzer (or its background worker) is done with them.
/// Only one thread touches `set` at a time: the analyzer's, or the worker's until ``BackgroundObservers`` finishes.
final class TrackerBox {
    var set: TrackerSet
    init(_ set: TrackerSet) { self.set = set }
}

/// The analyzer's observer: forwards to the box.
struct BoxedTrackers: AttributeValueObserver {
    let box: TrackerBox
    func observe(_ event: AttributeValueEvent, value: RawSpan) { box.set.observe(event, value: value) }
    func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {
        box.set.connectionEnded(connectionNumber: connectionNumber, frame: frame, timestamp: timestamp, reason: reason)
    }
    func finish(frame: Int, timestamp: Timestamp) { box.set.finish(frame: frame, timestamp: timestamp) }
}
