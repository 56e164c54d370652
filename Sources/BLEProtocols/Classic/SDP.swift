import BLECore

/// An SDP PDU ID (Core Spec Vol 3, Part B, 4.2).
public struct SDPPDUID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
    public static let errorResponse = SDPPDUID(0x01)
    public static let serviceSearchRequest = SDPPDUID(0x02)
    public static let serviceSearchResponse = SDPPDUID(0x03)
    public static let serviceAttributeRequest = SDPPDUID(0x04)
    public static let serviceAttributeResponse = SDPPDUID(0x05)
    public static let serviceSearchAttributeRequest = SDPPDUID(0x06)
    public static let serviceSearchAttributeResponse = SDPPDUID(0x07)
    public var name: String? { SDPTable.names[rawValue] }
    public var description: String { name ?? "SDPPDUID(\(hex(rawValue)))" }
    /// A request's response ID (requests are even, their responses the next odd ID).
    public var isRequest: Bool { rawValue == 0x02 || rawValue == 0x04 || rawValue == 0x06 }
}

/// An SDP error code (Vol 3, Part B, 4.4.1).
public struct SDPErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    static let names: [UInt16: String] = [
        0x0001: "Invalid/unsupported SDP version", 0x0002: "Invalid Service Record Handle", 0x0003: "Invalid request syntax",
        0x0004: "Invalid PDU Size", 0x0005: "Invalid Continuation State", 0x0006: "Insufficient Resources to satisfy Request",
    ]
    public var description: String {
        Self.names[rawValue].map { "\($0) (\(hex(rawValue, width: 4)))" } ?? "SDPErrorCode(\(hex(rawValue, width: 4)))"
    }
}

