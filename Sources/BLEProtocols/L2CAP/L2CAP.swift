import BLECore

/// An L2CAP channel identifier (Core Spec 5.4 Vol 3, Part A, 2.1).
///
/// Open struct: dynamic CIDs (0x0040… on LE) print as `CID 0x0041`.
public struct L2CAPCID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// BR/EDR signalling channel.
    public static let signalling = L2CAPCID(0x0001)
    public static let connectionless = L2CAPCID(0x0002)
    public static let ampManager = L2CAPCID(0x0003)
    /// Attribute protocol.
    public static let att = L2CAPCID(0x0004)
    /// LE signalling channel.
    public static let leSignalling = L2CAPCID(0x0005)
    /// Security Manager protocol (LE).
    public static let smp = L2CAPCID(0x0006)
    /// Security Manager protocol over BR/EDR.
    public static let smpBREDR = L2CAPCID(0x0007)

    public var name: String? {
        switch rawValue {
        case 0x0001: "BR/EDR Signalling"
        case 0x0002: "Connectionless"
        case 0x0003: "AMP Manager"
        case 0x0004: "ATT"
        case 0x0005: "LE Signalling"
        case 0x0006: "SMP"
        case 0x0007: "BR/EDR SMP"
        case 0x003F: "AMP Test Manager"
        default: nil
        }
    }
    /// Dynamically allocated (LE 0x0040–0x007F, BR/EDR 0x0040–0xFFFF).
    public var isDynamic: Bool { rawValue >= 0x0040 }
    public var description: String { name ?? "CID \(hex(rawValue))" }
}

/// L2CAP basic header: length(2) channel id(2) (Vol 3, Part A, 3.1). Parses without allocating.
public struct L2CAPHeader: Hashable, Sendable {
    /// Length of the information payload (not counting the 4-byte header).
    public var length: UInt16
    public var cid: L2CAPCID
    public init(length: UInt16, cid: L2CAPCID) { self.length = length; self.cid = cid }
    @inlinable public init(parsing input: inout ByteReader) throws(DecodeError) {
        length = try UInt16(parsingLittleEndian: &input)
        cid = L2CAPCID(rawValue: try UInt16(parsingLittleEndian: &input))
    }
    public func encode(into w: inout ByteWriter) { w.write(littleEndian: length); w.write(littleEndian: cid.rawValue) }
    /// Bytes of a whole PDU: header plus payload.
    @inlinable public var pduLength: Int { 4 + Int(length) }
}

/// An L2CAP basic-mode frame (B-frame): header and payload (Vol 3, Part A, 3.1).
public struct L2CAPBasicFrame: WireCodable {
    public var cid: L2CAPCID
    public var payload: [UInt8]
    public init(cid: L2CAPCID, payload: [UInt8]) { self.cid = cid; self.payload = payload }
    /// - Throws: ``DecodeError/truncated(needed:available:offset:)`` when the payload is shorter than the length field.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let h = try L2CAPHeader(parsing: &input)
        cid = h.cid
        payload = try input.readArray(Int(h.length))
    }
    public func encode(into w: inout ByteWriter) {
        w.write(littleEndian: UInt16(truncatingIfNeeded: payload.count)); w.write(littleEndian: cid.rawValue)
        w.write(contentsOf: payload)
    }
}

/// A K-frame of an LE/enhanced credit-based channel (Vol 3, Part A, 3.4): the first K-frame of an SDU
/// starts with the SDU length(2); later K-frames carry only payload.
public struct L2CAPKFrame: Hashable, Sendable {
    /// Total SDU length, present in the first K-frame of an SDU only.
    public var sduLength: UInt16?
    public var payload: [UInt8]
    public init(sduLength: UInt16?, payload: [UInt8]) { self.sduLength = sduLength; self.payload = payload }
    /// Parses an L2CAP information payload (after the basic header) as a K-frame.
    public init(parsing input: inout ByteReader, isFirstOfSDU: Bool) throws(DecodeError) {
        sduLength = isFirstOfSDU ? try UInt16(parsingLittleEndian: &input) : nil
        payload = input.readRemaining()
    }
    public func encode(into w: inout ByteWriter) {
        if let sduLength { w.write(littleEndian: sduLength) }
        w.write(contentsOf: payload)
    }
    public var bytes: [UInt8] { var w = ByteWriter(); encode(into: &w); return w.bytes }
}

