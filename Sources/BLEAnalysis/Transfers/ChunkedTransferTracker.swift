import BLECodecs
import BLECore

/// Rebuilds messages sent as several attribute values: Apple *BTLE Transfer* (`EOM`), codec roles
/// (`total-count` / `sequence` / `message-terminator`) and MCUmgr SMP messages.
///
/// Streams are keyed by (connection number, handle, direction). A value that is not part of any
/// followed stream costs one dictionary lookup. Terminator framing ends a message only on a value
/// whose whole content equals the terminator (`EOM` inside a chunk never splits a message).
///
/// Failure cases: a message still open at a disconnection or at the end of the capture is reported
/// with `complete == false` and a finding; a terminator with no data before it is a finding.
public struct ChunkedTransferTracker: AttributeValueObserver {
    public var options: TransferOptions
    /// Messages in the order they ended; ``finish(frame:timestamp:)`` sorts them by first frame.
    public private(set) var transfers: [Transfer] = []
    /// Findings not attached to a message (e.g. an `EOM` with no data).
    public private(set) var findings: [Finding] = []

    struct StreamKey: Hashable {
        var connectionNumber: Int
        var handle: UInt16
        var direction: Direction
    }

    enum Mode { case ignored, candidate, terminator, smp }

    struct Stream {
        var mode: Mode
        var connection: UInt16 = 0
        var characteristic: BluetoothUUID? = nil
        var service: BluetoothUUID? = nil
        var open: Transfer?
        /// SMP: the message being assembled.
        var smp = SMPReassembler()
        /// Terminator framing: `sequence` roles seen in the open message.
        var sequences: Set<Int> = []
        var maxSequence = -1
    }

    struct RecordKey: Hashable {
        var connectionNumber: Int
        var codec: String
    }

    struct RecordState {
        var transfer: Transfer
        var seen: Set<Int> = []
        var maxIndex = -1
    }

    var streamIndex: [StreamKey: Int] = [:]
    var streams: [Stream] = []
    /// A direct-mapped cache in front of `streamIndex`, as ``ThroughputTracker``'s: it saves the `Dictionary` lookup
    /// (its `Hasher`) per value (docs/performance.md#trackers).
    var cacheKeys = [StreamKey](
        repeating: StreamKey(connectionNumber: .min, handle: 0, direction: .unknown), count: ChunkedTransferTracker.cacheSlots)
    var cacheIndices = [Int](repeating: -1, count: ChunkedTransferTracker.cacheSlots)
    static let cacheSlots = 256

    /// The cache slot of a stream: its fields mixed (a multiplicative hash), the top 8 bits.
    @inline(__always)
    static func cacheSlot(_ key: StreamKey) -> Int {
        let mixed = UInt64(truncatingIfNeeded: key.connectionNumber) &<< 24 | UInt64(key.handle) &<< 8 | UInt64(key.direction.rawValue)
        return Int(truncatingIfNeeded: (mixed &* 0x9E37_79B9_7F4A_7C15) >> 56)
    }
    var records: [RecordKey: RecordState] = [:]

    public init(options: TransferOptions = TransferOptions()) {
        self.options = options
    }

    /// All findings: the tracker's and every message's.
    public var allFindings: [Finding] {
        (findings + transfers.flatMap(\.findings)).sorted { ($0.frame ?? 0) < ($1.frame ?? 0) }
    }

    static func carriesData(_ kind: ValueKind) -> Bool {
        kind == .notification || kind == .indication || kind == .writeCommand || kind == .writeRequest
            || kind == .signedWriteCommand || kind == .longWrite
    }

    public mutating func observe(_ event: AttributeValueEvent, value: RawSpan) {
        value.withUnsafeBytes { observe(event, bytes: $0) }
    }

