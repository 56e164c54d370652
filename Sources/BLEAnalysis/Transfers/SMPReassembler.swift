import BLECore

/// Reassembles MCUmgr SMP messages from the values of one direction of the SMP characteristic: an
/// 8-byte header (Zephyr "SMP protocol specification": op in bits 0–2 of byte 0, bits 5–7 reserved,
/// body length big-endian at bytes 2–3) and its body, over as many values as it takes; one value may
/// also end one message and start the next. The one reassembler of the transfer tracker (framing
/// `smp`) and the OTA tracker (MCUmgr image upload).
public struct SMPReassembler: Sendable {
    /// A message (whole, or the part of one held when the stream was cut).
    public struct Message: Sendable, Equatable {
        public var bytes: [UInt8]
        /// Values it arrived in, and the first one's frame and time.
        public var chunks: Int
        public var firstFrame: Int
        public var firstTime: Timestamp

        /// Its header, once 8 bytes are there.
        public var header: SMPHeader? {
            guard bytes.count >= 8 else { return nil }
            return try? withByteReader(bytes) { (r: inout ByteReader) throws(DecodeError) in try SMPHeader(parsing: &r) }
        }
    }

    /// A value that had to open a message and cannot: op above 3 (write response) or a reserved bit
    /// set. It is dropped.
    public enum Failure: Error, Equatable {
        case notAMessageStart(opByte: UInt8)
    }

    var held: Message?

    public init() {}

    /// The part of a message held when nothing more arrives (a cut stream), if any.
    public var pending: Message? { held.flatMap { $0.bytes.isEmpty ? nil : $0 } }

    /// Forgets what is held (the stream was cut).
    public mutating func reset() { held = nil }

    /// Takes one value and returns the messages it completes, oldest first.
    /// `package`: `value` is the observer's borrowed value as an unsafe pointer (the tracker's hot path); the
    /// messages it returns own their bytes.
    package mutating func feed(_ value: UnsafeRawBufferPointer, frame: Int, time: Timestamp) throws(Failure) -> [Message] {
        if pending == nil {
            if let first = value.first, first & 0x07 > 3 || first & 0xE0 != 0 { throw .notAMessageStart(opByte: first) }
            held = Message(bytes: [], chunks: 0, firstFrame: frame, firstTime: time)
        }
        held!.bytes.append(contentsOf: value)
        held!.chunks += 1
        var done: [Message] = []
        while let h = held, h.bytes.count >= 8 {
            let total = 8 + (Int(h.bytes[2]) << 8 | Int(h.bytes[3]))
            guard h.bytes.count >= total else { break }
            done.append(Message(bytes: Array(h.bytes[0..<total]), chunks: h.chunks, firstFrame: h.firstFrame, firstTime: h.firstTime))
            // Bytes left over belong to a message starting in this value.
            let rest = Array(h.bytes[total...])
            held = Message(bytes: rest, chunks: rest.isEmpty ? 0 : 1, firstFrame: frame, firstTime: time)
        }
        return done
    }
}
