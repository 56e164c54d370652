import BLECapture
import BLECore
import BLEProtocols

// MARK: - Outputs

/// Per-connection link-layer counters.
public struct LinkLayerStats: Hashable, Sendable {
    /// Every packet seen on the connection's access address (CRC-bad ones included).
    public var packets = 0
    /// Data PDUs with LLID 01 and no payload (counted once, retransmitted or not).
    public var emptyPDUs = 0
    /// Non-empty PDUs re-sent with the same SN and payload as the previous packet in that direction.
    public var retransmissions = 0
    /// Empty PDUs re-sent with the same SN.
    public var emptyRetransmissions = 0
    public var crcErrors = 0
    /// Encrypted PDUs that neither the capturer nor a key given to blescope decrypted (not decoded).
    public var encryptedUndecrypted = 0
    /// Their bytes on air (payload and MIC).
    public var encryptedUndecryptedBytes = 0
    /// Encrypted PDUs whose MIC failed, by the capturer's verdict or ours (not decoded).
    public var micFailures = 0
    /// Encrypted PDUs the capturer decrypted (nRF Sniffer / LT 256 flags) and blescope decrypted with a key.
    public var decryptedByCapturer = 0
    public var decryptedHere = 0
    /// Connection events seen (at least one packet).
    public var events = 0
    public var maxPacketsPerEvent = 0
    /// Packets counted into events (for the average).
    public var packetsInEvents = 0
    /// Non-empty decoded data PDUs central → peripheral and peripheral → central.
    public var dataPDUsCentralToPeripheral = 0
    public var dataPDUsPeripheralToCentral = 0
    public var controlPDUs = 0
    /// Payload bytes of the decoded, non-retransmitted data PDUs per direction.
    public var payloadBytesCentralToPeripheral = 0
    public var payloadBytesPeripheralToCentral = 0
    /// Data PDUs whose direction the pseudo-header did not say and the connection event's structure gave, and those
    /// whose stated direction the event's structure contradicted (``AirDirections``).
    public var directionsInferred = 0
    public var directionsCorrected = 0
    /// Of the inferred ones, those whose side their ATT opcode gave (``ATTSides``).
    public var directionsFromATT = 0
    /// Connection events the sniffer missed and packets it heard with a bad CRC (``SnifferMisses``).
    public var missed = SnifferMisses()

    public init() {}

    public var averagePacketsPerEvent: Double { events == 0 ? 0 : Double(packetsInEvents) / Double(events) }
}

/// Parameters of a connection as they stand (nil where the capture never showed them).
public struct LLLinkParameters: Hashable, Sendable {
    /// Units of 1.25 ms.
    public var interval: UInt16?
    public var latency: UInt16?
    /// Units of 10 ms.
    public var timeout: UInt16?
    public var channelMap: UInt64?
    public var centralToPeripheralPHY: LEPHY
    public var peripheralToCentralPHY: LEPHY
    public init(
        interval: UInt16? = nil, latency: UInt16? = nil, timeout: UInt16? = nil, channelMap: UInt64? = nil,
        centralToPeripheralPHY: LEPHY = .le1M, peripheralToCentralPHY: LEPHY = .le1M
    ) {
        self.interval = interval
        self.latency = latency
        self.timeout = timeout
        self.channelMap = channelMap
        self.centralToPeripheralPHY = centralToPeripheralPHY
        self.peripheralToCentralPHY = peripheralToCentralPHY
    }
}

/// A connection seen by the tracker.
public struct LLConnectionInfo: Hashable, Sendable {
    /// The synthetic handle that keys this connection's L2CAP streams (``ACLStreamKey``).
    public var handle: UInt16
    public var accessAddress: LLAccessAddress
    /// From CONNECT_IND: initiator (central) and advertiser (peripheral); nil for a connection already running when the capture began.
    public var central: LLDeviceAddress?
    public var peripheral: LLDeviceAddress?
    /// The CONNECT_IND parameters; nil for an inferred connection.
    public var connectParameters: LLConnectionParameters?
    public var parameters: LLLinkParameters
    public var startFrame: Int
    public var startTimestamp: Timestamp
    /// True when the connection was inferred from data-channel traffic (no CONNECT_IND seen).
    public var inferred: Bool
}

