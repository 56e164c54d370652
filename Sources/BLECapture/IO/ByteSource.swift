import CZlib

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A forward-only window over a file's (decompressed) bytes, with no per-record allocation.
///
/// Three backings (an `mmap` variant was measured: no faster than `read(2)` into a 1 MiB buffer that
/// stays in cache, and its resident set grows with the kernel's read-ahead):
/// - a reusable buffer refilled by `read(2)` (pipes) or `gzread` (gzip), compacted in place and grown
///   only to the largest record asked for;
/// - the blocks of a ``ReadAhead`` (the same reads on a second thread): the window is one block, the unread end of
///   the previous window copied into the block's headroom; when that end is longer than the headroom, the window is
///   the growable buffer instead, holding that end and whole blocks copied after it;
/// - bytes in memory (tests, decompressed btsnooz blocks).
///
/// `ensure(n)` guarantees `n` readable bytes at `cursor` or returns false at the end of the data.
final class ByteSource {
    private enum Backing {
        case memory(UnsafeMutableRawPointer)
        case stream
        case readAhead(ReadAhead)
    }

    private var backing: Backing
    /// Start of the current window.
    private(set) var base: UnsafeRawPointer
    /// Cursor, relative to `base`.
    private(set) var position: Int = 0
    /// Number of valid bytes in the window.
    private(set) var limit: Int
    /// File offset of `base`.
    private var windowOffset: Int64 = 0
    // Stream state.
    private var fd: Int32 = -1
    private var gz: gzFile? = nil
    private var buffer: UnsafeMutableRawPointer? = nil
    private var capacity: Int = 0
    private var atEOF = false
    /// Read-ahead: whether the window is a block taken from the ``ReadAhead`` (else the growable buffer, or nothing yet).
    private var windowIsBlock = false
    /// Read-ahead of a gzip stream.
    private var readAheadInflates = false
    /// A decompression or read error, if one ended the stream early.
    private(set) var streamError: String? = nil

    /// Owns a copy of `bytes`.
    init(copying bytes: UnsafeRawBufferPointer) {
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        if let src = bytes.baseAddress, bytes.count > 0 { p.copyMemory(from: src, byteCount: bytes.count) }
        backing = .memory(p)
        base = UnsafeRawPointer(p)
        limit = bytes.count
    }

    /// Reads a file descriptor (`gzip: true` decompresses transparently; takes ownership of `fd`), on a second thread
    /// when `readAhead` gives the shape of its blocks.
    init(streaming fd: Int32, gzip: Bool, readAhead: ReadAhead.Shape? = nil, initialCapacity: Int = 1 << 20) {
        backing = .stream
        limit = 0
        var stream: gzFile? = nil
        if gzip {
            stream = gzdopen(fd, "rb")
            if let stream { _ = gzbuffer(stream, 256 << 10) } else { close(fd); atEOF = true; streamError = "cannot open gzip stream" }
        }
        if let readAhead, !atEOF {
            backing = .readAhead(ReadAhead(fd: fd, gz: stream, shape: readAhead))
            readAheadInflates = gzip
            base = UnsafeRawPointer(bitPattern: 0x10)!  // no window yet (limit 0): never read
            return
        }
        capacity = initialCapacity
        let p = UnsafeMutableRawPointer.allocate(byteCount: initialCapacity, alignment: 16)
        buffer = p
        base = UnsafeRawPointer(p)
        if gzip { gz = stream } else { self.fd = fd }
    }

    deinit {
        switch backing {
        case let .memory(p): p.deallocate()
        case .stream:
            buffer?.deallocate()
            if let gz { gzclose(gz) }
            if fd >= 0 { close(fd) }
        case let .readAhead(reader):
            buffer?.deallocate()
            reader.cancel()
        }
    }

    /// The next unread byte.
    @inline(__always) var cursor: UnsafeRawPointer { base + position }
    /// Bytes available in the window without refilling.
    @inline(__always) var available: Int { limit &- position }
    /// File offset (in the decompressed data) of the cursor.
    @inline(__always) var offset: Int64 { windowOffset &+ Int64(position) }

