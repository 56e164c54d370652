import BLECore

/// An AD type code (Core Spec Supplement, Part A, 1; Assigned Numbers 2.3).
///
/// An open struct: unknown codes are kept and print as `ADType(0x3A)`.
public struct ADType: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let flags = ADType(0x01)
    public static let incompleteServiceUUIDs16 = ADType(0x02)
    public static let completeServiceUUIDs16 = ADType(0x03)
    public static let incompleteServiceUUIDs32 = ADType(0x04)
    public static let completeServiceUUIDs32 = ADType(0x05)
    public static let incompleteServiceUUIDs128 = ADType(0x06)
    public static let completeServiceUUIDs128 = ADType(0x07)
    public static let shortenedLocalName = ADType(0x08)
    public static let completeLocalName = ADType(0x09)
    public static let txPowerLevel = ADType(0x0A)
    public static let peripheralConnectionIntervalRange = ADType(0x12)
    public static let solicitationUUIDs16 = ADType(0x14)
    public static let solicitationUUIDs128 = ADType(0x15)
    public static let serviceData16 = ADType(0x16)
    public static let publicTargetAddress = ADType(0x17)
    public static let randomTargetAddress = ADType(0x18)
    public static let appearance = ADType(0x19)
    public static let advertisingInterval = ADType(0x1A)
    public static let leRole = ADType(0x1C)
    public static let solicitationUUIDs32 = ADType(0x1F)
    public static let serviceData32 = ADType(0x20)
    public static let serviceData128 = ADType(0x21)
    public static let uri = ADType(0x24)
    public static let manufacturerSpecificData = ADType(0xFF)

    /// The Assigned Numbers name (`Flags`, `Manufacturer specific data`), nil for unassigned codes.
    public var name: String? { AssignedNumbers.adTypeName(rawValue) }
    public var description: String { name ?? "ADType(\(hex(rawValue)))" }
    public static func < (a: ADType, b: ADType) -> Bool { a.rawValue < b.rawValue }
}

/// The Flags AD type's bits (Core Spec Supplement, Part A, 1.3).
public struct ADFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let leLimitedDiscoverable = ADFlags(rawValue: 0x01)
    public static let leGeneralDiscoverable = ADFlags(rawValue: 0x02)
    public static let brEDRNotSupported = ADFlags(rawValue: 0x04)
    /// Simultaneous LE and BR/EDR to the same device capable (controller); deprecated since Core 5.3 CSS v10.
    public static let simultaneousLEBREDRController = ADFlags(rawValue: 0x08)
    /// Simultaneous LE and BR/EDR to the same device capable (host); reserved since CSS v10.
    public static let simultaneousLEBREDRHost = ADFlags(rawValue: 0x10)

    static let bitNames = [
        "LE Limited Discoverable", "LE General Discoverable", "BR/EDR Not Supported",
        "Simultaneous LE and BR/EDR (Controller)", "Simultaneous LE and BR/EDR (Host)",
    ]

    /// Names of the set bits in bit order; reserved bits as `bit 5`.
    public var names: [String] {
        (0..<8).compactMap { bit -> String? in
            guard rawValue & (1 << bit) != 0 else { return nil }
            return bit < ADFlags.bitNames.count ? ADFlags.bitNames[bit] : "bit \(bit)"
        }
    }

    public var description: String { names.isEmpty ? "none" : names.joined(separator: ", ") }
}

/// LE Role AD type value (Core Spec Supplement, Part A, 1.17).
public struct LERole: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let peripheralOnly = LERole(rawValue: 0)
    public static let centralOnly = LERole(rawValue: 1)
    public static let bothPeripheralPreferred = LERole(rawValue: 2)
    public static let bothCentralPreferred = LERole(rawValue: 3)
    public var description: String {
        switch rawValue {
        case 0: "peripheral only"
        case 1: "central only"
        case 2: "peripheral and central, peripheral preferred"
        case 3: "peripheral and central, central preferred"
        default: "LERole(\(hex(rawValue)))"
        }
    }
}
