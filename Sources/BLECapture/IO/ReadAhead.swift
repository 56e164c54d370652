import CZlib
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a stream (and inflates it, for gzip) on a thread of its own, into a ring of blocks its consumer takes in order.
///
/// Why: inflating gzip costs more than most analyses of what it inflates; done a few blocks ahead on the second core,
/// it overlaps the analysis instead of adding to it (docs/performance.md#read-ahead). Plain files are read inline
/// (see `CaptureFile.open(path:classicPcapThroughLibpcap:readAhead:readAheadPlainFiles:)`): the kernel's copy moved
/// to the other core but the analysis, reading what another core wrote, was no faster.
///
/// Each block has `headroom` bytes in front of its data: the consumer moves the unread end of the previous window
/// (a record cut by the block's end) there, so the window stays contiguous without copying the block (see
/// `ByteSource`). A block holds what one `read(2)`/`gzread` returned, so a pipe's records come through as they arrive.
///
/// Protocol (every shared field behind `mutex`): the producer fills blocks in ring order, each only while fewer than
/// `blocks` are filled and not yet released; the consumer takes them in the same order and releases them in the
/// order it took them. So the block the producer writes next (fill number `filled`, slot `filled % blocks`) is
/// never one the consumer holds (fill numbers `released ..< filled`, fewer than `blocks` consecutive numbers).
/// A pthread mutex and condition variable, not `DispatchSemaphore`: ThreadSanitizer sees them (see ``Locked``).
///
/// Unchecked Sendable: the blocks' bytes are written by the producer before it publishes the block under `mutex`
/// and read by the consumer after it took the block under `mutex`; the rest is read and written under `mutex`.
final class ReadAhead: @unchecked Sendable {
    struct Shape: Sendable {
        /// Bytes asked of each `read(2)` / `gzread`.
        var blockSize: Int
        /// Room in front of each block for the unread end of the previous window.
        var headroom: Int
        var blocks: Int

        /// 4 × 256 KiB (1.25 MiB with the headrooms): blocks of 1 MiB were no faster, and smaller ones stay in the
        /// caches (docs/performance.md#read-ahead).
        static let standard = Shape(blockSize: 256 << 10, headroom: 64 << 10, blocks: 4)
    }

    /// A filled block: `count` bytes at `data`, `headroom` writable bytes before it.
    struct Block {
        let data: UnsafeMutableRawPointer
        let count: Int
    }

    let shape: Shape
    private let fd: Int32
    private let gz: gzFile?
    private let memory: UnsafeMutableRawPointer
    private let counts: UnsafeMutablePointer<Int>
    /// Compressed bytes read when each block was filled (gzip), for progress bars.
    private let compressedOffsets: UnsafeMutablePointer<Int64>
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    // Under `mutex`.
    private var filled = 0
    private var released = 0
    private var ended = false
    private var cancelled = false
    private var endError: String? = nil
    private var direct = false
    private var lastCompressedOffset: Int64 = 0

    // The consumer's own.
    private var taken = 0

    /// Starts reading `fd` (owned from now on; closed when reading is done) or `gz` (likewise).
    init(fd: Int32, gz: gzFile?, shape: Shape) {
        self.fd = fd
        self.gz = gz
        self.shape = Shape(blockSize: max(1, shape.blockSize), headroom: max(0, shape.headroom), blocks: max(2, shape.blocks))
        let stride = self.shape.headroom + self.shape.blockSize
        memory = .allocate(byteCount: stride * self.shape.blocks, alignment: 64)
        counts = .allocate(capacity: self.shape.blocks)
        counts.initialize(repeating: 0, count: self.shape.blocks)
        compressedOffsets = .allocate(capacity: self.shape.blocks)
        compressedOffsets.initialize(repeating: 0, count: self.shape.blocks)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        changed.initialize(to: pthread_cond_t())
        pthread_cond_init(changed, nil)
        // The producer keeps `self` until it stops, so a consumer that goes away early (`cancel`) never waits for a
        // read that may block (a pipe) and the blocks outlive the last write into them.
        DispatchQueue(label: "blescope.read-ahead").async { self.produce() }
    }

    deinit {
        if let gz { gzclose(gz) } else if fd >= 0 { close(fd) }
        memory.deallocate()
        counts.deallocate()
        compressedOffsets.deallocate()
        pthread_cond_destroy(changed)
        changed.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private func slot(_ fillNumber: Int) -> UnsafeMutableRawPointer {
        memory + (fillNumber % shape.blocks) * (shape.headroom + shape.blockSize) + shape.headroom
    }

    private func locked<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    // MARK: Producer

    private func produce() {
        var fillNumber = 0
        while true {
            pthread_mutex_lock(mutex)
            while filled - released >= shape.blocks && !cancelled { pthread_cond_wait(changed, mutex) }
            let stop = cancelled
            pthread_mutex_unlock(mutex)
            if stop { return }

            let (got, error) = readChunk(fd: fd, gz: gz, into: slot(fillNumber), count: shape.blockSize)
            let offset = gz.map { Int64(gzoffset($0)) } ?? 0
            let passthrough = gz.map { gzdirect($0) != 0 } ?? false
            pthread_mutex_lock(mutex)
            if got > 0 {
                counts[fillNumber % shape.blocks] = got
                compressedOffsets[fillNumber % shape.blocks] = offset
                filled += 1
            } else {
                ended = true
                endError = error
                lastCompressedOffset = offset
            }
            direct = passthrough
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
            if got <= 0 { return }
            fillNumber += 1
        }
    }

    // MARK: Consumer

    /// The next block in order, waiting for it; nil when the stream has ended (then see ``error``).
    func take() -> Block? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while taken == filled && !ended { pthread_cond_wait(changed, mutex) }
        guard taken < filled else { return nil }
        let block = Block(data: slot(taken), count: counts[taken % shape.blocks])
        lastCompressedOffset = compressedOffsets[taken % shape.blocks]
        taken += 1
        return block
    }

    /// Hands back the oldest block taken and not yet released.
    func release() {
        locked {
            precondition(released < taken, "ReadAhead.release without a block taken")
            released += 1
            pthread_cond_broadcast(changed)
        }
    }

    /// Stops the producer after its current read; it frees everything when it returns.
    func cancel() {
        locked {
            cancelled = true
            pthread_cond_broadcast(changed)
        }
    }

    /// The error that ended the stream early (read error, corrupt or cut gzip), once ``take()`` has returned nil.
    var error: String? { locked { endError } }

    /// For gzip: the data was plain and passed through (zlib's `gzdirect`), once a block has been taken.
    var isPassthrough: Bool { locked { direct } }

    /// For gzip: compressed bytes read when the latest block taken was filled.
    var compressedOffset: Int64 { locked { lastCompressedOffset } }
}
