import BLECore

/// An HCI event code (Core Spec 5.4 Vol 4, Part E, 7.7).
///
/// Open struct: an unknown code prints as `HCIEventCode(0x7a)` and is kept.
public struct HCIEventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let inquiryResult = HCIEventCode(0x02)
    public static let connectionComplete = HCIEventCode(0x03)
    public static let disconnectionComplete = HCIEventCode(0x05)
    public static let encryptionChange = HCIEventCode(0x08)
    public static let readRemoteVersionInformationComplete = HCIEventCode(0x0C)
    public static let commandComplete = HCIEventCode(0x0E)
    public static let commandStatus = HCIEventCode(0x0F)
    public static let hardwareError = HCIEventCode(0x10)
    public static let numberOfCompletedPackets = HCIEventCode(0x13)
    public static let dataBufferOverflow = HCIEventCode(0x1A)
    public static let inquiryResultWithRSSI = HCIEventCode(0x22)
    public static let extendedInquiryResult = HCIEventCode(0x2F)
    public static let encryptionKeyRefreshComplete = HCIEventCode(0x30)
    public static let leMeta = HCIEventCode(0x3E)
    public static let numberOfCompletedDataBlocks = HCIEventCode(0x48)
    public static let authenticatedPayloadTimeoutExpired = HCIEventCode(0x57)
    public static let encryptionChangeV2 = HCIEventCode(0x59)
    public static let vendor = HCIEventCode(0xFF)

    /// The name from ``HCIEventTable/events``.
    public var name: String? { HCIEventTable.events[rawValue]?.name }
    public var description: String { name ?? "HCIEventCode(\(hex(rawValue)))" }
}

/// An LE Meta event subevent code (Core Spec 5.4 Vol 4, Part E, 7.7.65).
public struct LESubevent: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let connectionComplete = LESubevent(0x01)
    public static let advertisingReport = LESubevent(0x02)
    public static let connectionUpdateComplete = LESubevent(0x03)
    public static let readRemoteFeaturesComplete = LESubevent(0x04)
    public static let longTermKeyRequest = LESubevent(0x05)
    public static let remoteConnectionParameterRequest = LESubevent(0x06)
    public static let dataLengthChange = LESubevent(0x07)
    public static let enhancedConnectionComplete = LESubevent(0x0A)
    public static let phyUpdateComplete = LESubevent(0x0C)
    public static let extendedAdvertisingReport = LESubevent(0x0D)
    public static let channelSelectionAlgorithm = LESubevent(0x14)
    public static let enhancedConnectionCompleteV2 = LESubevent(0x29)

    /// The name from ``HCIEventTable/subevents``.
    public var name: String? { HCIEventTable.subevents[rawValue]?.name }
    public var description: String { name ?? "LESubevent(\(hex(rawValue)))" }
}