/// An advertising physical channel PDU seen (borrowed bytes: valid during the callback only).
///
/// `package`, like ``LLL2CAPFragment`` and ``LinkLayerOutput``: the bytes are the capture record's, reached through an
/// unsafe pointer on the per-record path and not copied; they never leave the package that way.
package struct LLAdvertisingReport {
    package var frame: Int
    package var timestamp: Timestamp
    package var channel: UInt8
    package var rssi: Int?
    package var type: LLAdvertisingPDUType
    package var header: LLAdvertisingHeader
    /// AdvA (or the advertiser a SCAN_REQ / CONNECT_IND is addressed to) when the PDU has one at a fixed place.
    package var advertiser: LLDeviceAddress?
    /// The PDU payload after the header, borrowed.
    package var payload: UnsafeRawBufferPointer
    /// AD structures of ADV_IND / ADV_NONCONN_IND / ADV_SCAN_IND / SCAN_RSP, borrowed (empty for other types).
    package var advertisingData: UnsafeRawBufferPointer

    /// The typed PDU (decoded on demand; copies).
    package func decode() throws(DecodeError) -> LLAdvertisingPDU {
        var r = ByteReader(payload)
        return try LLAdvertisingPacketPDU.parsePayload(header, &r)
    }
}

/// One LL data PDU carrying L2CAP bytes, ready for ``L2CAPReassembler`` (payload borrowed).
package struct LLL2CAPFragment {
    package var handle: UInt16
    /// `.tx` central → peripheral, `.rx` peripheral → central.
    package var direction: Direction
    /// LLID 10 (start or complete) versus LLID 01 (continuation).
    package var isStart: Bool
    package var payload: UnsafeRawBufferPointer
    package var frame: Int
    package var timestamp: Timestamp
    package var isCut: Bool

    package var streamKey: ACLStreamKey { ACLStreamKey(handle, direction) }
    package var fragment: L2CAPFragment {
        L2CAPFragment(isStart: isStart, payload: payload, frame: frame, timestamp: timestamp, isCut: isCut)
    }
}

/// An LL control PDU seen on a connection.
public struct LLControlEvent: Hashable, Sendable {
    public var handle: UInt16
    public var direction: Direction
    public var opcode: LLControlOpcode
    /// nil when the parameters did not match the opcode's size (a finding says why).
    public var pdu: LLControlPDU?
    /// The parameter bytes when ``pdu`` is nil (kept only then).
    public var unreadParameters: [UInt8]
    /// Built on demand: most passes never show it, and formatting every control PDU cost more than decoding it.
    public var summary: String { pdu?.summary ?? "\(opcode.name) \(hexString(unreadParameters))" }
    public var frame: Int
    public var timestamp: Timestamp
    /// Same SN and bytes as the previous PDU in this direction: a link-layer retransmission.
    public var isRetransmission: Bool
    /// Its receiver takes it as resent, by the SN and NESN the capture shows, whatever its bytes (a fuzzer's PDU that
    /// keeps the SN): not a new run of a procedure (``LinkLayerTracker/noteReceiverView(_:_:llid:d:frame:)``).
    public var resentToReceiver = false
}

/// Why a connection ended.
public enum LLConnectionEndReason: Hashable, Sendable {
    /// LL_TERMINATE_IND with its error code.
    case terminated(errorCode: UInt8)
    /// A new CONNECT_IND reused the access address.
    case replaced
    /// The capture ended with the connection still running.
    case captureEnded
    /// The sniffer heard nothing of the link for longer than its supervision timeout before the capture ended.
    case silent(LinkSilence)
    /// The sniffer heard nothing more of the link after its packet at the end's frame, for longer than the link can be
    /// silent and live, and the capture shows no end of it: the sniffer stopped following it (issue 49, point 7).
    case notFollowed
}

