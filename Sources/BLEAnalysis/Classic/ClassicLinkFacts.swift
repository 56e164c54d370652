import BLECore
import BLEProtocols

/// Which radio a link runs on. LE links have connection parameters, a PHY, a data length and an ATT_MTU on the fixed
/// channel; BR/EDR links have none of these (Core Spec Vol 2 and Vol 6 are different link layers), and have a role that
/// can switch, a mode (active, sniff), a supervision timeout in slots and packet types instead.
public enum LinkTransport: String, Hashable, Sendable, CustomStringConvertible {
    case le
    case bredr
    public var description: String { self == .le ? "LE" : "BR/EDR" }
}

/// A BR/EDR link's mode (Core Spec Vol 4, Part E, 7.7.20): active, or sniff with its interval (0.625 ms slots), or hold.
public struct LinkMode: Hashable, Sendable, CustomStringConvertible {
    /// 0 active, 1 hold, 2 sniff (Mode Change's Current_Mode).
    public var mode: UInt8
    /// Sniff or hold interval in slots (0 when active).
    public var interval: UInt16
    public init(mode: UInt8, interval: UInt16) {
        self.mode = mode
        self.interval = mode == 0 ? 0 : interval
    }
    public static let active = LinkMode(mode: 0, interval: 0)
    public var isSniff: Bool { mode == 2 }
    public var name: String { mode == 0 ? "active" : mode == 1 ? "hold" : mode == 2 ? "sniff" : "mode \(mode)" }
    public var intervalMilliseconds: Double { Double(interval) * 0.625 }
    /// `active`, `sniff 500.0 ms`.
    public var description: String { mode == 0 ? name : "\(name) \(String(fractionDigits: 1, intervalMilliseconds)) ms" }
}

/// Sniff subrating in force (Core Spec Vol 4, Part E, 7.7.37): the most latency each way and the least timeouts, slots.
public struct SniffSubratingValues: Hashable, Sendable {
    public var maxTxLatency: UInt16
    public var maxRxLatency: UInt16
    public var minRemoteTimeout: UInt16
    public var minLocalTimeout: UInt16
    public init(maxTxLatency: UInt16, maxRxLatency: UInt16, minRemoteTimeout: UInt16, minLocalTimeout: UInt16) {
        self.maxTxLatency = maxTxLatency
        self.maxRxLatency = maxRxLatency
        self.minRemoteTimeout = minRemoteTimeout
        self.minLocalTimeout = minLocalTimeout
    }
}

