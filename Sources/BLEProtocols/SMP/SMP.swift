import BLECore

/// A Security Manager Protocol command code (Core Spec 5.4 Vol 3, Part H, 3.3).
public struct SMPCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
    public static let pairingRequest = SMPCode(0x01)
    public static let pairingResponse = SMPCode(0x02)
    public static let pairingConfirm = SMPCode(0x03)
    public static let pairingRandom = SMPCode(0x04)
    public static let pairingFailed = SMPCode(0x05)
    public static let encryptionInformation = SMPCode(0x06)
    public static let centralIdentification = SMPCode(0x07)
    public static let identityInformation = SMPCode(0x08)
    public static let identityAddressInformation = SMPCode(0x09)
    public static let signingInformation = SMPCode(0x0A)
    public static let securityRequest = SMPCode(0x0B)
    public static let pairingPublicKey = SMPCode(0x0C)
    public static let pairingDHKeyCheck = SMPCode(0x0D)
    public static let pairingKeypressNotification = SMPCode(0x0E)

    public var name: String? { SMPTable.entries[rawValue]?.name }
    public var description: String { name ?? "SMPCode(\(hex(rawValue)))" }
}

/// IO capability (Vol 3, Part H, 3.5.1, Table 3.4).
public struct SMPIOCapability: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let displayOnly = SMPIOCapability(rawValue: 0)
    public static let displayYesNo = SMPIOCapability(rawValue: 1)
    public static let keyboardOnly = SMPIOCapability(rawValue: 2)
    public static let noInputNoOutput = SMPIOCapability(rawValue: 3)
    public static let keyboardDisplay = SMPIOCapability(rawValue: 4)
    public var description: String {
        switch rawValue {
        case 0: "DisplayOnly"
        case 1: "DisplayYesNo"
        case 2: "KeyboardOnly"
        case 3: "NoInputNoOutput"
        case 4: "KeyboardDisplay"
        default: "SMPIOCapability(\(hex(rawValue)))"
        }
    }
}

/// AuthReq flags (Vol 3, Part H, 3.5.1, Figure 3.3): bonding flags (bits 0–1), MITM (2), SC (3),
/// keypress (4), CT2 (5), RFU (6–7).
public struct SMPAuthReq: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Bonding flags 01.
    public static let bonding = SMPAuthReq(rawValue: 0x01)
    public static let mitm = SMPAuthReq(rawValue: 0x04)
    public static let secureConnections = SMPAuthReq(rawValue: 0x08)
    public static let keypress = SMPAuthReq(rawValue: 0x10)
    public static let ct2 = SMPAuthReq(rawValue: 0x20)
    /// Bits 0–1: 00 no bonding, 01 bonding, others reserved.
    public var bondingFlags: UInt8 { rawValue & 0x3 }
    public var description: String {
        var parts: [String] = [bondingFlags == 0 ? "No Bonding" : bondingFlags == 1 ? "Bonding" : "Bonding(\(bondingFlags))"]
        if contains(.mitm) { parts.append("MITM") }
        if contains(.secureConnections) { parts.append("SC") }
        if contains(.keypress) { parts.append("Keypress") }
        if contains(.ct2) { parts.append("CT2") }
        if rawValue & 0xC0 != 0 { parts.append("RFU(\(hex(rawValue & 0xC0)))") }
        return parts.joined(separator: "|")
    }
}

/// Key distribution flags (Vol 3, Part H, 3.6.1): EncKey (0), IdKey (1), SignKey (2), LinkKey (3).
public struct SMPKeyDistribution: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let encKey = SMPKeyDistribution(rawValue: 0x01)
    public static let idKey = SMPKeyDistribution(rawValue: 0x02)
    public static let signKey = SMPKeyDistribution(rawValue: 0x04)
    public static let linkKey = SMPKeyDistribution(rawValue: 0x08)
    public var description: String {
        var parts: [String] = []
        if contains(.encKey) { parts.append("EncKey") }
        if contains(.idKey) { parts.append("IdKey") }
        if contains(.signKey) { parts.append("SignKey") }
        if contains(.linkKey) { parts.append("LinkKey") }
        if rawValue & 0xF0 != 0 { parts.append("RFU(\(hex(rawValue & 0xF0)))") }
        return parts.isEmpty ? "none" : parts.joined(separator: "|")
    }
}

