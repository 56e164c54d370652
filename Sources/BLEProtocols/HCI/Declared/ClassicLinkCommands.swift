import BLECore

// The BR/EDR commands that page a device and authenticate its link (Core Spec 6.0 Vol 4, Part E, 7.1), and the LE
// reply that hands the controller a long-term key (7.8.25), declared so that the timeline names their fields and never
// prints a key: a link key or LTK in a log is a secret the reader may share the output of.

/// Create Connection (7.1.5): page BD_ADDR with these packet types, page scan repetition mode and clock offset.
public struct CreateConnection: HCIParameterSet {
    public var address = BDAddress(0)
    public var packetType: UInt16 = 0
    public var pageScanRepetitionMode: UInt8 = 0
    public var reserved: UInt8 = 0
    public var clockOffset: UInt16 = 0
    public var allowRoleSwitch: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x0005))
    public static let name = "Create Connection"
    public static let fields: [HCIField<Self>] = [
        .address("address", \.address), .u16("packetType", \.packetType, .hex),
        .u8("pageScanRepetition", \.pageScanRepetitionMode, .named([0: "R0", 1: "R1", 2: "R2"])),
        .u8("reserved", \.reserved, .hidden), .u16("clockOffset", \.clockOffset, .hex),
        .u8("roleSwitch", \.allowRoleSwitch, .named([0: "not allowed", 1: "allowed"])),
    ]
}

/// Link Key Request Reply (7.1.10): the host gives the stored link key of BD_ADDR (never printed).
public struct LinkKeyRequestReply: HCIParameterSet {
    public var address = BDAddress(0)
    public var key: [UInt8] = []
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x000B))
    public static let name = "Link Key Request Reply"
    public static let fields: [HCIField<Self>] = [.address("address", \.address), .bytes("key", \.key, count: 16, hidden: true)]
}

/// Link Key Request Negative Reply (7.1.11): the host has no link key for BD_ADDR.
public struct LinkKeyRequestNegativeReply: HCIParameterSet {
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x000C))
    public static let name = "Link Key Request Negative Reply"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)]
}

/// Authentication Requested (7.1.15): authenticate the link on this handle.
public struct AuthenticationRequested: HCIParameterSet {
    public var handle: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x0011))
    public static let name = "Authentication Requested"
    public static let fields: [HCIField<Self>] = [.handle(\.handle)]
}

/// Set Connection Encryption (7.1.16): turn the link's encryption on (1) or off (0).
public struct SetConnectionEncryption: HCIParameterSet {
    public var handle: UInt16 = 0
    public var enable: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x0013))
    public static let name = "Set Connection Encryption"
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .u8("encryption", \.enable, .enable)]
}

/// LE Long Term Key Request Reply (7.8.25): the host gives the LTK for the link on this handle (never printed).
public struct LELongTermKeyRequestReply: HCIParameterSet {
    public var handle: UInt16 = 0
    public var longTermKey: [UInt8] = []
    public init() {}
    public static let carrier = HCICarrier.command(.leLongTermKeyRequestReply)
    public static let name = "LE Long Term Key Request Reply"
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .bytes("longTermKey", \.longTermKey, count: 16, hidden: true)]
}
