import BLECore

// HCI packet headers (Core Spec 5.4 Vol 4, Part E, 5.4). Headers parse without allocating; the packet
// structs own their payload for convenience and fixtures.

/// HCI command header: opcode(2) parameter total length(1) (Vol 4, Part E, 5.4.1).
public struct HCICommandHeader: Hashable, Sendable {
    public var opcode: HCICommand
    public var parameterLength: UInt8
    @inlinable public init(parsing input: inout ByteReader) throws(DecodeError) {
        opcode = HCICommand(rawValue: try UInt16(parsingLittleEndian: &input))
        parameterLength = try input.readUInt8()
    }
}

/// HCI event header: event code(1) parameter total length(1) (Vol 4, Part E, 5.4.4).
public struct HCIEventHeader: Hashable, Sendable {
    public var code: HCIEventCode
    public var parameterLength: UInt8
    @inlinable public init(parsing input: inout ByteReader) throws(DecodeError) {
        code = HCIEventCode(rawValue: try input.readUInt8())
        parameterLength = try input.readUInt8()
    }
}

/// ACL Packet_Boundary_Flag (Vol 4, Part E, 5.4.2).
public struct ACLPacketBoundary: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x3 }
    /// 00: first non-automatically-flushable packet (host → controller; the LE default).
    public static let firstNonFlushable = ACLPacketBoundary(rawValue: 0)
    /// 01: continuing fragment.
    public static let continuation = ACLPacketBoundary(rawValue: 1)
    /// 10: first automatically flushable packet (what controllers send for LE).
    public static let firstFlushable = ACLPacketBoundary(rawValue: 2)
    /// 11: a complete automatically flushable L2CAP PDU (deprecated for LE).
    public static let complete = ACLPacketBoundary(rawValue: 3)
    /// True for the flags that start an L2CAP PDU (00, 10, 11).
    @inlinable public var isStart: Bool { rawValue != 1 }
    public var description: String {
        switch rawValue {
        case 0: "first (non-flushable)"
        case 1: "continuation"
        case 2: "first (flushable)"
        default: "complete"
        }
    }
}

/// ACL data header: handle(12 bits) PB(2) BC(2), data total length(2) (Vol 4, Part E, 5.4.2).
public struct ACLHeader: Hashable, Sendable {
    public var handle: UInt16
    public var packetBoundary: ACLPacketBoundary
    /// Broadcast flag (00 point-to-point; others BR/EDR only).
    public var broadcast: UInt8
    public var dataLength: UInt16

    public init(handle: UInt16, packetBoundary: ACLPacketBoundary, broadcast: UInt8 = 0, dataLength: UInt16) {
        self.handle = handle & 0x0FFF; self.packetBoundary = packetBoundary; self.broadcast = broadcast & 0x3
        self.dataLength = dataLength
    }
    @inlinable public init(parsing input: inout ByteReader) throws(DecodeError) {
        let word = try UInt16(parsingLittleEndian: &input)
        handle = word & 0x0FFF
        packetBoundary = ACLPacketBoundary(rawValue: UInt8(truncatingIfNeeded: word >> 12) & 0x3)
        broadcast = UInt8(truncatingIfNeeded: word >> 14)
        dataLength = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(littleEndian: handle & 0x0FFF | UInt16(packetBoundary.rawValue) << 12 | UInt16(broadcast & 3) << 14)
        w.write(littleEndian: dataLength)
    }
}

/// An HCI command packet: header and parameters (Vol 4, Part E, 5.4.1).
public struct HCICommandPacket: WireCodable, CustomStringConvertible {
    public var opcode: HCICommand
    public var parameters: [UInt8]

