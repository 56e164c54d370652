import BLECodecs
import BLECore
import BLEProtocols

/// How an attribute value travelled (ATT method), as the throughput, transfer and OTA trackers see it.
///
/// An open struct over a byte: every value handed to the trackers carries one, and a `String` raw
/// value cost a reference count and a string comparison per tracker per value.
public struct ValueKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let notification = ValueKind(rawValue: 1)
    public static let indication = ValueKind(rawValue: 2)
    public static let writeRequest = ValueKind(rawValue: 3)
    public static let writeCommand = ValueKind(rawValue: 4)
    public static let signedWriteCommand = ValueKind(rawValue: 5)
    public static let readResponse = ValueKind(rawValue: 6)
    public static let readBlobResponse = ValueKind(rawValue: 7)
    /// One Prepare Write Request part (value at `offset`).
    public static let prepareWrite = ValueKind(rawValue: 8)
    /// A long read or prepared write reassembled into one value.
    public static let longRead = ValueKind(rawValue: 9)
    public static let longWrite = ValueKind(rawValue: 10)
    /// One SDU of an LE credit-based channel (LE CoC) other than EATT: `handle` is the CID, ``AttributeValueEvent/psm`` its PSM.
    public static let creditSDU = ValueKind(rawValue: 11)

    /// The name used in every output (JSON `kind`, CSV, tables): stable.
    public var name: String {
        switch self {
        case .notification: "notify"
        case .indication: "indicate"
        case .writeRequest: "write-req"
        case .writeCommand: "write-cmd"
        case .signedWriteCommand: "signed-write-cmd"
        case .readResponse: "read"
        case .readBlobResponse: "read-blob"
        case .prepareWrite: "prepare-write"
        case .longRead: "long-read"
        case .longWrite: "long-write"
        case .creditSDU: "l2cap-sdu"
        default: "kind-\(rawValue)"
        }
    }
    public var description: String { name }
}

/// The link as it was when a value was sent: what the throughput ceiling and OTA reports need.
public struct LinkSnapshot: Hashable, Sendable {
    public var parameters: ConnectionParameters?
    public var phy: PHYPair
    public var dataLength: DataLength
    public var mtu: Int
    public var encrypted: Bool
    /// Which of these the capture did not show (``LinkState`` keeps where each came from): a ceiling computed from
    /// them says so.
    public var unseen: UnseenLinkFacts = []
    /// LE, BR/EDR, or nil while the capture has not shown which: on BR/EDR the PHY, data length and ATT_MTU here are
    /// placeholders no output shows (``LinkState`` holds them as unknown).
    public var transport: LinkTransport? = nil

    public init(
        parameters: ConnectionParameters?, phy: PHYPair, dataLength: DataLength, mtu: Int, encrypted: Bool, unseen: UnseenLinkFacts = []
    ) {
        self.parameters = parameters
        self.phy = phy
        self.dataLength = dataLength
        self.mtu = mtu
        self.encrypted = encrypted
        self.unseen = unseen
    }
}

/// Link facts of a snapshot that no frame stated: assumed defaults (a connection that started before the capture), or
/// an ATT_MTU only known to be at least the largest PDU.
public struct UnseenLinkFacts: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let mtuAssumed = UnseenLinkFacts(rawValue: 1)
    /// ATT_MTU is a lower bound: the largest PDU the connection carried.
    public static let mtuAtLeast = UnseenLinkFacts(rawValue: 2)
    public static let dataLengthAssumed = UnseenLinkFacts(rawValue: 4)
    public static let phyAssumed = UnseenLinkFacts(rawValue: 8)

    /// `(PHY and data length assumed: not in the capture; ATT_MTU ≥ 208 inferred from the PDU sizes)`, or empty.
    public func caveat(mtu: Int) -> String {
        var assumed: [String] = []
        if contains(.phyAssumed) { assumed.append("PHY") }
        if contains(.dataLengthAssumed) { assumed.append("data length") }
        if contains(.mtuAssumed) { assumed.append("ATT_MTU") }
        var parts: [String] = []
        if !assumed.isEmpty {
            parts.append(assumed.joined(separator: assumed.count == 2 ? " and " : ", ") + " assumed: not in the capture")
        }
        if contains(.mtuAtLeast) { parts.append("ATT_MTU ≥ \(mtu) inferred from the PDU sizes") }
        return parts.isEmpty ? "" : "(" + parts.joined(separator: "; ") + ")"
    }

    /// The facts' names as the JSON outputs list them.
    public var assumedNames: [String] {
        [(UnseenLinkFacts.phyAssumed, "phy"), (.dataLengthAssumed, "data_length"), (.mtuAssumed, "mtu")].filter { contains($0.0) }.map(\.1)
    }
    public var inferredNames: [String] { contains(.mtuAtLeast) ? ["mtu"] : [] }
}

