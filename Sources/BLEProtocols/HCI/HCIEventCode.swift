import BLECore

/// An HCI event code (Core Spec 5.4 Vol 4, Part E, 7.7).
///
/// Open struct: an unknown code prints as `HCIEventCode(0x7a)` and is kept.
public struct HCIEventCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let disconnectionComplete = HCIEventCode(0x05)
    public static let encryptionChange = HCIEventCode(0x08)
    public static let readRemoteVersionInformationComplete = HCIEventCode(0x0C)
    public static let commandComplete = HCIEventCode(0x0E)
    public static let commandStatus = HCIEventCode(0x0F)
    public static let hardwareError = HCIEventCode(0x10)
    public static let numberOfCompletedPackets = HCIEventCode(0x13)
    public static let dataBufferOverflow = HCIEventCode(0x1A)
    public static let encryptionKeyRefreshComplete = HCIEventCode(0x30)
    public static let leMeta = HCIEventCode(0x3E)
    public static let numberOfCompletedDataBlocks = HCIEventCode(0x48)
    public static let authenticatedPayloadTimeoutExpired = HCIEventCode(0x57)
    public static let encryptionChangeV2 = HCIEventCode(0x59)
    public static let vendor = HCIEventCode(0xFF)

    static let names: [UInt8: String] = [
        0x01: "Inquiry Complete", 0x02: "Inquiry Result", 0x03: "Connection Complete",
        0x04: "Connection Request", 0x05: "Disconnection Complete", 0x06: "Authentication Complete",
        0x07: "Remote Name Request Complete", 0x08: "Encryption Change", 0x09: "Change Connection Link Key Complete",
        0x0A: "Link Key Type Changed", 0x0B: "Read Remote Supported Features Complete",
        0x0C: "Read Remote Version Information Complete", 0x0D: "QoS Setup Complete", 0x0E: "Command Complete",
        0x0F: "Command Status", 0x10: "Hardware Error", 0x11: "Flush Occurred", 0x12: "Role Change",
        0x13: "Number Of Completed Packets", 0x14: "Mode Change", 0x15: "Return Link Keys",
        0x16: "PIN Code Request", 0x17: "Link Key Request", 0x18: "Link Key Notification",
        0x19: "Loopback Command", 0x1A: "Data Buffer Overflow", 0x1B: "Max Slots Change",
        0x1C: "Read Clock Offset Complete", 0x1D: "Connection Packet Type Changed", 0x1E: "QoS Violation",
        0x1F: "Page Scan Mode Change", 0x20: "Page Scan Repetition Mode Change", 0x21: "Flow Specification Complete",
        0x22: "Inquiry Result with RSSI", 0x23: "Read Remote Extended Features Complete",
        0x2C: "Synchronous Connection Complete", 0x2D: "Synchronous Connection Changed", 0x2E: "Sniff Subrating",
        0x2F: "Extended Inquiry Result", 0x30: "Encryption Key Refresh Complete", 0x31: "IO Capability Request",
        0x32: "IO Capability Response", 0x33: "User Confirmation Request", 0x34: "User Passkey Request",
        0x35: "Remote OOB Data Request", 0x36: "Simple Pairing Complete", 0x38: "Link Supervision Timeout Changed",
        0x39: "Enhanced Flush Complete", 0x3B: "User Passkey Notification", 0x3C: "Keypress Notification",
        0x3D: "Remote Host Supported Features Notification", 0x3E: "LE Meta", 0x40: "Physical Link Complete",
        0x41: "Channel Selected", 0x42: "Disconnection Physical Link Complete",
        0x43: "Physical Link Loss Early Warning", 0x44: "Physical Link Recovery", 0x45: "Logical Link Complete",
        0x46: "Disconnection Logical Link Complete", 0x47: "Flow Spec Modify Complete",
        0x48: "Number Of Completed Data Blocks", 0x49: "AMP Start Test", 0x4A: "AMP Test End",
        0x4B: "AMP Receiver Report", 0x4C: "Short Range Mode Change Complete", 0x4D: "AMP Status Change",
        0x4E: "Triggered Clock Capture", 0x4F: "Synchronization Train Complete",
        0x50: "Synchronization Train Received", 0x51: "Connectionless Peripheral Broadcast Receive",
        0x52: "Connectionless Peripheral Broadcast Timeout", 0x53: "Truncated Page Complete",
        0x54: "Peripheral Page Response Timeout", 0x55: "Connectionless Peripheral Broadcast Channel Map Change",
        0x56: "Inquiry Response Notification", 0x57: "Authenticated Payload Timeout Expired",
        0x58: "SAM Status Change", 0x59: "Encryption Change v2", 0xFF: "Vendor",
    ]

    public var name: String? { HCIEventCode.names[rawValue] }
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

    static let names: [String] = [
        "Reserved (0x00)",
        "LE Connection Complete", "LE Advertising Report", "LE Connection Update Complete",
        "LE Read Remote Features Complete", "LE Long Term Key Request", "LE Remote Connection Parameter Request",
        "LE Data Length Change", "LE Read Local P-256 Public Key Complete", "LE Generate DHKey Complete",
        "LE Enhanced Connection Complete", "LE Directed Advertising Report", "LE PHY Update Complete",
        "LE Extended Advertising Report", "LE Periodic Advertising Sync Established",
        "LE Periodic Advertising Report", // 0x0F
        "LE Periodic Advertising Sync Lost", "LE Scan Timeout", "LE Advertising Set Terminated",
        "LE Scan Request Received", "LE Channel Selection Algorithm", "LE Connectionless IQ Report",
        "LE Connection IQ Report", "LE CTE Request Failed", "LE Periodic Advertising Sync Transfer Received",
        "LE CIS Established", "LE CIS Request", "LE Create BIG Complete", "LE Terminate BIG Complete",
        "LE BIG Sync Established", "LE BIG Sync Lost", "LE Request Peer SCA Complete", // 0x1F
        "LE Path Loss Threshold", "LE Transmit Power Reporting", "LE BIGInfo Advertising Report",
        "LE Subrate Change", "LE Periodic Advertising Sync Established v2", "LE Periodic Advertising Report v2",
        "LE Periodic Advertising Sync Transfer Received v2", "LE Periodic Advertising Subevent Data Request",
        "LE Periodic Advertising Response Report", "LE Enhanced Connection Complete v2", // 0x29
    ]

    public var name: String? {
        rawValue > 0 && Int(rawValue) < LESubevent.names.count ? LESubevent.names[Int(rawValue)] : nil
    }
    public var description: String { name ?? "LESubevent(\(hex(rawValue)))" }
}
