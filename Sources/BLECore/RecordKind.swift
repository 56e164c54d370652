/// What a capture record carries, in H4 terms where one applies.
///
/// An open struct: values 0x01–0x05 are the H4 packet indicators (Core Spec Vol 4, Part A, 2);
/// values from 0x80 are blescope's own for records that are not HCI packets.
public struct RecordKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    // Computed and inlinable, not stored: every record is switched on its kind, and a stored `static let` of another
    // module is reached through a call to its addressor per case compared.
    @inlinable public static var command: RecordKind { RecordKind(rawValue: 0x01) }
    @inlinable public static var acl: RecordKind { RecordKind(rawValue: 0x02) }
    @inlinable public static var sco: RecordKind { RecordKind(rawValue: 0x03) }
    @inlinable public static var event: RecordKind { RecordKind(rawValue: 0x04) }
    @inlinable public static var iso: RecordKind { RecordKind(rawValue: 0x05) }
    /// Human-readable text: Linux monitor system notes and user logging, PacketLogger notes and syslog.
    @inlinable public static var text: RecordKind { RecordKind(rawValue: 0x80) }
    /// A link-layer (over-the-air) packet; `CaptureRecord.linkType` tells how to decode its bytes.
    @inlinable public static var linkLayer: RecordKind { RecordKind(rawValue: 0x81) }
    /// Linux monitor bookkeeping (new/delete/open/close index, index info, control channel, vendor diagnostics).
    @inlinable public static var monitor: RecordKind { RecordKind(rawValue: 0x82) }
    /// A record type the format defines but blescope does not interpret (kept, counted, shown by value).
    @inlinable public static var other: RecordKind { RecordKind(rawValue: 0xFF) }

    public var description: String {
        switch self {
        case .command: "command"
        case .acl: "acl"
        case .sco: "sco"
        case .event: "event"
        case .iso: "iso"
        case .text: "text"
        case .linkLayer: "link-layer"
        case .monitor: "monitor"
        case .other: "other"
        default: "RecordKind(\(hex(rawValue)))"
        }
    }

    /// True for the HCI packet kinds (command, ACL, SCO, event, ISO).
    @inlinable public var isHCI: Bool { (0x01...0x05).contains(rawValue) }
}
