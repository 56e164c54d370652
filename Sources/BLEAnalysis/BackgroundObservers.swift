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
    private let running: Running
    private let worker: BatchWorker<Batch>
    /// The batch being filled. Kept here, on the producer's side, and not in the worker object: a field
    /// the producer writes next to one the worker reads made both cores fight over one cache line.
    private var pending: Batch
    private let batchSize: Int

    /// Batches of 512, not 2,048: less memory for the same CPU time, since every batch in flight or spare holds its
    /// events and their copied values (docs/performance.md#background-observers).
    public init(_ observers: [any AttributeValueObserver], batchSize: Int = 512, maxBatchesInFlight: Int = 3) {
        self.batchSize = max(1, batchSize)
        let running = Running(observers: observers)
        self.running = running
        worker = BatchWorker(label: "blescope.observers", maxBatchesInFlight: maxBatchesInFlight) { batch in
            running.run(batch)
            batch.empty()
        }
        pending = Batch(reserving: self.batchSize)
    }

    /// The wrapped observers, in the order given. Complete once ``finish(frame:timestamp:)`` has returned.
    public var observers: [any AttributeValueObserver] { running.observers }

    public mutating func observe(_ event: AttributeValueEvent, value: RawSpan) {
        let start = pending.bytes.count
        value.withUnsafeBytes { pending.bytes.append(contentsOf: $0) }
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
        worker.finish { running.finish(frame: frame, timestamp: timestamp) }
    }

    private mutating func send() {
        guard !pending.events.isEmpty || !pending.ends.isEmpty else { return }
        let full = pending
        pending = Batch()  // drop our reference so the worker owns the batch alone
        pending = worker.send(full) ?? Batch(reserving: batchSize)
    }
}

extension BackgroundObservers {
    struct ConnectionEnd: Sendable {
        var connectionNumber: Int
        var frame: Int
        var timestamp: Timestamp
        var reason: String
    }

    /// Events and copies of their values: plain values, built by the producer and then handed over whole.
    struct Batch: Sendable {
        /// The events as delivered; `ranges[i]` says where event i's value bytes are in `bytes` (the event holds no
        /// pointer, so nothing in a batch points into the analyzer's buffers).
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

    /// The observers, the worker's from the first batch until `finish`. Unchecked Sendable: used only on the
    /// ``BatchWorker``'s queue, one batch at a time, and by the producer after `finish` has waited for every batch.
    final class Running: @unchecked Sendable {
        private(set) var observers: [any AttributeValueObserver]
        private var finished = false

        init(observers: [any AttributeValueObserver]) { self.observers = observers }

        func run(_ batch: Batch) {
            var nextEnd = 0
            let ends = batch.ends, ranges = batch.ranges
            batch.bytes.withUnsafeBytes { raw in
                for i in 0...batch.events.count {
                    while nextEnd < ends.count && ends[nextEnd].position == i {
                        endConnection(ends[nextEnd].end)
                        nextEnd += 1
                    }
                    guard i < batch.events.count else { break }
                    let value = UnsafeRawBufferPointer(rebasing: raw[ranges[i]])
                    for o in observers.indices { observers[o].observe(batch.events[i], value: value.bytes) }
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
            for i in observers.indices { observers[i].finish(frame: frame, timestamp: timestamp) }
        }
    }
}
