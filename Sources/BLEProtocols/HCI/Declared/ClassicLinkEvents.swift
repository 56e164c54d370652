import BLECore

// The BR/EDR events that authenticate a link and change its role or mode (Core Spec 6.0 Vol 4, Part E, 7.7), declared
// for the diagnosis's BR/EDR rules and the timeline, which names their fields (a link key is never printed).

/// Authentication Complete (7.7.6): status, handle.
public struct AuthenticationComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x06))
    public static let name = "Authentication Complete"
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// Role Change (7.7.18): status, the peer's BD_ADDR, the new role of this side (0 central, 1 peripheral).
public struct RoleChange: HCIParameterSet {
    public var status = HCIStatus.success
    public var address = BDAddress(0)
    public var role: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x12))
    public static let name = "Role Change"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .address("address", \.address), .u8("role", \.role, .named([0: "central", 1: "peripheral"])),
    ]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// Mode Change (7.7.20): status, handle, current mode (0 active, 1 hold, 2 sniff), interval (0.625 ms slots).
public struct ModeChange: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var mode: UInt8 = 0
    public var interval: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x14))
    public static let name = "Mode Change"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .u8("mode", \.mode, .named([0: "active", 1: "hold", 2: "sniff"])),
        .u16("interval", \.interval),
    ]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// PIN Code Request (7.7.22): the peer's BD_ADDR (legacy pairing).
public struct PINCodeRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x16))
    public static let name = "PIN Code Request"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// Link Key Request (7.7.23): the controller asks the host for the stored link key of BD_ADDR.
public struct LinkKeyRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x17))
    public static let name = "Link Key Request"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// Link Key Notification (7.7.24): a new link key for BD_ADDR (the pairing succeeded), its type. The key is a secret:
/// never printed.
public struct LinkKeyNotification: HCIParameterSet {
    public var address = BDAddress(0)
    public var key: [UInt8] = []
    public var keyType: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x18))
    public static let name = "Link Key Notification"
    public static let fields: [HCIField<Self>] = [
        .address("address", \.address), .bytes("key", \.key, count: 16, hidden: true), .u8("keyType", \.keyType),
    ]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// IO Capability Request (7.7.40): the controller asks the host for its IO capabilities toward BD_ADDR (Secure Simple
/// Pairing starts).
public struct IOCapabilityRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x31))
    public static let name = "IO Capability Request"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// IO Capability Response (7.7.41): the peer's IO capability, OOB data present, authentication requirements.
public struct IOCapabilityResponse: HCIParameterSet {
    public var address = BDAddress(0)
    public var ioCapability: UInt8 = 0
    public var oobDataPresent: UInt8 = 0
    public var authenticationRequirements: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x32))
    public static let name = "IO Capability Response"
    public static let fields: [HCIField<Self>] = [
        .address("address", \.address), .u8("io", \.ioCapability), .u8("oob", \.oobDataPresent),
        .u8("authReq", \.authenticationRequirements, .hex),
    ]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// Simple Pairing Complete (7.7.45): status, the peer's BD_ADDR.
public struct SimplePairingComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x36))
    public static let name = "Simple Pairing Complete"
    public static let fields: [HCIField<Self>] = [.status(\.status), .address("address", \.address)]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}
