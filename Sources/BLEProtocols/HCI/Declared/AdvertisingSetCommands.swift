import BLECore

// The commands that address, enable and remove advertising sets, and the event that ends one (Core Spec 6.0 Vol 4,
// Part E, 7.8.52, 7.8.59–60, 7.8.63, 7.7.65.18), and the cancel of a BR/EDR name request (7.1.20): declared once so that
// the diagnosis can follow the advertising state a controller refuses commands in (HH-04).

/// LE Set Advertising Set Random Address (7.8.52): advertising handle, random address.
public struct LESetAdvertisingSetRandomAddress: HCIParameterSet {
    public var advertisingHandle: UInt8 = 0
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.command(.leSetAdvertisingSetRandomAddress)
    public static let name = "LE Set Advertising Set Random Address"
    public static let fields: [HCIField<Self>] = [.u8("set", \.advertisingHandle), .address("address", \.address)]
}

/// LE Remove Advertising Set (7.8.59): advertising handle.
public struct LERemoveAdvertisingSet: HCIParameterSet {
    public var advertisingHandle: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.leRemoveAdvertisingSet)
    public static let name = "LE Remove Advertising Set"
    public static let fields: [HCIField<Self>] = [.u8("set", \.advertisingHandle)]
}

/// LE Set Periodic Advertising Enable (7.8.63): enable (bit 0; bit 1 adds the ADI field), advertising handle.
public struct LESetPeriodicAdvertisingEnable: HCIParameterSet {
    public var enable: UInt8 = 0
    public var advertisingHandle: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.leSetPeriodicAdvertisingEnable)
    public static let name = "LE Set Periodic Advertising Enable"
    public static let fields: [HCIField<Self>] = [.u8("enable", \.enable, .hex), .u8("set", \.advertisingHandle)]
}

/// LE Advertising Set Terminated (7.7.65.18, 0x12): status, advertising handle, the connection it ended in, the number
/// of extended advertising events sent. The set is no longer enabled.
public struct LEAdvertisingSetTerminated: HCIParameterSet {
    public var status = HCIStatus.success
    public var advertisingHandle: UInt8 = 0
    public var connectionHandle: UInt16 = 0
    public var completedEvents: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(LESubevent(0x12))
    public static let name = "LE Advertising Set Terminated"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .u8("set", \.advertisingHandle), .handle(\.connectionHandle), .u8("events", \.completedEvents),
    ]
}

/// Remote Name Request Cancel (7.1.20): the device whose name request to cancel.
public struct RemoteNameRequestCancel: HCIParameterSet {
    public var address = BDAddress(0)
    public init() {}
    public static let carrier = HCICarrier.command(.remoteNameRequestCancel)
    public static let name = "Remote Name Request Cancel"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)]
}

/// Write Scan Enable (7.3.18): 0 none, 1 inquiry scan, 2 page scan, 3 both: the BR/EDR controller waits to be found or
/// connected, and reports nothing until a device does.
public struct WriteScanEnable: HCIParameterSet {
    public var scanEnable: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(.writeScanEnable)
    public static let name = "Write Scan Enable"
    public static let fields: [HCIField<Self>] = [
        .u8("scan", \.scanEnable, .named([0: "none", 1: "inquiry", 2: "page", 3: "inquiry+page"]))
    ]
}
