import BLECore
import Dispatch

/// One attribute value as ``ThroughputTracker`` counts it: the event's numbers (40 bytes of plain memory), with what
/// rarely changes — the link, the attribute's names — in a ``ThroughputContext`` beside it.
struct ThroughputSample {
    var frame: Int
    var timestamp: Timestamp
    var connectionNumber: Int
    /// Value bytes and L2CAP bytes (an L2CAP PDU is at most 65,535 + 4 bytes).
    var valueBytes: Int32
    var l2capBytes: Int32
    var connection: UInt16
    var handle: UInt16
    var direction: Direction
    var kind: ValueKind
    /// Where its context is in a ``ThroughputBeside`` batch (0 when counted inline).
    var context: UInt16

    @inline(__always)
    init(_ event: AttributeValueEvent, valueBytes: Int, context: UInt16 = 0) {
        frame = event.frame
        timestamp = event.timestamp
        connectionNumber = event.connectionNumber
        self.valueBytes = Int32(clamping: valueBytes)
        l2capBytes = Int32(clamping: event.l2capBytes)
        connection = event.connection
        handle = event.handle
        direction = event.direction
        kind = event.kind
        self.context = context
    }
}

/// What a stream's values share, mostly: the link in force, the attribute's characteristic and service, the PSM of a
/// credit-based channel.
struct ThroughputContext {
    var link: LinkSnapshot
    var characteristic: BluetoothUUID?
    var service: BluetoothUUID?
    var psm: UInt16?

    @inline(__always)
    init(_ event: AttributeValueEvent) {
        link = event.link
        characteristic = event.characteristic
        service = event.service
        psm = event.psm
    }

    /// Whether this is `event`'s context.
    @inline(__always)
    func describes(_ event: AttributeValueEvent) -> Bool {
        PeriodState.sameLink(link, event.link) && characteristic == event.characteristic && service == event.service
            && psm == event.psm
    }
}

/// Runs a ``ThroughputTracker`` on a second thread beside the decoder, fed batches of ``ThroughputSample``s.
///
/// Not ``BackgroundObservers``, which copies whole events (with a reference count each) and their value bytes: since the
/// trackers became cheap those copies cost more than the trackers. A sample is 40 bytes of numbers, and a context goes
/// into a batch only when it differs from the last one of the same (connection, handle) slot in that batch. The
/// worker counts the samples in order with the tracker's own ``ThroughputTracker/add(_:context:)``, so the streams are
/// those of counting inline. At most `maxBatchesInFlight` batches wait, so memory stays bounded.
struct ThroughputBeside {
    private let counting: Counting
    private let worker: BatchWorker<Batch>
    /// The batch being filled, on the producer's side (not in the worker object: see ``BackgroundObservers``), and
    /// its buffers and counts, held here as raw pointers: reached through the batch object, each value paid a retain
    /// and a release of it (docs/performance.md#throughput-beside).
    private var pending: Batch
    private var samples: UnsafeMutablePointer<ThroughputSample>
    private var count = 0
    private let capacity: Int
    private var contexts: UnsafeMutablePointer<ThroughputContext>
    private var contextCount = 0
    private var contextOfSlot: UnsafeMutablePointer<Int16>
    private let contextCapacity: Int

    /// - Parameter batchSize: samples per batch (at most 32,767: contexts are numbered with 16 bits). 8,192: each batch
    ///   handed over wakes the worker, so smaller batches cost more (docs/performance.md#throughput-beside).
    /// - Parameters:
    ///   - tracker: the tracker as it stands (it goes on counting on the worker's thread).
    ///   - contextCapacity: contexts per batch (a batch is sent early when they run out): a context is ~100 bytes, and
    ///     consecutive values of a stream share theirs.
    init(tracker: ThroughputTracker, batchSize: Int = 8192, contextCapacity: Int = 256, maxBatchesInFlight: Int = 3) {
        capacity = min(max(1, batchSize), Int(Int16.max))
        self.contextCapacity = min(max(1, contextCapacity), capacity)
        let counting = Counting(tracker: tracker)
        self.counting = counting
        worker = BatchWorker(label: "blescope.throughput", maxBatchesInFlight: maxBatchesInFlight) { batch in
            for i in 0..<batch.count {
                let sample = batch.samples[i]
                counting.tracker.add(sample, context: batch.contexts[Int(sample.context)])
            }
            batch.empty()
        }
        pending = Batch(capacity: capacity, contextCapacity: self.contextCapacity)
        samples = pending.samples
        contexts = pending.contexts
        contextOfSlot = pending.contextOfSlot
    }

