import BLECore

/// An ATT PDU opcode (Core Spec 5.4 Vol 3, Part F, 3.3.1 and 3.4.8).
///
/// Bits 0–5 are the method, bit 6 the command flag, bit 7 the authentication signature flag.
/// Open struct: an unknown opcode prints as `ATTOpcode(0x7f)` and is kept.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let errorResponse = ATTOpcode(0x01)
    public static let exchangeMTURequest = ATTOpcode(0x02)
    public static let exchangeMTUResponse = ATTOpcode(0x03)
    public static let findInformationRequest = ATTOpcode(0x04)
    public static let findInformationResponse = ATTOpcode(0x05)
    public static let findByTypeValueRequest = ATTOpcode(0x06)
    public static let findByTypeValueResponse = ATTOpcode(0x07)
    public static let readByTypeRequest = ATTOpcode(0x08)
    public static let readByTypeResponse = ATTOpcode(0x09)
    public static let readRequest = ATTOpcode(0x0A)
    public static let readResponse = ATTOpcode(0x0B)
    public static let readBlobRequest = ATTOpcode(0x0C)
    public static let readBlobResponse = ATTOpcode(0x0D)
    public static let readMultipleRequest = ATTOpcode(0x0E)
    public static let readMultipleResponse = ATTOpcode(0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(0x10)
    public static let readByGroupTypeResponse = ATTOpcode(0x11)
    public static let writeRequest = ATTOpcode(0x12)
    public static let writeResponse = ATTOpcode(0x13)
    public static let prepareWriteRequest = ATTOpcode(0x16)
    public static let prepareWriteResponse = ATTOpcode(0x17)
    public static let executeWriteRequest = ATTOpcode(0x18)
    public static let executeWriteResponse = ATTOpcode(0x19)
    public static let handleValueNotification = ATTOpcode(0x1B)
    public static let handleValueIndication = ATTOpcode(0x1D)
    public static let handleValueConfirmation = ATTOpcode(0x1E)
    public static let readMultipleVariableRequest = ATTOpcode(0x20)
    public static let readMultipleVariableResponse = ATTOpcode(0x21)
    public static let multipleHandleValueNotification = ATTOpcode(0x23)
    public static let writeCommand = ATTOpcode(0x52)
    public static let signedWriteCommand = ATTOpcode(0xD2)

    /// Bits 0–5.
    @inlinable public var methodBits: UInt8 { rawValue & 0x3F }
    /// Bit 6: the PDU is a command (no response).
    @inlinable public var isCommandFlagSet: Bool { rawValue & 0x40 != 0 }
    /// Bit 7: a 12-byte authentication signature follows the parameters.
    @inlinable public var hasAuthenticationSignature: Bool { rawValue & 0x80 != 0 }

    /// Request, response, command, notification, indication or confirmation (Vol 3, Part F, 3.3).
    public var method: ATTMethodType {
        switch rawValue {
        case 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20: .request
        case 0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21: .response
        case 0x1B, 0x23: .notification
        case 0x1D: .indication
        case 0x1E: .confirmation
        default: isCommandFlagSet ? .command : .unknown
        }
    }
    public var isRequest: Bool { method == .request }
    public var isResponse: Bool { method == .response }

    /// The opcode that answers this one: the response for a request (Error Response may answer any
    /// request too), the confirmation for an indication; nil otherwise.
    public var responseOpcode: ATTOpcode? {
        switch method {
        case .request: ATTOpcode(rawValue &+ 1)
        case .indication: .handleValueConfirmation
        default: nil
        }
    }

    /// The request this response or confirmation answers (nil for Error Response, which names it in its body).
    public var requestOpcode: ATTOpcode? {
        switch method {
        case .response where self != .errorResponse: ATTOpcode(rawValue &- 1)
        case .confirmation: .handleValueIndication
        default: nil
        }
    }

    /// Offset of the attribute handle in the PDU (opcode at 0), for the PDUs that name one handle.
    @inlinable public var handleOffset: Int? {
        switch rawValue {
        case 0x0A, 0x0C, 0x12, 0x16, 0x17, 0x1B, 0x1D, 0x52, 0xD2: 1
        case 0x01: 2
        default: nil
        }
    }

    public var name: String? { ATTTable.entries[rawValue]?.name }
    /// Where the PDU holds its one attribute value, for the opcodes whose PDU carries one (``ATTTable``); nil otherwise.
    @inlinable public var valueLayout: ATTValueLayout? { ATTTable.valueLayouts[Int(rawValue)] }
    public var description: String { name ?? "ATTOpcode(\(hex(rawValue)))" }
}

/// Classification of an ATT PDU (Vol 3, Part F, 3.3 "Attribute PDU").
public enum ATTMethodType: String, Hashable, Sendable, CaseIterable {
    case request, response, command, notification, indication, confirmation, unknown
}