    /// True when a gzip-mode stream turned out to be plain data passed through (pipes).
    var isPassthrough: Bool {
        if case let .readAhead(reader) = backing { return reader.isPassthrough }
        return gz.map { gzdirect($0) != 0 } ?? false
    }

    /// Compressed bytes read so far for gzip, else the cursor's offset (for progress bars).
    var bytesConsumed: Int64 {
        if let gz { return Int64(gzoffset(gz)) }
        if case let .readAhead(reader) = backing, readAheadInflates { return reader.compressedOffset }
        return offset
    }

    /// Makes `n` bytes readable at `cursor`; false when the data ends first (what is left stays readable).
    @inline(__always) func ensure(_ n: Int) -> Bool {
        if limit &- position >= n { return true }
        return refill(n)
    }

    /// Moves the cursor forward by `n` bytes (at most `available`).
    @inline(__always) func advance(_ n: Int) {
        position &+= n
    }

    private func refill(_ n: Int) -> Bool {
        if case let .readAhead(reader) = backing { return refill(n, from: reader) }
        guard case .stream = backing, !atEOF, let buf = buffer else { return false }
        // Compact the unread tail to the front.
        let tail = limit - position
        if position > 0 {
            if tail > 0 { memmove(buf, buf + position, tail) }
            windowOffset += Int64(position)
            position = 0
            limit = tail
        }
        if n > capacity {
            var newCapacity = capacity
            while newCapacity < n { newCapacity *= 2 }
            let p = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            if limit > 0 { p.copyMemory(from: buf, byteCount: limit) }
            buf.deallocate()
            buffer = p
            capacity = newCapacity
            base = UnsafeRawPointer(p)
        }
        let dst = buffer!
        while limit < n, !atEOF {
            let room = capacity - limit
            let (got, error) = readChunk(fd: fd, gz: gz, into: dst + limit, count: room)
            if got == 0 {
                atEOF = true
                streamError = error
            } else {
                limit += got
            }
        }
        return limit - position >= n
    }

    /// Refills from read-ahead blocks until `n` bytes are readable at the cursor or the stream ends.
    private func refill(_ n: Int, from reader: ReadAhead) -> Bool {
        while limit &- position < n {
            guard !atEOF else { return false }
            guard let next = reader.take() else {
                atEOF = true
                streamError = reader.error
                return false
            }
            let tail = limit - position
            let unread = base + position
            windowOffset += Int64(position)
            if tail <= reader.shape.headroom {
                // The usual case: the window becomes the new block, the previous window's unread end in front of it.
                let start = next.data - tail
                if tail > 0 { start.copyMemory(from: unread, byteCount: tail) }
                if windowIsBlock { reader.release() }
                windowIsBlock = true
                base = UnsafeRawPointer(start)
            } else {
                // An unread end longer than the headroom (a record bigger than it): the growable buffer holds it and
                // the whole new block.
                let needed = tail + next.count
                if windowIsBlock {
                    if needed > capacity {
                        buffer?.deallocate()
                        capacity = max(needed, 1 << 20)
                        buffer = .allocate(byteCount: capacity, alignment: 16)
                    }
                    buffer!.copyMemory(from: unread, byteCount: tail)
                } else if needed > capacity {
                    capacity = max(needed, capacity * 2)
                    let p = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
                    p.copyMemory(from: unread, byteCount: tail)
                    buffer?.deallocate()
                    buffer = p
                } else {
                    memmove(buffer!, unread, tail)
                }
                buffer!.advanced(by: tail).copyMemory(from: next.data, byteCount: next.count)
                if windowIsBlock { reader.release() }
                reader.release()  // `next`, copied
                windowIsBlock = false
                base = UnsafeRawPointer(buffer!)
            }
            position = 0
            limit = tail + next.count
        }
        return true
    }

