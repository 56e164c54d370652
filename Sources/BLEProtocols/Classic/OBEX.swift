import BLECore

/// An OBEX request opcode (IrOBEX 1.5, 3.4), without its Final bit (bit 7).
public struct OBEXOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x7F }
    public static let connect = OBEXOpcode(rawValue: 0x00)
    public static let disconnect = OBEXOpcode(rawValue: 0x01)
    public static let put = OBEXOpcode(rawValue: 0x02)
    public static let get = OBEXOpcode(rawValue: 0x03)
    public static let setPath = OBEXOpcode(rawValue: 0x05)
    public static let action = OBEXOpcode(rawValue: 0x06)
    public static let session = OBEXOpcode(rawValue: 0x07)
    public static let abort = OBEXOpcode(rawValue: 0x7F)
    static let names: [UInt8: String] = [
        0x00: "Connect", 0x01: "Disconnect", 0x02: "Put", 0x03: "Get", 0x05: "Set Path", 0x06: "Action", 0x07: "Session",
        0x7F: "Abort",
    ]
    public var name: String? { Self.names[rawValue] }
    public var description: String { name ?? "OBEXOpcode(\(hex(rawValue)))" }
}

/// An OBEX response code (IrOBEX 1.5, 3.2.1), without its Final bit: HTTP's status codes in one byte (0x20 is 200 OK).
public struct OBEXResponseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x7F }
    public static let `continue` = OBEXResponseCode(rawValue: 0x10)
    public static let success = OBEXResponseCode(rawValue: 0x20)
    public static let notFound = OBEXResponseCode(rawValue: 0x44)
    static let names: [UInt8: String] = [
        0x10: "Continue", 0x20: "Success", 0x21: "Created", 0x22: "Accepted", 0x23: "Non-Authoritative Information",
        0x24: "No Content", 0x25: "Reset Content", 0x26: "Partial Content", 0x30: "Multiple Choices", 0x31: "Moved Permanently",
        0x32: "Moved Temporarily", 0x33: "See Other", 0x34: "Not Modified", 0x35: "Use Proxy", 0x40: "Bad Request",
        0x41: "Unauthorized", 0x42: "Payment Required", 0x43: "Forbidden", 0x44: "Not Found", 0x45: "Method Not Allowed",
        0x46: "Not Acceptable", 0x47: "Proxy Authentication Required", 0x48: "Request Timeout", 0x49: "Conflict", 0x4A: "Gone",
        0x4B: "Length Required", 0x4C: "Precondition Failed", 0x4D: "Request Entity Too Large", 0x4E: "Request URL Too Large",
        0x4F: "Unsupported Media Type", 0x50: "Internal Server Error", 0x51: "Not Implemented", 0x52: "Bad Gateway",
        0x53: "Service Unavailable", 0x54: "Gateway Timeout", 0x55: "HTTP Version Not Supported", 0x60: "Database Full",
        0x61: "Database Locked",
    ]
    public var name: String? { Self.names[rawValue] }
    /// The HTTP status it stands for (`200` for Success), where IrOBEX maps one (0x10–0x55).
    public var httpStatus: Int? {
        guard (0x10...0x55).contains(rawValue) else { return nil }
        return Int(rawValue >> 4) * 100 + Int(rawValue & 0x0F)
    }
    /// Success and the other 2xx codes.
    public var isSuccess: Bool { rawValue >> 4 == 2 }
    /// `Success (200)`, `Not Found (404)`.
    public var description: String {
        let name = self.name ?? "OBEXResponseCode(\(hex(rawValue)))"
        return httpStatus.map { "\(name) (\($0))" } ?? name
    }
}

/// An OBEX header identifier (IrOBEX 1.5, 2.1; GOEP 2.1): its top two bits say how the value is encoded.
public struct OBEXHeaderID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let count = OBEXHeaderID(rawValue: 0xC0)
    public static let name = OBEXHeaderID(rawValue: 0x01)
    public static let type = OBEXHeaderID(rawValue: 0x42)
    public static let length = OBEXHeaderID(rawValue: 0xC3)
    public static let target = OBEXHeaderID(rawValue: 0x46)
    public static let body = OBEXHeaderID(rawValue: 0x48)
    public static let endOfBody = OBEXHeaderID(rawValue: 0x49)
    public static let who = OBEXHeaderID(rawValue: 0x4A)
    public static let connectionID = OBEXHeaderID(rawValue: 0xCB)
    public static let applicationParameters = OBEXHeaderID(rawValue: 0x4C)
    public static let singleResponseMode = OBEXHeaderID(rawValue: 0x97)
    static let names: [UInt8: String] = [
        0xC0: "Count", 0x01: "Name", 0x42: "Type", 0xC3: "Length", 0x44: "Time", 0xC4: "Time (4-byte)", 0x05: "Description",
        0x46: "Target", 0x47: "HTTP", 0x48: "Body", 0x49: "End Of Body", 0x4A: "Who", 0xCB: "Connection Id",
        0x4C: "Application Parameters", 0x4D: "Authentication Challenge", 0x4E: "Authentication Response", 0xCF: "Creator Id",
        0x50: "WAN UUID", 0x51: "Object Class", 0x52: "Session Parameters", 0x93: "Session Sequence Number", 0x94: "Action Id",
        0x15: "DestName", 0xD6: "Permissions", 0x97: "Single Response Mode", 0x98: "Single Response Mode Parameters",
    ]
    public var description: String { Self.names[rawValue] ?? "OBEXHeaderID(\(hex(rawValue)))" }
    /// Bits 6–7: 0 null-terminated UTF-16BE text, 1 byte sequence (both with a 2-byte length), 2 one byte, 3 four bytes.
    public var encoding: UInt8 { rawValue >> 6 }
}

