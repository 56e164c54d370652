import CZlib

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A forward-only window over a file's (decompressed) bytes, with no per-record allocation.
///
/// Two backings (an `mmap` variant was measured: no faster than `read(2)` into a 1 MiB buffer that
/// stays in cache, and its resident set grows with the kernel's read-ahead):
/// - a reusable buffer refilled by `read(2)` (pipes) or `gzread` (gzip), compacted in place and grown
///   only to the largest record asked for;
/// - bytes in memory (tests, decompressed btsnooz blocks).
///
/// `ensure(n)` guarantees `n` readable bytes at `cursor` or returns false at the end of the data.
final class ByteSource {
    private enum Backing {
        case memory(UnsafeMutableRawPointer)
        case stream
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

    /// Reads a file descriptor (`gzip: true` decompresses transparently; takes ownership of `fd`).
    init(streaming fd: Int32, gzip: Bool, initialCapacity: Int = 1 << 20) {
        backing = .stream
        capacity = initialCapacity
        let p = UnsafeMutableRawPointer.allocate(byteCount: initialCapacity, alignment: 16)
        buffer = p
        base = UnsafeRawPointer(p)
        limit = 0
        if gzip {
            gz = gzdopen(fd, "rb")
            if let gz { _ = gzbuffer(gz, 256 << 10) } else { close(fd); atEOF = true; streamError = "cannot open gzip stream" }
        } else {
            self.fd = fd
        }
    }

    deinit {
        switch backing {
        case let .memory(p): p.deallocate()
        case .stream:
            buffer?.deallocate()
            if let gz { gzclose(gz) }
            if fd >= 0 { close(fd) }
        }
    }

    /// The next unread byte.
    @inline(__always) var cursor: UnsafeRawPointer { base + position }
    /// Bytes available in the window without refilling.
    @inline(__always) var available: Int { limit &- position }
    /// File offset (in the decompressed data) of the cursor.
    @inline(__always) var offset: Int64 { windowOffset &+ Int64(position) }

    /// True when a gzip-mode stream turned out to be plain data passed through (pipes).
    var isPassthrough: Bool { gz.map { gzdirect($0) != 0 } ?? false }

    /// Compressed bytes read so far for gzip, else the cursor's offset (for progress bars).
    var bytesConsumed: Int64 {
        if let gz { return Int64(gzoffset(gz)) }
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
            var got: Int
            if let gz {
                got = Int(gzread(gz, dst + limit, UInt32(min(room, Int(Int32.max)))))
                if got < 0 {
                    var errnum: Int32 = 0
                    let message = gzerror(gz, &errnum).map { String(cString: $0) } ?? "gzip error"
                    streamError = "gzip: \(message)"
                    got = 0
                }
            } else {
                repeat { got = read(fd, dst + limit, room) } while got < 0 && errno == EINTR
                if got < 0 { streamError = "read error: \(String(cString: strerror(errno)))"; got = 0 }
            }
            if got == 0 {
                atEOF = true
                // A cut gzip file reads as a clean end with Z_BUF_ERROR pending: say so.
                if let gz, streamError == nil {
                    var errnum: Int32 = 0
                    let message = gzerror(gz, &errnum)
                    if errnum != Z_OK {
                        var text = message.map { String(cString: $0) } ?? "error \(errnum)"
                        if text.hasPrefix("<fd:"), let colon = text.firstIndex(of: " ") { text = String(text[text.index(after: colon)...]) }
                        streamError = "gzip: " + text
                    }
                }
            } else {
                limit += got
            }
        }
        return limit - position >= n
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