/// An SDP data element (Vol 3, Part B, 3): a header byte (type in bits 3–7, size index in 0–2), an optional length, the
/// value. Sequences and alternatives hold their elements.
///
/// ```
/// header: TTTTT SSS   size index 0–4: 1, 2, 4, 8, 16 bytes (nil: 0); 5, 6, 7: a u8, u16, u32 length follows
/// ```
public indirect enum SDPElement: WireCodable, CustomStringConvertible {
    case null
    case uint(UInt64, width: Int)
    case int(Int64, width: Int)
    case uuid(BluetoothUUID)
    case text([UInt8])
    case bool(Bool)
    case sequence([SDPElement])
    case alternative([SDPElement])
    case url([UInt8])
    /// A 128-bit integer (size index 4), or a type this decoder does not know: its bytes.
    case other(type: UInt8, [UInt8])

    /// Nesting deeper than this is refused (a hostile record cannot exhaust the stack).
    static let maxDepth = 16

    public init(parsing input: inout ByteReader) throws(DecodeError) { try self.init(parsing: &input, depth: 0) }

    init(parsing input: inout ByteReader, depth: Int) throws(DecodeError) {
        guard depth < Self.maxDepth else { throw .malformed("SDP data elements nested deeper than \(Self.maxDepth)") }
        let header = try input.readUInt8()
        let type = header >> 3, sizeIndex = header & 0x07
        let length: Int
        switch sizeIndex {
        case 0: length = type == 0 ? 0 : 1
        case 1: length = 2
        case 2: length = 4
        case 3: length = 8
        case 4: length = 16
        case 5: length = Int(try input.readUInt8())
        case 6: length = Int(try UInt16(parsingBigEndian: &input))
        default: length = Int(try UInt32(parsingBigEndian: &input))
        }
        var body = try input.slice(length)
        switch type {
        case 0: self = .null
        case 1 where length <= 8: self = .uint(Self.bigEndian(try body.readArray(length)), width: length)
        case 2 where length <= 8:
            let raw = Self.bigEndian(try body.readArray(length))
            let shift = UInt64(64 - 8 * length)
            self = .int(length == 0 ? 0 : Int64(bitPattern: raw << shift) >> Int64(shift), width: length)
        case 3 where length == 2: self = .uuid(BluetoothUUID(uuid16: UInt16(Self.bigEndian(try body.readArray(2)))))
        case 3 where length == 4: self = .uuid(BluetoothUUID(uuid32: UInt32(Self.bigEndian(try body.readArray(4)))))
        case 3 where length == 16:
            let high = try UInt64(parsingBigEndian: &body), low = try UInt64(parsingBigEndian: &body)
            self = .uuid(BluetoothUUID(high: high, low: low))
        case 3: throw .invalidValue(field: "SDP UUID size", value: length, offset: body.absoluteOffset)
        case 4: self = .text(try body.readArray(length))
        case 5: self = .bool(try body.readUInt8() != 0)
        case 6, 7:
            var items: [SDPElement] = []
            while !body.isAtEnd { items.append(try SDPElement(parsing: &body, depth: depth + 1)) }
            self = type == 6 ? .sequence(items) : .alternative(items)
        case 8: self = .url(try body.readArray(length))
        default: self = .other(type: type, try body.readArray(length))
        }
    }

    static func bigEndian(_ bytes: [UInt8]) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }

    public func encode(into w: inout ByteWriter) {
        func header(_ type: UInt8, _ bytes: [UInt8], fixed: Bool) {
            let sizes: [Int: UInt8] = [1: 0, 2: 1, 4: 2, 8: 3, 16: 4]
            if fixed, let index = sizes[bytes.count] {
                w.write(type << 3 | index)
            } else if bytes.count <= 0xFF {
                w.write(type << 3 | 5)
                w.write(UInt8(bytes.count))
            } else if bytes.count <= 0xFFFF {
                w.write(type << 3 | 6)
                w.write(bigEndian: UInt16(bytes.count))
            } else {
                w.write(type << 3 | 7)
                w.write(bigEndian: UInt32(bytes.count))
            }
            w.write(contentsOf: bytes)
        }
        func be(_ v: UInt64, _ width: Int) -> [UInt8] { (0..<width).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * (width - 1 - $0))) } }
        switch self {
        case .null: w.write(0x00)
        case .uint(let v, let width): header(1, be(v, width), fixed: true)
        case .int(let v, let width): header(2, be(UInt64(bitPattern: v), width), fixed: true)
        case .uuid(let u):
            if let short = u.uuid16, u.width == 2 {
                header(3, be(UInt64(short), 2), fixed: true)
            } else if let u32 = u.uuid32, u.width == 4 {
                header(3, be(UInt64(u32), 4), fixed: true)
            } else {
                header(3, be(u.high, 8) + be(u.low, 8), fixed: true)
            }
        case .text(let t): header(4, t, fixed: false)
        case .bool(let b): header(5, [b ? 1 : 0], fixed: true)
        case .sequence(let items), .alternative(let items):
            var inner = ByteWriter()
            for i in items { i.encode(into: &inner) }
            if case .sequence = self { header(6, inner.bytes, fixed: false) } else { header(7, inner.bytes, fixed: false) }
        case .url(let u): header(8, u, fixed: false)
        case .other(let type, let bytes): header(type, bytes, fixed: true)
        }
    }

    public var uintValue: UInt64? { if case .uint(let v, _) = self { v } else { nil } }
    public var uuidValue: BluetoothUUID? { if case .uuid(let u) = self { u } else { nil } }
    public var items: [SDPElement]? {
        switch self {
        case .sequence(let i), .alternative(let i): i
        default: nil
        }
    }
    public var string: String? { if case .text(let t) = self { String(decoding: t.prefix { $0 != 0 }, as: UTF8.self) } else { nil } }

    public var description: String {
        switch self {
        case .null: "nil"
        case .uint(let v, _): hex(v)
        case .int(let v, _): String(v)
        case .uuid(let u): SDPServiceClass.name(u).map { "\($0) (\(u))" } ?? u.description
        case .text: "\"\(string ?? "")\""
        case .bool(let b): b ? "true" : "false"
        case .sequence(let items): "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .alternative(let items): "alt{" + items.map(\.description).joined(separator: ", ") + "}"
        case .url(let u): String(decoding: u, as: UTF8.self)
        case .other(let t, let b): "type\(t)(\(hexString(b)))"
        }
    }
}

/// The continuation state that ends every response and follow-up request (Vol 3, Part B, 4.3): up to 16 bytes, none
/// when the answer is whole.
public struct SDPContinuation: WireCodable {
    public var state: [UInt8]
    public init(_ state: [UInt8] = []) { self.state = state }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let n = Int(try input.readUInt8())
        guard n <= 16 else { throw .invalidValue(field: "SDP continuation length", value: n, offset: input.absoluteOffset - 1) }
        state = try input.readArray(n)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(UInt8(state.count))
        w.write(contentsOf: state)
    }
    public var isEmpty: Bool { state.isEmpty }
}

