import BLECore
import BLEProtocols

/// Reassembles a long read (Core Spec Vol 3, Part G, 4.8.3): a Read Response that fills the ATT_MTU, continued by
/// Read Blob Requests at the offset read so far until a response comes back short, or an Error Response (Invalid
/// Offset, Attribute Not Long) says the value ended exactly at a full PDU.
///
/// One per ATT bearer, fed every decoded PDU of the bearer in order: another request (a read, a discovery) ends the
/// long read; writes, queued or not, and an MTU exchange leave it going.
struct LongReadAssembler {
    /// A long read that ended: the whole value, and the frames of its requests and responses in order.
    struct LongRead: Equatable {
        var handle: UInt16
        var value: [UInt8]
        var frames: [Int]
        /// The direction the responses travelled in.
        var direction: Direction
    }

    /// One decoded PDU of the bearer, and the request it answers.
    struct Input {
        var pdu: ATTPDU
        /// The handle of the request a response answers; nil for other PDUs, or when the request is not in the capture.
        var requestHandle: UInt16?
        var requestFrame = 0
        var frame: Int
        var direction: Direction
        /// The bearer's ATT_MTU: a response of ATT_MTU − 1 value bytes is full and may go on.
        var mtu: Int
    }

    enum Output: Equatable {
        /// A long read ended, over more than one response: its whole value.
        case longRead(LongRead)
        /// A Read Blob Response that goes on with no long read held here: a part value on its own.
        case blobPart(handle: UInt16, value: [UInt8])
    }

    /// An attribute value is at most 512 bytes (Core Spec Vol 3, Part F, 3.2.9): a long read going on past 64 KiB
    /// is not accumulated further.
    static let maxValue = 1 << 16

    /// The long read in progress.
    private(set) var current: LongRead?

    /// Bytes held for the value so far.
    var heldBytes: Int { current?.value.count ?? 0 }

    /// Lets the long read in progress go (the analyzer's memory budget ran out).
    mutating func drop() { current = nil }

    mutating func feed(_ input: Input) -> Output? {
        switch input.pdu {
        case .readResponse(let value):
            guard let handle = input.requestHandle else { return nil }
            current =
                value.count >= input.mtu - 1
                ? LongRead(handle: handle, value: value, frames: [input.requestFrame, input.frame], direction: input.direction) : nil
            return nil
        case .readBlobRequest(let handle, let offset):
            guard let read = current, read.handle != handle || Int(offset) != read.value.count else { return nil }
            return finish()
        case .readBlobResponse(let value):
            guard let handle = input.requestHandle else { return nil }
            guard var read = current, read.handle == handle, read.value.count < Self.maxValue else {
                return .blobPart(handle: handle, value: value)
            }
            current = nil  // unique while it grows
            read.value += value
            read.frames += [input.requestFrame, input.frame]
            current = read
            return value.count < input.mtu - 1 ? finish() : nil
        case .errorResponse(let e):
            guard e.requestOpcode == .readBlobRequest, e.error == .invalidOffset || e.error == .attributeNotLong else { return nil }
            return finish()
        case .writeRequest, .prepareWriteRequest, .executeWriteRequest, .exchangeMTURequest:
            return nil
        default:
            guard current != nil, input.pdu.opcode.isRequest else { return nil }
            return finish()
        }
    }

    /// Ends the long read in progress. A lone Read Response is no long read: its value already went out by itself.
    private mutating func finish() -> Output? {
        guard let read = current else { return nil }
        current = nil
        return read.frames.count > 2 ? .longRead(read) : nil
    }
}

/// Queued writes (Core Spec Vol 3, Part F, 3.4.6; Part G, 4.9.4): Prepare Write Requests queue parts of values at
/// offsets, and an Execute Write Request writes them all (flags 0x01) or cancels them (0x00). One per ATT bearer.
struct PreparedWriteAssembler {
    struct Part {
        var handle: UInt16
        var offset: Int
        var value: [UInt8]
        var frame: Int
    }

    /// A part queued at another offset than the end of its value so far.
    struct Gap: Equatable {
        var frame: Int
        var offset: Int
        var expected: Int
    }

    /// One attribute's value as an Execute Write wrote it: its parts applied in order at their offsets (a part past the
    /// end pads with zeros, one before it overwrites).
    struct LongWrite: Equatable {
        var handle: UInt16
        var value: [UInt8]
        /// Frames of its Prepare Write Requests.
        var frames: [Int]
        var gaps: [Gap]
    }

    /// Bound on the parts queued (a server's queue is far smaller; a capture that never executes must not grow it).
    static let maxParts = 4096

    /// Parts queued, in order.
    private(set) var parts: [Part] = []

    /// Bytes held for the parts queued.
    var heldBytes: Int { parts.reduce(0) { $0 + $1.value.count } }

    /// Lets the queued parts go (the analyzer's memory budget ran out).
    mutating func drop() { parts = [] }

    /// The values an Execute Write Request wrote, one per handle in the order the handles were first prepared;
    /// nil for every other PDU.
    mutating func feed(_ pdu: ATTPDU, frame: Int) -> [LongWrite]? {
        switch pdu {
        case .prepareWriteRequest(let handle, let offset, let value):
            if parts.count < Self.maxParts { parts.append(Part(handle: handle, offset: Int(offset), value: value, frame: frame)) }
            return nil
        case .executeWriteRequest(let flags):
            let queued = parts
            parts.removeAll()
            return flags == 0x01 ? Self.assemble(queued) : nil
        default:
            return nil
        }
    }

    static func assemble(_ parts: [Part]) -> [LongWrite] {
        var handles: [UInt16] = []
        for p in parts where !handles.contains(p.handle) { handles.append(p.handle) }
        return handles.map { handle in
            var write = LongWrite(handle: handle, value: [], frames: [], gaps: [])
            for p in parts where p.handle == handle {
                if p.offset != write.value.count { write.gaps.append(Gap(frame: p.frame, offset: p.offset, expected: write.value.count)) }
                if p.offset <= write.value.count {
                    write.value.replaceSubrange(p.offset..<min(write.value.count, p.offset + p.value.count), with: p.value)
                } else {
                    write.value += [UInt8](repeating: 0, count: p.offset - write.value.count) + p.value
                }
                write.frames.append(p.frame)
            }
            return write
        }
    }
}
