import BLECapture
import BLECore
import BLEProtocols

/// What a capture can and cannot show, said once per file: payloads the capturer cut (Android filtered
/// snoop mode, btsnooz in bug reports), records it truncated or dropped, gaps that look like a paused or
/// rotated log, time going backwards, controller resets, and connections that start or end outside it.
///
/// A list of items, so other analyses can add theirs (an encrypted link without its key, for instance).
public struct CaptureCompleteness: Hashable, Sendable {
    public struct Item: Hashable, Sendable {
        /// Its registered code (`FindingCode.fileCut`…, declared in `BLECore/Vocabulary/Capture.swift`); `code.id` is
        /// the stable identifier outputs print (`file-cut`, `time-gap`…).
        public var code: FindingCode
        public var severity: Finding.Severity
        public var message: String
        /// The first frame concerned.
        public var frame: Int?
        /// How many records, gaps, connections… the item counts.
        public var count: Int
        /// The item in a few words for the one-line ``headline``, where ``message`` explains at length (a silence
        /// while the controller only scanned: CQ-04's full reading stays in `info` and Context).
        public var brief: String? = nil

        public init(code: FindingCode, severity: Finding.Severity, message: String, frame: Int?, count: Int = 1) {
            self.code = code; self.severity = severity; self.message = message; self.frame = frame; self.count = count
        }
    }

    public var items: [Item]
    /// Where the log has no record for ``CompletenessTracker/gapThreshold`` or more (the first 1,000 such gaps): what
    /// the capture could not see. A rule that measures a wait across one cannot tell what happened in it (TP-01).
    public var gaps: [Gap] = []
    /// The gaps the log says the host slept through: the first record after the gap → the frame of PacketLogger's
    /// "System Sleep" note before it (``SleepGaps``). Seen, not a break in the capture.
    public var hostAsleep: [Int: Int] = [:]
    /// Every cut ACL record was cut by the logger, not marked cut in the file (``RecordShortfall/cutByLogger``).
    public var payloadsCutByLogger = false
    /// Records the pass read; with ``unreadRest``, what the verdict covers.
    public var recordsRead = 0
    /// The host's HCI Reset the log starts from: the first reset, with no link open at it and no data or work before
    /// it (a Bluetooth power-on). Every link of the log began in it: none can have started before it.
    public var startsAtReset: Int?
    /// Without such a reset, the host's own set-up the log starts from: its first command reads the controller's
    /// identity or capabilities (Informational Parameters, Core Spec Vol 4, Part E, 7.4: Read BD_ADDR, Read Local
    /// Version …), before any data or work, and no link in the log began before it (a host starting on a controller
    /// already powered on: the hands-free unit's Realtek log, Read BD_ADDR at frame 1).
    public var startsAtSetUp: SetUpStart?
    /// The reader stopped before the file's end (a corrupt record length, a read error): what is after it is not judged.
    public var unreadRest: Item? { items.first { $0.code == .fileCorrupt } }

    /// ACL on handles no link held after this side's HCI Reset on their controller, with no Connection Complete for them
    /// since (issue 49): no link is counted for it (``CompletenessTracker``).
    public var staleACL: [StaleACL] = []

    /// ACL on one handle after a reset, for no link.
    public struct StaleACL: Hashable, Sendable {
        public var handle: UInt16
        public var firstFrame: Int
        public var firstTime: Timestamp
        public var packets: Int
        /// The reset before it.
        public var reset: Int
        /// Where the link the handle last held ended (at the reset, or by its Disconnection Complete since): nil when the
        /// log held none on it.
        public var closedFrame: Int?
        /// Its first packet came just ahead of the handle's Connection Complete (``LinkAdoption``): that link's, not stale.
        var adopted = false
    }

    /// Links from before the log whose end alone it holds: a Disconnection Complete for a handle nothing else names, with
    /// no HCI Reset before it (after one, the controller held no link: ``staleACL``, ``StaleAfterReset``). The story
    /// counts them with the links that began before the log, and tells their ends (issue 49).
    public var endedBeforeLog: [EndedBeforeLog] = []

    /// A stretch without records, ending at `frame`.
    public struct Gap: Hashable, Sendable {
        /// The first record after it.
        public var frame: Int
        public var microseconds: Int64
    }

    public init(items: [Item] = [], gaps: [Gap] = []) {
        self.items = items
        self.gaps = gaps
    }

