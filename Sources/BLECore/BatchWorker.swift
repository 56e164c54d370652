import Dispatch

/// One serial worker beside a producer: runs the batches it is sent one at a time, in the order sent, with at most
/// `maxBatchesInFlight` queued (memory stays bounded however far the producer runs ahead), and hands each batch back
/// once run, for the producer to refill with its capacity kept (fresh arrays cost a page fault per 4 KiB every time).
///
/// Whatever `run` touches belongs to the worker from the first ``send(_:)`` until ``finish(_:)`` returns; the producer
/// leaves it alone meanwhile. Used by the timeline's JSON rendering, the background trackers and the throughput tracker
/// beside the decoder.
///
/// Unchecked Sendable: `run` is called only on the serial `queue`, one batch at a time; `spare` is behind ``Locked``.
public final class BatchWorker<Batch: Sendable>: @unchecked Sendable {
    private let queue: DispatchQueue
    private let slots: DispatchSemaphore
    /// Batches already run, for the producer to refill.
    private let spare = Locked<[Batch]>([])
    private let run: (inout Batch) -> Void

    /// - Parameter run: processes one batch on the worker's thread, and empties it or leaves it for the producer to.
    public init(label: String, maxBatchesInFlight: Int, run: @escaping (inout Batch) -> Void) {
        queue = DispatchQueue(label: label)
        slots = DispatchSemaphore(value: max(1, maxBatchesInFlight))
        self.run = run
    }

    /// Queues `batch` (waiting while `maxBatchesInFlight` are queued); returns a batch already run, to refill, if any.
    public func send(_ batch: Batch) -> Batch? {
        slots.wait()
        queue.async { [self] in
            var owned = batch
            run(&owned)
            spare.withLock { $0.append(owned) }
            slots.signal()
        }
        return spare.withLock { $0.popLast() }
    }

    /// Waits for every batch sent, then runs `body` on the worker's queue: what `run` touched is the caller's again.
    public func finish<R>(_ body: () -> R) -> R {
        queue.sync(execute: body)
    }
}