    /// Copies everything that is left into an anonymous temporary file (for libpcap, which reads only
    /// `FILE *`), rewound; nil when the temporary file cannot be written. Memory stays flat.
    func drainToTemporaryFile() -> (file: UnsafeMutablePointer<FILE>, size: Int64)? {
        guard let tmp = tmpfile() else { return nil }
        var total: Int64 = 0
        repeat {
            let n = available
            if n > 0 {
                if fwrite(cursor, 1, n, tmp) != n { fclose(tmp); return nil }
                total += Int64(n)
                advance(n)
            }
        } while ensure(1 << 20) || available > 0
        rewind(tmp)
        return (tmp, total)
    }

    /// Reads everything that is left (used for small embedded blobs such as btsnooz text); `max` caps it.
    func readAll(max: Int = Int.max) -> [UInt8] {
        var chunk = 1 << 20
        while available < max, ensure(available + chunk) { chunk *= 2 }
        let n = min(available, max)
        let out = [UInt8](UnsafeRawBufferPointer(start: cursor, count: n))
        advance(n)
        return out
    }
}

/// One `read(2)` of `fd` (retried on EINTR), or one `gzread` of `gz` when there is one, into `destination`: the bytes
/// read, 0 at the end of the stream, with the error that ended it early if one did.
func readChunk(fd: Int32, gz: gzFile?, into destination: UnsafeMutableRawPointer, count: Int) -> (Int, String?) {
    if let gz {
        let got = Int(gzread(gz, destination, UInt32(min(count, Int(Int32.max)))))
        if got > 0 { return (got, nil) }
        var errnum: Int32 = 0
        let message = gzerror(gz, &errnum)
        if got < 0 { return (0, "gzip: " + (message.map { String(cString: $0) } ?? "gzip error")) }
        // A cut gzip file reads as a clean end with Z_BUF_ERROR pending: say so.
        guard errnum != Z_OK else { return (0, nil) }
        var text = message.map { String(cString: $0) } ?? "error \(errnum)"
        if text.hasPrefix("<fd:"), let colon = text.firstIndex(of: " ") { text = String(text[text.index(after: colon)...]) }
        return (0, "gzip: " + text)
    }
    var got: Int
    repeat { got = read(fd, destination, count) } while got < 0 && errno == EINTR
    if got < 0 { return (0, "read error: \(String(cString: strerror(errno)))") }
    return (got, nil)
}

/// Big-endian and little-endian loads from raw pointers (unaligned).
extension UnsafeRawPointer {
    @inline(__always) func be32(_ at: Int) -> UInt32 { UInt32(bigEndian: loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
    @inline(__always) func le32(_ at: Int) -> UInt32 { UInt32(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
    @inline(__always) func be16(_ at: Int) -> UInt16 { UInt16(bigEndian: loadUnaligned(fromByteOffset: at, as: UInt16.self)) }
    @inline(__always) func le16(_ at: Int) -> UInt16 { UInt16(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt16.self)) }
    @inline(__always) func be64(_ at: Int) -> UInt64 { UInt64(bigEndian: loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    @inline(__always) func le64(_ at: Int) -> UInt64 { UInt64(littleEndian: loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    @inline(__always) func byte(_ at: Int) -> UInt8 { load(fromByteOffset: at, as: UInt8.self) }
}

/// A reusable scratch buffer for text the reader composes (Linux user logging, PacketLogger syslog).
struct TextScratch {
    private var storage: UnsafeMutableRawPointer? = nil
    private var capacity = 0
    private(set) var count = 0

    mutating func reset(reserving n: Int) {
        if n > capacity {
            storage?.deallocate()
            capacity = max(n, 4096)
            storage = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        }
        count = 0
    }

    /// Appends bytes, dropping NULs (call `reset(reserving:)` with enough room first).
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let storage else { return }
        for b in bytes where b != 0 && count < capacity {
            storage.storeBytes(of: b, toByteOffset: count, as: UInt8.self)
            count += 1
        }
    }

    mutating func append(ascii text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: count) }

    func free() { storage?.deallocate() }
}