/// The parameters of an SDP PDU, by its ID (Vol 3, Part B, 4.4–4.7).
public enum SDPParameters: Hashable, Sendable {
    case errorResponse(SDPErrorCode)
    case serviceSearchRequest(pattern: SDPElement, maxRecords: UInt16, continuation: SDPContinuation)
    case serviceSearchResponse(total: UInt16, handles: [UInt32], continuation: SDPContinuation)
    case serviceAttributeRequest(handle: UInt32, maxBytes: UInt16, attributes: SDPElement, continuation: SDPContinuation)
    /// The attribute list's bytes (one record's; whole only when `continuation` is empty, else a part).
    case serviceAttributeResponse(attributeBytes: [UInt8], continuation: SDPContinuation)
    case serviceSearchAttributeRequest(pattern: SDPElement, maxBytes: UInt16, attributes: SDPElement, continuation: SDPContinuation)
    /// The attribute lists' bytes (a sequence of records; whole only when `continuation` is empty).
    case serviceSearchAttributeResponse(attributeBytes: [UInt8], continuation: SDPContinuation)
    /// An ID this decoder does not know: its parameters.
    case unknown([UInt8])
}

/// One SDP PDU: ID, transaction ID, parameters (Vol 3, Part B, 4.2; big-endian).
///
/// ```
/// PDU ID(1) TransactionID(2) ParameterLength(2) Parameters(ParameterLength)
/// ```
public struct SDPPDU: WireCodable {
    public var id: SDPPDUID
    public var transaction: UInt16
    public var parameters: SDPParameters

    public init(id: SDPPDUID, transaction: UInt16, parameters: SDPParameters) {
        self.id = id
        self.transaction = transaction
        self.parameters = parameters
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        id = SDPPDUID(try input.readUInt8())
        transaction = try UInt16(parsingBigEndian: &input)
        let length = Int(try UInt16(parsingBigEndian: &input))
        var body = try input.slice(length)
        if let decode = SDPTable.decoders[id.rawValue] {
            parameters = try decode(&body)
        } else {
            parameters = .unknown(body.readRemaining())
        }
    }

    public func encode(into w: inout ByteWriter) {
        var p = ByteWriter()
        switch parameters {
        case .errorResponse(let code): p.write(bigEndian: code.rawValue)
        case .serviceSearchRequest(let pattern, let maxRecords, let c):
            pattern.encode(into: &p)
            p.write(bigEndian: maxRecords)
            c.encode(into: &p)
        case .serviceSearchResponse(let total, let handles, let c):
            p.write(bigEndian: total)
            p.write(bigEndian: UInt16(handles.count))
            for h in handles { p.write(bigEndian: h) }
            c.encode(into: &p)
        case .serviceAttributeRequest(let handle, let maxBytes, let attributes, let c):
            p.write(bigEndian: handle)
            p.write(bigEndian: maxBytes)
            attributes.encode(into: &p)
            c.encode(into: &p)
        case .serviceAttributeResponse(let bytes, let c), .serviceSearchAttributeResponse(let bytes, let c):
            p.write(bigEndian: UInt16(bytes.count))
            p.write(contentsOf: bytes)
            c.encode(into: &p)
        case .serviceSearchAttributeRequest(let pattern, let maxBytes, let attributes, let c):
            pattern.encode(into: &p)
            p.write(bigEndian: maxBytes)
            attributes.encode(into: &p)
            c.encode(into: &p)
        case .unknown(let raw): p.write(contentsOf: raw)
        }
        w.write(id.rawValue)
        w.write(bigEndian: transaction)
        w.write(bigEndian: UInt16(p.bytes.count))
        w.write(contentsOf: p.bytes)
    }