    /// What the analysis knows beyond the records, added to the records' verdict: links encrypted without a key (their
    /// traffic is missing from every analysis). Every command that states completeness calls this with its pass's
    /// findings, so `info`, `diagnose` and `report` give one verdict.
    public mutating func add(analysisFindings findings: [Finding]) {
        for f in findings where f.kind.code == .llEncryptedNoKey {
            items.append(.init(code: .encryptedNoKey, severity: .warning, message: f.message, frame: f.frame))
        }
        // Links whose file kept only packets with payload: acknowledgements and silences are not in it.
        for f in findings where f.kind.code == .llNoEmptyPDUs {
            items.append(.init(code: .llNoEmptyPDUs, severity: .info, message: f.message, frame: f.frame))
        }
        addSnifferMissed(findings)
        // Records the logger wrote twice: the log holds more records than happened (counted once: ``RepeatedRecords``).
        for f in findings where f.kind.code == .hciRepeatedRecord {
            items.append(.init(code: .hciRepeatedRecord, severity: .info, message: f.message, frame: f.frame))
        }
    }

    /// The diagnosis' answer to the question the longest gap asks: where CQ-04 found the controller only scanning
    /// across it with no link open, the item says so instead of "a paused or rotated log?", so the Log line and the
    /// finding give one reading (the CUBOT log: 7 gaps, the longest 3 min 51 s, page scan on since frame 66).
    public mutating func answer(_ findings: [Diagnosis]) {
        for i in items.indices where items[i].code == .timeGap {
            let item = items[i]
            guard item.message.hasSuffix(CQ04TimelineBreak.pausedQuestion),
                let quiet = findings.first(where: {
                    $0.rule == CQ04TimelineBreak.code.id && $0.frame == item.frame && CQ04TimelineBreak.brief($0.headline) != nil
                }), let brief = CQ04TimelineBreak.brief(quiet.headline)
            else { continue }
            items[i].message = quiet.message.hasSuffix(".") ? String(quiet.message.dropLast()) : quiet.message
            var said = item.message.dropLast(CQ04TimelineBreak.pausedQuestion.count)
            while said.last == " " || said.last == ":" { said = said.dropLast() }
            items[i].brief = said + brief
        }
    }

    /// The verdicts a warning item gives, the gravest first: records or bytes missing (`incomplete`), records all there
    /// but some unreadable (`not decrypted`: a link encrypted without its key), records all there but out of time
    /// order (`out of time order`: a clock that jumped back; the durations across it are wrong, nothing is missing).
    public static let warningVerdicts = ["incomplete", "not decrypted", "out of time order"]

    /// What a warning item of `code` says of the log (one of ``warningVerdicts``).
    public static func verdict(of code: FindingCode) -> String {
        switch code {
        case .encryptedNoKey: "not decrypted"
        case .timeBackwards: "out of time order"
        default: "incomplete"
        }
    }

    /// `complete` (nothing to say), `complete with notes` (only informational items), else the gravest of
    /// ``warningVerdicts`` its warnings give.
    public var verdict: String {
        if items.isEmpty { return "complete" }
        let said = Set(items.filter { $0.severity >= .warning }.map { Self.verdict(of: $0.code) })
        return Self.warningVerdicts.first(where: said.contains) ?? "complete with notes"
    }

    /// Whether some item is a warning: the log is incomplete, not decrypted or out of time order.
    public var hasWarnings: Bool { items.contains { $0.severity >= .warning } }

}

/// Builds a ``CaptureCompleteness`` from the records, in one pass beside ``CaptureStatistics``: a few byte
/// reads per record, a small table of open connection handles.
public struct CompletenessTracker: Sendable {
    /// A pause longer than this between two records looks like a paused or rotated log.
    public var gapThreshold: Int64 = 60_000_000