    mutating func observe(_ event: AttributeValueEvent, valueBytes: Int) {
        let slot = Batch.slot(connectionNumber: event.connectionNumber, handle: event.handle)
        var context = Int(contextOfSlot[slot])
        if context < 0 || !contexts[context].describes(event) {
            if contextCount == contextCapacity { send() }
            context = contextCount
            (contexts + context).initialize(to: ThroughputContext(event))
            contextCount += 1
            contextOfSlot[slot] = Int16(context)
        }
        (samples + count).initialize(to: ThroughputSample(event, valueBytes: valueBytes, context: UInt16(context)))
        count += 1
        if count == capacity { send() }
    }

    /// Counts what is still queued, waits for the worker and returns the tracker, finished.
    mutating func finish(frame: Int, timestamp: Timestamp) -> ThroughputTracker {
        send()
        return worker.finish {
            counting.tracker.finish(frame: frame, timestamp: timestamp)
            return counting.tracker
        }
    }

    private mutating func send() {
        guard count > 0 else { return }
        pending.count = count
        pending.contextCount = contextCount
        pending = worker.send(pending) ?? Batch(capacity: capacity, contextCapacity: contextCapacity)
        samples = pending.samples
        contexts = pending.contexts
        contextOfSlot = pending.contextOfSlot
        count = 0
        contextCount = 0
    }
}

extension ThroughputBeside {
    /// Samples and their contexts in buffers of fixed capacity, written in place (plain memory: nothing to
    /// deinitialize). Unchecked Sendable: one thread at a time has it — the producer while filling, the worker from
    /// `send` until it hands it back, emptied (``BatchWorker``).
    final class Batch: @unchecked Sendable {
        let samples: UnsafeMutablePointer<ThroughputSample>
        var count = 0
        let contexts: UnsafeMutablePointer<ThroughputContext>
        var contextCount = 0
        /// Per (connection, handle) slot, the index in `contexts` of the last context given to it; -1 none yet.
        let contextOfSlot: UnsafeMutablePointer<Int16>
        static let slots = 64

        init(capacity: Int, contextCapacity: Int) {
            samples = .allocate(capacity: capacity)
            contexts = .allocate(capacity: contextCapacity)
            contextOfSlot = .allocate(capacity: Self.slots)
            contextOfSlot.initialize(repeating: -1, count: Self.slots)
        }

        deinit {
            samples.deallocate()
            contexts.deallocate()
            contextOfSlot.deallocate()
        }

        @inline(__always)
        static func slot(connectionNumber: Int, handle: UInt16) -> Int {
            let mixed = UInt64(truncatingIfNeeded: connectionNumber) &<< 16 | UInt64(handle)
            return Int(truncatingIfNeeded: (mixed &* 0x9E37_79B9_7F4A_7C15) >> 58)  // the top 6 bits: 64 slots
        }

        func empty() {
            count = 0
            contextCount = 0
            contextOfSlot.update(repeating: -1, count: Self.slots)
        }
    }

    /// The tracker, the worker's from the first batch until `finish`. Unchecked Sendable: used only on the
    /// ``BatchWorker``'s queue, one batch at a time, and by the producer after `finish` has waited for every batch.
    final class Counting: @unchecked Sendable {
        var tracker: ThroughputTracker
        init(tracker: ThroughputTracker) { self.tracker = tracker }
    }
}
