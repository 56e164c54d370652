import BLECore

/// Where an L2CAP fragment stream is: one per (connection handle, direction).
public struct ACLStreamKey: Hashable, Sendable {
    public var handle: UInt16
    public var direction: Direction
    public init(_ handle: UInt16, _ direction: Direction) {
        self.handle = handle
        self.direction = direction
    }
}

/// One ACL (or LL data) fragment of an L2CAP PDU.
///
/// `package`, not `public`, like ``L2CAPPDU`` and ``L2CAPReassembler``: the payload is borrowed from the capture record
/// through an unsafe pointer, which the per-record hot path keeps to itself (no copy per fragment). Outside the package
/// the reassembled values come out as `RawSpan` (``AttributeValueObserver``) or owned bytes.
package struct L2CAPFragment {
    /// True for a start fragment (HCI PB 00/10 or 11 "complete"; LL LLID 10), false for a continuation (PB 01; LLID 01).
    package var isStart: Bool
    package var payload: UnsafeRawBufferPointer
    package var frame: Int
    package var timestamp: Timestamp
    /// The capturer cut this fragment (incl_len < orig_len): its bytes are not all there.
    package var isCut: Bool
    /// The bytes the fragment carried before the capturer cut it (the ACL header's Data_Total_Length, which the
    /// kept bytes still hold); `payload.count` for a whole fragment. It tells when a cut PDU would have ended.
    package var carried: Int

    package init(
        isStart: Bool, payload: UnsafeRawBufferPointer, frame: Int, timestamp: Timestamp, isCut: Bool = false,
        carried: Int? = nil
    ) {
        self.isStart = isStart
        self.payload = payload
        self.frame = frame
        self.timestamp = timestamp
        self.isCut = isCut
        self.carried = max(carried ?? payload.count, payload.count)
    }
}

/// A whole L2CAP PDU (basic header included), borrowed for the duration of the callback (package only, as
/// ``L2CAPFragment``: it points into the reassembler's buffer or the record).
package struct L2CAPPDU {
    package var bytes: UnsafeRawBufferPointer
    /// Frame of the first and of the last fragment (the PDU "completes" at `lastFrame`, as Wireshark reports it).
    package var firstFrame: Int
    package var lastFrame: Int
    package var firstTimestamp: Timestamp
    package var fragments: Int
    package var channel: UInt16 { UInt16(bytes[2]) | UInt16(bytes[3]) << 8 }
    /// The information payload after the 4-byte basic header.
    package var payload: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[4...]) }
}

extension FindingKind {
    static func unexpectedContinuation(_ n: Int) -> FindingKind {
        .init(.l2capUnexpectedContinuation, message: "L2CAP continuation fragment (\(n) bytes) without a start fragment: dropped")
    }
    static func previousIncomplete(have: Int, expected: Int, since frame: Int) -> FindingKind {
        .init(
            .l2capIncompleteSDU,
            message: "L2CAP PDU started at frame \(frame) had \(have) of \(expected) bytes when a new start fragment arrived: discarded")
    }
    static func frameTooLong(extra: Int, expected: Int) -> FindingKind {
        .init(
            .l2capFrameTooLong,
            message: "L2CAP fragment carries \(extra) bytes more than the \(expected)-byte PDU: extra bytes ignored")
    }
    static func cutAtEnd(have: Int, expected: Int, since frame: Int, by end: L2CAPReassembler.End) -> FindingKind {
        let cause =
            switch end {
            case .captureEnded: "the end of the capture"
            case .linkEnded(let at): "the link's end at frame \(at)"
            }
        // A start shorter than the basic header never said how long its PDU is (Core Spec Vol 3, Part A, 3.1).
        let size = expected > 0 ? "\(have) of \(expected) bytes" : "\(have) of the basic header's 4 bytes: its length never read"
        return .init(.l2capCutByEnd, message: "L2CAP PDU started at frame \(frame) is cut by \(cause) (\(size))")
    }
    static func cutByCapturer(have: Int) -> FindingKind {
        .init(.l2capCutByCapturer, message: "L2CAP PDU cut by the capturer (\(have) bytes kept): not decoded")
    }
}