    /// `tid=0x0001 pattern={Audio Sink (0x110B)} …`: the timeline's summary.
    public var summary: String {
        let t = "tid=\(hex(transaction, width: 4))"
        switch parameters {
        case .errorResponse(let code): return "\(t) error=\(code)"
        case .serviceSearchRequest(let pattern, let max, _): return "\(t) pattern=\(pattern) max=\(max)"
        case .serviceSearchResponse(let total, let handles, let c):
            return "\(t) total=\(total) handles=\(handles.map { hex($0, width: 8) }.joined(separator: ","))"
                + (c.isEmpty ? "" : " continues")
        case .serviceAttributeRequest(let handle, _, let attributes, _):
            return "\(t) handle=\(hex(handle, width: 8)) attributes=\(attributes)"
        case .serviceAttributeResponse(let bytes, let c), .serviceSearchAttributeResponse(let bytes, let c):
            return "\(t) \(bytes.count) bytes" + (c.isEmpty ? "" : " continues")
        case .serviceSearchAttributeRequest(let pattern, _, let attributes, _): return "\(t) pattern=\(pattern) attributes=\(attributes)"
        case .unknown(let raw): return "\(t) \(raw.count) bytes"
        }
    }
}

/// The SDP table: each PDU ID's name and parameter decoder (Vol 3, Part B, 4.4–4.7).
public enum SDPTable {
    typealias Decoder = @Sendable (inout ByteReader) throws(DecodeError) -> SDPParameters
    static let names: [UInt8: String] = [
        0x01: "SDP Error Response", 0x02: "SDP Service Search Request", 0x03: "SDP Service Search Response",
        0x04: "SDP Service Attribute Request", 0x05: "SDP Service Attribute Response",
        0x06: "SDP Service Search Attribute Request", 0x07: "SDP Service Search Attribute Response",
    ]
    static let decoders: [UInt8: Decoder] = [
        0x01: { r throws(DecodeError) in .errorResponse(SDPErrorCode(rawValue: try UInt16(parsingBigEndian: &r))) },
        0x02: { r throws(DecodeError) in
            .serviceSearchRequest(
                pattern: try SDPElement(parsing: &r), maxRecords: try UInt16(parsingBigEndian: &r),
                continuation: try SDPContinuation(parsing: &r))
        },
        0x03: { r throws(DecodeError) in
            let total = try UInt16(parsingBigEndian: &r)
            let count = Int(try UInt16(parsingBigEndian: &r))
            var handles: [UInt32] = []
            for _ in 0..<count { handles.append(try UInt32(parsingBigEndian: &r)) }
            return .serviceSearchResponse(total: total, handles: handles, continuation: try SDPContinuation(parsing: &r))
        },
        0x04: { r throws(DecodeError) in
            .serviceAttributeRequest(
                handle: try UInt32(parsingBigEndian: &r), maxBytes: try UInt16(parsingBigEndian: &r),
                attributes: try SDPElement(parsing: &r),
                continuation: try SDPContinuation(parsing: &r))
        },
        0x05: { r throws(DecodeError) in
            let n = Int(try UInt16(parsingBigEndian: &r))
            return .serviceAttributeResponse(attributeBytes: try r.readArray(n), continuation: try SDPContinuation(parsing: &r))
        },
        0x06: { r throws(DecodeError) in
            .serviceSearchAttributeRequest(
                pattern: try SDPElement(parsing: &r), maxBytes: try UInt16(parsingBigEndian: &r), attributes: try SDPElement(parsing: &r),
                continuation: try SDPContinuation(parsing: &r))
        },
        0x07: { r throws(DecodeError) in
            let n = Int(try UInt16(parsingBigEndian: &r))
            return .serviceSearchAttributeResponse(attributeBytes: try r.readArray(n), continuation: try SDPContinuation(parsing: &r))
        },
    ]
}

/// SDP service classes, profiles and protocols by UUID (Assigned Numbers 3.3, 3.4): the names a record's reader needs.
public enum SDPServiceClass {
    static let names: [UInt16: String] = [
        0x0001: "SDP", 0x0003: "RFCOMM", 0x0008: "OBEX", 0x000F: "BNEP", 0x0011: "HIDP", 0x0017: "AVCTP", 0x0019: "AVDTP",
        0x001B: "AVCTP Browsing", 0x0100: "L2CAP", 0x1000: "Service Discovery Server", 0x1101: "Serial Port", 0x1103: "Dialup Networking",
        0x1105: "OBEX Object Push", 0x1106: "OBEX File Transfer", 0x1108: "Headset", 0x110A: "Audio Source", 0x110B: "Audio Sink",
        0x110C: "A/V Remote Control Target", 0x110D: "Advanced Audio Distribution", 0x110E: "A/V Remote Control",
        0x110F: "A/V Remote Control Controller", 0x1112: "Headset Audio Gateway", 0x1115: "PANU", 0x1116: "NAP", 0x1117: "GN",
        0x111E: "Handsfree", 0x111F: "Handsfree Audio Gateway", 0x1124: "HID", 0x112D: "SIM Access", 0x112E: "Phonebook Access PCE",
        0x112F: "Phonebook Access PSE", 0x1130: "Phonebook Access", 0x1131: "Headset HS", 0x1132: "Message Access Server",
        0x1133: "Message Notification Server", 0x1134: "Message Access Profile", 0x1200: "PnP Information", 0x1203: "Generic Audio",
        0x1800: "Generic Access", 0x1801: "Generic Attribute",
    ]
    public static func name(_ u: BluetoothUUID) -> String? { u.uuid16.flatMap { names[$0] } }
}