/// An L2CAP signalling command code (Vol 3, Part A, 4).
public struct L2CAPSignalCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandReject = L2CAPSignalCode(0x01)
    public static let connectionRequest = L2CAPSignalCode(0x02)
    public static let connectionResponse = L2CAPSignalCode(0x03)
    public static let configureRequest = L2CAPSignalCode(0x04)
    public static let configureResponse = L2CAPSignalCode(0x05)
    public static let disconnectionRequest = L2CAPSignalCode(0x06)
    public static let disconnectionResponse = L2CAPSignalCode(0x07)
    public static let echoRequest = L2CAPSignalCode(0x08)
    public static let echoResponse = L2CAPSignalCode(0x09)
    public static let informationRequest = L2CAPSignalCode(0x0A)
    public static let informationResponse = L2CAPSignalCode(0x0B)
    public static let connectionParameterUpdateRequest = L2CAPSignalCode(0x12)
    public static let connectionParameterUpdateResponse = L2CAPSignalCode(0x13)
    public static let leCreditBasedConnectionRequest = L2CAPSignalCode(0x14)
    public static let leCreditBasedConnectionResponse = L2CAPSignalCode(0x15)
    public static let flowControlCreditIndication = L2CAPSignalCode(0x16)
    public static let creditBasedConnectionRequest = L2CAPSignalCode(0x17)
    public static let creditBasedConnectionResponse = L2CAPSignalCode(0x18)
    public static let creditBasedReconfigureRequest = L2CAPSignalCode(0x19)
    public static let creditBasedReconfigureResponse = L2CAPSignalCode(0x1A)

    static let names: [String] = [
        "Reserved (0x00)", "Command Reject", "Connection Request", "Connection Response", "Configure Request",
        "Configure Response", "Disconnection Request", "Disconnection Response", "Echo Request", "Echo Response",
        "Information Request", "Information Response", "Create Channel Request", "Create Channel Response",
        "Move Channel Request", "Move Channel Response", "Move Channel Confirmation Request",
        "Move Channel Confirmation Response", "Connection Parameter Update Request",
        "Connection Parameter Update Response", "LE Credit Based Connection Request",
        "LE Credit Based Connection Response", "Flow Control Credit Indication", "Credit Based Connection Request",
        "Credit Based Connection Response", "Credit Based Reconfigure Request", "Credit Based Reconfigure Response",
    ]
    public var name: String? { rawValue > 0 && Int(rawValue) < Self.names.count ? Self.names[Int(rawValue)] : nil }
    public var description: String { name ?? "L2CAPSignalCode(\(hex(rawValue)))" }
}

/// A Protocol/Service Multiplexer (Core Spec Vol 3, Part A, 4.2; Assigned Numbers 5.2): which protocol a
/// dynamic channel carries. Open struct: an unknown value prints as `PSM 0x1001` and is kept.
public struct L2CAPPSM: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let sdp = L2CAPPSM(0x0001)
    public static let rfcomm = L2CAPPSM(0x0003)
    public static let bnep = L2CAPPSM(0x000F)
    public static let hidControl = L2CAPPSM(0x0011)
    public static let hidInterrupt = L2CAPPSM(0x0013)
    public static let avctp = L2CAPPSM(0x0017)
    public static let avdtp = L2CAPPSM(0x0019)
    public static let avctpBrowsing = L2CAPPSM(0x001B)
    /// ATT over BR/EDR (Core Spec Vol 3, Part G, 5.2).
    public static let att = L2CAPPSM(0x001F)
    public static let ipsp = L2CAPPSM(0x0023)
    /// Object Transfer Service.
    public static let ots = L2CAPPSM(0x0025)
    /// Enhanced ATT over credit-based channels (Core Spec Vol 3, Part G, 5.3).
    public static let eatt = L2CAPPSM(0x0027)

    /// Name, from one table.
    static let names: [UInt16: String] = [
        0x0001: "SDP", 0x0003: "RFCOMM", 0x0005: "TCS-BIN", 0x0007: "TCS-BIN-CORDLESS", 0x000F: "BNEP",
        0x0011: "HID Control", 0x0013: "HID Interrupt", 0x0015: "UPnP", 0x0017: "AVCTP", 0x0019: "AVDTP",
        0x001B: "AVCTP Browsing", 0x001D: "UDI C-Plane", 0x001F: "ATT", 0x0021: "3DSP", 0x0023: "LE IPSP",
        0x0025: "OTS", 0x0027: "EATT",
    ]
    public var name: String? { Self.names[rawValue] }
    public var description: String { name.map { "\($0) (\(hex(rawValue, width: 4)))" } ?? "PSM \(hex(rawValue, width: 4))" }
}

