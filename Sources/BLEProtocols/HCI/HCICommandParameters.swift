import BLECore

/// Typed parameters of the HCI commands blescope decodes (Core Spec 5.4 Vol 4, Part E, 7.1–7.8).
public enum HCICommandParameters: Hashable, Sendable {
    /// A command known to carry no parameters (Reset, LE Create Connection Cancel, Read Buffer Size …).
    case empty
    case disconnect(HCIDisconnect)
    case readRemoteVersionInformation(HCIConnectionHandle)
    case leReadRemoteFeatures(HCIConnectionHandle)
    case leSetExtendedScanParameters(LESetExtendedScanParameters)
    case leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable)
    case leCreateConnection(LECreateConnection)
    case leExtendedCreateConnection(LEExtendedCreateConnection)
    case leExtendedCreateConnectionV2(LEExtendedCreateConnectionV2)
    case leConnectionUpdate(LEConnectionUpdate)
    case leRemoteConnectionParameterRequestReply(LERemoteConnectionParameterRequestReply)
    case leRemoteConnectionParameterRequestNegativeReply(LERemoteConnectionParameterRequestNegativeReply)
    /// Any command declared once (``HCIParameterSet``, listed in ``HCIDeclaredSets``): `d.as(LESetPHY.self)`.
    case declared(HCIDeclared)
    /// Parameters of a command without a typed decoder, kept as bytes.
    case raw([UInt8])

    /// The opcode this case belongs to (nil for `.empty` and `.raw`, which several opcodes share).
    public var opcode: HCICommand? {
        switch self {
        case .empty, .raw: nil
        case let .declared(d): if case .command(let c) = d.carrier { c } else { nil }
        case .disconnect: .disconnect
        case .readRemoteVersionInformation: .readRemoteVersionInformation
        case .leReadRemoteFeatures: .leReadRemoteFeatures
        case .leSetExtendedScanParameters: .leSetExtendedScanParameters
        case .leSetExtendedAdvertisingEnable: .leSetExtendedAdvertisingEnable
        case .leCreateConnection: .leCreateConnection
        case .leExtendedCreateConnection: .leExtendedCreateConnection
        case .leExtendedCreateConnectionV2: .leExtendedCreateConnectionV2
        case .leConnectionUpdate: .leConnectionUpdate
        case .leRemoteConnectionParameterRequestReply: .leRemoteConnectionParameterRequestReply
        case .leRemoteConnectionParameterRequestNegativeReply: .leRemoteConnectionParameterRequestNegativeReply
        }
    }

    /// The connection parameters an LE (Extended) Create Connection asks (the first initiating PHY's for the extended
    /// ones, 7.8.66: the PHYs are listed from the lowest bit of Initiating_PHYs, LE 1M first).
    public var requestedConnection: LEConnectionParameters? {
        switch self {
        case .leCreateConnection(let c): c.connection
        case .leExtendedCreateConnection(let c): c.phys.first?.connection
        case .leExtendedCreateConnectionV2(let c): c.connection.phys.first?.connection
        default: nil
        }
    }

    /// `set` as decoded command parameters: `.declared(LESetPHY { $0.handle = 0x40 })`.
    public static func declared(_ set: some HCIParameterSet) -> HCICommandParameters { .declared(HCIDeclared(set)) }

    var value: (any WireCodable & HCISummary)? {
        switch self {
        case .empty, .raw: nil
        case let .declared(d): d.value
        case let .disconnect(v): v
        case let .readRemoteVersionInformation(v): v
        case let .leReadRemoteFeatures(v): v
        case let .leSetExtendedScanParameters(v): v
        case let .leSetExtendedAdvertisingEnable(v): v
        case let .leCreateConnection(v): v
        case let .leExtendedCreateConnection(v): v
        case let .leExtendedCreateConnectionV2(v): v
        case let .leConnectionUpdate(v): v
        case let .leRemoteConnectionParameterRequestReply(v): v
        case let .leRemoteConnectionParameterRequestNegativeReply(v): v
        }
    }

    /// The parameter bytes (without the command header).
    public var bytes: [UInt8] {
        switch self {
        case .empty: []
        case let .raw(b): b
        default: value?.bytes ?? []
        }
    }

    /// Field summary (`handle=0x0040 reason=Remote User Terminated Connection`); empty for `.empty`, hex for `.raw`.
    public var summary: String {
        switch self {
        case .empty: ""
        case let .raw(b): b.isEmpty ? "" : "params=" + hexString(b)
        default: value?.summary ?? ""
        }
    }
}

/// A field-level one-line description of a typed HCI parameter set.
public protocol HCISummary {
    /// `key=value` pairs separated by spaces, in spec units (`interval=30.00 ms`).
    var summary: String { get }
}

