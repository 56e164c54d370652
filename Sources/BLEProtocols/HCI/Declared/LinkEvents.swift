import BLECore

// The events that open, change and close a link (Core Spec 6.0 Vol 4, Part E, 7.7), each declared once: its fields in
// wire order with the names and print forms every timeline has shown.

/// Connection Complete (7.7.3), BR/EDR: status, handle, BD_ADDR, link type (0x00 SCO, 0x01 ACL), encryption enabled.
public struct ConnectionComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var address = BDAddress(0)
    public var linkType: UInt8 = 0
    public var encryptionEnabled: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.event(.connectionComplete)
    public static let name = "Connection Complete"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .address("address", \.address), .u8("link", \.linkType, .named([0: "SCO", 1: "ACL"])),
        .u8("encryption", \.encryptionEnabled),
    ]
    public var description: String { Self.name + " " + HCIFieldText.summary(self, Self.fields) }
}

/// Disconnection Complete (7.7.5): status, handle, reason.
public struct DisconnectionComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var reason = HCIStatus.success
    public init() {}
    public static let carrier = HCICarrier.event(.disconnectionComplete)
    public static let name = "Disconnection Complete"
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle), .status("reason", \.reason)]
}

/// Encryption Change v1 (7.7.8): status, handle, encryption enabled (0 off, 1 E0 or AES-CCM, 2 AES-CCM on BR/EDR).
public struct EncryptionChange: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var encryptionEnabled: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.event(.encryptionChange)
    public static let name = "Encryption Change"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .u8("encryption", \.encryptionEnabled, .named([0: "off", 1: "on", 2: "on (AES-CCM)"])),
    ]
}

/// Encryption Change v2 (7.7.8): the v1 fields, then the encryption key size.
public struct EncryptionChangeV2: HCIParameterSet {
    public var change = EncryptionChange()
    public var keySize: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.event(.encryptionChangeV2)
    public static let name = "Encryption Change v2"
    public static let fields: [HCIField<Self>] = HCIField.inlineFields(EncryptionChange.fields, \.change) + [.u8("keySize", \.keySize)]
}

/// Encryption Key Refresh Complete (7.7.39): status, handle.
public struct EncryptionKeyRefreshComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.event(.encryptionKeyRefreshComplete)
    public static let name = "Encryption Key Refresh Complete"
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle)]
}

/// Read Remote Version Information Complete (7.7.12): status, handle, LL version (Assigned Numbers: 0x0D = 5.4),
/// company identifier, subversion.
public struct ReadRemoteVersionInformationComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var version: UInt8 = 0
    public var companyIdentifier: UInt16 = 0
    public var subversion: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.event(.readRemoteVersionInformationComplete)
    public static let name = "Read Remote Version Information Complete"
    static let versions = ["1.0b", "1.1", "1.2", "2.0", "2.1", "3.0", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0"]
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle),
        .u8("version", \.version, .named(Dictionary(uniqueKeysWithValues: versions.enumerated().map { (UInt32($0.offset), $0.element) }))),
        .u16("company", \.companyIdentifier, .hex), .u16("subversion", \.subversion, .hex),
    ]
}

/// What LE Connection Complete and LE Enhanced Connection Complete share after the peer (7.7.65.1, 7.7.65.10):
/// interval (1.25 ms), latency, supervision timeout (10 ms), central clock accuracy (not printed).
public struct LEConnectionTimingFields: HCIFieldGroup {
    public var interval: UInt16 = 0
    public var latency: UInt16 = 0
    public var supervisionTimeout: UInt16 = 0
    public var centralClockAccuracy: UInt8 = 0
    public init() {}
    public static let fields: [HCIField<Self>] = [
        .u16("interval", \.interval, .interval1250), .u16("latency", \.latency), .u16("timeout", \.supervisionTimeout, .timeout10),
        .u8("centralClockAccuracy", \.centralClockAccuracy, .hidden),
    ]
}

/// LE Connection Complete (7.7.65.1): status, handle, role, peer address type and address, then the timing.
public struct LEConnectionComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var role = HCIRole.central
    public var peerAddressType = LEAddressType.public
    public var peerAddress = BDAddress(0)
    public var timing = LEConnectionTimingFields()
    public init() {}
    public static let carrier = HCICarrier.leSubevent(.connectionComplete)
    public static let name = "LE Connection Complete"
    public static let fields: [HCIField<Self>] =
        [.status(\.status), .handle(\.handle), .code("role", \.role), .address("peer", type: \.peerAddressType, \.peerAddress)]
        + HCIField.inline(\.timing)
}