    var aclRecords = 0
    var recordsRead = 0
    var aclCut = 0
    var aclCutFirstFrame: Int?
    var aclCutMaxKept = 0
    var otherCut = 0
    var otherCutFirstFrame: Int?
    /// Of the cut ACL and other records, those the file marks whole that hold fewer bytes than their own header says,
    /// their headers whole (``RecordShortfall/cutByLogger``).
    var aclCutByLogger = 0
    var otherCutByLogger = 0
    var lastDrops: UInt32 = 0
    var dropsFirstFrame: Int?
    /// An nRF Sniffer's packet counter skipping values (``NordicCounterSkips``): packets the file does not hold.
    var nordicSkips = NordicCounterSkips()
    var previous: Timestamp?
    /// The clock the previous record was dated by (``clockStream(_:)``), and each other clock's last time: records of
    /// another interface are ordered against their own clock's, not the sniffer's beside them.
    var previousStream = UInt32.max
    var previousByStream: [UInt32: Timestamp] = [:]
    /// Records dated behind the other interface's record before them, their own clock in order: interfaces on different
    /// clocks (the HackenBluetooth two-interface capture: its Ethernet record 5043 on the host's time, 55 ms behind the
    /// Ubertooth's), counted apart from time going backwards. How many, the first frame, the largest offset (µs).
    var interfaceOffsets = 0
    var interfaceOffsetFirstFrame: Int?
    var largestInterfaceOffset: Int64 = 0
    var backwards = 0
    var backwardsFirstFrame: Int?
    /// The largest step back, µs: under ``jitterLimit`` it is the capturer's clocks disagreeing, not a jump.
    var largestStepBack: Int64 = 0
    /// A step back up to this (10 ms) is jitter between clocks (a btsnoop writer's threads, a sniffer's USB
    /// timestamps): the records are all there, only their order in time is off by that much. Up to and including it:
    /// a clock that ticks in milliseconds (PacketLogger's) shows a disorder just under 10 ms as 10.000 ms.
    static let jitterLimit: Int64 = 10_000
    /// Resets with links open at the time (they dropped them), of ``resets``.
    var resetsWithLinks: Set<Int> = []
    /// Handles seen carrying data without a Connection Complete and not disconnected since (links open before the log).
    var inferredOpen: Set<UInt32> = []
    var gaps = 0
    var largestGap: Int64 = 0
    var largestGapFrame: Int?
    var gapList: [CaptureCompleteness.Gap] = []
    /// The host's power notes (PacketLogger's "System Sleep", "System Power On"): the last one seen, and the gaps
    /// they explain (``SleepGaps``).
    var sleep = SleepGaps()
    var resets: [Int] = []
    var firstACLFrame: Int?
    /// The first command that put the controller to work (``controllerWork``): a reset after it restarts a controller
    /// in use, even when no link carried data yet (the audiostream iPhone log: inquiries, then Reset at 161).
    var firstWorkFrame: Int?
    /// The log's first command (``CaptureCompleteness/startsAtSetUp``).
    var firstCommand: (frame: Int, opcode: HCICommand)?
    var hardwareErrors: [Int] = []
    /// Connection handle (with controller) → opened inside the capture.
    var open: [UInt32: Int] = [:]
    var seen: Set<UInt32> = []
    var startedBefore: [(handle: UInt16, frame: Int, time: Timestamp)] = []
    /// Disconnection Completes for handles nothing else in the log names: links from before it that ended (after an HCI
    /// Reset, the links it dropped), with the reason and the reset before them.
    var endedUnseen: [(handle: UInt16, frame: Int, reason: UInt8, time: Timestamp)] = []
    /// Disconnection Completes for a handle already ended, nothing opened on it since: frame, reason, the first end's frame.
    var endedAgain: [(frame: Int, reason: UInt8, firstFrame: Int)] = []
    var lastReset: (frame: Int, time: Timestamp)?
    /// Controllers whose HCI Reset waits for its Command Complete, and when it was sent (``StaleAfterReset``).
    var resetPending: [UInt16: Timestamp] = [:]
    /// Connection Completes that came while their controller's HCI Reset waited for its completion: the frame, the
    /// handle and the reset's frame. No link is counted for them (``HCIMachine`` opens none).
    var staleAfterReset: [(frame: Int, handle: UInt16, reset: Int)] = []
    /// The latest HCI Reset on each controller, and the handles the log opened (SCO/eSCO, CIS) since it.
    var resetOn: [UInt16: (frame: Int, time: Timestamp)] = [:]
    var openedSinceReset = Set<UInt32>()
    /// Events for a link's facts or end just after a reset, for handles no link holds (``StaleAfterReset``): the
    /// frame, the handle, the event's name, the reset's frame and how long after it. Counted, no link.
    var staleEvents: [(frame: Int, handle: UInt16, name: String, reset: Int, after: Int64)] = []
    /// ACL after a reset on handles no link holds (``CaptureCompleteness/staleACL``), the open entry per key, and where
    /// each key's last link ended.
    var staleACL: [CaptureCompleteness.StaleACL] = []
    var staleACLOpen: [UInt32: Int] = [:]
    var closedAt: [UInt32: Int] = [:]
    /// ACL handle keys already settled, direct-mapped by ``settledSlot(_:)``: a key in `seen` or on a vendor handle.
    /// Every key in `open` is in `seen` too and `seen` only grows, so "not seen yet" is the whole question for an
    /// ACL record and a settled key stays settled: the cache never needs clearing (a reset or disconnection only
    /// shrinks `open`). Most ACL records hit it and cost no hashing, where before they hashed into `open` and `seen`
    /// whenever the handle changed (docs/performance.md#completeness).
    var settledKeys = InlineArray<64, UInt32>(repeating: .max)
    var hciRecords = 0
    /// Records shorter than their own HCI header says where the capturer cut nothing and the header does not hold together
    /// (``RecordShortfall/damaged``): the first 5 frames.
    var damaged = 0
    var damagedFrames: [Int] = []
    /// Records in time (not notes), and whether any two of them differ: a log whose clock never moves has no timing.
    var timedRecords = 0
    var clockMoved = false
    /// ACL records by direction, and events: a log with sent packets only (``OnlySentPackets``).
    var aclSent = 0, aclReceived = 0, eventRecords = 0