    /// `bytes`: the value, borrowed for the call; the pointer goes no further than this tracker's own parts.
    mutating func observe(_ event: AttributeValueEvent, bytes: UnsafeRawBufferPointer) {
        if options.followRoles, let decoded = event.decoded, !decoded.roles.isEmpty,
            observeRoles(event, decoded, bytes)
        {
            return
        }
        let key = StreamKey(connectionNumber: event.connectionNumber, handle: event.handle, direction: event.direction)
        let slot = Self.cacheSlot(key)
        var index = cacheIndices[slot]
        let cached = cacheKeys[slot]
        if index < 0 || cached.connectionNumber != key.connectionNumber || cached.handle != key.handle
            || cached.direction != key.direction
        {
            if let i = streamIndex[key] {
                index = i
            } else {
                index = streams.count
                streams.append(
                    Stream(
                        mode: classify(event), connection: event.connection,
                        characteristic: event.characteristic, service: event.service))
                streamIndex[key] = index
            }
            cacheKeys[slot] = key
            cacheIndices[slot] = index
        }
        switch streams[index].mode {
        case .ignored:
            return
        case .candidate, .terminator:
            feedTerminator(index, event, bytes)
        case .smp:
            feedSMP(index, event, bytes)
        }
    }

    func classify(_ event: AttributeValueEvent) -> Mode {
        if let d = options.direction, d != event.direction { return .ignored }
        guard Self.carriesData(event.kind) else { return .ignored }
        if options.followSMP,
            event.characteristic == TransferOptions.smpCharacteristic || event.service == TransferOptions.smpService
        {
            return .smp
        }
        if options.handles.contains(event.handle) { return .terminator }
        if let c = event.characteristic, options.characteristics.contains(c) { return .terminator }
        return options.autoDetect ? .candidate : .ignored
    }

    func isTerminator(_ value: UnsafeRawBufferPointer) -> Bool {
        let t = options.terminator
        guard value.count == t.count else { return false }
        for i in 0..<t.count where value[i] != t[i] { return false }
        return true
    }

    mutating func feedTerminator(_ index: Int, _ event: AttributeValueEvent, _ bytes: UnsafeRawBufferPointer) {
        if isTerminator(bytes) {
            streams[index].mode = .terminator
            if var t = streams[index].open {
                streams[index].open = nil
                t.terminatorFrame = event.frame
                t.lastFrame = event.frame
                t.lastTime = event.timestamp
                t.complete = true
                closeSequences(&t, index)
                transfers.append(t)
            } else {
                findings.append(Finding(.warning, .emptyTransfer, frame: event.frame))
            }
            return
        }
        if streams[index].open == nil {
            streams[index].open = Transfer(
                framing: .terminator, connection: event.connection, connectionNumber: event.connectionNumber,
                handle: event.handle, characteristic: event.characteristic, service: event.service,
                direction: event.direction, firstFrame: event.frame, firstTime: event.timestamp)
            streams[index].sequences.removeAll(keepingCapacity: true)
            streams[index].maxSequence = -1
        }
        streams[index].open!.append(bytes, frame: event.frame, time: event.timestamp, cap: options.maxMessageBytes)
        if let seq = event.decoded?.role(.sequence) {
            let s = Int(clamping: seq)
            if !streams[index].sequences.insert(s).inserted {
                streams[index].open!.duplicateIndices.append(s)
                streams[index].open!.findings.append(Finding(.warning, .transferDuplicate(s), frame: event.frame))
            }
            streams[index].maxSequence = max(streams[index].maxSequence, s)
        }
        if streams[index].mode == .candidate {
            let t = streams[index].open!
            if t.chunks > options.autoDetectMaxValues || t.byteCount > options.autoDetectMaxBytes {
                // No terminator in sight: not a chunked stream. From now on a lookup only.
                streams[index] = Stream(mode: .ignored)
            }
        }
    }

    /// Missing `sequence` values (0 … highest seen) in a terminator-framed message.
    func closeSequences(_ t: inout Transfer, _ index: Int) {
        let maxSeq = streams[index].maxSequence
        guard maxSeq >= 0, maxSeq < 1 << 20 else { return }
        let seen = streams[index].sequences
        let missing = (0...maxSeq).filter { !seen.contains($0) }
        if !missing.isEmpty {
            t.missingIndices = missing
            t.complete = false
            t.findings.append(Finding(.warning, .transferMissing(missing), frame: t.lastFrame))
        }
    }