/// Reassembles L2CAP PDUs from ACL fragments of one (handle, direction) stream.
///
/// Core Spec Vol 3, Part A, 7.2: the first fragment carries the basic header whose length field
/// sizes the PDU; continuation fragments follow until it is complete. Fragment sizes never change
/// the result. A PDU that fits in one fragment is handed out without copying.
///
/// Failure cases become findings: a continuation without a start (`.unexpectedContinuation`), a new
/// start before the previous PDU completed, more bytes than the length field announced
/// (`.frameTooLong`), and a PDU cut by the end of the capture or of its link (``finish(findings:frame:end:)``).
package struct L2CAPReassembler {
    private var buffer: [UInt8] = []
    private var expected = 0  // 4 + L2CAP length, once known
    private var firstFrame = 0
    /// The frame of the fragment that completed the PDU waiting for ``deliverReassembled(_:)``.
    private var lastFrame = 0
    private var firstTimestamp = Timestamp(microseconds: 0)
    private var fragments = 0
    /// Bytes the fragments carried on the link (``L2CAPFragment/carried``): what completes a PDU, so that one whose
    /// fragments the capturer cut ends where it would have, counted as cut instead of waiting for bytes that never come.
    private var carried = 0
    private var cut = false
    /// The buffer's first bytes that follow one another on the link: up to and including the first fragment the
    /// capturer cut (what a PDU cut in several fragments still tells, ``Step/cutReassembled``).
    private var contiguous = 0
    package private(set) var inProgress = false

    package init() {}

    /// Feeds one fragment; calls `onPDU` (synchronously) for each PDU it completes.
    package mutating func feed(_ fragment: L2CAPFragment, findings: inout [Finding], onPDU: (L2CAPPDU) -> Void) {
        switch feed(fragment, findings: &findings) {
        case .pending, .cut: break
        case .whole(let pdu): onPDU(pdu)
        case .reassembled: deliverReassembled(onPDU)
        case .cutReassembled: deliverCut { _ in }
        }
    }

    /// What one fragment completed.
    package enum Step {
        /// No PDU completed (more fragments are expected, or the fragment was dropped with a finding).
        case pending
        /// A whole PDU in this one fragment, borrowed from the fragment's bytes (no copy).
        case whole(L2CAPPDU)
        /// A PDU completed from several fragments: hand it out with ``deliverReassembled(_:)`` before the next call.
        case reassembled
        /// A PDU in one fragment the capturer cut (whole on the link, counted with a finding, not decoded): the bytes
        /// kept, its header and the first octets of its payload, borrowed from the fragment. What they name (a
        /// notification and its handle) still counts (``ConnectionMachine/noteCutPDU(_:direction:timestamp:)``).
        case cut(L2CAPPDU)
        /// A PDU in several fragments the capturer cut (whole on the link, counted with a finding, not decoded): hand
        /// out what its first fragments kept with ``deliverCut(_:)`` before the next call.
        case cutReassembled
    }

    /// Feeds one fragment and says what it completed. The analyzer's per-fragment path: a PDU in one fragment comes back
    /// as a value, with no closure to call (the closure's captures were reference-counted per PDU, see
    /// docs/performance.md#l2cap-reassembler); one reassembled from several waits in the buffer for
    /// ``deliverReassembled(_:)``.
    package mutating func feed(_ fragment: L2CAPFragment, findings: inout [Finding]) -> Step {
        let payload = fragment.payload
        if fragment.isStart {
            if inProgress {
                findings.append(
                    Finding(.warning, .previousIncomplete(have: buffer.count, expected: expected, since: firstFrame), frame: fragment.frame)
                )
                reset()
            }
            // Fast path: a whole PDU in one fragment needs no copy.
            if payload.count >= 4 {
                let length = Int(payload[0]) | Int(payload[1]) << 8
                let total = length + 4
                if payload.count >= total && !fragment.isCut {
                    if payload.count > total {
                        findings.append(
                            Finding(.warning, .frameTooLong(extra: payload.count - total, expected: total), frame: fragment.frame))
                    }
                    return .whole(
                        L2CAPPDU(
                            bytes: UnsafeRawBufferPointer(rebasing: payload[0..<total]), firstFrame: fragment.frame,
                            lastFrame: fragment.frame, firstTimestamp: fragment.timestamp, fragments: 1))
                }
                // Cut by the capturer but whole on the link (Android's filtered snoop log, btsnooz): counted, not decoded.
                if fragment.isCut && fragment.carried >= total {
                    findings.append(Finding(.info, .cutByCapturer(have: payload.count), frame: fragment.frame))
                    return .cut(
                        L2CAPPDU(
                            bytes: payload, firstFrame: fragment.frame, lastFrame: fragment.frame, firstTimestamp: fragment.timestamp,
                            fragments: 1))
                }
                expected = total
            } else {
                expected = 0  // header itself split across fragments: learn the length later
            }
            inProgress = true
            firstFrame = fragment.frame
            firstTimestamp = fragment.timestamp
            fragments = 1
            carried = fragment.carried
            cut = fragment.isCut
            buffer.removeAll(keepingCapacity: true)
            buffer.append(contentsOf: payload)
            contiguous = buffer.count
        } else {
            guard inProgress else {
                findings.append(Finding(.warning, .unexpectedContinuation(payload.count), frame: fragment.frame))
                return .pending
            }
            fragments += 1
            carried += fragment.carried
            // Bytes after a cut fragment's do not follow them on the link.
            if !cut { contiguous += payload.count }
            cut = cut || fragment.isCut
            buffer.append(contentsOf: payload)
        }
        if expected == 0, buffer.count >= 4 {
            expected = (Int(buffer[0]) | Int(buffer[1]) << 8) + 4
        }
        // Whole fragments carried what they hold (`carried == buffer.count`); cut ones carried more.
        guard expected > 0, carried >= expected else { return .pending }
        if carried > expected {
            findings.append(Finding(.warning, .frameTooLong(extra: carried - expected, expected: expected), frame: fragment.frame))
        }
        if cut {
            findings.append(Finding(.info, .cutByCapturer(have: buffer.count), frame: fragment.frame))
            // Its basic header kept: what the kept bytes name (an ATT response's opcode) still counts.
            guard contiguous >= 4 else {
                reset()
                return .pending
            }
            lastFrame = fragment.frame
            return .cutReassembled
        }
        lastFrame = fragment.frame
        return .reassembled
    }

    /// Hands the PDU that ``feed(_:findings:)`` reported `.reassembled` to `body` (borrowed from the buffer for the
    /// call), then starts over.
    package mutating func deliverReassembled(_ body: (L2CAPPDU) -> Void) { deliver(first: expected, body) }

    /// Hands the bytes kept of the PDU that ``feed(_:findings:)`` reported `.cutReassembled` (its first bytes, up to and
    /// including the first cut fragment's) to `body`, then starts over.
    package mutating func deliverCut(_ body: (L2CAPPDU) -> Void) { deliver(first: min(contiguous, buffer.count), body) }

    /// The buffer's first `count` bytes as the PDU of the fragments fed, to `body`; then starts over.
    @inline(__always)
    private mutating func deliver(first count: Int, _ body: (L2CAPPDU) -> Void) {
        let (first, last, time, fragmentCount) = (firstFrame, lastFrame, firstTimestamp, fragments)
        buffer.withUnsafeBytes { raw in
            body(
                L2CAPPDU(
                    bytes: UnsafeRawBufferPointer(rebasing: raw[0..<count]), firstFrame: first, lastFrame: last,
                    firstTimestamp: time, fragments: fragmentCount))
        }
        reset()
    }

    /// Bytes of memory held for the PDU in progress (the buffer's capacity: growth doubles it).
    package var bufferedBytes: Int { buffer.capacity }

    /// Drops the PDU in progress and its buffer (the analyzer's memory budget ran out): reported by the caller.
    package mutating func abandon() {
        reset()
        buffer = []
    }

    /// At the end of the capture (or a disconnection): reports a PDU still in progress.
    /// What ended a stream with a PDU still in progress.
    package enum End: Equatable {
        case captureEnded
        /// The link ended (a disconnection, an air link's inferred end) at that frame.
        case linkEnded(frame: Int)
    }

    /// The stream ended (`end`): a PDU still in progress is said cut, at `frame` (or where it started).
    package mutating func finish(findings: inout [Finding], frame: Int?, end: End = .captureEnded) {
        if inProgress {
            findings.append(
                Finding(
                    .warning, .cutAtEnd(have: buffer.count, expected: expected, since: firstFrame, by: end),
                    frame: frame ?? firstFrame))
        }
        reset()
    }

    private mutating func reset() {
        inProgress = false
        expected = 0
        fragments = 0
        carried = 0
        cut = false
        contiguous = 0
        buffer.removeAll(keepingCapacity: buffer.capacity <= 4096)
    }
}