    public init() {}

    @inline(__always) static func key(_ controller: UInt16, _ handle: UInt16) -> UInt32 {
        UInt32(controller) << 16 | UInt32(handle & 0x0FFF)
    }

    /// Low handle bits, folded with the controller index: handles are small and allocated in order.
    @inline(__always) static func settledSlot(_ key: UInt32) -> Int {
        Int(truncatingIfNeeded: (key ^ key >> 16) & 63)
    }

    public mutating func add(_ record: CaptureRecord) {
        recordsRead &+= 1
        noteTime(record)
        if record.cumulativeDrops > lastDrops {
            if dropsFirstFrame == nil { dropsFirstFrame = record.frame }
            lastDrops = record.cumulativeDrops
        }
        let b = record.bytes
        switch record.kind {
        case .acl:
            hciRecords &+= 1
            aclRecords &+= 1
            if record.direction == .tx { aclSent &+= 1 } else if record.direction == .rx { aclReceived &+= 1 }
            let shortfall = RecordShortfall.of(record)
            if record.isTruncated || shortfall == .cutByLogger {
                aclCut += 1
                if shortfall == .cutByLogger { aclCutByLogger += 1 }
                if aclCutFirstFrame == nil { aclCutFirstFrame = record.frame }
                aclCutMaxKept = max(aclCutMaxKept, b.count - 4)
            }
            if firstACLFrame == nil { firstACLFrame = record.frame }
            guard b.count >= 2 else { return }
            // Shorter than its header says, the header not holding together: damaged (ACLPath says so), it names no
            // connection. Cut by the logger, its handle names one (as ACLPath).
            if noteDamaged(record, shortfall) { return }
            let k = Self.key(record.controllerIndex, UInt16(b[0]) | UInt16(b[1]) << 8)
            let slot = Self.settledSlot(k)
            if settledKeys[slot] == k { return }
            let handle = UInt16(truncatingIfNeeded: k)
            // After this side's reset, a handle no link holds is stale: never settled, each record counted.
            if !resetOn.isEmpty, resetOn[record.controllerIndex] != nil, open[k] == nil, !VendorTrace.isVendorHandle(handle) {
                return noteStaleACL(record, k)
            }
            settledKeys[slot] = k
            // A controller's debug log on a vendor handle is no connection (VendorTrace.isVendorHandle).
            if !seen.contains(k) && !VendorTrace.isVendorHandle(handle) {
                seen.insert(k)
                if startedBefore.count < 1000 { startedBefore.append((handle, record.frame, record.timestamp)) }
                inferredOpen.insert(k)
            }
        case .command:
            hciRecords &+= 1
            if noteShortfall(record) { return }
            if firstWorkFrame == nil, Self.putsToWork(b) { firstWorkFrame = record.frame }
            if firstCommand == nil, b.count >= 2 { firstCommand = (record.frame, HCICommand(rawValue: UInt16(b[0]) | UInt16(b[1]) << 8)) }
            if b.count >= 2, UInt16(b[0]) | UInt16(b[1]) << 8 == HCICommand.reset.rawValue {
                resets.append(record.frame)
                lastReset = (record.frame, record.timestamp)
                resetPending[record.controllerIndex] = record.timestamp
                resetOn[record.controllerIndex] = (record.frame, record.timestamp)
                openedSinceReset.removeAll()
                if !open.isEmpty || !inferredOpen.isEmpty { resetsWithLinks.insert(record.frame) }
                for k in open.keys { closedAt[k] = record.frame }
                for k in inferredOpen { closedAt[k] = record.frame }
                // A settled key is no longer held: its ACL after the reset is stale (noteStaleACL).
                settledKeys = InlineArray(repeating: .max)
                staleACLOpen.removeAll()
                open.removeAll()
                inferredOpen.removeAll()
            }
        case .event:
            hciRecords &+= 1
            eventRecords &+= 1
            if noteShortfall(record) { return }
            noteEvent(record)
        case .sco, .iso:
            hciRecords &+= 1
            // Data on an SCO/eSCO or ISO handle names it: its Disconnection Complete ends a channel the log holds.
            guard !noteShortfall(record), b.count >= 2 else { return }
            let k = Self.key(record.controllerIndex, UInt16(b[0]) | UInt16(b[1]) << 8)
            let slot = Self.settledSlot(k)
            if settledKeys[slot] != k {
                settledKeys[slot] = k
                seen.insert(k)
            }
        default:
            if record.isTruncated { noteOtherCut(record.frame) }
            if record.kind == .linkLayer, record.linkType == 272 { nordicSkips.add(record) }
        }
    }