/// Pairing Failed reason (Vol 3, Part H, 3.5.5, Table 3.7).
public struct SMPPairingFailedReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
    public static let passkeyEntryFailed = SMPPairingFailedReason(0x01)
    public static let oobNotAvailable = SMPPairingFailedReason(0x02)
    public static let authenticationRequirements = SMPPairingFailedReason(0x03)
    public static let confirmValueFailed = SMPPairingFailedReason(0x04)
    public static let pairingNotSupported = SMPPairingFailedReason(0x05)
    public static let encryptionKeySize = SMPPairingFailedReason(0x06)
    public static let commandNotSupported = SMPPairingFailedReason(0x07)
    public static let unspecifiedReason = SMPPairingFailedReason(0x08)
    public static let repeatedAttempts = SMPPairingFailedReason(0x09)
    public static let invalidParameters = SMPPairingFailedReason(0x0A)
    public static let dhKeyCheckFailed = SMPPairingFailedReason(0x0B)
    public static let numericComparisonFailed = SMPPairingFailedReason(0x0C)
    public static let brEdrPairingInProgress = SMPPairingFailedReason(0x0D)
    public static let crossTransportKeyNotAllowed = SMPPairingFailedReason(0x0E)
    public static let keyRejected = SMPPairingFailedReason(0x0F)
    static let names = [
        "Reserved (0x00)", "Passkey Entry Failed", "OOB Not Available", "Authentication Requirements",
        "Confirm Value Failed", "Pairing Not Supported", "Encryption Key Size", "Command Not Supported",
        "Unspecified Reason", "Repeated Attempts", "Invalid Parameters", "DHKey Check Failed",
        "Numeric Comparison Failed", "BR/EDR Pairing In Progress", "Cross-transport Key Derivation/Generation Not Allowed",
        "Key Rejected",
    ]
    public var name: String? { rawValue > 0 && Int(rawValue) < Self.names.count ? Self.names[Int(rawValue)] : nil }
    public var description: String { name ?? "SMPPairingFailedReason(\(hex(rawValue)))" }
}

/// Keypress notification type (Vol 3, Part H, 3.5.8).
public struct SMPKeypressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public var description: String {
        switch rawValue {
        case 0: "Passkey entry started"
        case 1: "Passkey digit entered"
        case 2: "Passkey digit erased"
        case 3: "Passkey cleared"
        case 4: "Passkey entry completed"
        default: "SMPKeypressType(\(hex(rawValue)))"
        }
    }
}

/// Pairing Request/Response parameters (Vol 3, Part H, 3.5.1–3.5.2): IO capability(1) OOB flag(1) AuthReq(1)
/// max key size(1) initiator key distribution(1) responder key distribution(1).
public struct SMPPairingParameters: Hashable, Sendable, CustomStringConvertible {
    public var ioCapability: SMPIOCapability
    /// 0 OOB data not present, 1 present.
    public var oobDataFlag: UInt8
    public var authReq: SMPAuthReq
    public var maxEncryptionKeySize: UInt8
    public var initiatorKeyDistribution: SMPKeyDistribution
    public var responderKeyDistribution: SMPKeyDistribution
    public init(
        ioCapability: SMPIOCapability, oobDataFlag: UInt8 = 0, authReq: SMPAuthReq, maxEncryptionKeySize: UInt8 = 16,
        initiatorKeyDistribution: SMPKeyDistribution, responderKeyDistribution: SMPKeyDistribution
    ) {
        self.ioCapability = ioCapability; self.oobDataFlag = oobDataFlag; self.authReq = authReq
        self.maxEncryptionKeySize = maxEncryptionKeySize; self.initiatorKeyDistribution = initiatorKeyDistribution
        self.responderKeyDistribution = responderKeyDistribution
    }
    init(parsing input: inout ByteReader) throws(DecodeError) {
        ioCapability = SMPIOCapability(rawValue: try input.readUInt8())
        oobDataFlag = try input.readUInt8()
        authReq = SMPAuthReq(rawValue: try input.readUInt8())
        maxEncryptionKeySize = try input.readUInt8()
        initiatorKeyDistribution = SMPKeyDistribution(rawValue: try input.readUInt8())
        responderKeyDistribution = SMPKeyDistribution(rawValue: try input.readUInt8())
    }
    func encode(into w: inout ByteWriter) {
        w.write(ioCapability.rawValue); w.write(oobDataFlag); w.write(authReq.rawValue); w.write(maxEncryptionKeySize)
        w.write(initiatorKeyDistribution.rawValue); w.write(responderKeyDistribution.rawValue)
    }
    public var description: String {
        "io=\(ioCapability) oob=\(oobDataFlag == 0 ? "absent" : oobDataFlag == 1 ? "present" : hex(oobDataFlag)) auth=\(authReq) maxKeySize=\(maxEncryptionKeySize) initKeys=\(initiatorKeyDistribution) respKeys=\(responderKeyDistribution)"
    }
}

