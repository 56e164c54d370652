import BLECore

// The isochronous-channel LE Meta events (Core Spec 6.0 Vol 4, Part E, 7.7.65.14–16, 25–30, 34), each declared once.

/// What LE CIS Established says of a CIS (7.7.65.25), shared by both versions: status, handle, CIG_Sync_Delay,
/// CIS_Sync_Delay, Transport_Latency C→P and P→C (µs, 24 bits each), PHY C→P and P→C (HCI values), NSE, BN C→P and
/// P→C, FT C→P and P→C, Max_PDU C→P and P→C, ISO_Interval (1.25 ms).
public struct CISEstablishment: HCIFieldGroup {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var cigSyncDelay: UInt32 = 0
    public var cisSyncDelay: UInt32 = 0
    public var transportLatencyCToP: UInt32 = 0
    public var transportLatencyPToC: UInt32 = 0
    public var phyCToP: UInt8 = 0
    public var phyPToC: UInt8 = 0
    public var nse: UInt8 = 0
    public var bnCToP: UInt8 = 0
    public var bnPToC: UInt8 = 0
    public var ftCToP: UInt8 = 0
    public var ftPToC: UInt8 = 0
    public var maxPDUCToP: UInt16 = 0
    public var maxPDUPToC: UInt16 = 0
    public var isoInterval: UInt16 = 0
    public init() {}
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .u24("cigSyncDelay", \.cigSyncDelay), .u24("cisSyncDelay", \.cisSyncDelay),
        .u24("transportLatencyCToP", \.transportLatencyCToP), .u24("transportLatencyPToC", \.transportLatencyPToC),
        .u8("phyCToP", \.phyCToP, .phy), .u8("phyPToC", \.phyPToC, .phy), .u8("nse", \.nse), .u8("bnCToP", \.bnCToP),
        .u8("bnPToC", \.bnPToC), .u8("ftCToP", \.ftCToP), .u8("ftPToC", \.ftPToC), .u16("maxPduCToP", \.maxPDUCToP),
        .u16("maxPduPToC", \.maxPDUPToC), .u16("isoInterval", \.isoInterval, .interval1250),
    ]
}

/// LE CIS Established (7.7.65.25, subevent 0x19).
public struct LECISEstablished: HCIParameterSet {
    public var cis = CISEstablishment()
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x19))
    public static let name = "LE CIS Established"
    public static let fields: [HCIField<Self>] = HCIField.inline(\.cis)
}

/// LE CIS Established v2 (Core 6.0, 7.7.65.25, subevent 0x2A): v1's fields, then Sub_Interval(3, µs),
/// Max_SDU C→P and P→C, SDU_Interval C→P and P→C (3, µs), Framing.
public struct LECISEstablishedV2: HCIParameterSet {
    public var cis = CISEstablishment()
    public var subInterval: UInt32 = 0
    public var maxSDUCToP: UInt16 = 0
    public var maxSDUPToC: UInt16 = 0
    public var sduIntervalCToP: UInt32 = 0
    public var sduIntervalPToC: UInt32 = 0
    public var framing: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x2A))
    public static let name = "LE CIS Established v2"
    public static let fields: [HCIField<Self>] =
        HCIField.inline(\.cis) + [
            .u24("subInterval", \.subInterval), .u16("maxSduCToP", \.maxSDUCToP), .u16("maxSduPToC", \.maxSDUPToC),
            .u24("sduIntervalCToP", \.sduIntervalCToP), .u24("sduIntervalPToC", \.sduIntervalPToC),
            .u8("framing", \.framing, .named(framings)),
        ]
}

/// LE CIS Request (7.7.65.26, 0x1A): ACL_Connection_Handle, CIS_Connection_Handle, CIG_ID, CIS_ID.
public struct LECISRequest: HCIParameterSet {
    public var aclHandle: UInt16 = 0
    public var cisHandle: UInt16 = 0
    public var cigID: UInt8 = 0
    public var cisID: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x1A))
    public static let name = "LE CIS Request"
    // The CIS handle is the event's handle (the timeline's, the tracker's); the ACL handle prints as a number.
    public static let fields: [HCIField<Self>] = [
        .u16("aclHandle", \.aclHandle, .hex), .handle("cisHandle", \.cisHandle), .u8("cigId", \.cigID), .u8("cisId", \.cisID),
    ]
}

/// What the BIG events share after their own first fields (7.7.65.27, 29): NSE, BN, PTO, IRC, Max_PDU, ISO_Interval,
/// Num_BIS, Connection_Handle[i].
public struct BIGParameters: HCIFieldGroup {
    public var nse: UInt8 = 0
    public var bn: UInt8 = 0
    public var pto: UInt8 = 0
    public var irc: UInt8 = 0
    public var maxPDU: UInt16 = 0
    public var isoInterval: UInt16 = 0
    public var bisHandles: [UInt16] = []
    public init() {}
    public static let fields: [HCIField<Self>] = [
        .u8("nse", \.nse), .u8("bn", \.bn), .u8("pto", \.pto), .u8("irc", \.irc), .u16("maxPdu", \.maxPDU),
        .u16("isoInterval", \.isoInterval, .interval1250), .counted("bisHandles", \.bisHandles, width: 2),
    ]
}

