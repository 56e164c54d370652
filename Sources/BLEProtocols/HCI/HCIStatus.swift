import BLECore

/// An HCI status / error code (Core Spec Vol 1, Part F, 1.3 "List of error codes").
///
/// Open struct: an unknown code prints as `HCIStatus(0x7f)` and is kept. Used for command
/// status, Command Complete return status, and disconnection reasons.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible, WireCodable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
    public init(parsing input: inout ByteReader) throws(DecodeError) { rawValue = try input.readUInt8() }
    public func encode(into writer: inout ByteWriter) { writer.write(rawValue) }

    public static let success = HCIStatus(0x00)
    public static let unknownCommand = HCIStatus(0x01)
    public static let unknownConnectionIdentifier = HCIStatus(0x02)
    public static let hardwareFailure = HCIStatus(0x03)
    public static let pageTimeout = HCIStatus(0x04)
    public static let authenticationFailure = HCIStatus(0x05)
    public static let pinOrKeyMissing = HCIStatus(0x06)
    public static let memoryCapacityExceeded = HCIStatus(0x07)
    public static let connectionTimeout = HCIStatus(0x08)
    public static let connectionLimitExceeded = HCIStatus(0x09)
    public static let synchronousConnectionLimitExceeded = HCIStatus(0x0A)
    public static let connectionAlreadyExists = HCIStatus(0x0B)
    public static let commandDisallowed = HCIStatus(0x0C)
    public static let connectionRejectedLimitedResources = HCIStatus(0x0D)
    public static let connectionRejectedSecurityReasons = HCIStatus(0x0E)
    public static let connectionRejectedUnacceptableBDADDR = HCIStatus(0x0F)
    public static let unsupportedFeatureOrParameter = HCIStatus(0x11)
    public static let invalidCommandParameters = HCIStatus(0x12)
    public static let remoteUserTerminatedConnection = HCIStatus(0x13)
    public static let remoteLowResources = HCIStatus(0x14)
    public static let remotePowerOff = HCIStatus(0x15)
    public static let connectionTerminatedByLocalHost = HCIStatus(0x16)
    public static let pairingNotAllowed = HCIStatus(0x18)
    public static let unsupportedRemoteFeature = HCIStatus(0x1A)
    public static let unspecifiedError = HCIStatus(0x1F)
    public static let llResponseTimeout = HCIStatus(0x22)
    public static let llProcedureCollision = HCIStatus(0x23)
    public static let instantPassed = HCIStatus(0x28)
    public static let pairingWithUnitKeyNotSupported = HCIStatus(0x29)
    public static let differentTransactionCollision = HCIStatus(0x2A)
    public static let insufficientSecurity = HCIStatus(0x2F)
    public static let simplePairingNotSupportedByHost = HCIStatus(0x37)
    public static let controllerBusy = HCIStatus(0x3A)
    public static let unacceptableConnectionParameters = HCIStatus(0x3B)
    public static let advertisingTimeout = HCIStatus(0x3C)
    public static let connectionTerminatedMICFailure = HCIStatus(0x3D)
    public static let connectionFailedToBeEstablished = HCIStatus(0x3E)
    public static let unknownAdvertisingIdentifier = HCIStatus(0x42)
    public static let operationCancelledByHost = HCIStatus(0x44)

    /// Names from Core Spec 5.4 Vol 1, Part F, 1.3 (LE wording where LMP and LL differ).
    static let names: [String] = [
        "Success", "Unknown HCI Command", "Unknown Connection Identifier", "Hardware Failure",
        "Page Timeout", "Authentication Failure", "PIN or Key Missing", "Memory Capacity Exceeded",
        "Connection Timeout", "Connection Limit Exceeded", "Synchronous Connection Limit To A Device Exceeded",
        "Connection Already Exists", "Command Disallowed", "Connection Rejected due to Limited Resources",
        "Connection Rejected Due To Security Reasons", "Connection Rejected due to Unacceptable BD_ADDR",
        // 0x10
        "Connection Accept Timeout Exceeded", "Unsupported Feature or Parameter Value",
        "Invalid HCI Command Parameters", "Remote User Terminated Connection",
        "Remote Device Terminated Connection due to Low Resources",
        "Remote Device Terminated Connection due to Power Off", "Connection Terminated By Local Host",
        "Repeated Attempts", "Pairing Not Allowed", "Unknown LMP PDU", "Unsupported Remote Feature",
        "SCO Offset Rejected", "SCO Interval Rejected", "SCO Air Mode Rejected",
        "Invalid LMP Parameters / Invalid LL Parameters", "Unspecified Error",
        // 0x20
        "Unsupported LMP Parameter Value / Unsupported LL Parameter Value", "Role Change Not Allowed",
        "LMP Response Timeout / LL Response Timeout", "LMP Error Transaction Collision / LL Procedure Collision",
        "LMP PDU Not Allowed", "Encryption Mode Not Acceptable", "Link Key cannot be Changed",
        "Requested QoS Not Supported", "Instant Passed", "Pairing With Unit Key Not Supported",
        "Different Transaction Collision", "Reserved (0x2B)", "QoS Unacceptable Parameter", "QoS Rejected",
        "Channel Classification Not Supported", "Insufficient Security",
        // 0x30
        "Parameter Out Of Mandatory Range", "Reserved (0x31)", "Role Switch Pending", "Reserved (0x33)",
        "Reserved Slot Violation", "Role Switch Failed", "Extended Inquiry Response Too Large",
        "Secure Simple Pairing Not Supported By Host", "Host Busy - Pairing",
        "Connection Rejected due to No Suitable Channel Found", "Controller Busy",
        "Unacceptable Connection Parameters", "Advertising Timeout", "Connection Terminated due to MIC Failure",
        "Connection Failed to be Established / Synchronization Timeout", "Previously Used (0x3F)",
        // 0x40
        "Coarse Clock Adjustment Rejected but Will Try to Adjust Using Clock Dragging",
        "Type0 Submap Not Defined", "Unknown Advertising Identifier", "Limit Reached",
        "Operation Cancelled by Host", "Packet Too Long",
    ]

    /// The spec name, or nil for a code 5.4 does not define.
    public var name: String? { Int(rawValue) < HCIStatus.names.count ? HCIStatus.names[Int(rawValue)] : nil }

    public var description: String { name ?? "HCIStatus(\(hex(rawValue)))" }
}
