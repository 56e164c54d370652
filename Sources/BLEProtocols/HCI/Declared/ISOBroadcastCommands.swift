import BLECore

// The broadcast isochronous commands (Core Spec 5.4 Vol 4, Part E, 7.8.103–7.8.108), each declared once.

/// LE Create BIG (7.8.103): BIG_Handle, Advertising_Handle, Num_BIS, SDU_Interval(3, µs), Max_SDU(2),
/// Max_Transport_Latency(2, ms), RTN, PHY (bit field), Packing, Framing, Encryption, Broadcast_Code(16).
public struct LECreateBIG: HCIParameterSet {
    public var bigHandle: UInt8 = 0
    public var advertisingHandle: UInt8 = 0
    public var numBIS: UInt8 = 0
    public var sduInterval: UInt32 = 0
    public var maxSDU: UInt16 = 0
    public var maxTransportLatency: UInt16 = 0
    public var rtn: UInt8 = 0
    public var phy: UInt8 = 0
    public var packing: UInt8 = 0
    public var framing: UInt8 = 0
    public var encryption: UInt8 = 0
    public var broadcastCode: [UInt8] = Array(repeating: 0, count: 16)
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x0068))
    public static let name = "LE Create BIG"
    public static let fields: [HCIField<Self>] = [
        .u8("bigHandle", \.bigHandle, .hex), .u8("advHandle", \.advertisingHandle, .hex), .u8("numBis", \.numBIS),
        .u24("sduInterval", \.sduInterval), .u16("maxSdu", \.maxSDU), .u16("maxTransportLatency", \.maxTransportLatency, .milliseconds),
        .u8("rtn", \.rtn), .u8("phy", \.phy, .phyBits), .u8("packing", \.packing, .named(packings)),
        .u8("framing", \.framing, .named(framings)), .u8("encryption", \.encryption),
        // The Broadcast_Code is a secret (Core Spec Vol 3, Part C, 3.2.6): kept, never printed.
        .bytes("broadcastCode", \.broadcastCode, count: 16, hidden: true),
    ]
}

/// LE Create BIG Test (7.8.104): the link-layer parameters given directly.
public struct LECreateBIGTest: HCIParameterSet {
    public var bigHandle: UInt8 = 0
    public var advertisingHandle: UInt8 = 0
    public var numBIS: UInt8 = 0
    public var sduInterval: UInt32 = 0
    public var isoInterval: UInt16 = 0
    public var nse: UInt8 = 0
    public var maxSDU: UInt16 = 0
    public var maxPDU: UInt16 = 0
    public var phy: UInt8 = 0
    public var packing: UInt8 = 0
    public var framing: UInt8 = 0
    public var bn: UInt8 = 0
    public var irc: UInt8 = 0
    public var pto: UInt8 = 0
    public var encryption: UInt8 = 0
    public var broadcastCode: [UInt8] = Array(repeating: 0, count: 16)
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x0069))
    public static let name = "LE Create BIG Test"
    public static let fields: [HCIField<Self>] = [
        .u8("bigHandle", \.bigHandle, .hex), .u8("advHandle", \.advertisingHandle, .hex), .u8("numBis", \.numBIS),
        .u24("sduInterval", \.sduInterval), .u16("isoInterval", \.isoInterval, .interval1250), .u8("nse", \.nse),
        .u16("maxSdu", \.maxSDU), .u16("maxPdu", \.maxPDU), .u8("phy", \.phy, .phyBits),
        .u8("packing", \.packing, .named(packings)), .u8("framing", \.framing, .named(framings)), .u8("bn", \.bn),
        .u8("irc", \.irc), .u8("pto", \.pto), .u8("encryption", \.encryption),
        .bytes("broadcastCode", \.broadcastCode, count: 16, hidden: true),
    ]
}

/// LE Terminate BIG (7.8.105): BIG_Handle, Reason.
public struct LETerminateBIG: HCIParameterSet {
    public var bigHandle: UInt8 = 0
    public var reason = HCIStatus.success
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x006A))
    public static let name = "LE Terminate BIG"
    public static let fields: [HCIField<Self>] = [.u8("bigHandle", \.bigHandle, .hex), .status("reason", \.reason)]
}

/// LE BIG Create Sync (7.8.106): BIG_Handle, Sync_Handle(2), Encryption, Broadcast_Code(16), MSE,
/// BIG_Sync_Timeout(2, 10 ms), Num_BIS, BIS[i] (indices).
public struct LEBIGCreateSync: HCIParameterSet {
    public var bigHandle: UInt8 = 0
    public var syncHandle: UInt16 = 0
    public var encryption: UInt8 = 0
    public var broadcastCode: [UInt8] = Array(repeating: 0, count: 16)
    public var mse: UInt8 = 0
    public var syncTimeout: UInt16 = 0
    public var bis: [UInt8] = []
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x006B))
    public static let name = "LE BIG Create Sync"
    public static let fields: [HCIField<Self>] = [
        .u8("bigHandle", \.bigHandle, .hex), .u16("syncHandle", \.syncHandle, .hex), .u8("encryption", \.encryption),
        .bytes("broadcastCode", \.broadcastCode, count: 16, hidden: true), .u8("mse", \.mse),
        .u16("syncTimeout", \.syncTimeout, .timeout10), .counted("bis", \.bis, width: 1, .decimal),
    ]
}

/// LE BIG Terminate Sync (7.8.107): BIG_Handle.
public struct LEBIGTerminateSync: HCIParameterSet {
    public var bigHandle: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x006C))
    public static let name = "LE BIG Terminate Sync"
    public static let fields: [HCIField<Self>] = [.u8("bigHandle", \.bigHandle, .hex)]
}

/// LE BIG Terminate Sync return: status, BIG_Handle.
public struct LEBIGTerminateSyncReturn: HCIParameterSet {
    public var status = HCIStatus.success
    public var bigHandle: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.returnParameters(LEBIGTerminateSync.command)
    public static let name = "LE BIG Terminate Sync"
    public static let fields: [HCIField<Self>] = [.status(\.status), .u8("bigHandle", \.bigHandle, .hex)]
}
