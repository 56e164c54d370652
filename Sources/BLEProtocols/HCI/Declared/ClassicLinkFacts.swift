import BLECore

// The BR/EDR events and commands that state a link's facts: the remote's name, features and version, its mode and sniff
// subrating, its supervision timeout, its packet types and slots (Core Spec 6.0 Vol 4, Part E, 7.1, 7.2, 7.3, 7.7).
// Pairing, link keys and encryption are the security record's (ClassicLinkEvents.swift).

/// Connection Request (7.7.4): a device pages this one; the link type says what it asks for (0 SCO, 1 ACL, 2 eSCO).
public struct ConnectionRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public var classOfDevice: UInt32 = 0
    public var linkType: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x04))
    public static let name = "Connection Request"
    public static let fields: [HCIField<Self>] = [
        .address("address", \.address), .u24("classOfDevice", \.classOfDevice, .hex),
        .u8("link", \.linkType, .named(SynchronousLinkType.names)),
    ]
}

/// A remote device's name as Remote Name Request Complete carries it: 248 octets, UTF-8, ended by the first zero
/// (Vol 4, Part E, 7.7.7; Vol 3, Part C, 3.2.2).
public struct RemoteName: WireCodable, CustomStringConvertible {
    /// The 248 octets as sent (kept whole: the bytes after the first zero are padding, but the event is re-encoded as read).
    public var raw: [UInt8]
    public init(_ text: String) {
        let utf8 = Array(text.utf8.prefix(Self.width))
        raw = utf8 + Array(repeating: 0, count: Self.width - utf8.count)
    }
    public static let width = 248
    public init(parsing input: inout ByteReader) throws(DecodeError) { raw = try input.readArray(Self.width) }
    public func encode(into writer: inout ByteWriter) { writer.write(contentsOf: raw) }
    /// The name: UTF-8 up to the first zero (invalid sequences replaced).
    public var text: String { String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    public var description: String { "\"\(text)\"" }
}

/// Remote Name Request Complete (7.7.7): status, the device's BD_ADDR, its name.
public struct RemoteNameRequestComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var address = BDAddress(0)
    public var remoteName = RemoteName("")
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x07))
    public static let name = "Remote Name Request Complete"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .address("address", \.address), .value("name", \.remoteName, bytes: RemoteName.width),
    ]
}

/// Read Remote Supported Features Complete (7.7.11): the remote's LMP features page 0 (Vol 2, Part C, 3.3).
public struct ReadRemoteSupportedFeaturesComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var features: UInt64 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x0B))
    public static let name = "Read Remote Supported Features Complete"
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle), .uint("features", \.features, bytes: 8, .hex)]
}

/// Max Slots Change (7.7.27): the most slots an ACL packet of the link may now take (1, 3 or 5).
public struct MaxSlotsChange: HCIParameterSet {
    public var handle: UInt16 = 0
    public var maxSlots: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x1B))
    public static let name = "Max Slots Change"
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .u8("maxSlots", \.maxSlots)]
}

/// Connection Packet Type Changed (7.7.29): the packet types the link may use now (the bits of 7.1.14).
public struct ConnectionPacketTypeChanged: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var packetType: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x1D))
    public static let name = "Connection Packet Type Changed"
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle), .u16("packetType", \.packetType, .hex)]
}

/// Read Remote Extended Features Complete (7.7.34): one page of the remote's LMP features.
public struct ReadRemoteExtendedFeaturesComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var page: UInt8 = 0
    public var maxPage: UInt8 = 0
    public var features: UInt64 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x23))
    public static let name = "Read Remote Extended Features Complete"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .u8("page", \.page), .u8("maxPage", \.maxPage), .uint("features", \.features, bytes: 8, .hex),
    ]
}

/// Sniff Subrating (7.7.37): the subrating in force on the link (latencies and timeouts in 0.625 ms slots).
public struct SniffSubrating: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var maxTxLatency: UInt16 = 0
    public var maxRxLatency: UInt16 = 0
    public var minRemoteTimeout: UInt16 = 0
    public var minLocalTimeout: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x2E))
    public static let name = "Sniff Subrating"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .u16("maxTxLatency", \.maxTxLatency, .interval625),
        .u16("maxRxLatency", \.maxRxLatency, .interval625), .u16("minRemoteTimeout", \.minRemoteTimeout, .interval625),
        .u16("minLocalTimeout", \.minLocalTimeout, .interval625),
    ]
}

/// Link Supervision Timeout Changed (7.7.46): the peripheral learns the timeout the central set (0.625 ms slots).
public struct LinkSupervisionTimeoutChanged: HCIParameterSet {
    public var handle: UInt16 = 0
    public var timeout: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x38))
    public static let name = "Link Supervision Timeout Changed"
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .u16("timeout", \.timeout, .interval625)]
}