    // MARK: SMP

    mutating func feedSMP(_ index: Int, _ event: AttributeValueEvent, _ bytes: UnsafeRawBufferPointer) {
        let messages: [SMPReassembler.Message]
        do throws(SMPReassembler.Failure) {
            messages = try streams[index].smp.feed(bytes, frame: event.frame, time: event.timestamp)
        } catch {
            switch error {
            case let .notAMessageStart(op):
                findings.append(Finding(.warning, .smpBadHeader("op byte \(hex(op))"), frame: event.frame))
            }
            return
        }
        for m in messages {
            var t = smpTransfer(
                m, connection: event.connection, connectionNumber: event.connectionNumber,
                handle: event.handle, characteristic: event.characteristic, service: event.service,
                direction: event.direction)
            t.lastFrame = event.frame
            t.lastTime = event.timestamp
            t.complete = true
            transfers.append(t)
        }
    }

    /// A transfer of framing `smp` holding a reassembled message (or the part of one).
    func smpTransfer(
        _ m: SMPReassembler.Message, connection: UInt16, connectionNumber: Int, handle: UInt16,
        characteristic: BluetoothUUID?, service: BluetoothUUID?, direction: Direction
    ) -> Transfer {
        var t = Transfer(
            framing: .smp, connection: connection, connectionNumber: connectionNumber, handle: handle,
            characteristic: characteristic, service: service, direction: direction,
            firstFrame: m.firstFrame, firstTime: m.firstTime)
        t.data = m.bytes
        t.byteCount = m.bytes.count
        t.chunks = m.chunks
        t.smp = m.header
        return t
    }

    // MARK: Roles

    /// Record framing from codec roles; true when the value was consumed.
    mutating func observeRoles(_ event: AttributeValueEvent, _ decoded: DecodedValue, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let roles = decoded.roles
        // OTA messages belong to the OTA tracker.
        if roles[.otaStart] != nil || roles[.otaData] != nil || roles[.otaResult] != nil || roles[.resendRequest] != nil {
            return true
        }
        let key = RecordKey(connectionNumber: event.connectionNumber, codec: decoded.codec)
        if let total = roles[.totalCount]?.intValue {
            if var old = records.removeValue(forKey: key) {
                old.transfer.findings.append(Finding(.warning, .transferSuperseded(), frame: event.frame))
                closeRecords(&old, complete: false)
            }
            var t = Transfer(
                framing: .records, connection: event.connection, connectionNumber: event.connectionNumber,
                handle: event.handle, characteristic: event.characteristic, service: event.service,
                direction: event.direction, codec: decoded.codec,
                firstFrame: event.frame, firstTime: event.timestamp)
            t.countFrame = event.frame
            t.expectedCount = Int(clamping: max(0, total))
            var state = RecordState(transfer: t)
            if total <= 0 {
                closeRecords(&state, complete: true)
            } else {
                records[key] = state
            }
            return true
        }
        if let seq = roles[.sequence]?.intValue {
            let index = Int(clamping: seq)
            var state =
                records.removeValue(forKey: key)
                ?? RecordState(
                    transfer: {
                        var t = Transfer(
                            framing: .records, connection: event.connection, connectionNumber: event.connectionNumber,
                            handle: event.handle, characteristic: event.characteristic, service: event.service,
                            direction: event.direction, codec: decoded.codec,
                            firstFrame: event.frame, firstTime: event.timestamp)
                        t.chunks = 0
                        return t
                    }())
            if state.transfer.chunks == 0 && state.transfer.countFrame != nil {
                // First record after the count: the message starts at the count.
                state.transfer.handle = event.handle
                state.transfer.characteristic = event.characteristic
                state.transfer.direction = event.direction
            }
            state.transfer.append(bytes, frame: event.frame, time: event.timestamp, cap: options.maxMessageBytes)
            if !decoded.valid {
                state.transfer.findings.append(Finding(.warning, .transferInvalidRecord(index, decoded.problems), frame: event.frame))
            }
            if !state.seen.insert(index).inserted {
                state.transfer.duplicateIndices.append(index)
                state.transfer.findings.append(Finding(.warning, .transferDuplicate(index), frame: event.frame))
            }
            state.maxIndex = max(state.maxIndex, index)
            if let expected = state.transfer.expectedCount {
                if index >= expected {
                    state.transfer.findings.append(Finding(.warning, .transferOutOfRange(index, count: expected), frame: event.frame))
                }
                if (0..<expected).allSatisfy({ state.seen.contains($0) }) {
                    closeRecords(&state, complete: true)
                    return true
                }
            }
            records[key] = state
            return true
        }
        if roles[.messageTerminator] != nil {
            guard var state = records.removeValue(forKey: key) else { return false }
            state.transfer.terminatorFrame = event.frame
            state.transfer.lastFrame = event.frame
            state.transfer.lastTime = event.timestamp
            closeRecords(&state, complete: true)
            return true
        }
        return false
    }