/// One SMP PDU (Core Spec 5.4 Vol 3, Part H, 3.5–3.6). Keys and values are kept in wire order (LSB first).
public enum SMPPDU: WireCodable, CustomStringConvertible {
    case pairingRequest(SMPPairingParameters)
    case pairingResponse(SMPPairingParameters)
    /// Confirm value (16).
    case pairingConfirm([UInt8])
    /// Random value (16).
    case pairingRandom([UInt8])
    case pairingFailed(SMPPairingFailedReason)
    /// Long Term Key (16).
    case encryptionInformation(longTermKey: [UInt8])
    case centralIdentification(ediv: UInt16, rand: UInt64)
    /// Identity Resolving Key (16).
    case identityInformation(irk: [UInt8])
    case identityAddressInformation(addressType: UInt8, address: BDAddress)
    /// Connection Signature Resolving Key (16).
    case signingInformation(csrk: [UInt8])
    case securityRequest(SMPAuthReq)
    /// Public key X(32) Y(32).
    case pairingPublicKey(x: [UInt8], y: [UInt8])
    /// DHKey check value (16).
    case pairingDHKeyCheck([UInt8])
    case pairingKeypressNotification(SMPKeypressType)
    case unknown(SMPCode, [UInt8])

    public var code: SMPCode {
        switch self {
        case .pairingRequest: .pairingRequest
        case .pairingResponse: .pairingResponse
        case .pairingConfirm: .pairingConfirm
        case .pairingRandom: .pairingRandom
        case .pairingFailed: .pairingFailed
        case .encryptionInformation: .encryptionInformation
        case .centralIdentification: .centralIdentification
        case .identityInformation: .identityInformation
        case .identityAddressInformation: .identityAddressInformation
        case .signingInformation: .signingInformation
        case .securityRequest: .securityRequest
        case .pairingPublicKey: .pairingPublicKey
        case .pairingDHKeyCheck: .pairingDHKeyCheck
        case .pairingKeypressNotification: .pairingKeypressNotification
        case let .unknown(c, _): c
        }
    }

    /// - Throws: ``DecodeError/invalidSize(expected:got:)`` when the parameters differ from the table's fixed size.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let code = SMPCode(try input.readUInt8())
        guard let info = SMPTable.entries[code.rawValue] else {
            self = .unknown(code, input.readRemaining())
            return
        }
        guard input.remaining == info.size else { throw .invalidSize(expected: 1 + info.size, got: 1 + input.remaining) }
        self = try info.decode(&input)
    }

    public func encode(into w: inout ByteWriter) {
        w.write(code.rawValue)
        func fixed(_ b: [UInt8], _ n: Int) {
            w.write(contentsOf: b.prefix(n))
            if b.count < n { w.write(contentsOf: [UInt8](repeating: 0, count: n - b.count)) }
        }
        switch self {
        case let .pairingRequest(p), let .pairingResponse(p): p.encode(into: &w)
        case let .pairingConfirm(v), let .pairingRandom(v), let .encryptionInformation(v), let .identityInformation(v),
            let .signingInformation(v), let .pairingDHKeyCheck(v):
            fixed(v, 16)
        case let .pairingFailed(r): w.write(r.rawValue)
        case let .centralIdentification(ediv, rand): w.write(littleEndian: ediv); w.write(littleEndian: rand)
        case let .identityAddressInformation(t, a): w.write(t); a.encode(into: &w)
        case let .securityRequest(a): w.write(a.rawValue)
        case let .pairingPublicKey(x, y): fixed(x, 32); fixed(y, 32)
        case let .pairingKeypressNotification(t): w.write(t.rawValue)
        case let .unknown(_, b): w.write(contentsOf: b)
        }
    }

    public var summary: String {
        let fields: String
        switch self {
        case let .pairingRequest(p), let .pairingResponse(p): fields = p.description
        case let .pairingConfirm(v), let .pairingRandom(v), let .pairingDHKeyCheck(v): fields = "value=\(hexString(v))"
        case let .pairingFailed(r): fields = "reason=\(r)"
        case let .encryptionInformation(k): fields = "ltk=\(hexString(k))"
        case let .centralIdentification(ediv, rand): fields = "ediv=\(hex(ediv)) rand=\(hex(rand))"
        case let .identityInformation(k): fields = "irk=\(hexString(k))"
        case let .identityAddressInformation(t, a): fields = "address=\(a) (\(t == 0 ? "public" : t == 1 ? "random" : hex(t)))"
        case let .signingInformation(k): fields = "csrk=\(hexString(k))"
        case let .securityRequest(a): fields = "auth=\(a)"
        case let .pairingPublicKey(x, y): fields = "x=\(hexString(x)) y=\(hexString(y))"
        case let .pairingKeypressNotification(t): fields = "type=\(t)"
        case let .unknown(_, b): fields = b.isEmpty ? "" : "params=" + hexString(b)
        }
        return fields.isEmpty ? code.description : "\(code) \(fields)"
    }
    public var description: String { summary }
}

