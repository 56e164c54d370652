#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a `pthread_mutex_t`, for state shared between threads.
///
/// Not `Synchronization.Mutex`: on Linux that locks with raw futex system calls, which ThreadSanitizer
/// cannot see, so every contended `withLock` is reported as a "Swift access race" and a TSan run of the
/// test suite fails at random. A pthread mutex is intercepted by TSan and costs the same when uncontended.
///
/// Unchecked Sendable: `value` is read and written only inside ``withLock(_:)``, which holds `mutex`.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