/// A single Connection_Handle parameter (Read Remote Version Information 7.1.23, LE Read Remote Features 7.8.21).
public struct HCIConnectionHandle: WireCodable, HCISummary {
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public init(parsing input: inout ByteReader) throws(DecodeError) { handle = try UInt16(parsingLittleEndian: &input) }
    public func encode(into w: inout ByteWriter) { w.write(littleEndian: handle) }
    public var summary: String { "handle=\(hex(handle))" }
}

/// Disconnect command (Core Spec Vol 4, Part E, 7.1.6).
public typealias HCIDisconnect = HCIHandleAndReason
/// LE Remote Connection Parameter Request Negative Reply (7.8.32).
public typealias LERemoteConnectionParameterRequestNegativeReply = HCIHandleAndReason

/// Connection_Handle(2) and Reason(1): the parameters of Disconnect (7.1.6) and of LE Remote Connection Parameter
/// Request Negative Reply (7.8.32), one layout under two command names.
public struct HCIHandleAndReason: WireCodable, HCISummary {
    public var handle: UInt16
    public var reason: HCIStatus
    public init(handle: UInt16, reason: HCIStatus) { self.handle = handle; self.reason = reason }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        handle = try UInt16(parsingLittleEndian: &input)
        reason = try HCIStatus(parsing: &input)
    }
    public func encode(into w: inout ByteWriter) { w.write(littleEndian: handle); w.write(reason.rawValue) }
    public var summary: String { "handle=\(hex(handle)) reason=\(reason)" }
}

/// LE Set Extended Scan Parameters (7.8.64): own address type(1) filter policy(1) PHYs(1),
/// then per PHY bit set (bit 0 1M, bit 2 Coded): type(1) interval(2) window(2).
public struct LESetExtendedScanParameters: WireCodable, HCISummary {
    public struct PHYParameters: Hashable, Sendable {
        public var scanType: UInt8
        public var interval: UInt16
        public var window: UInt16
        public init(scanType: UInt8, interval: UInt16, window: UInt16) {
            self.scanType = scanType; self.interval = interval; self.window = window
        }
    }
    public var ownAddressType: LEAddressType
    public var filterPolicy: UInt8
    public var scanningPHYs: UInt8
    /// One entry per bit set in `scanningPHYs`, lowest bit first.
    public var phys: [PHYParameters]
    public init(ownAddressType: LEAddressType, filterPolicy: UInt8, scanningPHYs: UInt8, phys: [PHYParameters]) {
        self.ownAddressType = ownAddressType; self.filterPolicy = filterPolicy
        self.scanningPHYs = scanningPHYs; self.phys = phys
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        ownAddressType = LEAddressType(try input.readUInt8())
        filterPolicy = try input.readUInt8()
        scanningPHYs = try input.readUInt8()
        phys = []
        for _ in 0..<scanningPHYs.nonzeroBitCount {
            phys.append(
                PHYParameters(
                    scanType: try input.readUInt8(), interval: try UInt16(parsingLittleEndian: &input),
                    window: try UInt16(parsingLittleEndian: &input)))
        }
    }
    public func encode(into w: inout ByteWriter) {
        w.write(ownAddressType.rawValue); w.write(filterPolicy); w.write(scanningPHYs)
        for p in phys { w.write(p.scanType); w.write(littleEndian: p.interval); w.write(littleEndian: p.window) }
    }
    public var summary: String {
        "own=\(ownAddressType) filter=\(filterPolicy) phys=\(hex(scanningPHYs))"
            + phys.map { " [type=\($0.scanType) interval=\(Units.interval625($0.interval)) window=\(Units.interval625($0.window))]" }
            .joined()
    }
}

/// LE Set Extended Advertising Enable (7.8.56): enable(1) num sets(1) then per set: handle(1) duration(2) max events(1).
public struct LESetExtendedAdvertisingEnable: WireCodable, HCISummary {
    public struct Set: Hashable, Sendable {
        public var handle: UInt8
        /// Units of 10 ms; 0 = until disabled.
        public var duration: UInt16
        public var maxExtendedAdvertisingEvents: UInt8
        public init(handle: UInt8, duration: UInt16, maxExtendedAdvertisingEvents: UInt8) {
            self.handle = handle; self.duration = duration; self.maxExtendedAdvertisingEvents = maxExtendedAdvertisingEvents
        }
    }
    public var enable: Bool
    public var sets: [Set]
    public init(enable: Bool, sets: [Set]) { self.enable = enable; self.sets = sets }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        enable = try input.readUInt8() != 0
        let n = Int(try input.readUInt8())
        sets = []
        for _ in 0..<n {
            sets.append(
                Set(
                    handle: try input.readUInt8(), duration: try UInt16(parsingLittleEndian: &input),
                    maxExtendedAdvertisingEvents: try input.readUInt8()))
        }
    }
    public func encode(into w: inout ByteWriter) {
        w.write(enable ? 1 : 0); w.write(UInt8(truncatingIfNeeded: sets.count))
        for s in sets { w.write(s.handle); w.write(littleEndian: s.duration); w.write(s.maxExtendedAdvertisingEvents) }
    }
    public var summary: String {
        "enable=\(enable) sets=[" + sets.map { "\($0.handle)" }.joined(separator: ",") + "]"
    }
}

