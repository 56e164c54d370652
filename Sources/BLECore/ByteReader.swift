/// A bounds-checked cursor over borrowed bytes.
///
/// Every read checks the remaining length first and throws ``DecodeError/truncated(needed:available:offset:)``
/// instead of reading past the end. A child parser gets a ``slice(_:)`` and cannot read past it.
///
/// The reader does not own its bytes: it must not outlive the buffer it was made from
/// (a capture record's bytes live until the reader moves to the next record).
public struct ByteReader {
    @usableFromInline let base: UnsafeRawPointer?
    /// Offset of the next byte to read, from the start of this reader's window.
    @usableFromInline var _offset: Int
    public var offset: Int { _offset }
    /// Number of bytes in this reader's window.
    public let count: Int
    /// Offset of this window inside the buffer it was sliced from (for findings).
    public let origin: Int

    @inlinable
    public init(_ buffer: UnsafeRawBufferPointer, origin: Int = 0) {
        base = buffer.baseAddress
        count = buffer.count
        _offset = 0
        self.origin = origin
    }

    @inlinable public var remaining: Int { count &- offset }
    @inlinable public var isAtEnd: Bool { offset >= count }
    /// Offset of the next byte in the outermost buffer.
    @inlinable public var absoluteOffset: Int { origin &+ offset }

    /// The bytes not yet read, borrowed.
    @inlinable public var remainingBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base.map { $0 + offset }, count: remaining)
    }

    @inlinable
    mutating func checkRemaining(_ n: Int) throws(DecodeError) {
        guard n >= 0, n <= remaining else {
            throw .truncated(needed: n, available: remaining, offset: absoluteOffset)
        }
    }

    @inlinable
    public mutating func readUInt8() throws(DecodeError) -> UInt8 {
        try checkRemaining(1)
        let v = base.unsafelyUnwrapped.load(fromByteOffset: offset, as: UInt8.self)
        _offset &+= 1
        return v
    }

    @inlinable
    public func peekUInt8() throws(DecodeError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated(needed: 1, available: 0, offset: absoluteOffset) }
        return base.unsafelyUnwrapped.load(fromByteOffset: offset, as: UInt8.self)
    }

    @inlinable
    public mutating func readInteger<T: FixedWidthInteger>(_: T.Type = T.self, bigEndian: Bool) throws(DecodeError) -> T {
        let size = MemoryLayout<T>.size
        try checkRemaining(size)
        let raw = base.unsafelyUnwrapped.loadUnaligned(fromByteOffset: offset, as: T.self)
        _offset &+= size
        return bigEndian ? T(bigEndian: raw) : T(littleEndian: raw)
    }

    /// Reads `n` bytes without copying; they stay valid as long as the underlying buffer.
    @inlinable
    public mutating func readBytes(_ n: Int) throws(DecodeError) -> UnsafeRawBufferPointer {
        try checkRemaining(n)
        let slice = UnsafeRawBufferPointer(start: base.map { $0 + offset }, count: n)
        _offset &+= n
        return slice
    }

    /// Reads `n` bytes into an owned array.
    @inlinable
    public mutating func readArray(_ n: Int) throws(DecodeError) -> [UInt8] {
        Array(try readBytes(n))
    }

    /// Reads everything that is left into an owned array.
    @inlinable
    public mutating func readRemaining() -> [UInt8] {
        let bytes = Array(remainingBytes)
        _offset = count
        return bytes
    }

    @inlinable
    public mutating func skip(_ n: Int) throws(DecodeError) {
        try checkRemaining(n)
        _offset &+= n
    }

    /// A child reader over the next `n` bytes; this reader moves past them.
    @inlinable
    public mutating func slice(_ n: Int) throws(DecodeError) -> ByteReader {
        let bytes = try readBytes(n)
        return ByteReader(bytes, origin: absoluteOffset &- n)
    }

    /// Fails with ``DecodeError/invalidSize(expected:got:)`` unless every byte was consumed.
    @inlinable
    public func expectEnd() throws(DecodeError) {
        guard isAtEnd else { throw .invalidSize(expected: offset, got: count) }
    }
}

extension FixedWidthInteger {
    /// Reads `Self` in little-endian order: `UInt16(parsingLittleEndian: &input)`.
    @inlinable
    public init(parsingLittleEndian input: inout ByteReader) throws(DecodeError) {
        self = try input.readInteger(Self.self, bigEndian: false)
    }

    /// Reads `Self` in big-endian (network) order: `UInt32(parsingBigEndian: &input)`.
    @inlinable
    public init(parsingBigEndian input: inout ByteReader) throws(DecodeError) {
        self = try input.readInteger(Self.self, bigEndian: true)
    }
}

extension UInt8 {
    @inlinable
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        self = try input.readUInt8()
    }
}

/// Runs `body` with a reader over `bytes`; the convenience used by `init(bytes:)` initialisers and tests.
@inlinable
public func withByteReader<R>(
    _ bytes: [UInt8], _ body: (inout ByteReader) throws(DecodeError) -> R
) throws(DecodeError) -> R {
    let result: Result<R, DecodeError> = bytes.withUnsafeBytes { buffer in
        var reader = ByteReader(buffer)
        do throws(DecodeError) { return .success(try body(&reader)) } catch { return .failure(error) }
    }
    return try result.get()
}