/// An ATT error code (Vol 3, Part F, 3.4.1.1; common profile codes from Core Spec Supplement Part B, 1.2).
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(0x01)
    public static let readNotPermitted = ATTErrorCode(0x02)
    public static let writeNotPermitted = ATTErrorCode(0x03)
    public static let invalidPDU = ATTErrorCode(0x04)
    public static let insufficientAuthentication = ATTErrorCode(0x05)
    public static let requestNotSupported = ATTErrorCode(0x06)
    public static let invalidOffset = ATTErrorCode(0x07)
    public static let insufficientAuthorization = ATTErrorCode(0x08)
    public static let prepareQueueFull = ATTErrorCode(0x09)
    public static let attributeNotFound = ATTErrorCode(0x0A)
    public static let attributeNotLong = ATTErrorCode(0x0B)
    public static let encryptionKeySizeTooShort = ATTErrorCode(0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(0x0D)
    public static let unlikelyError = ATTErrorCode(0x0E)
    public static let insufficientEncryption = ATTErrorCode(0x0F)
    public static let unsupportedGroupType = ATTErrorCode(0x10)
    public static let insufficientResources = ATTErrorCode(0x11)
    public static let databaseOutOfSync = ATTErrorCode(0x12)
    public static let valueNotAllowed = ATTErrorCode(0x13)
    public static let writeRequestRejected = ATTErrorCode(0xFC)
    public static let cccdImproperlyConfigured = ATTErrorCode(0xFD)
    public static let procedureAlreadyInProgress = ATTErrorCode(0xFE)
    public static let outOfRange = ATTErrorCode(0xFF)

    static let names: [String] = [
        "Reserved (0x00)", "Invalid Handle", "Read Not Permitted", "Write Not Permitted", "Invalid PDU",
        "Insufficient Authentication", "Request Not Supported", "Invalid Offset", "Insufficient Authorization",
        "Prepare Queue Full", "Attribute Not Found", "Attribute Not Long", "Encryption Key Size Too Short",
        "Invalid Attribute Value Length", "Unlikely Error", "Insufficient Encryption", "Unsupported Group Type",
        "Insufficient Resources", "Database Out Of Sync", "Value Not Allowed",
    ]

    public var name: String? {
        switch rawValue {
        case 0x01...0x13: Self.names[Int(rawValue)]
        case 0x80...0x9F: "Application Error (\(hex(rawValue)))"
        case 0xFC: "Write Request Rejected"
        case 0xFD: "Client Characteristic Configuration Descriptor Improperly Configured"
        case 0xFE: "Procedure Already in Progress"
        case 0xFF: "Out of Range"
        default: nil
        }
    }
    public var isApplicationError: Bool { (0x80...0x9F).contains(rawValue) }
    /// Unassigned codes read as Wireshark shows them ("Unknown (0xf7)").
    public var description: String { name ?? "Unknown (\(hex(rawValue)))" }
}

/// The opcode and (when the PDU names one) attribute handle of an ATT PDU, read without allocating.
///
/// The analyzer's hot path: `ATTHeader(parsing: &reader)` or `ATTHeader.opcode(of: buffer)`; for the value of a
/// notification, indication or write, `opcode.valueLayout?.value(in: buffer)`.
public struct ATTHeader: Hashable, Sendable {
    public var opcode: ATTOpcode
    /// The attribute handle for PDUs that carry one handle (read, read blob, write, prepare write,
    /// notification, indication, write command, signed write, and the handle in error) — nil otherwise or if short.
    public var handle: UInt16?

    public init(opcode: ATTOpcode, handle: UInt16?) { self.opcode = opcode; self.handle = handle }

    /// Reads the opcode and peeks the handle; the reader advances past the opcode only.
    @inlinable public init(parsing input: inout ByteReader) throws(DecodeError) {
        opcode = ATTOpcode(rawValue: try input.readUInt8())
        handle = nil
        if let off = opcode.handleOffset {
            let rest = input.remainingBytes
            let i = off &- 1
            if rest.count >= i &+ 2 { handle = UInt16(rest[i]) | UInt16(rest[i &+ 1]) << 8 }
        }
    }

    /// The header of the ATT PDU starting at `pdu[0]`, nil for an empty buffer.
    @inlinable public init?(of pdu: UnsafeRawBufferPointer) {
        guard let first = pdu.first else { return nil }
        opcode = ATTOpcode(rawValue: first)
        handle = nil
        if let off = opcode.handleOffset, pdu.count >= off &+ 2 { handle = UInt16(pdu[off]) | UInt16(pdu[off &+ 1]) << 8 }
    }

    /// The opcode of the ATT PDU starting at `buffer[0]`, nil for an empty buffer.
    @inlinable public static func opcode(of buffer: UnsafeRawBufferPointer) -> ATTOpcode? {
        buffer.isEmpty ? nil : ATTOpcode(rawValue: buffer[0])
    }
}