/// Typed body of an L2CAP signalling command (Vol 3, Part A, 4.1–4.27).
public enum L2CAPSignalCommand: Hashable, Sendable {
    /// Reason(2): 0 not understood, 1 signalling MTU exceeded, 2 invalid CID; `data` = reason data.
    case commandReject(reason: UInt16, data: [UInt8])
    /// BR/EDR: open a channel to `psm`; `sourceCID` is where the requester receives (Vol 3, Part A, 4.2).
    case connectionRequest(psm: UInt16, sourceCID: UInt16)
    /// Result 0 success, 1 pending, 2… refused; `destinationCID` is where the responder receives (4.3).
    case connectionResponse(destinationCID: UInt16, sourceCID: UInt16, result: UInt16, status: UInt16)
    /// `destinationCID` is the recipient's endpoint; options are type(1) length(1) value TLVs (4.4, 5).
    case configureRequest(destinationCID: UInt16, flags: UInt16, options: [UInt8])
    case configureResponse(sourceCID: UInt16, flags: UInt16, result: UInt16, options: [UInt8])
    case disconnectionRequest(destinationCID: UInt16, sourceCID: UInt16)
    case disconnectionResponse(destinationCID: UInt16, sourceCID: UInt16)
    /// Interval min/max (1.25 ms), peripheral latency, timeout multiplier (10 ms).
    case connectionParameterUpdateRequest(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16)
    /// 0 accepted, 1 rejected.
    case connectionParameterUpdateResponse(result: UInt16)
    case leCreditBasedConnectionRequest(spsm: UInt16, sourceCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16)
    case leCreditBasedConnectionResponse(destinationCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: UInt16)
    case flowControlCreditIndication(cid: UInt16, credits: UInt16)
    case creditBasedConnectionRequest(spsm: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16, sourceCIDs: [UInt16])
    case creditBasedConnectionResponse(mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: UInt16, destinationCIDs: [UInt16])
    case creditBasedReconfigureRequest(mtu: UInt16, mps: UInt16, destinationCIDs: [UInt16])
    case creditBasedReconfigureResponse(result: UInt16)
    /// Any other command (BR/EDR configuration, echo, information …), data kept as bytes.
    case other(L2CAPSignalCode, [UInt8])

    public var code: L2CAPSignalCode {
        switch self {
        case .commandReject: .commandReject
        case .connectionRequest: .connectionRequest
        case .connectionResponse: .connectionResponse
        case .configureRequest: .configureRequest
        case .configureResponse: .configureResponse
        case .disconnectionRequest: .disconnectionRequest
        case .disconnectionResponse: .disconnectionResponse
        case .connectionParameterUpdateRequest: .connectionParameterUpdateRequest
        case .connectionParameterUpdateResponse: .connectionParameterUpdateResponse
        case .leCreditBasedConnectionRequest: .leCreditBasedConnectionRequest
        case .leCreditBasedConnectionResponse: .leCreditBasedConnectionResponse
        case .flowControlCreditIndication: .flowControlCreditIndication
        case .creditBasedConnectionRequest: .creditBasedConnectionRequest
        case .creditBasedConnectionResponse: .creditBasedConnectionResponse
        case .creditBasedReconfigureRequest: .creditBasedReconfigureRequest
        case .creditBasedReconfigureResponse: .creditBasedReconfigureResponse
        case let .other(c, _): c
        }
    }