    public init(opcode: HCICommand, parameters: [UInt8] = []) { self.opcode = opcode; self.parameters = parameters }
    /// A packet from typed parameters; `.empty`/`.raw` need the explicit-opcode initialiser.
    public init(_ parameters: HCICommandParameters, opcode: HCICommand? = nil) {
        self.opcode = opcode ?? parameters.opcode ?? .nop
        self.parameters = parameters.bytes
    }
    /// Reads the header and exactly `parameterLength` bytes.
    /// - Throws: ``DecodeError/truncated(needed:available:offset:)`` when fewer bytes are present than declared.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let header = try HCICommandHeader(parsing: &input)
        opcode = header.opcode
        parameters = try input.readArray(Int(header.parameterLength))
    }
    public func encode(into w: inout ByteWriter) {
        w.write(littleEndian: opcode.rawValue); w.write(UInt8(truncatingIfNeeded: parameters.count)); w.write(contentsOf: parameters)
    }
    /// Typed parameters when the table has a decoder for the opcode; `.raw` otherwise.
    /// - Throws: when the parameters do not parse as the opcode requires (short, or bytes left over).
    public func decodeParameters() throws(DecodeError) -> HCICommandParameters {
        guard let decode = HCICommandTable.entries[opcode.rawValue]?.decode else { return .raw(parameters) }
        return try withByteReader(parameters) { (r: inout ByteReader) throws(DecodeError) -> HCICommandParameters in
            let v = try decode(&r)
            try r.expectEnd()
            return v
        }
    }
    /// Typed parameters, or `.raw` when they are unknown or malformed (use ``decodeParameters()`` to see why).
    public var decoded: HCICommandParameters { (try? decodeParameters()) ?? .raw(parameters) }
    /// `LE Set Scan Enable enable=true filterDuplicates=1`.
    public var summary: String {
        let s = decoded.summary
        return opcode.description + (s.isEmpty ? "" : " " + s)
    }
    public var description: String { summary }
}

/// An HCI event packet: header and parameters (Vol 4, Part E, 5.4.4).
public struct HCIEventPacket: WireCodable, CustomStringConvertible {
    public var code: HCIEventCode
    public var parameters: [UInt8]

    public init(code: HCIEventCode, parameters: [UInt8] = []) { self.code = code; self.parameters = parameters }
    public init(_ parameters: HCIEventParameters) { code = parameters.code; self.parameters = parameters.bytes }
    /// Reads the header and exactly `parameterLength` bytes.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let header = try HCIEventHeader(parsing: &input)
        code = header.code
        parameters = try input.readArray(Int(header.parameterLength))
    }
    public func encode(into w: inout ByteWriter) {
        w.write(code.rawValue); w.write(UInt8(truncatingIfNeeded: parameters.count)); w.write(contentsOf: parameters)
    }
    /// The LE Meta subevent code (first parameter byte), for LE Meta events.
    public var subevent: LESubevent? { code == .leMeta ? parameters.first.map(LESubevent.init(rawValue:)) : nil }
    /// The typed parameters; bytes beyond the fixed size the spec gives the event are an error here (see
    /// ``decoding``, which reads past them).
    public func decodeParameters() throws(DecodeError) -> HCIEventParameters {
        try Self.decode(code, parameters)
    }

    static func decode(_ code: HCIEventCode, _ parameters: [UInt8]) throws(DecodeError) -> HCIEventParameters {
        try withByteReader(parameters) { (r: inout ByteReader) throws(DecodeError) -> HCIEventParameters in
            try HCIEventParameters.decode(code: code, parameters: &r)
        }
    }

    /// How the parameters decoded: the typed value, or `.raw`/`.leMeta` with the error when malformed.
    public struct Decoding: Sendable {
        public var parameters: HCIEventParameters
        /// Bytes after the fields of a fixed-size event, left out of the decode (0 when the event has its size).
        public var ignoredBytes = 0
        /// Why the parameters did not decode (they are then `.raw` / `.leMeta`).
        public var error: DecodeError?
    }

    /// The typed parameters, reading an event longer than its fixed (or counted) size by its first bytes: controllers append
    /// bytes (a Command Status of 5 bytes, frame 299 of the ix7 tracker log in the corpus), the Android stack takes
    /// the sizes as minimums (system/bt stack/include/hci_evt_length.h) and tshark decodes the known fields; the
    /// bytes left out are counted in ``Decoding/ignoredBytes`` for the caller to say.
    public var decoding: Decoding {
        do throws(DecodeError) {
            return Decoding(parameters: try decodeParameters())
        } catch {
            if case let .invalidSize(expected, got) = error, got > expected, HCIEventTable.knowsItsLength(code, subevent),
                let v = try? Self.decode(code, Array(parameters.dropLast(got - expected)))
            {
                return Decoding(parameters: v, ignoredBytes: got - expected)
            }
            if let s = subevent { return Decoding(parameters: .leMeta(s, Array(parameters.dropFirst())), error: error) }
            return Decoding(parameters: .raw(code, parameters), error: error)
        }
    }

    /// Typed parameters, or `.raw` when unknown or malformed (``decoding`` says why).
    public var decoded: HCIEventParameters { decoding.parameters }
    public var name: String {
        if let s = subevent { return s.description }
        return code.description
    }
    /// `LE Connection Complete status=Success handle=0x0040 role=central …`.
    public var summary: String {
        let d = decoded
        let s = d.summary
        let n: String
        switch d {
        case .commandComplete: n = "Command Complete"
        case .commandStatus: n = "Command Status"
        default: n = name
        }
        return n + (s.isEmpty ? "" : " " + s)
    }
    public var description: String { summary }
}