/// Connection parameters shared by create-connection and connection-update commands
/// (Core Spec Vol 4, Part E, 7.8.12): interval min/max (1.25 ms), max latency, supervision timeout (10 ms),
/// min/max CE length (0.625 ms).
public struct LEConnectionParameters: Hashable, Sendable {
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var maxLatency: UInt16
    public var supervisionTimeout: UInt16
    public var minCELength: UInt16
    public var maxCELength: UInt16
    public init(
        intervalMin: UInt16, intervalMax: UInt16, maxLatency: UInt16, supervisionTimeout: UInt16,
        minCELength: UInt16 = 0, maxCELength: UInt16 = 0
    ) {
        self.intervalMin = intervalMin; self.intervalMax = intervalMax; self.maxLatency = maxLatency
        self.supervisionTimeout = supervisionTimeout; self.minCELength = minCELength; self.maxCELength = maxCELength
    }
    init(parsing input: inout ByteReader) throws(DecodeError) {
        intervalMin = try UInt16(parsingLittleEndian: &input)
        intervalMax = try UInt16(parsingLittleEndian: &input)
        maxLatency = try UInt16(parsingLittleEndian: &input)
        supervisionTimeout = try UInt16(parsingLittleEndian: &input)
        minCELength = try UInt16(parsingLittleEndian: &input)
        maxCELength = try UInt16(parsingLittleEndian: &input)
    }
    func encode(into w: inout ByteWriter) {
        for v in [intervalMin, intervalMax, maxLatency, supervisionTimeout, minCELength, maxCELength] { w.write(littleEndian: v) }
    }
    var summary: String {
        "interval=\(Units.interval1250(intervalMin))–\(Units.interval1250(intervalMax)) latency=\(maxLatency) timeout=\(Units.timeout10(supervisionTimeout))"
    }
}

/// LE Create Connection (7.8.12): scan interval(2) window(2) filter policy(1) peer address type(1)
/// peer address(6) own address type(1) then ``LEConnectionParameters`` (12).
public struct LECreateConnection: WireCodable, HCISummary {
    public var scanInterval: UInt16
    public var scanWindow: UInt16
    public var initiatorFilterPolicy: UInt8
    public var peerAddressType: LEAddressType
    public var peerAddress: BDAddress
    public var ownAddressType: LEAddressType
    public var connection: LEConnectionParameters
    public init(
        scanInterval: UInt16, scanWindow: UInt16, initiatorFilterPolicy: UInt8, peerAddressType: LEAddressType,
        peerAddress: BDAddress, ownAddressType: LEAddressType, connection: LEConnectionParameters
    ) {
        self.scanInterval = scanInterval; self.scanWindow = scanWindow; self.initiatorFilterPolicy = initiatorFilterPolicy
        self.peerAddressType = peerAddressType; self.peerAddress = peerAddress; self.ownAddressType = ownAddressType
        self.connection = connection
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        scanInterval = try UInt16(parsingLittleEndian: &input)
        scanWindow = try UInt16(parsingLittleEndian: &input)
        initiatorFilterPolicy = try input.readUInt8()
        peerAddressType = LEAddressType(try input.readUInt8())
        peerAddress = try BDAddress(parsing: &input)
        ownAddressType = LEAddressType(try input.readUInt8())
        connection = try LEConnectionParameters(parsing: &input)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(littleEndian: scanInterval); w.write(littleEndian: scanWindow); w.write(initiatorFilterPolicy)
        w.write(peerAddressType.rawValue); peerAddress.encode(into: &w); w.write(ownAddressType.rawValue)
        connection.encode(into: &w)
    }
    public var summary: String {
        "peer=\(peerAddress) (\(peerAddressType)) own=\(ownAddressType) filter=\(initiatorFilterPolicy) \(connection.summary)"
    }
}