public typealias SMPDecoder = @Sendable (inout ByteReader) throws(DecodeError) -> SMPPDU

/// One row of the SMP table: name, fixed parameter size after the code, decoder.
public struct SMPCodeInfo: Sendable {
    public var name: String
    public var size: Int
    public var decode: SMPDecoder
    init(_ name: String, size: Int, _ decode: @escaping SMPDecoder) { self.name = name; self.size = size; self.decode = decode }
}

/// The SMP table (Core Spec 5.4 Vol 3, Part H, 3.3, Table 3.2): every command with name, size and decoder.
public enum SMPTable {
    public static let entries: [UInt8: SMPCodeInfo] = [
        0x01: .init("Pairing Request", size: 6) { r throws(DecodeError) in .pairingRequest(try SMPPairingParameters(parsing: &r)) },
        0x02: .init("Pairing Response", size: 6) { r throws(DecodeError) in .pairingResponse(try SMPPairingParameters(parsing: &r)) },
        0x03: .init("Pairing Confirm", size: 16) { r throws(DecodeError) in .pairingConfirm(try r.readArray(16)) },
        0x04: .init("Pairing Random", size: 16) { r throws(DecodeError) in .pairingRandom(try r.readArray(16)) },
        0x05: .init("Pairing Failed", size: 1) { r throws(DecodeError) in .pairingFailed(SMPPairingFailedReason(try r.readUInt8())) },
        0x06: .init("Encryption Information", size: 16) { r throws(DecodeError) in .encryptionInformation(longTermKey: try r.readArray(16))
        },
        0x07: .init("Central Identification", size: 10) { r throws(DecodeError) in
            .centralIdentification(ediv: try UInt16(parsingLittleEndian: &r), rand: try UInt64(parsingLittleEndian: &r))
        },
        0x08: .init("Identity Information", size: 16) { r throws(DecodeError) in .identityInformation(irk: try r.readArray(16)) },
        0x09: .init("Identity Address Information", size: 7) { r throws(DecodeError) in
            .identityAddressInformation(addressType: try r.readUInt8(), address: try BDAddress(parsing: &r))
        },
        0x0A: .init("Signing Information", size: 16) { r throws(DecodeError) in .signingInformation(csrk: try r.readArray(16)) },
        0x0B: .init("Security Request", size: 1) { r throws(DecodeError) in .securityRequest(SMPAuthReq(rawValue: try r.readUInt8())) },
        0x0C: .init("Pairing Public Key", size: 64) { r throws(DecodeError) in
            .pairingPublicKey(x: try r.readArray(32), y: try r.readArray(32))
        },
        0x0D: .init("Pairing DHKey Check", size: 16) { r throws(DecodeError) in .pairingDHKeyCheck(try r.readArray(16)) },
        0x0E: .init("Pairing Keypress Notification", size: 1) { r throws(DecodeError) in
            .pairingKeypressNotification(SMPKeypressType(rawValue: try r.readUInt8()))
        },
    ]
}