/// An ACL data packet: header and data (Vol 4, Part E, 5.4.2).
public struct ACLPacket: WireCodable {
    public var handle: UInt16
    public var packetBoundary: ACLPacketBoundary
    public var broadcast: UInt8
    public var data: [UInt8]
    public init(handle: UInt16, packetBoundary: ACLPacketBoundary = .firstNonFlushable, broadcast: UInt8 = 0, data: [UInt8]) {
        self.handle = handle & 0x0FFF; self.packetBoundary = packetBoundary; self.broadcast = broadcast & 3; self.data = data
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let h = try ACLHeader(parsing: &input)
        handle = h.handle; packetBoundary = h.packetBoundary; broadcast = h.broadcast
        data = try input.readArray(Int(h.dataLength))
    }
    public var header: ACLHeader {
        ACLHeader(handle: handle, packetBoundary: packetBoundary, broadcast: broadcast, dataLength: UInt16(truncatingIfNeeded: data.count))
    }
    public func encode(into w: inout ByteWriter) { header.encode(into: &w); w.write(contentsOf: data) }
}

/// A synchronous (SCO/eSCO) data packet: handle(12) packet status(2) RFU(2), length(1), data (Vol 4, Part E, 5.4.3).
public struct SCOPacket: WireCodable {
    public var handle: UInt16
    /// 0 correctly received, 1 possibly invalid, 2 no data, 3 partially lost.
    public var packetStatus: UInt8
    public var data: [UInt8]
    public init(handle: UInt16, packetStatus: UInt8 = 0, data: [UInt8]) {
        self.handle = handle & 0x0FFF; self.packetStatus = packetStatus & 3; self.data = data
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let word = try UInt16(parsingLittleEndian: &input)
        handle = word & 0x0FFF
        packetStatus = UInt8(truncatingIfNeeded: word >> 12) & 0x3
        data = try input.readArray(Int(try input.readUInt8()))
    }
    public func encode(into w: inout ByteWriter) {
        w.write(littleEndian: handle | UInt16(packetStatus) << 12); w.write(UInt8(truncatingIfNeeded: data.count))
        w.write(contentsOf: data)
    }
}

/// An ISO data packet (Vol 4, Part E, 5.4.5): handle(12) PB(2) TS(1) RFU(1), data load length(14) RFU(2),
/// then for PB 00/10 (first fragment / complete SDU): [timestamp(4) when TS] sequence number(2)
/// SDU length(12) RFU(2) packet status(2), then the SDU fragment.
public struct ISOPacket: WireCodable {
    public var handle: UInt16
    /// 00 first fragment, 01 continuation, 10 complete SDU, 11 last fragment.
    public var packetBoundary: UInt8
    public var timestamp: UInt32?
    /// Present (with `sduLength` and `packetStatus`) only in first fragments and complete SDUs.
    public var sequenceNumber: UInt16?
    public var sduLength: UInt16?
    public var packetStatus: UInt8?
    public var data: [UInt8]
    public init(
        handle: UInt16, packetBoundary: UInt8, timestamp: UInt32? = nil, sequenceNumber: UInt16? = nil,
        sduLength: UInt16? = nil, packetStatus: UInt8? = nil, data: [UInt8]
    ) {
        self.handle = handle & 0x0FFF; self.packetBoundary = packetBoundary & 3; self.timestamp = timestamp
        self.sequenceNumber = sequenceNumber; self.sduLength = sduLength; self.packetStatus = packetStatus; self.data = data
    }
    var hasSDUHeader: Bool { packetBoundary == 0 || packetBoundary == 2 }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let word = try UInt16(parsingLittleEndian: &input)
        handle = word & 0x0FFF
        packetBoundary = UInt8(truncatingIfNeeded: word >> 12) & 0x3
        let ts = word & 0x4000 != 0
        let length = Int(try UInt16(parsingLittleEndian: &input) & 0x3FFF)
        var body = try input.slice(length)
        timestamp = ts ? try UInt32(parsingLittleEndian: &body) : nil
        if packetBoundary == 0 || packetBoundary == 2 {
            sequenceNumber = try UInt16(parsingLittleEndian: &body)
            let w = try UInt16(parsingLittleEndian: &body)
            sduLength = w & 0x0FFF
            packetStatus = UInt8(truncatingIfNeeded: w >> 14)
        } else {
            sequenceNumber = nil; sduLength = nil; packetStatus = nil
        }
        data = body.readRemaining()
    }
    public func encode(into w: inout ByteWriter) {
        w.write(littleEndian: handle | UInt16(packetBoundary) << 12 | (timestamp != nil ? 0x4000 : 0))
        var n = data.count + (timestamp != nil ? 4 : 0)
        if hasSDUHeader { n += 4 }
        w.write(littleEndian: UInt16(truncatingIfNeeded: n) & 0x3FFF)
        if let timestamp { w.write(littleEndian: timestamp) }
        if hasSDUHeader {
            w.write(littleEndian: sequenceNumber ?? 0)
            w.write(littleEndian: (sduLength ?? 0) & 0x0FFF | UInt16(packetStatus ?? 0) << 14)
        }
        w.write(contentsOf: data)
    }
}