/// LE Create BIG Complete (7.7.65.27, 0x1B): status, BIG_Handle, BIG_Sync_Delay(3), Transport_Latency_BIG(3), PHY,
/// then ``BIGParameters``.
public struct LECreateBIGComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var bigHandle: UInt8 = 0
    public var bigSyncDelay: UInt32 = 0
    public var transportLatency: UInt32 = 0
    public var phy: UInt8 = 0
    public var big = BIGParameters()
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x1B))
    public static let name = "LE Create BIG Complete"
    public static let fields: [HCIField<Self>] =
        [
            .status(\.status), .u8("bigHandle", \.bigHandle, .hex), .u24("bigSyncDelay", \.bigSyncDelay),
            .u24("transportLatency", \.transportLatency), .u8("phy", \.phy, .phy),
        ] + HCIField.inline(\.big)
}

/// LE Terminate BIG Complete (7.7.65.28, 0x1C): BIG_Handle, Reason.
public struct LETerminateBIGComplete: HCIParameterSet {
    public var bigHandle: UInt8 = 0
    public var reason = HCIStatus.success
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x1C))
    public static let name = "LE Terminate BIG Complete"
    public static let fields: [HCIField<Self>] = [.u8("bigHandle", \.bigHandle, .hex), .status("reason", \.reason)]
}

/// LE BIG Sync Established (7.7.65.29, 0x1D): status, BIG_Handle, Transport_Latency_BIG(3), then ``BIGParameters``.
public struct LEBIGSyncEstablished: HCIParameterSet {
    public var status = HCIStatus.success
    public var bigHandle: UInt8 = 0
    public var transportLatency: UInt32 = 0
    public var big = BIGParameters()
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x1D))
    public static let name = "LE BIG Sync Established"
    public static let fields: [HCIField<Self>] =
        [.status(\.status), .u8("bigHandle", \.bigHandle, .hex), .u24("transportLatency", \.transportLatency)]
        + HCIField.inline(\.big)
}

/// LE BIG Sync Lost (7.7.65.30, 0x1E): BIG_Handle, Reason (0x08 timeout, 0x13 terminated by the source, 0x16 by the
/// host, 0x3D MIC failure).
public struct LEBIGSyncLost: HCIParameterSet {
    public var bigHandle: UInt8 = 0
    public var reason = HCIStatus.success
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x1E))
    public static let name = "LE BIG Sync Lost"
    public static let fields: [HCIField<Self>] = [.u8("bigHandle", \.bigHandle, .hex), .status("reason", \.reason)]
}

/// LE BIGInfo Advertising Report (7.7.65.34, 0x22): what a periodic advertising train says of its BIG.
public struct LEBIGInfoAdvertisingReport: HCIParameterSet {
    public var syncHandle: UInt16 = 0
    public var numBIS: UInt8 = 0
    public var nse: UInt8 = 0
    public var isoInterval: UInt16 = 0
    public var bn: UInt8 = 0
    public var pto: UInt8 = 0
    public var irc: UInt8 = 0
    public var maxPDU: UInt16 = 0
    public var sduInterval: UInt32 = 0
    public var maxSDU: UInt16 = 0
    public var phy: UInt8 = 0
    public var framing: UInt8 = 0
    public var encryption: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x22))
    public static let name = "LE BIGInfo Advertising Report"
    public static let fields: [HCIField<Self>] = [
        .u16("syncHandle", \.syncHandle, .hex), .u8("numBis", \.numBIS), .u8("nse", \.nse),
        .u16("isoInterval", \.isoInterval, .interval1250), .u8("bn", \.bn), .u8("pto", \.pto), .u8("irc", \.irc),
        .u16("maxPdu", \.maxPDU), .u24("sduInterval", \.sduInterval), .u16("maxSdu", \.maxSDU), .u8("phy", \.phy, .phy),
        .u8("framing", \.framing, .named(framings)), .u8("encryption", \.encryption),
    ]
}

/// LE Periodic Advertising Sync Established (7.7.65.14, 0x0E): status, Sync_Handle, Advertising_SID, address type,
/// address, PHY, Periodic_Advertising_Interval (1.25 ms), clock accuracy. A BIG receiver learns the source here.
public struct LEPeriodicAdvertisingSyncEstablished: HCIParameterSet {
    public var status = HCIStatus.success
    public var syncHandle: UInt16 = 0
    public var sid: UInt8 = 0
    public var addressType: UInt8 = 0
    public var address = BDAddress(0)
    public var phy: UInt8 = 0
    public var interval: UInt16 = 0
    public var clockAccuracy: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x0E))
    public static let name = "LE Periodic Advertising Sync Established"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .u16("syncHandle", \.syncHandle, .hex), .u8("sid", \.sid), .u8("addressType", \.addressType),
        .value("address", \.address, bytes: 6), .u8("phy", \.phy, .phy), .u16("interval", \.interval, .interval1250),
        .u8("clockAccuracy", \.clockAccuracy),
    ]
}

/// LE Periodic Advertising Sync Lost (7.7.65.16, 0x10): Sync_Handle.
public struct LEPeriodicAdvertisingSyncLost: HCIParameterSet {
    public var syncHandle: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x10))
    public static let name = "LE Periodic Advertising Sync Lost"
    public static let fields: [HCIField<Self>] = [.u16("syncHandle", \.syncHandle, .hex)]
}
