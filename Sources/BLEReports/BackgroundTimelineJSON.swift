import BLEAnalysis
import BLECapture
import BLECore
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Renders timeline events as JSON Lines on a second thread, beside the analyzer.
///
/// The analyzer's thread copies each event into a batch and goes on decoding; full batches go, in
/// order, to one serial worker that renders them with its own ``TimelineJSONRenderer`` into `stream`.
/// The bytes are those of rendering inline (same events, same order, same renderer). At most
/// `maxBatchesInFlight` batches wait at once, so memory stays bounded however far the decoder runs ahead.
/// `stream` belongs to the worker until ``finish()`` has returned.
///
/// It takes the rendering off the analyzer's thread at the price of more CPU in all (the events' copies), so it is
/// sooner only with the second core free, and slower on a loaded machine
/// (docs/performance.md#background-timeline-json). Hence ``pays``: only when a core is idle.
public final class BackgroundTimelineJSON {
    private let rendering: Rendering
    /// Hands rendered batches back still full: this thread empties them (see `send`).
    private let worker: BatchWorker<[TimelineEvent]>
    private var pending: [TimelineEvent]
    private let batchSize: Int

    /// Whether rendering on a second thread is expected to pay now: a second core that is idle (``secondCoreIdle()``);
    /// `BLESCOPE_THREADS=2` says yes whatever the load (to measure both threads on a busy machine).
    public static var pays: Bool {
        secondThreadForced || secondCoreIdle()
    }

    public init(stream: OutputStream, batchSize: Int = 1024, maxBatchesInFlight: Int = 3) {
        self.batchSize = max(1, batchSize)
        let rendering = Rendering(stream: stream)
        self.rendering = rendering
        worker = BatchWorker(label: "blescope.jsonl", maxBatchesInFlight: maxBatchesInFlight) { batch in
            // Borrowed in place: copying an event out would retain and release its strings on this thread.
            batch.withUnsafeBufferPointer { events in
                for i in events.indices { rendering.renderer.writeBuffered(events[i], to: rendering.stream) }
            }
        }
        pending = []
        pending.reserveCapacity(self.batchSize)
    }

    /// Queues one event (rendered later, in order); moved into the batch, not copied.
    @_optimize(speed)
    public func write(_ e: consuming TimelineEvent) {
        pending.append(e)
        if pending.count >= batchSize { send() }
    }

    /// Renders what is queued and waits for it: `stream` is the caller's again.
    @_optimize(speed)
    public func finish() {
        send()
        worker.finish { rendering.renderer.flush(to: rendering.stream) }
    }

    @_optimize(speed)
    private func send() {
        guard !pending.isEmpty else { return }
        let full = pending
        pending = []  // drop our reference so the worker owns the batch alone
        if var spare = worker.send(full) {
            // Emptied here, not on the worker: an event's strings and arrays are then released and freed by the
            // thread that made them. Freed on the worker, they cost this thread contended reference counts and
            // malloc's slow path (docs/performance.md#background-timeline-json).
            spare.removeAll(keepingCapacity: true)
            pending = spare
        }
        if pending.capacity < batchSize { pending.reserveCapacity(batchSize) }
    }

    /// The renderer and the stream, the worker's from the first batch until `finish`. Unchecked Sendable: used only on
    /// the ``BatchWorker``'s queue, and by the producer after `finish()` has waited for it.
    final class Rendering: @unchecked Sendable {
        let stream: OutputStream
        var renderer = TimelineJSONRenderer()
        init(stream: OutputStream) { self.stream = stream }
    }
}