    /// Name of an LE credit-based connection result (Vol 3, Part A, 4.23 and 4.26).
    public static func resultName(_ result: UInt16) -> String {
        switch result {
        case 0x0000: "Success"
        case 0x0002: "SPSM not supported"
        case 0x0004: "No resources available"
        case 0x0005: "Insufficient authentication"
        case 0x0006: "Insufficient authorization"
        case 0x0007: "Encryption key size too short"
        case 0x0008: "Insufficient encryption"
        case 0x0009: "Invalid Source CID"
        case 0x000A: "Source CID already allocated"
        case 0x000B: "Unacceptable parameters"
        case 0x000C: "Invalid parameters"
        case 0x000D: "All connections pending"
        case 0x000E: "Invalid MTU/MPS"
        default: hex(result)
        }
    }

    /// The MTU option (type 0x01, hint bit ignored) of a configuration's options (Vol 3, Part A, 5.1): the largest
    /// SDU the sender of the Configure Request can receive. nil when absent (the default, 672, then applies) or
    /// when the options are malformed (a length running past the end).
    public static func mtuOption(_ options: [UInt8]) -> UInt16? {
        var i = 0
        while i + 2 <= options.count {
            let type = options[i] & 0x7F, length = Int(options[i + 1])
            guard i + 2 + length <= options.count else { return nil }
            if type == 0x01, length == 2 { return UInt16(options[i + 2]) | UInt16(options[i + 3]) << 8 }
            i += 2 + length
        }
        return nil
    }

    /// The default L2CAP MTU of a BR/EDR channel when the configuration names none (Vol 3, Part A, 5.1).
    public static let defaultBREDRMTU = 672

    /// Name of a BR/EDR Connection Response result (Vol 3, Part A, 4.3).
    public static func connectionResultName(_ result: UInt16) -> String {
        switch result {
        case 0x0000: "Success"
        case 0x0001: "Pending"
        case 0x0002: "PSM not supported"
        case 0x0003: "Security block"
        case 0x0004: "No resources available"
        case 0x0006: "Invalid Source CID"
        case 0x0007: "Source CID already allocated"
        default: hex(result)
        }
    }

    /// Parses the command data for `code` from a reader over exactly the command's data.
    public init(code: L2CAPSignalCode, parsing input: inout ByteReader) throws(DecodeError) {
        func u16() throws(DecodeError) -> UInt16 { try UInt16(parsingLittleEndian: &input) }
        func cids() throws(DecodeError) -> [UInt16] {
            guard input.remaining % 2 == 0 else { throw .invalidSize(expected: input.remaining + 1, got: input.remaining) }
            var list: [UInt16] = []
            while !input.isAtEnd { list.append(try u16()) }
            return list
        }
        switch code {
        case .commandReject: self = .commandReject(reason: try u16(), data: input.readRemaining())
        case .connectionRequest: self = .connectionRequest(psm: try u16(), sourceCID: try u16())
        case .connectionResponse:
            self = .connectionResponse(destinationCID: try u16(), sourceCID: try u16(), result: try u16(), status: try u16())
        case .configureRequest: self = .configureRequest(destinationCID: try u16(), flags: try u16(), options: input.readRemaining())
        case .configureResponse:
            self = .configureResponse(sourceCID: try u16(), flags: try u16(), result: try u16(), options: input.readRemaining())
        case .disconnectionRequest: self = .disconnectionRequest(destinationCID: try u16(), sourceCID: try u16())
        case .disconnectionResponse: self = .disconnectionResponse(destinationCID: try u16(), sourceCID: try u16())
        case .connectionParameterUpdateRequest:
            self = .connectionParameterUpdateRequest(intervalMin: try u16(), intervalMax: try u16(), latency: try u16(), timeout: try u16())
        case .connectionParameterUpdateResponse: self = .connectionParameterUpdateResponse(result: try u16())
        case .leCreditBasedConnectionRequest:
            self = .leCreditBasedConnectionRequest(
                spsm: try u16(), sourceCID: try u16(), mtu: try u16(), mps: try u16(), initialCredits: try u16())
        case .leCreditBasedConnectionResponse:
            self = .leCreditBasedConnectionResponse(
                destinationCID: try u16(), mtu: try u16(), mps: try u16(), initialCredits: try u16(), result: try u16())
        case .flowControlCreditIndication: self = .flowControlCreditIndication(cid: try u16(), credits: try u16())
        case .creditBasedConnectionRequest:
            self = .creditBasedConnectionRequest(
                spsm: try u16(), mtu: try u16(), mps: try u16(), initialCredits: try u16(), sourceCIDs: try cids())
        case .creditBasedConnectionResponse:
            self = .creditBasedConnectionResponse(
                mtu: try u16(), mps: try u16(), initialCredits: try u16(), result: try u16(), destinationCIDs: try cids())
        case .creditBasedReconfigureRequest:
            self = .creditBasedReconfigureRequest(mtu: try u16(), mps: try u16(), destinationCIDs: try cids())
        case .creditBasedReconfigureResponse: self = .creditBasedReconfigureResponse(result: try u16())
        default: self = .other(code, input.readRemaining())
        }
        try input.expectEnd()
    }