/// LE Extended Create Connection v1 (7.8.66): filter policy(1) own address type(1) peer address type(1)
/// peer address(6) initiating PHYs(1), then per PHY bit set (1M, 2M, Coded): scan interval(2) window(2) + 12 bytes
/// of ``LEConnectionParameters``.
public struct LEExtendedCreateConnection: WireCodable, HCISummary {
    public struct PHYParameters: Hashable, Sendable {
        public var scanInterval: UInt16
        public var scanWindow: UInt16
        public var connection: LEConnectionParameters
        public init(scanInterval: UInt16, scanWindow: UInt16, connection: LEConnectionParameters) {
            self.scanInterval = scanInterval; self.scanWindow = scanWindow; self.connection = connection
        }
    }
    public var initiatorFilterPolicy: UInt8
    public var ownAddressType: LEAddressType
    public var peerAddressType: LEAddressType
    public var peerAddress: BDAddress
    public var initiatingPHYs: UInt8
    public var phys: [PHYParameters]
    public init(
        initiatorFilterPolicy: UInt8, ownAddressType: LEAddressType, peerAddressType: LEAddressType,
        peerAddress: BDAddress, initiatingPHYs: UInt8, phys: [PHYParameters]
    ) {
        self.initiatorFilterPolicy = initiatorFilterPolicy; self.ownAddressType = ownAddressType
        self.peerAddressType = peerAddressType; self.peerAddress = peerAddress
        self.initiatingPHYs = initiatingPHYs; self.phys = phys
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        initiatorFilterPolicy = try input.readUInt8()
        ownAddressType = LEAddressType(try input.readUInt8())
        peerAddressType = LEAddressType(try input.readUInt8())
        peerAddress = try BDAddress(parsing: &input)
        initiatingPHYs = try input.readUInt8()
        phys = []
        for _ in 0..<initiatingPHYs.nonzeroBitCount {
            phys.append(
                PHYParameters(
                    scanInterval: try UInt16(parsingLittleEndian: &input),
                    scanWindow: try UInt16(parsingLittleEndian: &input),
                    connection: try LEConnectionParameters(parsing: &input)))
        }
    }
    public func encode(into w: inout ByteWriter) {
        w.write(initiatorFilterPolicy); w.write(ownAddressType.rawValue); w.write(peerAddressType.rawValue)
        peerAddress.encode(into: &w); w.write(initiatingPHYs)
        for p in phys { w.write(littleEndian: p.scanInterval); w.write(littleEndian: p.scanWindow); p.connection.encode(into: &w) }
    }
    public var summary: String {
        "peer=\(peerAddress) (\(peerAddressType)) own=\(ownAddressType) filter=\(initiatorFilterPolicy) phys=\(hex(initiatingPHYs))"
            + (phys.first.map { " " + $0.connection.summary } ?? "")
    }
}

/// LE Extended Create Connection v2 (7.8.66): advertising handle(1) subevent(1) then the v1 parameters.
public struct LEExtendedCreateConnectionV2: WireCodable, HCISummary {
    public var advertisingHandle: UInt8
    public var subevent: UInt8
    public var connection: LEExtendedCreateConnection
    public init(advertisingHandle: UInt8, subevent: UInt8, connection: LEExtendedCreateConnection) {
        self.advertisingHandle = advertisingHandle; self.subevent = subevent; self.connection = connection
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        advertisingHandle = try input.readUInt8()
        subevent = try input.readUInt8()
        connection = try LEExtendedCreateConnection(parsing: &input)
    }
    public func encode(into w: inout ByteWriter) { w.write(advertisingHandle); w.write(subevent); connection.encode(into: &w) }
    public var summary: String { "advHandle=\(advertisingHandle) subevent=\(subevent) " + connection.summary }
}

/// LE Connection Update (7.8.18): handle(2) + ``LEConnectionParameters`` (12).
public struct LEConnectionUpdate: WireCodable, HCISummary {
    public var handle: UInt16
    public var connection: LEConnectionParameters
    public init(handle: UInt16, connection: LEConnectionParameters) { self.handle = handle; self.connection = connection }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        handle = try UInt16(parsingLittleEndian: &input)
        connection = try LEConnectionParameters(parsing: &input)
    }
    public func encode(into w: inout ByteWriter) { w.write(littleEndian: handle); connection.encode(into: &w) }
    public var summary: String { "handle=\(hex(handle)) \(connection.summary)" }
}

/// LE Remote Connection Parameter Request Reply (7.8.31): handle(2) + ``LEConnectionParameters`` (12).
public struct LERemoteConnectionParameterRequestReply: WireCodable, HCISummary {
    public var handle: UInt16
    public var connection: LEConnectionParameters
    public init(handle: UInt16, connection: LEConnectionParameters) { self.handle = handle; self.connection = connection }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        handle = try UInt16(parsingLittleEndian: &input)
        connection = try LEConnectionParameters(parsing: &input)
    }
    public func encode(into w: inout ByteWriter) { w.write(littleEndian: handle); connection.encode(into: &w) }
    public var summary: String { "handle=\(hex(handle)) \(connection.summary)" }
}
