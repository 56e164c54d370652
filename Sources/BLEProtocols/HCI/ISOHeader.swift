import BLECore

/// The PB_Flag of an HCI ISO data packet (Core Spec Vol 4, Part E, 5.4.5).
public struct ISOPacketBoundary: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue & 3 }
    /// 00: the first fragment of a fragmented SDU (carries the SDU header).
    public static let first = ISOPacketBoundary(rawValue: 0)
    /// 01: a continuation fragment.
    public static let continuation = ISOPacketBoundary(rawValue: 1)
    /// 10: a complete SDU (carries the SDU header).
    public static let complete = ISOPacketBoundary(rawValue: 2)
    /// 11: the last fragment of a fragmented SDU.
    public static let last = ISOPacketBoundary(rawValue: 3)
    /// First fragments and complete SDUs carry the ISO_SDU header (sequence number, SDU length, status).
    @inlinable public var startsSDU: Bool { rawValue & 1 == 0 }
    /// Complete SDUs and last fragments end one.
    @inlinable public var endsSDU: Bool { rawValue & 2 != 0 }
    public var description: String {
        switch rawValue {
        case 0: "first"
        case 1: "continuation"
        case 2: "complete"
        default: "last"
        }
    }
}

/// The Packet_Status_Flag of a received ISO SDU (Core Spec Vol 4, Part E, 5.4.5): how the controller judged it.
public struct ISOPacketStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue & 3 }
    /// 00: valid data, every PDU of the SDU received.
    public static let valid = ISOPacketStatus(rawValue: 0)
    /// 01: possibly invalid data: the contents may hold errors, or part of the SDU is missing.
    public static let possiblyInvalid = ISOPacketStatus(rawValue: 1)
    /// 10: part(s) of the data lost: no data in the SDU (its length 0) or fragments of it missing.
    public static let lost = ISOPacketStatus(rawValue: 2)
    public var description: String {
        switch rawValue {
        case 0: "valid"
        case 1: "possibly-invalid"
        case 2: "lost"
        default: "ISOPacketStatus(3)"
        }
    }
}

/// The header of an HCI ISO data packet, read in place (no copy of the data), as the per-record path needs it
/// (Core Spec Vol 4, Part E, 5.4.5):
///
/// ```
/// handle(12) PB(2) TS(1) RFU(1) | ISO_Data_Load_Length(14) RFU(2) | [Time_Stamp(32)]      ← TS = 1
///   | [Packet_Sequence_Number(16) ISO_SDU_Length(12) RFU(2) Packet_Status_Flag(2)]     ← PB 00 or 10
///   | ISO_SDU_Fragment
/// ```
/// Host → controller packets carry no meaningful status (0). The time stamp is the controller's clock in µs, for a
/// received SDU its synchronization reference point.
///
/// - Throws: ``DecodeError/truncated(needed:available:offset:)`` when the record is shorter than the header the flags
///   announce, or than ISO_Data_Load_Length (the load is checked against the bytes present, never trusted).
public struct ISOHeader: Hashable, Sendable {
    public var handle: UInt16
    public var boundary: ISOPacketBoundary
    /// ISO_Data_Load_Length: the bytes after the 4-byte header (time stamp and SDU header included).
    public var loadLength: Int
    public var timestamp: UInt32?
    /// Present with ``sduLength`` and ``status`` in first fragments and complete SDUs.
    public var sequenceNumber: UInt16?
    public var sduLength: UInt16?
    public var status: ISOPacketStatus?
    /// Where the SDU fragment starts in the packet (4, 8, 12 or 16), and its length.
    public var fragmentOffset: Int
    public var fragmentLength: Int

    public init(
        handle: UInt16, boundary: ISOPacketBoundary, timestamp: UInt32? = nil, sequenceNumber: UInt16? = nil,
        sduLength: UInt16? = nil, status: ISOPacketStatus? = nil, fragmentLength: Int
    ) {
        self.handle = handle & 0x0FFF
        self.boundary = boundary
        self.timestamp = timestamp
        self.sequenceNumber = boundary.startsSDU ? sequenceNumber ?? 0 : nil
        self.sduLength = boundary.startsSDU ? sduLength ?? 0 : nil
        self.status = boundary.startsSDU ? status ?? .valid : nil
        fragmentOffset = 4 + (timestamp != nil ? 4 : 0) + (boundary.startsSDU ? 4 : 0)
        self.fragmentLength = fragmentLength
        loadLength = fragmentOffset - 4 + fragmentLength
    }

    @inlinable public init(parsing input: inout ByteReader) throws(DecodeError) {
        let word = try UInt16(parsingLittleEndian: &input)
        handle = word & 0x0FFF
        boundary = ISOPacketBoundary(rawValue: UInt8(truncatingIfNeeded: word >> 12))
        loadLength = Int(try UInt16(parsingLittleEndian: &input) & 0x3FFF)
        guard input.remaining >= loadLength else {
            throw .truncated(needed: loadLength, available: input.remaining, offset: input.offset)
        }
        var header = 0
        if word & 0x4000 != 0 {
            timestamp = try UInt32(parsingLittleEndian: &input)
            header += 4
        } else {
            timestamp = nil
        }
        if boundary.startsSDU {
            sequenceNumber = try UInt16(parsingLittleEndian: &input)
            let info = try UInt16(parsingLittleEndian: &input)
            sduLength = info & 0x0FFF
            status = ISOPacketStatus(rawValue: UInt8(truncatingIfNeeded: info >> 14))
            header += 4
        } else {
            sequenceNumber = nil
            sduLength = nil
            status = nil
        }
        guard loadLength >= header else { throw .invalidSize(expected: header, got: loadLength) }
        fragmentOffset = 4 + header
        fragmentLength = loadLength - header
    }

    /// Writes the header (not the fragment), ``loadLength`` from ``fragmentLength``.
    public func encode(into w: inout ByteWriter) {
        let word = handle & 0x0FFF | UInt16(boundary.rawValue) << 12 | (timestamp != nil ? 0x4000 : 0)
        w.write(littleEndian: word)
        w.write(littleEndian: UInt16(truncatingIfNeeded: fragmentOffset - 4 + fragmentLength) & 0x3FFF)
        if let timestamp { w.write(littleEndian: timestamp) }
        if boundary.startsSDU {
            w.write(littleEndian: sequenceNumber ?? 0)
            w.write(littleEndian: (sduLength ?? 0) & 0x0FFF | UInt16((status ?? .valid).rawValue) << 14)
        }
    }

    /// A whole packet: this header and `fragment`.
    public func packet(_ fragment: [UInt8]) -> [UInt8] {
        var h = self
        h.fragmentLength = fragment.count
        var w = ByteWriter()
        h.encode(into: &w)
        w.write(contentsOf: fragment)
        return w.bytes
    }

    /// `handle=0x0060 pb=complete seq=12 sdu=40 status=valid ts=711410580`.
    public var summary: String {
        var s = "handle=\(hex(handle)) pb=\(boundary)"
        if let sequenceNumber { s += " seq=\(sequenceNumber)" }
        if let sduLength { s += " sdu=\(sduLength)" }
        if let status { s += " status=\(status)" }
        if let timestamp { s += " ts=\(timestamp)" }
        return s + " length=\(fragmentLength)"
    }
}