    mutating func closeRecords(_ state: inout RecordState, complete: Bool) {
        var t = state.transfer
        let upper = t.expectedCount ?? (state.maxIndex + 1)
        if upper > 0, upper <= 1 << 20 {
            t.missingIndices = (0..<upper).filter { !state.seen.contains($0) }
        }
        t.complete = complete && t.missingIndices.isEmpty
        if !t.missingIndices.isEmpty {
            t.findings.append(Finding(.warning, .transferMissing(t.missingIndices), frame: t.lastFrame))
        }
        transfers.append(t)
    }

    // MARK: Ends

    public mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {
        cut(where: { $0 == connectionNumber }, frame: frame, why: "disconnection (\(reason))")
    }

    public mutating func finish(frame: Int, timestamp: Timestamp) {
        cut(where: { _ in true }, frame: frame, why: "the end of the capture")
        transfers.sort { ($0.firstFrame, $0.lastFrame) < ($1.firstFrame, $1.lastFrame) }
    }

    mutating func cut(where matches: (Int) -> Bool, frame: Int, why: String) {
        for (key, i) in streamIndex where matches(key.connectionNumber) {
            switch streams[i].mode {
            case .terminator:
                if var t = streams[i].open {
                    t.complete = false
                    t.findings.append(Finding(.warning, .transferCut(why), frame: frame))
                    closeSequences(&t, i)
                    transfers.append(t)
                }
                streams[i].open = nil
            case .smp:
                if let m = streams[i].smp.pending {
                    var t = smpTransfer(
                        m, connection: streams[i].connection, connectionNumber: key.connectionNumber,
                        handle: key.handle, characteristic: streams[i].characteristic,
                        service: streams[i].service, direction: key.direction)
                    t.lastFrame = frame
                    t.findings.append(Finding(.warning, .transferCut(why), frame: frame))
                    transfers.append(t)
                    streams[i].smp.reset()
                }
            case .candidate:
                // Never saw a terminator: not a transfer stream; forget the buffered values.
                streams[i].open = nil
            case .ignored:
                break
            }
        }
        for (key, var state) in records where matches(key.connectionNumber) {
            records[key] = nil
            state.transfer.findings.append(Finding(.warning, .transferCut(why), frame: frame))
            closeRecords(&state, complete: false)
        }
        // Connection numbers are not reused: drop their streams.
        let gone = streamIndex.keys.filter { matches($0.connectionNumber) }
        if !gone.isEmpty {
            // The cache may point at the streams dropped here.
            for slot in cacheIndices.indices { cacheIndices[slot] = -1 }
        }
        if !gone.isEmpty, gone.count == streamIndex.count {
            streamIndex.removeAll()
            streams.removeAll()
        } else {
            for k in gone {
                if let i = streamIndex[k] { streams[i] = Stream(mode: .ignored) }
                streamIndex[k] = nil
            }
        }
    }
}