/// An ATT PDU that carried an attribute value, as handed to the trackers (transfers, OTA, throughput).
///
/// The value's bytes are not in the event: ``AttributeValueObserver/observe(_:value:)`` lends them beside it as a
/// `RawSpan`, which cannot outlive the call. So an event is a plain value an observer may keep (or send to another
/// thread), and what it keeps of the bytes it copies out of the span, where the copy shows.
public struct AttributeValueEvent: Sendable {
    /// Frame at which the PDU completed (Wireshark's frame number).
    public var frame: Int
    public var timestamp: Timestamp
    /// Connection handle and the connection's 1-based number in the capture (handles are reused).
    public var connection: UInt16
    public var connectionNumber: Int
    /// `.tx` host → controller (the capturing phone sent it), `.rx` received.
    public var direction: Direction
    public var kind: ValueKind
    public var handle: UInt16
    /// Value offset (Prepare Write, Read Blob); 0 otherwise.
    public var offset: Int
    public var characteristic: BluetoothUUID?
    public var service: BluetoothUUID?
    /// What a codec made of the value (with its roles), when one applies.
    public var decoded: DecodedValue? {
        get { decodedBox?.value }
        set { decodedBox = newValue.map(DecodedBox.init) }
    }
    /// Boxed so that copying an event (every tracker gets one; ``BackgroundObservers`` batches them) is
    /// plain memory plus at most one reference count, not a walk over the decoded fields.
    private var decodedBox: DecodedBox?
    /// Bytes this PDU took on the HCI/LL link: L2CAP header + ATT PDU (for goodput vs wire).
    public var l2capBytes: Int
    public var link: LinkSnapshot
    /// True when the peer is the GATT server of this attribute (the usual case: the phone is the
    /// client); false for the capturing side's own database, which the peer reads and writes.
    public var serverIsPeer = true

    /// ``ValueKind/creditSDU`` values: the PSM of the credit-based channel (the CID is in `handle`); nil otherwise.
    public var psm: UInt16? = nil

    public init(
        frame: Int, timestamp: Timestamp, connection: UInt16, connectionNumber: Int, direction: Direction,
        kind: ValueKind, handle: UInt16, offset: Int = 0, characteristic: BluetoothUUID?, service: BluetoothUUID?,
        decoded: DecodedValue? = nil, l2capBytes: Int, link: LinkSnapshot
    ) {
        self.init(
            frame: frame, timestamp: timestamp, connection: connection, connectionNumber: connectionNumber,
            direction: direction, kind: kind, handle: handle, characteristic: characteristic, service: service,
            decodedBox: decoded.map(DecodedBox.init), l2capBytes: l2capBytes, link: link, serverIsPeer: true)
        self.offset = offset
    }
}

extension AttributeValueEvent {
    /// The analyzer's: the decoded value already boxed (shared with the timeline, not boxed again) and every field set
    /// at once, so the event is built in place and never copied on its way to the observers.
    @inline(__always)
    init(
        frame: Int, timestamp: Timestamp, connection: UInt16, connectionNumber: Int, direction: Direction, kind: ValueKind,
        handle: UInt16, characteristic: BluetoothUUID?, service: BluetoothUUID?, decodedBox: DecodedBox?, l2capBytes: Int,
        link: LinkSnapshot, serverIsPeer: Bool
    ) {
        self.frame = frame
        self.timestamp = timestamp
        self.connection = connection
        self.connectionNumber = connectionNumber
        self.direction = direction
        self.kind = kind
        self.handle = handle
        self.offset = 0
        self.characteristic = characteristic
        self.service = service
        self.decodedBox = decodedBox
        self.l2capBytes = l2capBytes
        self.link = link
        self.serverIsPeer = serverIsPeer
    }
}

/// Immutable, so `Sendable` as it stands (no lock needed): events that share it only read it.
final class DecodedBox: Sendable {
    let value: DecodedValue
    init(_ value: DecodedValue) { self.value = value }
}

/// Something that follows attribute values through a capture: transfer, OTA and throughput trackers.
public protocol AttributeValueObserver {
    /// One value: where and how it travelled (`event`) and its bytes, borrowed for the call (`value`: the analyzer's
    /// reassembly buffer or the capture record, not copied for the observers; a `RawSpan` cannot escape, so copy what
    /// you keep, e.g. `value.withUnsafeBytes(Array.init)`).
    mutating func observe(_ event: AttributeValueEvent, value: RawSpan)
    /// The connection ended (Disconnection Complete); open sessions on it are cut.
    mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String)
    /// The capture ended.
    mutating func finish(frame: Int, timestamp: Timestamp)
}