/// SDP attribute IDs a reader of a record needs (Vol 3, Part B, 5.1; Assigned Numbers 5.1).
public enum SDPAttribute {
    public static let serviceRecordHandle: UInt16 = 0x0000
    public static let serviceClassIDList: UInt16 = 0x0001
    public static let protocolDescriptorList: UInt16 = 0x0004
    public static let bluetoothProfileDescriptorList: UInt16 = 0x0009
    public static let additionalProtocolDescriptorLists: UInt16 = 0x000D
    public static let serviceName: UInt16 = 0x0100
    public static let supportedFeatures: UInt16 = 0x0311
}

/// One service record as an SDP answer gives it: its attributes by ID, and what a reader asks of them.
public struct SDPRecord: Hashable, Sendable {
    public var attributes: [UInt16: SDPElement]
    public init(attributes: [UInt16: SDPElement]) { self.attributes = attributes }

    /// A record from its attribute list (a sequence of ID, value pairs); nil when it is not one.
    public init?(_ list: SDPElement) {
        guard let items = list.items, items.count % 2 == 0 else { return nil }
        var attributes: [UInt16: SDPElement] = [:]
        for i in stride(from: 0, to: items.count, by: 2) {
            guard let id = items[i].uintValue else { return nil }
            attributes[UInt16(truncatingIfNeeded: id)] = items[i + 1]
        }
        self.attributes = attributes
    }

    public var handle: UInt32? { attributes[SDPAttribute.serviceRecordHandle]?.uintValue.map { UInt32(truncatingIfNeeded: $0) } }
    /// ServiceClassIDList (0x0001).
    public var serviceClasses: [BluetoothUUID] { attributes[SDPAttribute.serviceClassIDList]?.items?.compactMap(\.uuidValue) ?? [] }
    /// BluetoothProfileDescriptorList (0x0009): (profile, version as 0xMMmm).
    public var profiles: [(profile: BluetoothUUID, version: UInt16)] {
        (attributes[SDPAttribute.bluetoothProfileDescriptorList]?.items ?? []).compactMap { d in
            guard let parts = d.items, let p = parts.first?.uuidValue else { return nil }
            return (p, UInt16(truncatingIfNeeded: parts.dropFirst().first?.uintValue ?? 0))
        }
    }
    /// The L2CAP PSM and RFCOMM channel of ProtocolDescriptorList (0x0004).
    public var psm: UInt16? { protocolParameter(0x0100) }
    public var rfcommChannel: UInt8? { protocolParameter(0x0003).map { UInt8(truncatingIfNeeded: $0) } }
    /// The protocols in ProtocolDescriptorList, outermost first (`L2CAP`, `RFCOMM`).
    public var protocols: [BluetoothUUID] {
        (attributes[SDPAttribute.protocolDescriptorList]?.items ?? []).compactMap { $0.items?.first?.uuidValue }
    }
    public var name: String? { attributes[SDPAttribute.serviceName]?.string }
    public var supportedFeatures: UInt16? { attributes[SDPAttribute.supportedFeatures]?.uintValue.map { UInt16(truncatingIfNeeded: $0) } }

    private func protocolParameter(_ protocolUUID: UInt16) -> UInt16? {
        for d in attributes[SDPAttribute.protocolDescriptorList]?.items ?? [] {
            guard let parts = d.items, parts.first?.uuidValue?.uuid16 == protocolUUID, parts.count > 1 else { continue }
            return parts[1].uintValue.map { UInt16(truncatingIfNeeded: $0) }
        }
        return nil
    }

    /// `1.3` from 0x0103.
    public static func versionText(_ v: UInt16) -> String { "\(v >> 8).\(v & 0xFF)" }
}
