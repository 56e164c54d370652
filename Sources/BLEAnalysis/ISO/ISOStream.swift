import BLECore
import BLEProtocols

/// A connected (CIS) or broadcast (BIS) isochronous stream.
public enum ISOStreamKind: String, Hashable, Sendable {
    case cis
    case bis
}

/// An ISO data path of a stream (LE Setup ISO Data Path, Core Spec Vol 4, Part E, 7.8.109).
public struct ISODataPath: Hashable, Sendable {
    /// `.tx` host → controller (input data path), `.rx` controller → host (output data path).
    public var direction: Direction
    /// 0 HCI (the SDUs cross HCI as ISO data packets), 1–0xFE a vendor path (offloaded: no ISO packets in the log).
    public var dataPathID: UInt8
    public var codec: HCICodecID
    public var controllerDelayMicroseconds: UInt32
    public var codecConfiguration: [UInt8]
    public var frame: Int
    /// Frame of the LE Remove ISO Data Path that ended it.
    public var removedFrame: Int?
}

/// One CIS or BIS from its establishment (LE CIS Established, LE Create BIG Complete, LE BIG Sync Established) to its
/// end (Disconnection Complete, LE Terminate BIG Complete, LE BIG Sync Lost, LE BIG Terminate Sync), with the parameters
/// the controller reported and those the host asked for.
public struct ISOStream: Hashable, Sendable {
    /// 1-based, in the order the streams were established.
    public var number: Int
    public var controller: UInt16
    public var handle: UInt16
    public var kind: ISOStreamKind
    /// `central`/`peripheral` for a CIS, `source`/`receiver` for a BIS: which end the capture was recorded at.
    public var role: String
    public var cigID: UInt8?
    public var cisID: UInt8?
    /// The ACL connection a CIS belongs to, and its number in the capture.
    public var aclHandle: UInt16?
    public var connectionNumber: Int?
    public var bigHandle: UInt8?
    /// 1-based BIS index in its BIG.
    public var bisIndex: UInt8?
    /// The LE Create CIS this side sent (a central) or the LE CIS Request it received (a peripheral).
    public var requestFrame: Int?
    public var establishedFrame: Int
    public var establishedTime: Timestamp
    public var endFrame: Int?
    public var endTime: Timestamp?
    /// The HCI reason the stream ended with (`Connection Terminated By Local Host`, `Connection Timeout` …).
    public var endReason: HCIStatus?
    /// Ended by this side's HCI Reset at ``endFrame`` (Core Spec Vol 4, Part E, 7.3.2), with no reason of its own.
    public var endedByReset = false
    /// How outputs name that end (the JSON's `end_reason`, with no code).
    public static let endedByResetText = "by this side's HCI Reset"
    /// µs between SDUs, per direction (host → controller `tx`, controller → host `rx`), as the host configured it.
    public var sduIntervalTx: UInt32?
    public var sduIntervalRx: UInt32?
    public var maxSDUTx: UInt16?
    public var maxSDURx: UInt16?
    /// ISO interval, units of 1.25 ms.
    public var isoInterval: UInt16
    public var transportLatencyTx: UInt32?
    public var transportLatencyRx: UInt32?
    public var phyTx: LEPHY?
    public var phyRx: LEPHY?
    public var nse: UInt8
    public var burstNumberTx: UInt8?
    public var burstNumberRx: UInt8?
    public var flushTimeoutTx: UInt8?
    public var flushTimeoutRx: UInt8?
    public var maxPDUTx: UInt16?
    public var maxPDURx: UInt16?
    public var framing: UInt8?
    public var dataPaths: [ISODataPath] = []

    /// The SDU interval of one direction, else the ISO interval (µs).
    public func sduInterval(_ direction: Direction) -> UInt32 {
        (direction == .tx ? sduIntervalTx : sduIntervalRx) ?? UInt32(isoInterval) * 1250
    }
    public func maxSDU(_ direction: Direction) -> UInt16? { direction == .tx ? maxSDUTx : maxSDURx }
    /// `CIS 0x0060` / `BIS 0x0100`.
    public var label: String { "\(kind.rawValue.uppercased()) \(hex(handle, width: 4))" }
}

/// A step in the life of a CIG, CIS or BIG, with its frame: what the timeline shows, in a form the diagnosis rules
/// read (a CIS that failed to establish, a BIG sync lost, a stream that ended with a reason).
public struct ISOLifecycleEvent: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        case cigConfigured = "cig-configured"
        case cigRemoved = "cig-removed"
        case cisRequested = "cis-requested"
        case cisRejected = "cis-rejected"
        case cisEstablished = "cis-established"
        case cisFailed = "cis-failed"
        case cisDisconnected = "cis-disconnected"
        case bigCreated = "big-created"
        case bigFailed = "big-failed"
        case bigTerminated = "big-terminated"
        case bigSyncEstablished = "big-sync-established"
        case bigSyncFailed = "big-sync-failed"
        case bigSyncLost = "big-sync-lost"
        case bigSyncTerminated = "big-sync-terminated"
        case dataPathSetup = "data-path-setup"
        case dataPathFailed = "data-path-failed"
        case dataPathRemoved = "data-path-removed"
    }
    public var kind: Kind
    public var frame: Int
    public var timestamp: Timestamp
    public var controller: UInt16
    /// The CIS or BIS handle (nil for CIG/BIG-wide steps).
    public var handle: UInt16?
    public var cigID: UInt8?
    public var bigHandle: UInt8?
    /// Status of a failure, reason of an end; success otherwise.
    public var status: HCIStatus
}