/// The remote's Bluetooth version as Read Remote Version Information Complete gives it (Vol 4, Part E, 7.7.12).
public struct RemoteVersion: Hashable, Sendable, CustomStringConvertible {
    public var version: UInt8
    public var company: UInt16
    public var subversion: UInt16
    public init(version: UInt8, company: UInt16, subversion: UInt16) {
        self.version = version
        self.company = company
        self.subversion = subversion
    }
    /// `5.0`, as the Core Spec's version numbers go (Assigned Numbers 2.1).
    public var versionName: String {
        let names = ["1.0b", "1.1", "1.2", "2.0", "2.1", "3.0", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0", "6.1"]
        return Int(version) < names.count ? names[Int(version)] : "version \(version)"
    }
    public var description: String { "\(versionName) (company \(hex(company, width: 4)), subversion \(hex(subversion, width: 4)))" }
}

/// A change of one BR/EDR link fact (``LinkInput/classic(_:)``), from the HCI event that states it.
enum ClassicLinkInput: Equatable {
    /// Role Change (7.7.18) for the link's peer, with success: the role is ``LinkState/role``'s, the switch is counted here.
    case roleSwitched(Connection.Role)
    /// Mode Change (7.7.20).
    case mode(LinkMode)
    /// Sniff Subrating (7.7.37).
    case subrating(SniffSubratingValues)
    /// Write Link Supervision Timeout answered with success (7.3.42), or Link Supervision Timeout Changed (7.7.46): slots.
    case supervisionTimeout(UInt16)
    /// Connection Packet Type Changed (7.7.29).
    case packetTypes(UInt16)
    /// Max Slots Change (7.7.27).
    case maxSlots(UInt8)
    /// Read Remote Version Information Complete (7.7.12).
    case remoteVersion(RemoteVersion)
    /// Read Remote Supported Features Complete (7.7.11): page 0 of the LMP features.
    case remoteFeatures(UInt64)
    /// Remote Name Request Complete (7.7.7).
    case remoteName(String)
    /// The peer's Class of Device: its Connection Request (7.7.4) or an inquiry answer (7.7.2, 7.7.33, 7.7.38).
    case classOfDevice(UInt32)
}

/// The facts of a BR/EDR link, each with its history and where it came from (``LinkFact``): role switches (the role
/// itself is ``LinkState/role``, as on LE), mode and sniff intervals, subrating, supervision timeout, packet types and slots, the remote's version, features and
/// name. Held by ``LinkState`` for BR/EDR links only; written only through ``LinkMachine``.
public struct ClassicLinkFacts: Hashable, Sendable {
    /// Active when the link opens (Vol 2, Part B, 8.6: a new connection is in active mode).
    public internal(set) var mode: LinkFact<LinkMode>
    public internal(set) var subrating = LinkFact<SniffSubratingValues>(initial: nil, source: .assumed)
    /// Slots of 0.625 ms; the default 0x7D00 (20 s, Vol 4, Part E, 7.3.41) until the host writes another, which the
    /// capture may not show (a controller applies it without an event on the central's side).
    public internal(set) var supervisionTimeout = LinkFact<UInt16>(initial: nil, source: .assumed)
    public internal(set) var packetTypes = LinkFact<UInt16>(initial: nil, source: .assumed)
    public internal(set) var maxSlots = LinkFact<UInt8>(initial: nil, source: .assumed)
    public internal(set) var remoteVersion = LinkFact<RemoteVersion>(initial: nil, source: .assumed)
    public internal(set) var remoteFeatures = LinkFact<UInt64>(initial: nil, source: .assumed)
    public internal(set) var remoteName = LinkFact<String>(initial: nil, source: .assumed)
    public internal(set) var classOfDevice = LinkFact<UInt32>(initial: nil, source: .assumed)
    /// The frames of the Role Change events that switched the role (a Role Change to the role already known is not one).
    public internal(set) var roleSwitchFrames: [Int] = []

    init(startFrame: Int?) {
        mode = LinkFact(initial: .active, source: startFrame.map { .inferred(.initialValue(connectionFrame: $0)) } ?? .assumed)
    }

    mutating func apply(_ input: ClassicLinkInput, frame: Int, timestamp: Timestamp, source: FactSource) {
        switch input {
        case .roleSwitched: break
        case .mode(let m): mode.set(m, frame: frame, timestamp: timestamp, source: source)
        case .subrating(let s): subrating.set(s, frame: frame, timestamp: timestamp, source: source)
        case .supervisionTimeout(let t): supervisionTimeout.set(t, frame: frame, timestamp: timestamp, source: source)
        case .packetTypes(let p): packetTypes.set(p, frame: frame, timestamp: timestamp, source: source)
        case .maxSlots(let s): maxSlots.set(s, frame: frame, timestamp: timestamp, source: source)
        case .remoteVersion(let v): remoteVersion.set(v, frame: frame, timestamp: timestamp, source: source)
        case .remoteFeatures(let f): remoteFeatures.set(f, frame: frame, timestamp: timestamp, source: source)
        case .remoteName(let n): remoteName.set(n, frame: frame, timestamp: timestamp, source: source)
        case .classOfDevice(let c): classOfDevice.set(c, frame: frame, timestamp: timestamp, source: source)
        }
    }

