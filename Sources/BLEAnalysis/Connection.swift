import BLECore
import BLEProtocols

/// A value of a link parameter from a frame on, and where it came from.
public struct Change<Value: Hashable & Sendable>: Hashable, Sendable {
    public var frame: Int
    public var timestamp: Timestamp
    public var value: Value
    public var source: FactSource

    public init(frame: Int, timestamp: Timestamp, value: Value, source: FactSource? = nil) {
        self.frame = frame
        self.timestamp = timestamp
        self.value = value
        self.source = source ?? .observed(frame: frame)
    }
}

/// Connection interval, peripheral latency and supervision timeout (Core Spec Vol 6, Part B, 4.5.1).
public struct ConnectionParameters: Hashable, Sendable {
    /// Connection interval in units of 1.25 ms.
    public var interval: UInt16
    public var latency: UInt16
    /// Supervision timeout in units of 10 ms.
    public var timeout: UInt16

    public init(interval: UInt16, latency: UInt16, timeout: UInt16) {
        self.interval = interval
        self.latency = latency
        self.timeout = timeout
    }

    public var intervalMicroseconds: Int { ConnectionTiming.intervalMicroseconds(interval) }
    public var description: String {
        "interval \(String(fractionDigits: 2, ConnectionTiming.intervalMilliseconds(interval))) ms, latency \(latency), timeout \(ConnectionTiming.supervisionTimeoutMilliseconds(timeout)) ms"
    }
}

/// Maximum LL payload octets and time per direction (LE Data Length Change, Core Spec Vol 4, Part E, 7.7.65.7).
public struct DataLength: Hashable, Sendable {
    public var maxTxOctets: UInt16
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16
    public init(maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
        self.maxTxOctets = maxTxOctets
        self.maxTxTime = maxTxTime
        self.maxRxOctets = maxRxOctets
        self.maxRxTime = maxRxTime
    }
    public static let `default` = DataLength(maxTxOctets: 27, maxTxTime: 328, maxRxOctets: 27, maxRxTime: 328)
}

/// One LE (or BR/EDR) connection, from its Connection Complete (or first ACL packet) to its Disconnection Complete.
public struct Connection: Hashable, Sendable {
    public enum Role: String, Hashable, Sendable { case central, peripheral }