    /// Commands that start the controller's work (finding, connecting, advertising), not its bring-up: with an enable
    /// flag as first parameter, only when it enables.
    static let controllerWork: [HCICommand: Bool] = [
        .inquiry: false, .createConnection: false, .leCreateConnection: false, .leExtendedCreateConnection: false,
        .leExtendedCreateConnectionV2: false, .leSetScanEnable: true, .leSetExtendedScanEnable: true,
        .leSetAdvertisingEnable: true, .leSetExtendedAdvertisingEnable: true,
    ]

    /// Whether a command record (opcode, length, parameters) puts the controller to work (``controllerWork``).
    static func putsToWork(_ b: UnsafeRawBufferPointer) -> Bool {
        guard b.count >= 2, let flagged = controllerWork[HCICommand(rawValue: UInt16(b[0]) | UInt16(b[1]) << 8)] else { return false }
        return !flagged || (b.count >= 4 && b[3] != 0)
    }

    /// The events that open and close handles (links, SCO/eSCO, CIS), resets' effects aside, and hardware errors.
    mutating func noteEvent(_ record: CaptureRecord) {
        let b = record.bytes
        guard b.count >= 2 else { return }
        let p = b.count - 2
        func u16(_ i: Int) -> UInt16 { UInt16(b[2 + i]) | UInt16(b[3 + i]) << 8 }
        if !resetOn.isEmpty, noteStale(record) { return }
        switch HCIEventCode(b[0]) {
        case .leMeta where p >= 4:
            let sub = LESubevent(b[2])
            if (sub == .connectionComplete || sub == .enhancedConnectionComplete || sub == .enhancedConnectionCompleteV2) && b[3] == 0 {
                opened(record, u16(2))
            } else if (sub == LESubevent(0x19) || sub == LESubevent(0x2A)) && b[3] == 0 {
                // LE CIS Established (v1, v2): a CIS the log set up, on its own handle, ended by a Disconnection Complete.
                seen.insert(Self.key(record.controllerIndex, u16(2)))
                openedSinceReset.insert(Self.key(record.controllerIndex, u16(2) & 0x0FFF))
            }
        case HCIEventCode(0x03) where p >= 3:
            if b[2] == 0 { opened(record, u16(1)) }
        case .disconnectionComplete where p >= 4:
            if b[2] == 0 {
                let k = Self.key(record.controllerIndex, u16(1))
                if !seen.contains(k), endedUnseen.count < 1000 {
                    endedUnseen.append((u16(1) & 0x0FFF, record.frame, b[5], record.timestamp))
                } else if open[k] == nil, !inferredOpen.contains(k), let first = closedAt[k], endedAgain.count < 1000 {
                    endedAgain.append((record.frame, b[5], first))
                }
                open.removeValue(forKey: k)
                inferredOpen.remove(k)
                seen.insert(k)
                closedAt[k] = record.frame
                if !resetOn.isEmpty, settledKeys[Self.settledSlot(k)] == k { settledKeys[Self.settledSlot(k)] = .max }
            }
        case HCIEventCode(0x2C) where p >= 3:
            // Synchronous Connection Complete: an SCO/eSCO handle the log opened (its end is no link from before it).
            if b[2] == 0 {
                seen.insert(Self.key(record.controllerIndex, u16(1)))
                openedSinceReset.insert(Self.key(record.controllerIndex, u16(1) & 0x0FFF))
            }
        case .commandComplete where p >= 3:
            if UInt16(b[3]) | UInt16(b[4]) << 8 == HCICommand.reset.rawValue { resetPending[record.controllerIndex] = nil }
        case .hardwareError:
            hardwareErrors.append(record.frame)
        default: break
        }
    }