/// Sniff Mode (7.2.2): ask for sniff with intervals between min and max, attempt and timeout (0.625 ms slots).
public struct SniffMode: HCIParameterSet {
    public var handle: UInt16 = 0
    public var maxInterval: UInt16 = 0
    public var minInterval: UInt16 = 0
    public var attempt: UInt16 = 0
    public var timeout: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x02, ocf: 0x0003))
    public static let name = "Sniff Mode"
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .u16("maxInterval", \.maxInterval, .interval625), .u16("minInterval", \.minInterval, .interval625),
        .u16("attempt", \.attempt), .u16("timeout", \.timeout),
    ]
}

/// Exit Sniff Mode (7.2.3): back to active.
public struct ExitSniffMode: HCIParameterSet {
    public var handle: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x02, ocf: 0x0004))
    public static let name = "Exit Sniff Mode"
    public static let fields: [HCIField<Self>] = [.handle(\.handle)]
}

/// Switch Role (7.2.8): ask to become central (0) or peripheral (1) of the link to BD_ADDR.
public struct SwitchRole: HCIParameterSet {
    public var address = BDAddress(0)
    public var role: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x02, ocf: 0x000B))
    public static let name = "Switch Role"
    public static let fields: [HCIField<Self>] = [
        .address("address", \.address), .u8("role", \.role, .named([0: "central", 1: "peripheral"])),
    ]
}

/// Sniff Subrating (7.2.14), the command: the most latency allowed and the least timeouts (0.625 ms slots).
public struct SniffSubratingCommand: HCIParameterSet {
    public var handle: UInt16 = 0
    public var maxLatency: UInt16 = 0
    public var minRemoteTimeout: UInt16 = 0
    public var minLocalTimeout: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x02, ocf: 0x0011))
    public static let name = "Sniff Subrating"
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .u16("maxLatency", \.maxLatency, .interval625), .u16("minRemoteTimeout", \.minRemoteTimeout, .interval625),
        .u16("minLocalTimeout", \.minLocalTimeout, .interval625),
    ]
}

/// Write Link Supervision Timeout (7.3.42): the link's supervision timeout (0.625 ms slots; 0: none).
public struct WriteLinkSupervisionTimeout: HCIParameterSet {
    public var handle: UInt16 = 0
    public var timeout: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x03, ocf: 0x0037))
    public static let name = "Write Link Supervision Timeout"
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .u16("timeout", \.timeout, .interval625)]
}

/// Change Connection Packet Type (7.1.14): the packet types the link may use (bits: 0x0008 DM1 … 0x3306 the EDR
/// "may not use" bits).
public struct ChangeConnectionPacketType: HCIParameterSet {
    public var handle: UInt16 = 0
    public var packetType: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x000F))
    public static let name = "Change Connection Packet Type"
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .u16("packetType", \.packetType, .hex)]
}

/// Remote Name Request (7.1.19): ask BD_ADDR its name.
public struct RemoteNameRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public var pageScanRepetitionMode: UInt8 = 0
    public var reserved: UInt8 = 0
    public var clockOffset: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x0019))
    public static let name = "Remote Name Request"
    public static let fields: [HCIField<Self>] = [
        .address("address", \.address), .u8("pageScanRepetition", \.pageScanRepetitionMode, .named([0: "R0", 1: "R1", 2: "R2"])),
        .u8("reserved", \.reserved, .hidden), .u16("clockOffset", \.clockOffset, .hex),
    ]
}

/// The remote's LMP features page 0, named where a reader needs them (Core Spec Vol 2, Part C, 3.3, Table 3.2).
public struct LMPFeatures: Hashable, Sendable {
    public var bits: UInt64
    public init(_ bits: UInt64) { self.bits = bits }
    public func has(_ bit: Int) -> Bool { bits >> UInt64(bit) & 1 == 1 }
    /// The features an audio link's reader asks about, by bit.
    static let named: [(Int, String)] = [
        (2, "encryption"), (5, "role switch"), (7, "sniff"), (25, "EDR 2 Mb/s"), (26, "EDR 3 Mb/s"), (31, "eSCO"),
        (38, "LE"), (41, "sniff subrating"), (45, "EDR eSCO 2 Mb/s"), (51, "secure simple pairing"),
    ]
    public var names: [String] { Self.named.filter { has($0.0) }.map(\.1) }
}

/// Accept Connection Request (7.1.8): accept BD_ADDR's page, becoming central (0, a role switch) or staying peripheral (1).
public struct AcceptConnectionRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public var role: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x0009))
    public static let name = "Accept Connection Request"
    public static let fields: [HCIField<Self>] = [
        .address("address", \.address), .u8("role", \.role, .named([0: "become central", 1: "remain peripheral"])),
    ]
}