    /// 1-based sequence number in the capture (handles are reused across connections).
    public var number: Int
    public var handle: UInt16
    /// Controller (adapter) index the connection lives on.
    public var controller: UInt16
    public var peerAddress: String?
    public var peerAddressType: String?
    /// Air captures: the central's address and the connection's access address.
    public var centralAddress: String?
    public var accessAddress: String?
    /// Air captures: exact link-layer figures (events, packets per event, empty PDUs, retransmissions, CRC errors).
    public var linkLayer: LinkLayerStats?
    /// Air captures: when the link encrypted, and with which key blescope decrypted it (nil: never encrypted).
    public var linkEncryption: LLEncryptionSummary?
    /// The peer's identity address when its address is a resolvable private address that a known IRK
    /// (key file, phone log, SMP Identity Information in the capture) resolves; set at the end of the analysis.
    public var peerIdentity: String?
    /// The local controller's role in the connection (``LinkState/role``: its history and source).
    public var role: Role? { link.role.value }
    /// Who opened a BR/EDR link: this side's Create Connection or the peer's page (its Connection Request, else this
    /// side's Accept Connection Request), from the first role fact's source (nil: not in the log).
    public var paging: (byThisSide: Bool, frame: Int)? {
        guard case .inferred(.paging(let frame, let accepted)) = link.role.changes.first?.source else { return nil }
        return (!accepted, frame)
    }
    /// The link runs on LE (``LinkState/transport``; false for BR/EDR and for a link whose transport no record showed).
    public var isLE: Bool { link.transport.value == .le }
    /// The link runs on BR/EDR.
    public var isBREDR: Bool { link.transport.value == .bredr }
    /// No Connection Complete was seen: the connection was inferred from ACL traffic.
    public var inferred: Bool
    public var startFrame: Int
    public var startTime: Timestamp
    /// Where and why it ended (``lifecycle``'s ending; nil while open).
    public var endFrame: Int? { machine.lifecycle.ending?.frame }
    public var endTime: Timestamp? { machine.lifecycle.ending?.timestamp }
    public var disconnectReason: String? { machine.lifecycle.ending?.reason }
    /// The link's facts, its security and how it ends, changed only by what is fed to it (``LinkMachine``).
    public internal(set) var machine: LinkMachine
    /// How the connection ends (``ConnectionLifecycle``): who asked, who ended it, with what reason.
    public var lifecycle: ConnectionLifecycle { _read { yield machine.lifecycle } }
    /// Connection parameters, PHY, data length, ATT_MTU and encryption over time, each with where it came from: the one
    /// place every reader asks (``LinkState``), written only by ``machine``.
    /// Borrowed (`_read`), not copied: the per-value path reads its snapshot through it.
    public var link: LinkState { _read { yield machine.link } }
    /// The peer's GATT database (the peer as server), discovered by this side.
    public var gatt = GATTDatabase()
    /// This side's own database as the peer discovered it (phones are GATT servers too).
    public var localGATT = GATTDatabase()
    // What the link carried, written only by ``machine`` (``LinkTraffic``, ``LinkActivity``): read here.
    /// ACL packets and bytes each way, by original length (cut records still count).
    public var aclPackets: PerDirection { machine.traffic.aclPackets }
    public var aclBytes: PerDirection { machine.traffic.aclBytes }
    public var attPDUs: Int { machine.traffic.attPDUs }
    public var echoRequests: Int { machine.traffic.echoRequests }
    /// Android Bluetooth Quality Reports about this connection (at most ``Connection/maxQualitySamples``).
    public var linkQuality: [LinkQualitySample] { machine.linkQuality }
    public static let maxQualitySamples = 20_000
    /// A BR/EDR link's profiles: SDP, RFCOMM, A2DP, HFP, AVRCP (``ClassicProfilesResult``; set when the link or the
    /// capture ends, nil when none ran).
    public var profiles: ClassicProfilesResult?
    /// What the connection carried against what was decoded (see ``DecodeHealth``).
    public var decode = DecodeCounts()
    /// Dynamic L2CAP channels opened by its signalling (BR/EDR PSMs, LE CoC, EATT), in the order they opened.
    public var channels: [DynamicChannel] { machine.channels }
    /// Host → controller ACL packets not yet reported done by Number Of Completed Packets.
    public var inFlight: Int { machine.traffic.inFlight }
    /// The most packets that were in the controller's buffer at once for this connection.
    public var maxInFlight: Int { machine.traffic.maxInFlight }
    public var completedPackets: Int { machine.traffic.completedPackets }
    /// Periods when the controller's ACL buffer (LE Read Buffer Size) was full after this connection
    /// sent a packet: the host could not hand it more data until Number Of Completed Packets.
    public var controllerQueueFull: [QueueFullPeriod] { machine.traffic.controllerQueueFull }
    /// Periods when a sender on an LE credit-based channel had used all its credits and waited for more.
    public var creditStalls: [CreditStall] { machine.creditStalls }
    /// Total time the controller's queue was full while this connection was sending, µs.
    public var controllerQueueFullMicroseconds: Int64 { machine.traffic.controllerQueueFullMicroseconds }
    /// What it carried that the diagnosis reads (last packets, waits for the controller, per-handle use).
    public var activity: LinkActivity { machine.activity }

    public init(number: Int, handle: UInt16, controller: UInt16, inferred: Bool, startFrame: Int, startTime: Timestamp) {
        self.number = number
        self.handle = handle
        self.controller = controller
        self.inferred = inferred
        self.startFrame = startFrame
        self.startTime = startTime
        machine = LinkMachine(startFrame: inferred ? nil : startFrame)
    }

