import BLECore

// Commands that scan, advertise and set a link's data length, PHY and encryption (Core Spec 6.0 Vol 4, Part E, 7.8),
// each declared once: its fields in wire order with the names and print forms every timeline has shown.

/// LE Set Scan Parameters (7.8.10): type (0 passive, 1 active), interval and window (0.625 ms), own address type,
/// filter policy.
public struct LESetScanParameters: HCIParameterSet {
    public var scanType: UInt8 = 0
    public var interval: UInt16 = 0
    public var window: UInt16 = 0
    public var ownAddressType = LEAddressType.public
    public var filterPolicy: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.leSetScanParameters)
    public static let name = "LE Set Scan Parameters"
    public static let fields: [HCIField<Self>] = [
        .u8("type", \.scanType, .named([0: "passive", 1: "active"])), .u16("interval", \.interval, .interval625),
        .u16("window", \.window, .interval625), .code("own", \.ownAddressType), .u8("filter", \.filterPolicy),
    ]
}

/// LE Set Scan Enable (7.8.11): enable, filter duplicates.
public struct LESetScanEnable: HCIParameterSet {
    public var enable: UInt8 = 0
    public var filterDuplicates: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.leSetScanEnable)
    public static let name = "LE Set Scan Enable"
    public static let fields: [HCIField<Self>] = [.u8("enable", \.enable, .enable), .u8("filterDuplicates", \.filterDuplicates)]
}

/// LE Set Extended Scan Enable (7.8.65): enable, filter duplicates, duration (10 ms), period (1.28 s).
public struct LESetExtendedScanEnable: HCIParameterSet {
    public var enable: UInt8 = 0
    public var filterDuplicates: UInt8 = 0
    public var duration: UInt16 = 0
    public var period: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.leSetExtendedScanEnable)
    public static let name = "LE Set Extended Scan Enable"
    public static let fields: [HCIField<Self>] = [
        .u8("enable", \.enable, .enable), .u8("filterDuplicates", \.filterDuplicates), .u16("duration", \.duration, .timeout10),
        .u16("period", \.period),
    ]
}

/// LE Set Advertising Parameters (7.8.5): interval min and max (0.625 ms), type, own address type, peer address type
/// and address, channel map, filter policy.
public struct LESetAdvertisingParameters: HCIParameterSet {
    public var intervalMin: UInt16 = 0
    public var intervalMax: UInt16 = 0
    /// 0 ADV_IND, 1 ADV_DIRECT_IND (high duty), 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 ADV_DIRECT_IND (low duty).
    public var advertisingType: UInt8 = 0
    public var ownAddressType = LEAddressType.public
    public var peerAddressType = LEAddressType.public
    public var peerAddress = BDAddress(0)
    public var channelMap: UInt8 = 0
    public var filterPolicy: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.leSetAdvertisingParameters)
    public static let name = "LE Set Advertising Parameters"
    static let types: [UInt32: String] = [
        0: "ADV_IND", 1: "ADV_DIRECT_IND", 2: "ADV_SCAN_IND", 3: "ADV_NONCONN_IND", 4: "ADV_DIRECT_IND(low duty)",
    ]
    public static let fields: [HCIField<Self>] = [
        .range("interval", \.intervalMin, \.intervalMax, .interval625), .u8("type", \.advertisingType, .named(types)),
        .code("own", \.ownAddressType), .address("peer", type: \.peerAddressType, \.peerAddress),
        .u8("channels", \.channelMap, .hex), .u8("filter", \.filterPolicy),
    ]
}

/// LE Set Advertising Enable (7.8.9): enable.
public struct LESetAdvertisingEnable: HCIParameterSet {
    public var enable: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.leSetAdvertisingEnable)
    public static let name = "LE Set Advertising Enable"
    public static let fields: [HCIField<Self>] = [.u8("enable", \.enable, .enable)]
}

/// LE Set Data Length (7.8.33): handle, TX octets, TX time (µs).
public struct LESetDataLength: HCIParameterSet {
    public var handle: UInt16 = 0
    public var txOctets: UInt16 = 0
    public var txTime: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.leSetDataLength)
    public static let name = "LE Set Data Length"
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .u16("txOctets", \.txOctets), .u16("txTime", \.txTime, .microseconds),
    ]
}

/// LE Set PHY (7.8.49): handle, all PHYs, TX and RX PHYs (bit 0 1M, bit 1 2M, bit 2 Coded), PHY options.
public struct LESetPHY: HCIParameterSet {
    public var handle: UInt16 = 0
    public var allPHYs: UInt8 = 0
    public var txPHYs: UInt8 = 0
    public var rxPHYs: UInt8 = 0
    public var phyOptions: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.leSetPHY)
    public static let name = "LE Set PHY"
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .u8("all", \.allPHYs, .hex), .u8("tx", \.txPHYs, .phyBits), .u8("rx", \.rxPHYs, .phyBits),
        .u16("options", \.phyOptions),
    ]
}

/// LE Enable Encryption (7.8.24): handle, random number (8), EDIV (2), Long Term Key (16, never printed).
public struct LEEnableEncryption: HCIParameterSet {
    public var handle: UInt16 = 0
    public var randomNumber: UInt64 = 0
    public var encryptedDiversifier: UInt16 = 0
    /// In wire order (least significant byte first).
    public var longTermKey: [UInt8] = []
    public init() {}
    public static let carrier = HCICarrier.command(.leEnableEncryption)
    public static let name = "LE Enable Encryption"
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .u64("rand", \.randomNumber), .u16("ediv", \.encryptedDiversifier, .hex),
        .bytes("longTermKey", \.longTermKey, count: 16, hidden: true),
    ]
}