/// One OBEX header (IrOBEX 1.5, 2.1): identifier, then by its encoding a length-prefixed text or byte sequence, one
/// byte, or a 4-byte big-endian integer.
///
/// ```
/// HI | text/bytes: HI LL LL value (LL counts HI and itself)   one byte: HI V   four bytes: HI VV VV VV VV
/// ```
public struct OBEXHeader: WireCodable {
    public var id: OBEXHeaderID
    /// Text and byte-sequence headers: the value's bytes (text: UTF-16BE with its terminating null, if sent).
    public var bytes: [UInt8]
    /// One-byte and four-byte headers: the value.
    public var number: UInt32?
    public init(id: OBEXHeaderID, bytes: [UInt8] = [], number: UInt32? = nil) {
        self.id = id; self.bytes = bytes; self.number = number
    }
    public static func text(_ id: OBEXHeaderID, _ s: String) -> OBEXHeader {
        OBEXHeader(id: id, bytes: s.isEmpty ? [] : s.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } + [0, 0])
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let at = input.absoluteOffset
        id = OBEXHeaderID(rawValue: try input.readUInt8())
        switch id.encoding {
        case 0, 1:
            let length = Int(try UInt16(parsingBigEndian: &input))
            guard length >= 3 else { throw .invalidValue(field: "OBEX \(id) header length", value: length, offset: at + 1) }
            bytes = try input.readArray(length - 3)
        case 2: bytes = []; number = UInt32(try input.readUInt8())
        default: bytes = []; number = try UInt32(parsingBigEndian: &input)
        }
    }
    public func encode(into w: inout ByteWriter) {
        w.write(id.rawValue)
        switch id.encoding {
        case 0, 1: w.write(bigEndian: UInt16(bytes.count + 3)); w.write(contentsOf: bytes)
        case 2: w.write(UInt8(truncatingIfNeeded: number ?? 0))
        default: w.write(bigEndian: number ?? 0)
        }
    }
    /// A text header's value (`telecom/pb.vcf`), or a byte sequence's as ASCII up to its null (`x-bt/phonebook`).
    public var text: String? {
        switch id.encoding {
        case 0:
            var units: [UInt16] = []
            var i = 0
            while i + 1 < bytes.count {
                let u = UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1])
                if u == 0 { break }
                units.append(u)
                i += 2
            }
            return String(decoding: units, as: UTF16.self)
        case 1: return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        default: return nil
        }
    }
    /// Application Parameters' tag-length-value triplets (PBAP 1.2, 6.2.1; MAP 1.4, 6.3.1); nil if they do not parse.
    public var parameters: [(tag: UInt8, value: [UInt8])]? {
        var out: [(tag: UInt8, value: [UInt8])] = []
        var i = 0
        while i < bytes.count {
            guard i + 2 <= bytes.count, i + 2 + Int(bytes[i + 1]) <= bytes.count else { return nil }
            out.append((bytes[i], Array(bytes[i + 2..<i + 2 + Int(bytes[i + 1])])))
            i += 2 + Int(bytes[i + 1])
        }
        return out
    }
}

/// The services an OBEX Target (or Who) header names by their 16-byte UUID (PBAP 1.2, 6.4; MAP 1.4, 6.4; FTP 1.3,
/// 5.4; BIP 1.2 for AVRCP cover art).
public enum OBEXTarget {
    static let names: [String: String] = [
        "796135f0f0c511d809660800200c9a66": "PBAP", "bb582b40420c11dbb0de0800200c9a66": "MAP",
        "bb582b41420c11dbb0de0800200c9a66": "MAP notifications", "f9ec7bc4953c11d2984e525400dc9e09": "FTP",
        "7163dd544a7e11e2b47c0050c2490048": "cover art (BIP)", "8ee9b3d0460811d5841a0002a5325b4e": "BIP image pull",
    ]
    /// `PBAP`, or the UUID's hex when unknown; text targets (`IRMC-SYNC`) as they are.
    public static func name(_ bytes: [UInt8]) -> String {
        if bytes.count == 16 { return names[hexString(bytes)] ?? hexString(bytes) }
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}

/// One OBEX packet (IrOBEX 1.5, 3.1): opcode or response code with the Final bit, the packet's length, the fields only
/// Connect (and its response) and Set Path carry, then headers to the packet's end. A response is read knowing the
/// request it answers (`answering`), since a Connect response carries Connect's fields.
///
/// ```
/// request:  F OOOOOOO  LL LL  [Connect: version flags MM MM] [Set Path: flags constants]  headers…
/// response: F RRRRRRR  LL LL  [to Connect: version flags MM MM]  headers…
/// ```
public struct OBEXPacket: Hashable, Sendable {
    /// The first byte: opcode or response code with the Final bit.
    public var code: UInt8
    public var isResponse: Bool
    public var length: UInt16
    /// Connect and its response: OBEX version (0x10 is 1.0), flags, the largest packet the sender takes.
    public var version: UInt8?
    public var flags: UInt8?
    public var maxPacketLength: UInt16?
    /// Set Path: flags (bit 0 back up a level, bit 1 do not create) and constants.
    public var setPathFlags: UInt8?
    public var headers: [OBEXHeader]

