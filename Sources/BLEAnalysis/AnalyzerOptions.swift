import BLECodecs
import BLECore

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
    /// Gather the diagnosis's evidence (``Evidence/init(pass:throughput:)``): the HCI commands and events, the ATT
    /// activity per connection and handle, the security exchanges. Off for passes that print no diagnosis
    /// (`throughput`, `timeline`, `gatt`, `transfers`, `ota`, `iso`): it is 7 % of `throughput`'s instructions on the
    /// 1 M-record benchmark capture (callgrind, 2026-11-26: 1.905 G → 1.772 G).
    public var evidence: Bool
    /// Copy each notification's and write command's value into its timeline event (``TimelineEvent/value``). The
    /// page's timeline shows no value and turns it off: the copy was a third of its pass's mallocs (190,000 on the
    /// benchmark capture; docs/performance.md#embedded-timeline).
    public var eventValues: Bool

    public init(
        timeline: Bool = true, codecs: CodecRegistry? = nil, gattMap: GATTMap? = nil,
        queueCapacity: Int = 65_536, maxConnections: Int = 4096, maxHeldBytes: Int = 32 << 20,
        keys: LinkKeyMaterial = LinkKeyMaterial(), maxKeySearchCandidates: Int = AnalyzerOptions.defaultMaxKeySearchCandidates,
        evidence: Bool = true, eventValues: Bool = true
    ) {
        self.evidence = evidence
        self.eventValues = eventValues
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