    /// Time in sniff mode, µs, from the mode changes up to `end`.
    public func sniffMicroseconds(until end: Timestamp) -> Int64 {
        var total: Int64 = 0
        for (i, c) in mode.changes.enumerated() where c.value.isSniff {
            let next = i + 1 < mode.changes.count ? mode.changes[i + 1].timestamp : end
            total += max(0, next.microseconds(since: c.timestamp))
        }
        return total
    }
}

/// A Class of Device's major and minor device class in words (Assigned Numbers, 2.8.2): `a Phone (Smartphone)`, `an
/// Audio/Video device (Car audio)`; nil for Miscellaneous and Uncategorized. The minor names are kept for the classes a log's peers
/// usually are (computers, phones, audio, wearables, health devices, toys); the others are named by their major class.
public enum ClassOfDevice {
    static let majors = [
        "", "a Computer", "a Phone", "a Network Access Point", "an Audio/Video device", "a Peripheral",
        "an Imaging device", "a Wearable", "a Toy", "a Health device",
    ]
    static let minors: [Int: [String]] = [
        1: [
            "", "Desktop workstation", "Server-class computer", "Laptop", "Handheld PC/PDA", "Palm-size PC/PDA", "Wearable computer",
            "Tablet",
        ],
        2: ["", "Cellular", "Cordless", "Smartphone", "Wired modem or voice gateway", "Common ISDN access"],
        4: [
            "", "Wearable Headset Device", "Hands-free Device", "", "Microphone", "Loudspeaker", "Headphones", "Portable Audio",
            "Car audio",
            "Set-top box", "HiFi Audio Device", "VCR", "Video Camera", "Camcorder", "Video Monitor", "Video Display and Loudspeaker",
            "Video Conferencing", "", "Gaming/Toy",
        ],
        7: ["", "Wristwatch", "Pager", "Jacket", "Helmet", "Glasses", "Pin"],
        8: ["", "Robot", "Vehicle", "Doll/Action figure", "Controller", "Game"],
        9: [
            "", "Blood Pressure Monitor", "Thermometer", "Weighing Scale", "Glucose Meter", "Pulse Oximeter", "Heart/Pulse Rate Monitor",
            "Health Data Display", "Step Counter", "Body Composition Analyzer", "Peak Flow Monitor", "Medication Monitor",
        ],
    ]

    /// `Smartphone`, `Loudspeaker`: the minor class where the table names it, else the major class without its article
    /// (`Audio/Video device`); nil where ``name(_:note:)`` is.
    public static func kind(_ cod: UInt32) -> String? {
        let major = Int(cod >> 8 & 0x1F), minor = Int(cod >> 2 & 0x3F)
        guard major > 0, major < majors.count else { return nil }
        if let sub = minors[major].flatMap({ minor < $0.count ? $0[minor] : nil }), !sub.isEmpty { return sub }
        return String(majors[major].drop { $0 != " " }.dropFirst())
    }

    /// `a Phone (Smartphone)`; with a `note`, `a Phone (Smartphone; Class of Device at 51)`.
    public static func name(_ cod: UInt32, note: String? = nil) -> String? {
        let major = Int(cod >> 8 & 0x1F), minor = Int(cod >> 2 & 0x3F)
        // Miscellaneous (0) names nothing; Uncategorized (0x1F) is past the table.
        guard major > 0, major < majors.count else { return nil }
        let sub = minors[major].flatMap { minor < $0.count ? $0[minor] : nil } ?? ""
        let inside = [sub, note ?? ""].filter { !$0.isEmpty }.joined(separator: "; ")
        return inside.isEmpty ? majors[major] : "\(majors[major]) (\(inside))"
    }
}

/// BR/EDR ACL packet types (Core Spec Vol 4, Part E, 7.1.14): bits set allow DM/DH packets, bits 0x3306 forbid EDR ones.
public enum ACLPacketTypes {
    /// `DM1 DH1 DM3 DH3 DM5 DH5, EDR 2-DH1 2-DH3 …`: what the bits allow.
    public static func names(_ bits: UInt16) -> String {
        let basic: [(UInt16, String)] = [
            (0x0008, "DM1"), (0x0010, "DH1"), (0x0400, "DM3"), (0x0800, "DH3"), (0x4000, "DM5"), (0x8000, "DH5"),
        ]
        // The EDR bits say "may not be used" (set: forbidden).
        let edr: [(UInt16, String)] = [
            (0x0002, "2-DH1"), (0x0004, "3-DH1"), (0x0100, "2-DH3"), (0x0200, "3-DH3"), (0x1000, "2-DH5"), (0x2000, "3-DH5"),
        ]
        let allowed = basic.filter { bits & $0.0 != 0 }.map(\.1) + edr.filter { bits & $0.0 == 0 }.map(\.1)
        return allowed.joined(separator: " ")
    }
    /// Whether the bits leave any EDR packet type allowed.
    public static func allowsEDR(_ bits: UInt16) -> Bool { bits & 0x3306 != 0x3306 }
}
