import BLECodecs
import BLECore

/// How an attribute value travelled (ATT method), as the throughput, transfer and OTA trackers see it.
public struct ValueKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let notification = ValueKind(rawValue: "notify")
    public static let indication = ValueKind(rawValue: "indicate")
    public static let writeRequest = ValueKind(rawValue: "write-req")
    public static let writeCommand = ValueKind(rawValue: "write-cmd")
    public static let signedWriteCommand = ValueKind(rawValue: "signed-write-cmd")
    public static let readResponse = ValueKind(rawValue: "read")
    public static let readBlobResponse = ValueKind(rawValue: "read-blob")
    /// One Prepare Write Request part (value at `offset`).
    public static let prepareWrite = ValueKind(rawValue: "prepare-write")
    /// A long read or prepared write reassembled into one value.
    public static let longRead = ValueKind(rawValue: "long-read")
    public static let longWrite = ValueKind(rawValue: "long-write")
    public var description: String { rawValue }
}

/// The link as it was when a value was sent: what the throughput ceiling and OTA reports need.
public struct LinkSnapshot: Hashable, Sendable {
    public var parameters: ConnectionParameters?
    public var phy: PHYPair
    public var dataLength: DataLength
    public var mtu: Int
    public var encrypted: Bool

    public init(parameters: ConnectionParameters?, phy: PHYPair, dataLength: DataLength, mtu: Int, encrypted: Bool) {
        self.parameters = parameters
        self.phy = phy
        self.dataLength = dataLength
        self.mtu = mtu
        self.encrypted = encrypted
    }
}

/// An ATT PDU that carried an attribute value, as handed to the trackers (transfers, OTA, throughput).
///
/// `value` is borrowed and valid only during the callback: copy what you keep.
public struct AttributeValueEvent {
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
    public var value: UnsafeRawBufferPointer
    /// What a codec made of the value (with its roles), when one applies.
    public var decoded: DecodedValue?
    /// Bytes this PDU took on the HCI/LL link: L2CAP header + ATT PDU (for goodput vs wire).
    public var l2capBytes: Int
    public var link: LinkSnapshot
    /// True when the peer is the GATT server of this attribute (the usual case: the phone is the
    /// client); false for the capturing side's own database, which the peer reads and writes.
    public var serverIsPeer = true

    public init(frame: Int, timestamp: Timestamp, connection: UInt16, connectionNumber: Int, direction: Direction,
                kind: ValueKind, handle: UInt16, offset: Int = 0, characteristic: BluetoothUUID?, service: BluetoothUUID?,
                value: UnsafeRawBufferPointer, decoded: DecodedValue? = nil, l2capBytes: Int, link: LinkSnapshot) {
        self.frame = frame
        self.timestamp = timestamp
        self.connection = connection
        self.connectionNumber = connectionNumber
        self.direction = direction
        self.kind = kind
        self.handle = handle
        self.offset = offset
        self.characteristic = characteristic
        self.service = service
        self.value = value
        self.decoded = decoded
        self.l2capBytes = l2capBytes
        self.link = link
    }
}

/// Something that follows attribute values through a capture: transfer, OTA and throughput trackers.
public protocol AttributeValueObserver {
    mutating func observe(_ event: AttributeValueEvent)
    /// The connection ended (Disconnection Complete); open sessions on it are cut.
    mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String)
    /// The capture ended.
    mutating func finish(frame: Int, timestamp: Timestamp)
}
