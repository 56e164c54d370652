import BLECodecs
import BLECore

/// The protocol layer an event belongs to.
public struct Layer: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let hci = Layer(rawValue: "hci")
    public static let l2cap = Layer(rawValue: "l2cap")
    public static let att = Layer(rawValue: "att")
    public static let smp = Layer(rawValue: "smp")
    public static let ll = Layer(rawValue: "ll")
    public static let note = Layer(rawValue: "note")
    public var description: String { rawValue }
}

/// One line of the timeline: something a host, controller or peer said, decoded.
///
/// Owned (no borrowed bytes), so it can wait in the pairing queue until its response is seen.
public struct TimelineEvent: Sendable {
    /// The record at which the event completed (for a fragmented L2CAP PDU, its last fragment), as Wireshark numbers it.
    public var frame: Int
    public var timestamp: Timestamp
    /// Connection handle, when the event belongs to a connection.
    public var connection: UInt16?
    /// 1-based number of the connection in the capture (see ``Connection/number``).
    public var connectionNumber: Int?
    public var direction: Direction
    public var layer: Layer
    /// Layer-specific code: ATT opcode, HCI command opcode or event code, SMP code, signalling code.
    public var code: UInt32?
    /// Name of the PDU/command/event: "Handle Value Notification", "LE Connection Complete".
    public var name: String
    /// Decoded parameters for people: `handle=0x002a status=Success`.
    public var summary: String
    // ATT
    public var handle: UInt16?
    /// Every handle a list-carrying PDU names (Read By Type/Group Type, Find Information responses, …).
    public var handles: [UInt16]?
    /// The values of a list-carrying response, in the order of ``handles``' entries.
    public var values: [[UInt8]]?
    public var value: [UInt8]?
    public var uuid: BluetoothUUID?
    /// Name of the attribute (characteristic or descriptor) the handle refers to, when known.
    public var attributeName: String?
    public var nameSource: GATTSource?
    public var requestFrame: Int?
    public var responseFrame: Int?
    /// Request → response (or command → complete/status) latency.
    public var latency: Int64?
    public var status: String?
    /// What a codec made of the value (SIG built-in or a YAML spec).
    public var decoded: DecodedValue?
    public var isRequest = false
    /// Decoded numeric fields of an event that has no codec (a Bluetooth Quality Report's RSSI, counters…),
    /// as (JSON key, value) in wire order.
    public var fields: [(String, Int64)]? = nil
    /// ATT events: the bearer that carried the PDU and the CID in its L2CAP header (0x0004 on the LE fixed channel).
    public var bearer: ATTBearerKind?
    public var cid: UInt16?

    public init(
        frame: Int, timestamp: Timestamp, connection: UInt16?, direction: Direction, layer: Layer,
        code: UInt32?, name: String, summary: String
    ) {
        self.frame = frame
        self.timestamp = timestamp
        self.connection = connection
        self.direction = direction
        self.layer = layer
        self.code = code
        self.name = name
        self.summary = summary
    }
}