    /// An event the controller queued before its latest reset (``StaleAfterReset``): counted, and nothing else (no
    /// link's end); true then.
    mutating func noteStale(_ record: CaptureRecord) -> Bool {
        guard let reset = resetOn[record.controllerIndex],
            let (handle, name) = StaleAfterReset.staleEvent(record.bytes, at: record.timestamp, resetSent: reset.time)
        else { return false }
        let k = Self.key(record.controllerIndex, handle)
        guard open[k] == nil, !inferredOpen.contains(k), !openedSinceReset.contains(k) else { return false }
        if staleEvents.count < 1000 {
            staleEvents.append((record.frame, handle, name, reset.frame, record.timestamp.microseconds(since: reset.time)))
        }
        return true
    }

    mutating func opened(_ record: CaptureRecord, _ handle: UInt16) {
        let k = Self.key(record.controllerIndex, handle)
        if StaleAfterReset.isStale(record.timestamp, resetSent: resetPending[record.controllerIndex]), let reset = lastReset {
            if staleAfterReset.count < 1000 { staleAfterReset.append((record.frame, handle & 0x0FFF, reset.frame)) }
            return
        }
        // The link's own first packets logged just ahead of its Connection Complete (``LinkAdoption``): not a link
        // from before the capture.
        if inferredOpen.remove(k) != nil, let i = startedBefore.lastIndex(where: { $0.handle == handle }),
            LinkAdoption.adopts(since: startedBefore[i].time, at: record.timestamp)
        {
            startedBefore.remove(at: i)
        }
        // ACL logged just ahead of this Connection Complete after a reset: the link's own first packets.
        if let i = staleACLOpen.removeValue(forKey: k), LinkAdoption.adopts(since: staleACL[i].firstTime, at: record.timestamp) {
            staleACL[i].adopted = true
        }
        open[k] = record.frame
        seen.insert(k)
    }

    /// ACL after this side's reset on a handle no link holds: counted per handle (from its first packet), no link.
    mutating func noteStaleACL(_ record: CaptureRecord, _ k: UInt32) {
        if let i = staleACLOpen[k] {
            staleACL[i].packets += 1
            return
        }
        guard staleACL.count < 1000, let reset = resetOn[record.controllerIndex] else { return }
        staleACLOpen[k] = staleACL.count
        staleACL.append(
            .init(
                handle: UInt16(truncatingIfNeeded: k), firstFrame: record.frame, firstTime: record.timestamp, packets: 1,
                reset: reset.frame, closedFrame: closedAt[k]))
    }

    /// A non-ACL record cut by the capturer or by the logger (``RecordShortfall``) counted as cut; true when it is damaged
    /// (counted, its header names nothing).
    mutating func noteShortfall(_ record: CaptureRecord) -> Bool {
        let shortfall = RecordShortfall.of(record)
        if record.isTruncated || shortfall == .cutByLogger { noteOtherCut(record.frame) }
        if shortfall == .cutByLogger { otherCutByLogger += 1 }
        return noteDamaged(record, shortfall)
    }

    /// Counts `record` when its shortfall is damage; true then.
    mutating func noteDamaged(_ record: CaptureRecord, _ shortfall: RecordShortfall) -> Bool {
        guard shortfall == .damaged else { return false }
        damaged += 1
        if damagedFrames.count < 5 { damagedFrames.append(record.frame) }
        return true
    }

    mutating func noteOtherCut(_ frame: Int) {
        otherCut += 1
        if otherCutFirstFrame == nil { otherCutFirstFrame = frame }
    }
}

func formatSeconds(_ us: Int64) -> String {
    let s = Double(us) / 1e6
    if s >= 3600 { return "\(Int(s / 3600)) h \(Int(s) % 3600 / 60) min" }
    if s >= 60 { return "\(Int(s / 60)) min \(Int(s) % 60) s" }
    return "\(Int(s)) s"
}

func formatMilliseconds(_ us: Int64) -> String {
    us < 1_000_000 ? String(fractionDigits: 1, Double(us) / 1000) + " ms" : formatSeconds(us)
}