/// Any HCI packet, decoded from a capture record's kind and bytes.
public enum HCIPacket: Hashable, Sendable {
    case command(HCICommandPacket)
    case event(HCIEventPacket)
    case acl(ACLPacket)
    case sco(SCOPacket)
    case iso(ISOPacket)

    /// Decodes one record's bytes, requiring the header's length to match the bytes present.
    ///
    /// - Throws: ``DecodeError/truncated(needed:available:offset:)`` when fewer bytes are present than the
    ///   header declares, ``DecodeError/invalidSize(expected:got:)`` when more are, ``DecodeError/unsupported(_:)``
    ///   for a non-HCI kind.
    public init(kind: RecordKind, bytes: UnsafeRawBufferPointer) throws(DecodeError) {
        var r = ByteReader(bytes)
        switch kind {
        case .command: self = .command(try HCICommandPacket(parsing: &r))
        case .event: self = .event(try HCIEventPacket(parsing: &r))
        case .acl: self = .acl(try ACLPacket(parsing: &r))
        case .sco: self = .sco(try SCOPacket(parsing: &r))
        case .iso: self = .iso(try ISOPacket(parsing: &r))
        default: throw .unsupported("record kind \(kind) is not an HCI packet")
        }
        guard r.isAtEnd else { throw .invalidSize(expected: r.offset, got: r.count) }
    }

    public init(kind: RecordKind, bytes: [UInt8]) throws(DecodeError) {
        let result: Result<HCIPacket, DecodeError> = bytes.withUnsafeBytes { buf in
            do throws(DecodeError) { return .success(try HCIPacket(kind: kind, bytes: buf)) } catch { return .failure(error) }
        }
        self = try result.get()
    }

    public var summary: String {
        switch self {
        case let .command(c): c.summary
        case let .event(e): e.summary
        case let .acl(a): "ACL handle=\(hex(a.handle)) pb=\(a.packetBoundary) length=\(a.data.count)"
        case let .sco(s): "SCO handle=\(hex(s.handle)) length=\(s.data.count)"
        case let .iso(i): "ISO handle=\(hex(i.handle)) pb=\(i.packetBoundary) length=\(i.data.count)"
        }
    }
}

extension FindingKind {
    /// An HCI packet's length field disagrees with the bytes present.
    public static func hciLengthMismatch(kind: RecordKind, declared: Int, present: Int) -> FindingKind {
        FindingKind(
            .hciLengthMismatch,
            message: "HCI \(kind) packet declares \(declared) bytes but the record holds \(present)")
    }
    /// An HCI packet could not be read (short header or payload).
    public static func hciLengthMismatch(kind: RecordKind, error: DecodeError) -> FindingKind {
        FindingKind(.hciLengthMismatch, message: "HCI \(kind) packet: \(error)")
    }
    /// The capturer kept fewer bytes than were on the wire.
    public static func hciTruncatedRecord(kind: RecordKind, included: Int, original: Int) -> FindingKind {
        FindingKind(
            .hciTruncatedRecord,
            message: "HCI \(kind) record cut by the capturer: \(included) of \(original) bytes kept")
    }
}
