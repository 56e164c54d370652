import BLECore

// The BR/EDR Secure Simple Pairing steps and the key size query (Core Spec 6.0 Vol 4, Part E, 7.1.29, 7.5.7,
// 7.7.42–44, 7.7.48), declared for the link's security record (which association model ran, the key size in force) and
// the timeline. A passkey or numeric value is what the user saw, not a key: it is printed.

/// IO Capability Request Reply (7.1.29): this side's IO capability, OOB data present, authentication requirements.
public struct IOCapabilityRequestReply: HCIParameterSet {
    public var address = BDAddress(0)
    public var ioCapability: UInt8 = 0
    public var oobDataPresent: UInt8 = 0
    public var authenticationRequirements: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x002B))
    public static let name = "IO Capability Request Reply"
    public static let fields: [HCIField<Self>] = [
        .address("address", \.address), .u8("io", \.ioCapability), .u8("oob", \.oobDataPresent),
        .u8("authReq", \.authenticationRequirements, .hex),
    ]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// User Confirmation Request (7.7.42): Numeric Comparison (or Just Works, confirmed automatically) with its value.
public struct UserConfirmationRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public var numericValue: UInt32 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x33))
    public static let name = "User Confirmation Request"
    public static let fields: [HCIField<Self>] = [.address("address", \.address), .u32("numericValue", \.numericValue)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// User Passkey Request (7.7.43): this side must enter the passkey (Passkey Entry).
public struct UserPasskeyRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x34))
    public static let name = "User Passkey Request"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// Remote OOB Data Request (7.7.44): the pairing uses out-of-band data.
public struct RemoteOOBDataRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x35))
    public static let name = "Remote OOB Data Request"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// User Confirmation Request Reply (7.1.30) and Negative Reply (7.1.31): this side's user accepted or rejected the
/// pairing the User Confirmation Request asked about.
public struct UserConfirmationRequestReply: HCIParameterSet {
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x002C))
    public static let name = "User Confirmation Request Reply"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

public struct UserConfirmationRequestNegativeReply: HCIParameterSet {
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x002D))
    public static let name = "User Confirmation Request Negative Reply"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// User Passkey Request Reply (7.1.32) and Negative Reply (7.1.33): the passkey this side's user typed, or none.
public struct UserPasskeyRequestReply: HCIParameterSet {
    public var address = BDAddress(0)
    public var passkey: UInt32 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x002E))
    public static let name = "User Passkey Request Reply"
    public static let fields: [HCIField<Self>] = [.address("address", \.address), .u32("passkey", \.passkey)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

public struct UserPasskeyRequestNegativeReply: HCIParameterSet {
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x002F))
    public static let name = "User Passkey Request Negative Reply"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// User Passkey Notification (7.7.48): this side shows the passkey the peer enters (Passkey Entry).
public struct UserPasskeyNotification: HCIParameterSet {
    public var address = BDAddress(0)
    public var passkey: UInt32 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x3B))
    public static let name = "User Passkey Notification"
    public static let fields: [HCIField<Self>] = [.address("address", \.address), .u32("passkey", \.passkey)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// Read Encryption Key Size (7.5.7): the key size of an encrypted link, asked by handle.
public struct ReadEncryptionKeySize: HCIParameterSet {
    public var handle: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.readEncryptionKeySize)
    public static let name = "Read Encryption Key Size"
    public static let fields: [HCIField<Self>] = [.handle(\.handle)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// Read Encryption Key Size's return parameters (7.5.7): status, handle, the key size in octets.
public struct ReadEncryptionKeySizeReturn: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var keySize: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.returnParameters(.readEncryptionKeySize)
    public static let name = "Read Encryption Key Size"
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle), .u8("keySize", \.keySize)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

extension HCICommand {
    /// Read Encryption Key Size (Core Spec Vol 4, Part E, 7.5.7).
    public static let readEncryptionKeySize = HCICommand(ogf: 0x05, ocf: 0x0008)
}