/// LE Enhanced Connection Complete v1 (7.7.65.10): as ``LEConnectionComplete`` with the local and peer resolvable
/// private addresses after the peer address (printed only when the controller used them).
public struct LEEnhancedConnectionComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var role = HCIRole.central
    public var peerAddressType = LEAddressType.public
    public var peerAddress = BDAddress(0)
    public var localResolvablePrivateAddress = BDAddress(0)
    public var peerResolvablePrivateAddress = BDAddress(0)
    public var timing = LEConnectionTimingFields()
    public init() {}
    public static let carrier = HCICarrier.leSubevent(.enhancedConnectionComplete)
    public static let name = "LE Enhanced Connection Complete"
    public static let fields: [HCIField<Self>] =
        [
            .status(\.status), .handle(\.handle), .code("role", \.role), .address("peer", type: \.peerAddressType, \.peerAddress),
            .address("localRPA", \.localResolvablePrivateAddress, omittedWhenZero: true),
            .address("peerRPA", \.peerResolvablePrivateAddress, omittedWhenZero: true),
        ] + HCIField.inline(\.timing)
}

/// LE Enhanced Connection Complete v2 (7.7.65.10, subevent 0x29): the v1 fields, then the advertising handle and the
/// periodic advertising sync handle.
public struct LEEnhancedConnectionCompleteV2: HCIParameterSet {
    public var connection = LEEnhancedConnectionComplete()
    public var advertisingHandle: UInt8 = 0xFF
    public var syncHandle: UInt16 = 0xFFFF
    public init() {}
    public static let carrier = HCICarrier.leSubevent(.enhancedConnectionCompleteV2)
    public static let name = "LE Enhanced Connection Complete v2"
    public static let fields: [HCIField<Self>] =
        HCIField.inlineFields(LEEnhancedConnectionComplete.fields, \.connection) + [
            .u8("advHandle", \.advertisingHandle, .hex), .u16("syncHandle", \.syncHandle, .hex),
        ]
}

/// LE Connection Update Complete (7.7.65.3): status, handle, interval, latency, supervision timeout.
public struct LEConnectionUpdateComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var interval: UInt16 = 0
    public var latency: UInt16 = 0
    public var supervisionTimeout: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(.connectionUpdateComplete)
    public static let name = "LE Connection Update Complete"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .u16("interval", \.interval, .interval1250), .u16("latency", \.latency),
        .u16("timeout", \.supervisionTimeout, .timeout10),
    ]
}

/// LE Read Remote Features Complete (7.7.65.4): status, handle, the peer's LE features (8 bytes).
public struct LEReadRemoteFeaturesComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var features: UInt64 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(.readRemoteFeaturesComplete)
    public static let name = "LE Read Remote Features Complete"
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle), .u64("features", \.features)]
}

/// LE Long Term Key Request (7.7.65.5): handle, random number (8), EDIV (2).
public struct LELongTermKeyRequest: HCIParameterSet {
    public var handle: UInt16 = 0
    public var randomNumber: UInt64 = 0
    public var encryptedDiversifier: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(.longTermKeyRequest)
    public static let name = "LE Long Term Key Request"
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .u64("rand", \.randomNumber), .u16("ediv", \.encryptedDiversifier, .hex),
    ]
}

/// LE Remote Connection Parameter Request (7.7.65.6): handle, interval min and max, max latency, timeout.
public struct LERemoteConnectionParameterRequest: HCIParameterSet {
    public var handle: UInt16 = 0
    public var intervalMin: UInt16 = 0
    public var intervalMax: UInt16 = 0
    public var maxLatency: UInt16 = 0
    public var supervisionTimeout: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(.remoteConnectionParameterRequest)
    public static let name = "LE Remote Connection Parameter Request"
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .range("interval", \.intervalMin, \.intervalMax, .interval1250), .u16("latency", \.maxLatency),
        .u16("timeout", \.supervisionTimeout, .timeout10),
    ]
}

/// LE Data Length Change (7.7.65.7): handle, max TX octets and time, max RX octets and time.
public struct LEDataLengthChange: HCIParameterSet {
    public var handle: UInt16 = 0
    public var maxTxOctets: UInt16 = 0
    public var maxTxTime: UInt16 = 0
    public var maxRxOctets: UInt16 = 0
    public var maxRxTime: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(.dataLengthChange)
    public static let name = "LE Data Length Change"
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .dataLength("tx", octets: \.maxTxOctets, time: \.maxTxTime),
        .dataLength("rx", octets: \.maxRxOctets, time: \.maxRxTime),
    ]
}

/// LE PHY Update Complete (7.7.65.12): status, handle, TX PHY, RX PHY.
public struct LEPHYUpdateComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var txPHY = LEPHY.none
    public var rxPHY = LEPHY.none
    public init() {}
    public static let carrier = HCICarrier.leSubevent(.phyUpdateComplete)
    public static let name = "LE PHY Update Complete"
    public static let fields: [HCIField<Self>] = [.status(\.status), .handle(\.handle), .code("tx", \.txPHY), .code("rx", \.rxPHY)]
}

/// LE Channel Selection Algorithm (7.7.65.20): handle, the algorithm the link uses (0x00 #1, 0x01 #2).
public struct LEChannelSelectionAlgorithm: HCIParameterSet {
    public var handle: UInt16 = 0
    public var algorithm: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.leSubevent(.channelSelectionAlgorithm)
    public static let name = "LE Channel Selection Algorithm"
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .u8("algorithm", \.algorithm, .named([0: "#1", 1: "#2"]))]
}