public struct LLConnectionEnded: Hashable, Sendable {
    public var connection: LLConnectionInfo
    public var reason: LLConnectionEndReason
    public var frame: Int
    public var timestamp: Timestamp
    public var stats: LinkLayerStats
    /// Nil when the link never encrypted.
    public var encryption: LLEncryptionSummary?
    /// The LL_TERMINATE_IND's sender: the central (true), the peripheral (false), not known (nil; any other end).
    public var terminatedByCentral: Bool? = nil
}

/// Parameters or PHY changed at an instant (connection update, channel map, PHY update).
public struct LLParametersChanged: Hashable, Sendable {
    public var handle: UInt16
    public var parameters: LLLinkParameters
    /// The connection event counter the change took effect at.
    public var instant: UInt16
    /// The frame of the first packet at or after the instant.
    public var frame: Int
    public var timestamp: Timestamp
    /// The control PDU that announced it.
    public var announcedIn: LLControlOpcode
}

/// What ``LinkLayerTracker`` hands out, in capture order.
package enum LinkLayerOutput {
    case advertising(LLAdvertisingReport)
    case connectionStarted(LLConnectionInfo)
    case l2capFragment(LLL2CAPFragment)
    case control(LLControlEvent)
    case parametersChanged(LLParametersChanged)
    case connectionEnded(LLConnectionEnded)
    /// The first encrypted PDU of a link (or of a restart after a pause), and whether it could be read.
    case encryptionStarted(LLEncryptionStarted)
    /// A link fact an LL procedure settled (data length, the encryption procedure's steps).
    case linkChanged(LLLinkChange)
    /// A data PDU of a shape no conforming Link Layer sends (the reserved LLID, a Length past its octets).
    case malformed(LLMalformedPDU)
}

/// A link fact an LL control procedure settled, as a controller would report it over HCI: the analyzer hands it to the
/// link as the same ``LinkInput`` the HCI event becomes.
package struct LLLinkChange: Hashable, Sendable {
    package enum Change: Hashable, Sendable {
        /// The effective data length once an LL_LENGTH_RSP answered an LL_LENGTH_REQ (Core Spec Vol 6, Part B, 5.1.9
        /// and 4.5.10): `maxTx…` central → peripheral, `maxRx…` peripheral → central.
        case dataLength(DataLength)
        /// LL_ENC_REQ: the central starts encryption (over HCI the peripheral's host is asked for the key).
        case keyRequested
        /// LL_START_ENC_REQ: the peripheral has the key (over HCI, its host's LE Long Term Key Request Reply).
        case keyGiven
        /// LL_REJECT_IND or LL_REJECT_EXT_IND answering LL_ENC_REQ: no key (over HCI, a Negative Reply).
        case keyRefused
        /// Encryption on (the peripheral's LL_START_ENC_RSP, 5.1.3.1; `inferred` when only the first encrypted PDU
        /// shows it) or off (LL_PAUSE_ENC_RSP, 5.1.3.2).
        case encryption(on: Bool, inferred: Bool)
    }
    package var handle: UInt16
    package var change: Change
    package var frame: Int
    package var timestamp: Timestamp
}

public struct LLEncryptionStarted: Hashable, Sendable {
    public var handle: UInt16
    public var direction: Direction
    public var frame: Int
    public var timestamp: Timestamp
    /// `decrypted by the capturer`, `decrypted with LTK … (source)`, `not decrypted: …`.
    public var state: String
}

extension FindingKind {
    static func llMalformed(_ error: DecodeError) -> FindingKind {
        .init(.llMalformed, message: "link-layer packet with a good CRC could not be read: \(error)")
    }
    static func llControlMalformed(_ opcode: LLControlOpcode, _ error: DecodeError) -> FindingKind {
        .init(.llControlMalformed, message: "\(opcode.name): \(error)")
    }
    static func llReservedLLID(_ aa: LLAccessAddress) -> FindingKind {
        .init(.llReservedLLID, message: "data PDU with reserved LLID 00 on \(aa): ignored")
    }
    static func llNotLinkLayer(_ linkType: UInt32) -> FindingKind {
        .init(.llUnsupportedLinkType, message: "link type \(linkType) is not decoded by the link-layer tracker")
    }
}