    /// The ATT MTU in force now (23, the default, until an exchange, Core Spec Vol 3, Part F, 3.2.8).
    public var currentMTU: Int { link.snapshot.mtu }
    public var currentParameters: ConnectionParameters? { link.snapshot.parameters }
    public var currentPHY: PHYPair { link.snapshot.phy }
    public var currentDataLength: DataLength { link.snapshot.dataLength }
    public var isEncrypted: Bool { link.snapshot.encrypted }
}

/// A count per direction, without a dictionary on the hot path.
public struct PerDirection: Hashable, Sendable {
    public var tx = 0
    public var rx = 0
    public var unknown = 0
    public init() {}
    public subscript(_ d: Direction) -> Int {
        // Always inlined: left out of line, the getter and setter showed in profiles (docs/performance.md#connection).
        @inline(__always) get { d == .tx ? tx : d == .rx ? rx : unknown }
        @inline(__always) set { if d == .tx { tx = newValue } else if d == .rx { rx = newValue } else { unknown = newValue } }
    }
    public var total: Int { tx + rx + unknown }
}

/// A stretch of time during which the controller's ACL buffer was full.
public struct QueueFullPeriod: Hashable, Sendable {
    public var startFrame: Int
    public var startTime: Timestamp
    public var endFrame: Int?
    public var endTime: Timestamp?
    /// Packets in flight (the buffer size) when it filled.
    public var packets: Int
    public var durationMicroseconds: Int64? { endTime.map { $0.microseconds(since: startTime) } }
}

extension Array {
    /// Appends a link-parameter change, keeping histories bounded (a hostile or looping capture can
    /// announce changes without end): past 4096 entries the last one is replaced, so the value in
    /// force stays right.
    mutating func record<V>(_ change: Change<V>) where Element == Change<V> {
        if count >= 4096 { self[count - 1] = change } else { append(change) }
    }
}

/// A sender on a credit-based channel out of credits, from its last K-frame to the receiver's next credits.
public struct CreditStall: Hashable, Sendable {
    /// The channel the data goes to (the receiver's CID).
    public var cid: UInt16
    public var startFrame: Int
    public var startTime: Timestamp
    public var endFrame: Int
    public var endTime: Timestamp
    public var durationMicroseconds: Int64 { endTime.microseconds(since: startTime) }
}

extension Array where Element == CreditStall {
    /// Appends, keeping the list bounded (the last entry is replaced past 4096).
    mutating func record(_ stall: CreditStall) {
        if count >= 4096 { self[count - 1] = stall } else { append(stall) }
    }
}

/// Which of a connection's two GATT databases an ATT PDU addresses: the peer's (this side is the
/// client) or this side's own (the peer is the client).
public enum GATTSide: Hashable, Sendable {
    case peer
    case local
}

extension Connection {
    /// The database on `side`, mutable in place.
    subscript(database side: GATTSide) -> GATTDatabase {
        get { side == .peer ? gatt : localGATT }
        _modify {
            if side == .peer { yield &gatt } else { yield &localGATT }
        }
    }
}

extension Connection {
    /// The direction of a packet as the link sees it: central → peripheral or back. Air captures say `.tx` for
    /// central → peripheral; HCI captures say `.tx` for host → controller, which is central → peripheral when the
    /// local controller is central.
    func centralToPeripheral(_ direction: Direction) -> Bool {
        role == .peripheral ? direction == .rx : direction != .rx
    }

    /// The central's and the peripheral's 48-bit addresses, where the capture shows them.
    var centralAddressValue: UInt64? {
        if let a = centralAddress { return Connection.addressValue(a) }
        return nil
    }
    var peripheralAddressValue: UInt64? {
        peerAddress.flatMap(Connection.addressValue)
    }

    static func addressValue(_ text: String) -> UInt64? {
        BDAddress(String(text.prefix(17))).map(\.value)
    }
}
