import BLECore
import Dispatch

/// Runs observers on a second thread, so a pass that feeds several trackers (``ThroughputTracker``,
/// ``ChunkedTransferTracker``, ``OTATracker``, ``GATTUsageTracker``) decodes and tracks at the same time.
///
/// The analyzer's thread copies each event and its value bytes into a batch and goes on decoding;
/// full batches go, in order, to one serial worker that hands every event to every observer exactly as
/// the analyzer would have. Results are identical to running the observers inline (same events, same
/// order); only the thread differs. At most `maxBatchesInFlight` batches wait at once, so memory stays
/// bounded however fast the decoder runs ahead.
///
/// Read ``observers`` (the trackers with their results) only after ``finish(frame:timestamp:)``.
public struct BackgroundObservers: AttributeValueObserver {
    private let worker: Worker
    /// The batch being filled. Kept here, on the producer's side, and not in the worker object: a field
    /// the producer writes next to one the worker reads made both cores fight over one cache line.
    private var pending: Batch
    private let batchSize: Int

    /// Batches of 512 (2,048 until 2026-11-24): `report` on the 1 M-record benchmark capture peaked at 29.2 MiB
    /// against 33.2 MiB (medians of 5 alternating runs, load 5–6), in the same CPU time (0.49 s against 0.50 s user);
    /// every batch in flight or spare holds its events and their copied values.
    public init(_ observers: [any AttributeValueObserver], batchSize: Int = 512, maxBatchesInFlight: Int = 3) {
        self.batchSize = max(1, batchSize)
        worker = Worker(observers: observers, maxBatchesInFlight: max(1, maxBatchesInFlight))
        pending = Batch(reserving: self.batchSize)
    }

    /// The wrapped observers, in the order given. Complete once ``finish(frame:timestamp:)`` has returned.
    public var observers: [any AttributeValueObserver] { worker.observers }

    public mutating func observe(_ event: AttributeValueEvent) {
        let start = pending.bytes.count
        pending.bytes.append(contentsOf: event.value)
        pending.ranges.append(start..<pending.bytes.count)
        pending.events.append(event)
        if pending.events.count >= batchSize { send() }
    }

    public mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {
        pending.ends.append(
            (pending.events.count, ConnectionEnd(connectionNumber: connectionNumber, frame: frame, timestamp: timestamp, reason: reason)))
        if pending.ends.count >= batchSize { send() }
    }

    public mutating func finish(frame: Int, timestamp: Timestamp) {
        send()
        worker.finish(frame: frame, timestamp: timestamp)
    }

    private mutating func send() {
        guard !pending.events.isEmpty || !pending.ends.isEmpty else { return }
        let full = pending
        pending = Batch()  // drop our reference so the worker owns the batch alone
        pending = worker.send(full) ?? Batch(reserving: batchSize)
    }
}

extension BackgroundObservers {
    struct ConnectionEnd {
        var connectionNumber: Int
        var frame: Int
        var timestamp: Timestamp
        var reason: String
    }

    /// Unchecked Sendable: a batch is built by the producer, then handed over whole and never touched by it again.
    struct Batch: @unchecked Sendable {
        /// The events as delivered; `ranges[i]` says where event i's value bytes are in `bytes`.
        var events: [AttributeValueEvent] = []
        var ranges: [Range<Int>] = []
        var bytes: [UInt8] = []
        /// Connection ends, each after the first `position` events.
        var ends: [(position: Int, end: ConnectionEnd)] = []

        init() {}
        init(reserving n: Int) {
            events.reserveCapacity(n)
            ranges.reserveCapacity(n)
        }

        mutating func empty() {
            events.removeAll(keepingCapacity: true)
            ranges.removeAll(keepingCapacity: true)
            bytes.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
        }
    }

    /// Owns the observers; only its serial queue touches them until `finish` has waited for the queue.
    final class Worker: @unchecked Sendable {
        private(set) var observers: [any AttributeValueObserver]
        private let queue = DispatchQueue(label: "blescope.observers")
        private let slots: DispatchSemaphore
        private var finished = false
        /// Batches the worker has emptied, capacity kept: fresh arrays of this size would cost a page
        /// fault and a zeroed page per 4 KiB every time.
        private let spare = Locked<[Batch]>([])

        init(observers: [any AttributeValueObserver], maxBatchesInFlight: Int) {
            self.observers = observers
            slots = DispatchSemaphore(value: maxBatchesInFlight)
        }

        /// Queues a full batch (waiting while `maxBatchesInFlight` are queued); returns an emptied one to refill, if any.
        func send(_ batch: Batch) -> Batch? {
            slots.wait()
            queue.async { [self] in
                var owned = batch
                run(&owned)
                owned.empty()
                spare.withLock { $0.append(owned) }
                slots.signal()
            }
            return spare.withLock { $0.popLast() }
        }

        private func run(_ batch: inout Batch) {
            var nextEnd = 0
            let ends = batch.ends, ranges = batch.ranges
            batch.bytes.withUnsafeBytes { raw in
                batch.events.withUnsafeMutableBufferPointer { events in
                    for i in 0...events.count {
                        while nextEnd < ends.count && ends[nextEnd].position == i {
                            endConnection(ends[nextEnd].end)
                            nextEnd += 1
                        }
                        guard i < events.count else { break }
                        let r = ranges[i]
                        events[i].value =
                            r.isEmpty ? UnsafeRawBufferPointer(start: nil, count: 0) : UnsafeRawBufferPointer(rebasing: raw[r])
                        for o in observers.indices { observers[o].observe(events[i]) }
                    }
                }
            }
        }

        private func endConnection(_ end: ConnectionEnd) {
            for i in observers.indices {
                observers[i].connectionEnded(
                    connectionNumber: end.connectionNumber, frame: end.frame, timestamp: end.timestamp, reason: end.reason)
            }
        }

        func finish(frame: Int, timestamp: Timestamp) {
            guard !finished else { return }
            finished = true
            queue.sync {}  // every batch has run: the observers are ours again
            for i in observers.indices { observers[i].finish(frame: frame, timestamp: timestamp) }
        }

        deinit {
            // Dropped without finish(): let the queued batches drain before the observers go.
            if !finished { queue.sync {} }
        }
    }
}