    public func encode(into w: inout ByteWriter) {
        func put(_ values: UInt16...) { for v in values { w.write(littleEndian: v) } }
        switch self {
        case let .commandReject(reason, data): put(reason); w.write(contentsOf: data)
        case let .connectionRequest(p, s): put(p, s)
        case let .connectionResponse(d, s, r, st): put(d, s, r, st)
        case let .configureRequest(d, f, o): put(d, f); w.write(contentsOf: o)
        case let .configureResponse(s, f, r, o): put(s, f, r); w.write(contentsOf: o)
        case let .disconnectionRequest(d, s), let .disconnectionResponse(d, s): put(d, s)
        case let .connectionParameterUpdateRequest(a, b, c, d): put(a, b, c, d)
        case let .connectionParameterUpdateResponse(r), let .creditBasedReconfigureResponse(r): put(r)
        case let .leCreditBasedConnectionRequest(a, b, c, d, e): put(a, b, c, d, e)
        case let .leCreditBasedConnectionResponse(a, b, c, d, e): put(a, b, c, d, e)
        case let .flowControlCreditIndication(c, n): put(c, n)
        case let .creditBasedConnectionRequest(a, b, c, d, list): put(a, b, c, d); for v in list { put(v) }
        case let .creditBasedConnectionResponse(a, b, c, d, list): put(a, b, c, d); for v in list { put(v) }
        case let .creditBasedReconfigureRequest(a, b, list): put(a, b); for v in list { put(v) }
        case let .other(_, data): w.write(contentsOf: data)
        }
    }