    public var final: Bool { code & 0x80 != 0 }
    public var opcode: OBEXOpcode? { isResponse ? nil : OBEXOpcode(rawValue: code) }
    public var response: OBEXResponseCode? { isResponse ? OBEXResponseCode(rawValue: code) : nil }

    public init(
        code: UInt8, isResponse: Bool, version: UInt8? = nil, flags: UInt8? = nil, maxPacketLength: UInt16? = nil,
        setPathFlags: UInt8? = nil, headers: [OBEXHeader]
    ) {
        self.code = code; self.isResponse = isResponse; self.version = version; self.flags = flags
        self.maxPacketLength = maxPacketLength; self.setPathFlags = setPathFlags; self.headers = headers
        length = 0
        length = UInt16(bytes.count)
    }

    /// Reads one whole packet (the reader holds exactly its bytes). Throws on a length that disagrees with the bytes, a
    /// header running past the end, or a header length under 3.
    public init(parsing input: inout ByteReader, isResponse: Bool, answering request: OBEXOpcode? = nil) throws(DecodeError) {
        self.isResponse = isResponse
        let start = input.absoluteOffset
        code = try input.readUInt8()
        length = try UInt16(parsingBigEndian: &input)
        guard Int(length) >= 3, Int(length) == input.remaining + 3 else {
            throw .invalidValue(field: "OBEX packet length (\(input.remaining + 3) bytes)", value: Int(length), offset: start + 1)
        }
        let connect = isResponse ? request == .connect : OBEXOpcode(rawValue: code) == .connect
        if connect {
            version = try input.readUInt8()
            flags = try input.readUInt8()
            maxPacketLength = try UInt16(parsingBigEndian: &input)
        } else if !isResponse, OBEXOpcode(rawValue: code) == .setPath {
            setPathFlags = try input.readUInt8()
            _ = try input.readUInt8()
        }
        headers = []
        while !input.isAtEnd { headers.append(try OBEXHeader(parsing: &input)) }
    }

    public var bytes: [UInt8] {
        var body = ByteWriter()
        if let version, let flags, let maxPacketLength {
            body.write(version); body.write(flags); body.write(bigEndian: maxPacketLength)
        }
        if let setPathFlags { body.write(setPathFlags); body.write(UInt8(0)) }
        for h in headers { h.encode(into: &body) }
        var w = ByteWriter()
        w.write(code)
        w.write(bigEndian: UInt16(body.bytes.count + 3))
        w.write(contentsOf: body.bytes)
        return w.bytes
    }

    public func header(_ id: OBEXHeaderID) -> OBEXHeader? { headers.first { $0.id == id } }
    public var name: String? { header(.name)?.text }
    public var type: String? { header(.type)?.text }
    public var connectionID: UInt32? { header(.connectionID)?.number }
    /// The service a Target (request) or Who (response) header names.
    public var target: String? { (header(.target) ?? header(.who)).map { OBEXTarget.name($0.bytes) } }
    /// Body and End Of Body bytes in the packet.
    public var bodyBytes: Int { headers.reduce(0) { $0 + ($1.id == .body || $1.id == .endOfBody ? $1.bytes.count : 0) } }
    public var endOfBody: Bool { header(.endOfBody) != nil }
    /// An application parameter's value as a big-endian integer (PBAP's Phonebook Size is tag 0x08).
    public func parameter(_ tag: UInt8) -> Int? {
        guard let value = header(.applicationParameters)?.parameters?.first(where: { $0.tag == tag })?.value, value.count <= 8 else {
            return nil
        }
        return value.reduce(0) { $0 << 8 | Int($1) }
    }

    /// `Get final "telecom/pb.vcf" (x-bt/phonebook)`, `Success (200), 275 body bytes`: the timeline's summary.
    public var summary: String {
        var s = response?.description ?? (opcode?.description ?? "?")
        if !isResponse, final, opcode != .connect, opcode != .disconnect, opcode != .abort, opcode != .setPath { s += " final" }
        if let name { s += " \"\(name)\"" }
        if let type { s += " (\(type))" }
        if let target { s += " - \(target)" }
        if let maxPacketLength { s += " max packet \(maxPacketLength)" }
        if let id = connectionID { s += " connection \(id)" }
        if bodyBytes > 0 { s += ", \(bodyBytes) body bytes" }
        return s
    }
}
