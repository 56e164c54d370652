import BLECore
import BLEProtocols

/// One HCI ISO data packet's fragment of an SDU, its header read (``ISOHeader``), its bytes borrowed from the record.
package struct ISOFragment {
    package var header: ISOHeader
    /// The fragment's bytes (``ISOHeader/fragmentLength`` of them), borrowed from the record; empty when the reassembler
    /// keeps no bytes.
    package var payload: UnsafeRawBufferPointer
    package var frame: Int
    /// When the packet crossed HCI (the record's time).
    package var timestamp: Timestamp

    package init(header: ISOHeader, payload: UnsafeRawBufferPointer, frame: Int, timestamp: Timestamp) {
        self.header = header
        self.payload = payload
        self.frame = frame
        self.timestamp = timestamp
    }
}

/// A whole ISO SDU: what its first packet said of it and where it began and ended.
package struct ISOSDU {
    package var sequenceNumber: UInt16
    /// The controller's time stamp (µs), when the packet carried one.
    package var controllerTimestamp: UInt32?
    package var status: ISOPacketStatus
    /// ISO_SDU_Length as announced; ``bytes`` holds what arrived (the same for a whole SDU).
    package var length: Int
    package var received: Int
    package var firstFrame: Int
    package var lastFrame: Int
    /// The HCI time of the first packet.
    package var timestamp: Timestamp
    package var fragments: Int
    /// The SDU's bytes, when the reassembler keeps them (a copy: tests and extraction, not the per-record path).
    package var bytes: [UInt8]?
}

extension FindingKind {
    static func isoUnexpectedContinuation(_ boundary: ISOPacketBoundary, bytes: Int) -> FindingKind {
        .init(
            .isoUnexpectedContinuation,
            message: "ISO \(boundary) fragment (\(bytes) bytes) without a first fragment: dropped")
    }
    static func isoIncompleteSDU(sequence: UInt16, have: Int, expected: Int, since frame: Int) -> FindingKind {
        .init(
            .isoIncompleteSDU,
            message: "ISO SDU \(sequence) started at frame \(frame) had \(have) of \(expected) bytes when a new SDU began: discarded")
    }
    static func isoSDUTooLong(sequence: UInt16, have: Int, expected: Int) -> FindingKind {
        .init(
            .isoSDUTooLong,
            message: "ISO SDU \(sequence) carries \(have) bytes, more than its ISO_SDU_Length of \(expected): the extra ignored")
    }
    static func isoSDUShort(sequence: UInt16, have: Int, expected: Int) -> FindingKind {
        .init(
            .isoSDUShort,
            message: "ISO SDU \(sequence) ended with \(have) of its \(expected) announced bytes")
    }
    static func isoCutAtEnd(sequence: UInt16, have: Int, expected: Int, since frame: Int) -> FindingKind {
        .init(
            .isoCutByEnd,
            message: "ISO SDU \(sequence) started at frame \(frame) is cut by the end of the capture (\(have) of \(expected) bytes)")
    }
}

/// Reassembles ISO SDUs from the HCI ISO data packets of one (handle, direction) stream.
///
/// Core Spec Vol 4, Part E, 5.4.5: an SDU travels whole (PB 10) or as a first fragment (PB 00, carrying the SDU header:
/// sequence number, ISO_SDU_Length, packet status), continuations (01) and a last fragment (11). Fragment sizes never
/// change the result. The health tracker keeps no bytes (nothing copied per packet); `keepsBytes` hands out each SDU's.
///
/// Failures become findings and the stream goes on: a continuation or last fragment without a first
/// (`.isoUnexpectedContinuation`), a new SDU before the previous one ended (`.isoIncompleteSDU`, the partial one
/// discarded), more bytes than ISO_SDU_Length (`.isoSDUTooLong`), an SDU that ends short of it (`.isoSDUShort`: the SDU
/// is still handed out, with its ``ISOSDU/received`` count, since a controller may shorten a possibly-invalid SDU), and
/// an SDU cut by the end of the capture (``finish(findings:frame:)``).
package struct ISOReassembler {
    /// Keep the SDUs' bytes (tests, extraction); the health tracker only counts and keeps none.
    package let keepsBytes: Bool
    private var buffer: [UInt8] = []
    private var partial: ISOSDU?

    package init(keepsBytes: Bool = false) { self.keepsBytes = keepsBytes }

    package var inProgress: Bool { partial != nil }

    /// Feeds one packet; returns the SDU it completed, if any.
    package mutating func feed(_ fragment: ISOFragment, findings: inout [Finding]) -> ISOSDU? {
        let h = fragment.header
        if h.boundary.startsSDU {
            if let p = partial {
                findings.append(
                    Finding(
                        .warning, .isoIncompleteSDU(sequence: p.sequenceNumber, have: p.received, expected: p.length, since: p.firstFrame),
                        frame: fragment.frame))
                partial = nil
            }
            var sdu = ISOSDU(
                sequenceNumber: h.sequenceNumber ?? 0, controllerTimestamp: h.timestamp, status: h.status ?? .valid,
                length: Int(h.sduLength ?? 0), received: h.fragmentLength, firstFrame: fragment.frame,
                lastFrame: fragment.frame, timestamp: fragment.timestamp, fragments: 1, bytes: nil)
            if h.boundary == .complete {
                if keepsBytes { sdu.bytes = Array(fragment.payload) }
                return checked(sdu, findings: &findings, frame: fragment.frame)
            }
            if keepsBytes {
                buffer.removeAll(keepingCapacity: true)
                buffer.append(contentsOf: fragment.payload)
            }
            partial = sdu
            return nil
        }
        guard var sdu = partial else {
            findings.append(Finding(.warning, .isoUnexpectedContinuation(h.boundary, bytes: h.fragmentLength), frame: fragment.frame))
            return nil
        }
        sdu.received += h.fragmentLength
        sdu.fragments += 1
        sdu.lastFrame = fragment.frame
        if keepsBytes { buffer.append(contentsOf: fragment.payload) }
        guard h.boundary == .last else {
            partial = sdu
            return nil
        }
        partial = nil
        if keepsBytes { sdu.bytes = buffer }
        return checked(sdu, findings: &findings, frame: fragment.frame)
    }

    /// An ended SDU against its announced length.
    private func checked(_ sdu: ISOSDU, findings: inout [Finding], frame: Int) -> ISOSDU {
        var sdu = sdu
        if sdu.received > sdu.length {
            findings.append(
                Finding(.warning, .isoSDUTooLong(sequence: sdu.sequenceNumber, have: sdu.received, expected: sdu.length), frame: frame))
            if let b = sdu.bytes { sdu.bytes = Array(b.prefix(sdu.length)) }
            sdu.received = sdu.length
        } else if sdu.received < sdu.length {
            findings.append(
                Finding(.info, .isoSDUShort(sequence: sdu.sequenceNumber, have: sdu.received, expected: sdu.length), frame: frame))
        }
        return sdu
    }

    /// The capture ended: an SDU still in fragments is cut.
    package mutating func finish(findings: inout [Finding], frame: Int) {
        guard let p = partial else { return }
        findings.append(
            Finding(
                .info, .isoCutAtEnd(sequence: p.sequenceNumber, have: p.received, expected: p.length, since: p.firstFrame), frame: frame))
        partial = nil
    }
}