    public var summary: String {
        switch self {
        case let .commandReject(reason, data):
            let r =
                reason == 0 ? "command not understood" : reason == 1 ? "signalling MTU exceeded" : reason == 2 ? "invalid CID" : hex(reason)
            return "reason=\(r)" + (data.isEmpty ? "" : " data=" + hexString(data))
        case let .connectionRequest(psm, s): return "psm=\(L2CAPPSM(psm)) scid=\(hex(s))"
        case let .connectionResponse(d, s, r, st):
            return "dcid=\(hex(d)) scid=\(hex(s)) result=\(Self.connectionResultName(r))" + (r == 1 ? " status=\(hex(st))" : "")
        case let .configureRequest(d, f, o):
            return "dcid=\(hex(d))" + (f & 1 != 0 ? " continued" : "") + (Self.mtuOption(o).map { " mtu=\($0)" } ?? "")
        case let .configureResponse(s, f, r, o):
            let result =
                r == 0
                ? "Success"
                : r == 1 ? "Unacceptable parameters" : r == 2 ? "Rejected" : r == 3 ? "Unknown options" : r == 4 ? "Pending" : hex(r)
            return "scid=\(hex(s))" + (f & 1 != 0 ? " continued" : "") + " result=\(result)"
                + (Self.mtuOption(o).map { " mtu=\($0)" } ?? "")
        case let .disconnectionRequest(d, s), let .disconnectionResponse(d, s): return "dcid=\(hex(d)) scid=\(hex(s))"
        case let .connectionParameterUpdateRequest(a, b, c, d):
            return "interval=\(Units.interval1250(a))–\(Units.interval1250(b)) latency=\(c) timeout=\(Units.timeout10(d))"
        case let .connectionParameterUpdateResponse(r): return "result=\(r == 0 ? "accepted" : r == 1 ? "rejected" : hex(r))"
        case let .leCreditBasedConnectionRequest(spsm, scid, mtu, mps, cr):
            return "spsm=\(hex(spsm)) scid=\(hex(scid)) mtu=\(mtu) mps=\(mps) credits=\(cr)"
        case let .leCreditBasedConnectionResponse(dcid, mtu, mps, cr, r):
            return "dcid=\(hex(dcid)) mtu=\(mtu) mps=\(mps) credits=\(cr) result=\(Self.resultName(r))"
        case let .flowControlCreditIndication(c, n): return "cid=\(hex(c)) credits=\(n)"
        case let .creditBasedConnectionRequest(spsm, mtu, mps, cr, list):
            return "spsm=\(hex(spsm)) mtu=\(mtu) mps=\(mps) credits=\(cr) scids=[\(list.map { hex($0) }.joined(separator: ","))]"
        case let .creditBasedConnectionResponse(mtu, mps, cr, r, list):
            return "mtu=\(mtu) mps=\(mps) credits=\(cr) result=\(Self.resultName(r)) dcids=[\(list.map { hex($0) }.joined(separator: ","))]"
        case let .creditBasedReconfigureRequest(mtu, mps, list):
            return "mtu=\(mtu) mps=\(mps) dcids=[\(list.map { hex($0) }.joined(separator: ","))]"
        case let .creditBasedReconfigureResponse(r): return "result=\(hex(r))"
        case let .other(_, data): return data.isEmpty ? "" : "data=" + hexString(data)
        }
    }
}

/// One signalling command: code(1) identifier(1) length(2) data (Vol 3, Part A, 4).
///
/// The LE signalling channel carries exactly one command per C-frame; the BR/EDR channel may carry several
/// (use ``parseAll(_:)``).
public struct L2CAPSignal: WireCodable, CustomStringConvertible {
    public var identifier: UInt8
    public var command: L2CAPSignalCommand
    public init(identifier: UInt8, command: L2CAPSignalCommand) { self.identifier = identifier; self.command = command }
    public var code: L2CAPSignalCode { command.code }
    /// - Throws: when the length field exceeds the bytes present, or the data does not fit the code's layout.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let code = L2CAPSignalCode(try input.readUInt8())
        identifier = try input.readUInt8()
        let length = Int(try UInt16(parsingLittleEndian: &input))
        var body = try input.slice(length)
        command = try L2CAPSignalCommand(code: code, parsing: &body)
    }
    public func encode(into w: inout ByteWriter) {
        var body = ByteWriter()
        command.encode(into: &body)
        w.write(code.rawValue); w.write(identifier); w.write(littleEndian: UInt16(truncatingIfNeeded: body.count))
        w.write(contentsOf: body.bytes)
    }
    /// Every command in a signalling C-frame payload.
    public static func parseAll(_ input: inout ByteReader) throws(DecodeError) -> [L2CAPSignal] {
        var list: [L2CAPSignal] = []
        while !input.isAtEnd { list.append(try L2CAPSignal(parsing: &input)) }
        return list
    }
    /// `Connection Parameter Update Request id=1 interval=…`.
    public var summary: String {
        let s = command.summary
        return "\(code) id=\(identifier)" + (s.isEmpty ? "" : " " + s)
    }
    public var description: String { summary }
}
