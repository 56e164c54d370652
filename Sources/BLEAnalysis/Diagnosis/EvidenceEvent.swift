import BLECore
import BLEProtocols

/// One thing the capture showed that a diagnosis rule may cite: an HCI command or event, an SMP or ATT exchange, an
/// L2CAP signal or a link-layer control PDU, with its frame. Only what some rule reads is recorded (errors, connection
/// lifecycle, security, subscriptions), never the bulk of the data: a capture holds few of these.
public struct EvidenceEvent: Hashable, Sendable {
    public var frame: Int
    public var timestamp: Timestamp
    /// The controller (adapter index) the record came from.
    public var controller: UInt16
    /// The connection (1-based number, ``Connection/number``) the event belongs to, when one is open for it.
    public var connection: Int?
    public var kind: Kind

    public init(frame: Int, timestamp: Timestamp, controller: UInt16 = 0, connection: Int? = nil, kind: Kind) {
        self.frame = frame
        self.timestamp = timestamp
        self.controller = controller
        self.connection = connection
        self.kind = kind
    }

    /// Which side of the link sent an SMP, ATT or LL PDU.
    public enum Sender: String, Hashable, Sendable {
        /// The capturing host (HCI captures: host → controller), or the central on air captures.
        case local
        /// The peer (HCI: controller → host), or the peripheral on air captures.
        case peer
    }

    public enum Kind: Hashable, Sendable {
        // HCI connection lifecycle
        /// LE Create Connection or LE Extended Create Connection (v1/v2): the peer asked for, or nil through the
        /// filter accept list.
        case createConnection(command: HCICommand, peer: String?)
        case createConnectionCancel
        /// LE Set Scan Enable or LE Set Extended Scan Enable (Core Spec Vol 4, Part E, 7.8.11, 7.8.65): the host turns
        /// scanning on or off (what the controller may refuse depends on it: HH-04).
        case scanEnableCommand(enabled: Bool)
        /// A command that changes the advertising state (Core Spec Vol 4, Part E, 7.8.9, 7.8.52, 7.8.56, 7.8.59–60,
        /// 7.8.63): LE Set Advertising Enable (legacy: no `sets`), LE Set Extended Advertising Enable (no `sets` with
        /// `enabled` false: every set), LE Set Periodic Advertising Enable, LE Remove Advertising Set, LE Clear
        /// Advertising Sets (no `sets`: every set), LE Set Advertising Set Random Address; `enabled` for the enables.
        /// What the controller may refuse depends on it (HH-04).
        case advertisingCommand(HCICommand, sets: [UInt8], enabled: Bool?)
        /// Write Scan Enable (7.3.18): BR/EDR inquiry scan, page scan, both or neither (CQ-04: a controller only
        /// waiting to be found or paged reports nothing).
        case classicScanEnableCommand(inquiry: Bool, page: Bool)
        /// LE Advertising Set Terminated (7.7.65.18): the set stopped advertising (a connection, its duration or count).
        case advertisingSetTerminated(set: UInt8)
        /// Remote Name Request (7.1.19) or, `cancel`, Remote Name Request Cancel (7.1.20) for `peer`.
        case nameRequest(peer: String, cancel: Bool)
        /// Remote Name Request Complete (7.7.7), any status: the request for `peer` is over.
        case nameRequestComplete(peer: String)
        /// LE Add Device To, Remove Device From, or Clear the Filter Accept List (Core Spec Vol 4, Part E, 7.8.14–16):
        /// a stack edits it between connection attempts (``PlatformBehaviour/acceptListEdit``); the device added or
        /// removed, when the command names one.
        case acceptListEdited(HCICommand, address: String?)
        /// LE Set Random Address (7.8.4): this side's host gives itself a new random address, which a controller takes
        /// only while it neither scans, advertises nor initiates (Android cancels its connection attempts to rotate it).
        case ownRandomAddressSet
        /// LE (Enhanced) Connection Complete, any status (a failed one opens no connection).
        case connectionComplete(handle: UInt16, status: HCIStatus, peer: String?)
        /// HCI Disconnect sent by the host.
        case disconnectCommand(handle: UInt16, reason: HCIStatus)
        case disconnectionComplete(handle: UInt16, status: HCIStatus, reason: HCIStatus)
        /// LL_TERMINATE_IND on an air capture, sent by `sender` with its error code.
        case linkTerminated(sender: Sender, reason: HCIStatus)
        // BR/EDR (Core Spec Vol 4, Part E, 7.1 and 7.7)
        /// Create Connection (7.1.5): the host pages `peer`.
        case pageRequested(peer: String)
        /// LMP_start_encryption_req (Core Spec Vol 2, Part C, 4.2.5.1) from a controller's LMP trace: its sender and
        /// EN_RAND, the random number the session's key is derived from.
        case lmpStartEncryption(sender: Sender, random: [UInt8])
        /// Inquiry Result, Inquiry Result with RSSI or Extended Inquiry Result (7.7.2, 7.7.33, 7.7.38): the host's
        /// inquiry found `peers` (a device listed in a scan, which a user may pick to connect to).
        case devicesDiscovered(peers: [String])
        /// Connection Complete (7.7.3), any status; `linkType` 0 SCO, 1 ACL (a failed one opens no connection).
        case classicConnectionComplete(handle: UInt16, status: HCIStatus, peer: String, linkType: UInt8)
        /// Synchronous Connection Complete (7.7.35) or a SCO Connection Complete: SCO/eSCO link `link` (its number in
        /// ``ClassicAnalysis/synchronousLinks``) up on its own handle, or failed with `status`.
        case synchronousConnectionComplete(handle: UInt16, status: HCIStatus, peer: String, linkType: UInt8, airMode: AirMode?, link: Int)
        /// Disconnection Complete for a synchronous link's handle: that link removed, its ACL still up.
        case synchronousDisconnected(handle: UInt16, status: HCIStatus, reason: HCIStatus, link: Int)
        /// Authentication Requested (7.1.15) by the host on a BR/EDR link.
        case authenticationRequested(handle: UInt16)
        /// Link Key Request (7.7.23): the controller asks for the key stored for `peer`.
        case linkKeyRequest(peer: String)
        /// The host's answer: Link Key Request Reply (a stored key, 7.1.10) or Negative Reply (none, 7.1.11).
        case linkKeyAnswer(peer: String, found: Bool)
        /// PIN Code Request (7.7.22): legacy pairing.
        case pinCodeRequest(peer: String)
        /// IO Capability Request (the controller asks this side) or Response (the peer's): Secure Simple Pairing.
        case ioCapabilityExchange(peer: String, sender: Sender)
        case simplePairingComplete(peer: String, status: HCIStatus)
        /// Link Key Notification (7.7.24): a new link key, the pairing succeeded.
        case linkKeyCreated(peer: String)
        /// Delete Stored Link Key (7.3.10) sent by the host: the bond with `peer` removed (nil: every key, Delete_All).
        case storedLinkKeyDeleted(peer: String?)
        case authenticationComplete(handle: UInt16, status: HCIStatus)
        /// Role Change (7.7.18): `role` is this side's new role (0 central, 1 peripheral).
        case roleChange(peer: String, status: HCIStatus, role: UInt8)
        /// Mode Change (7.7.20): 0 active, 1 hold, 2 sniff.
        case modeChange(handle: UInt16, status: HCIStatus, mode: UInt8)
        // HCI commands and their answers
        /// A Command Status or Command Complete with an error status; `commandFrame` is the command it answers.
        case commandFailed(HCICommand, status: HCIStatus, commandFrame: Int?)
        /// A command that got no Command Status or Complete before the capture ended (or before the host sent it again).
        case commandUnanswered(HCICommand, commandFrame: Int)
        /// A command answered later than the HCI command time-out (2 s on Android).
        case commandLate(HCICommand, commandFrame: Int, microseconds: Int64)
        case reset
        case hardwareError(code: UInt8)
        case dataBufferOverflow(linkType: UInt8)
        // Link parameters
        case connectionUpdateComplete(handle: UInt16, status: HCIStatus, parameters: ConnectionParameters?)
        case remoteParameterRequest(handle: UInt16, request: ParameterRequest)
        case remoteParameterNegativeReply(handle: UInt16, reason: HCIStatus)
        /// An L2CAP LE signalling Connection Parameter Update Request (`identifier` pairs it with its response).
        case parameterUpdateRequest(sender: Sender, identifier: UInt8, request: ParameterRequest)
        case parameterUpdateResponse(sender: Sender, identifier: UInt8, result: UInt16)
        case phyUpdateComplete(handle: UInt16, status: HCIStatus, phy: PHYPair?)
        case readRemoteFeaturesComplete(handle: UInt16, status: HCIStatus)
        /// Read Remote Version Information (Core Vol 4, Part E, 7.1.23): this side asked the link's version exchange
        /// (LL_VERSION_IND, or LMP on BR/EDR); its Complete event (7.7.12) says the peer answered.
        case remoteVersionAsked(handle: UInt16)
        case remoteVersionComplete(handle: UInt16, status: HCIStatus)
        /// A link-layer PDU out of the specification's bounds on an air capture (``LLNonCompliance``).
        case linkLayerNonCompliance(LLNonCompliance)
        /// LL_REJECT_IND / LL_REJECT_EXT_IND / LL_UNKNOWN_RSP on an air capture: the procedure refused and why, and the
        /// PDU refused (nil for LL_REJECT_IND, which does not say).
        case linkLayerRejected(sender: Sender, procedure: String, reason: HCIStatus?, opcode: LLControlOpcode? = nil)
        // Security
        case encryptionStart(handle: UInt16)
        case encryptionChange(handle: UInt16, status: HCIStatus, enabled: Bool)
        case longTermKeyRequest(handle: UInt16)
        case longTermKeyReply(handle: UInt16)
        case longTermKeyNegativeReply(handle: UInt16)
        case authenticatedPayloadTimeout(handle: UInt16)
        /// SMP Pairing Request and Response with their AuthReq (LE Secure Connections only when both ask for it).
        case pairingRequest(sender: Sender, authReq: SMPAuthReq)
        case pairingResponse(sender: Sender, authReq: SMPAuthReq)
        /// A Pairing Request (`response` false) or Response's whole feature exchange (Core Spec Vol 3, Part H,
        /// 3.5.1–3.5.2): IO capability, OOB flag, AuthReq, key size and keys, from which the association model follows.
        case pairingFeatures(sender: Sender, response: Bool, parameters: SMPPairingParameters)
        case securityRequest(sender: Sender)
        case pairingFailed(sender: Sender, reason: SMPPairingFailedReason)
        /// Key distribution seen (Encryption Information, Identity Information…): the pairing completed.
        case keysDistributed(sender: Sender, key: SMPKeyDistribution)
        // ATT and GATT
        /// An ATT Error Response: the request it answers (opcode, handle, frame) and the error.
        case attError(request: ATTOpcode, handle: UInt16, error: ATTErrorCode, requestFrame: Int?, sender: Sender)
        /// An ATT request (or indication) at this frame that got no response: what ended the wait, at which frame, after
        /// how long.
        case attUnanswered(request: ATTOpcode, handle: UInt16?, sender: Sender, ended: AttWaitEnd, endFrame: Int, waited: Int64)
        /// A response that came later than the ATT transaction timeout (30 s, Core Spec Vol 3, Part F, 3.3.3).
        case attLateResponse(request: ATTOpcode, handle: UInt16?, requestFrame: Int, microseconds: Int64)
        /// An ATT response (or confirmation) with no request outstanding the other way on its bearer: where the
        /// capture's directions or times cannot be trusted, it may still answer the request before it in record order.
        /// `requester`: who would have sent the request (the other side than the response's).
        case attResponseUnpaired(response: ATTOpcode, requester: Sender)
        /// A CCCD (0x2902) written: value, by request or command; the characteristic's value handle when the
        /// database names it.
        case cccdWrite(handle: UInt16, valueHandle: UInt16?, value: UInt16, byCommand: Bool, sender: Sender)
        /// A Remove Source operation (0x05) written to a Broadcast Audio Scan Control Point (0x2BC7, BASS 3.1.2.7) by
        /// `sender`: the Broadcast Assistant taking back the source it had added.
        case broadcastSourceRemoved(sourceID: UInt8, sender: Sender)
        /// An ATT Exchange MTU Response on the LE fixed bearer (Core Spec Vol 3, Part F, 3.4.2): who sent the request
        /// (the client) and the Client Rx MTU it asked (nil with `requestFrame`: the capture missed the request), the
        /// Server Rx MTU the other side answered, and the ATT_MTU both then use (nil when the request was not seen).
        case mtuExchange(requester: Sender, client: Int?, server: Int, effective: Int?, requestFrame: Int?)
        case serviceChanged(start: UInt16, end: UInt16)
        case creditConnectionRefused(psm: UInt16?, result: UInt16)
        /// A BR/EDR L2CAP Connection Response refused a channel (a profile's PSM: AVDTP, AVCTP, RFCOMM…).
        case channelRefused(ChannelRefusal)
        // Controller health
        case qualityReport(handle: UInt16, report: BQRReportID, rssi: Int, snr: Int, noRx: Int, retransmissions: Int)
        /// A Bluetooth Quality Report of id 0x05, root inflammation: the controller's fatal internal error (its error
        /// code and vendor error code, AOSP `btif_bqr.h`); the stack restarts Bluetooth. It has no link-quality fields.
        case rootInflammation(errorCode: UInt8, vendorErrorCode: UInt8)
        /// A controller index (adapter) first seen in the capture.
        case controllerSeen(index: UInt16)
    }
}

/// What ended the wait for an ATT response.
public enum AttWaitEnd: String, Hashable, Sendable {
    case disconnection
    /// Another request on the same bearer before the answer (a protocol violation, Core Spec Vol 3, Part F, 3.3.2).
    case nextRequest = "next request"
    case endOfCapture = "end of capture"
}

/// Connection parameters a peer asks for (a range, Core Spec Vol 3, Part A, 4.20 and Vol 4, Part E, 7.7.65.6).
public struct ParameterRequest: Hashable, Sendable {
    /// Interval minimum and maximum in 1.25 ms units.
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    /// Supervision timeout in 10 ms units.
    public var timeout: UInt16

    public init(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.timeout = timeout
    }

    public var description: String {
        "interval \(ConnectionTiming.intervalMilliseconds(intervalMin).formatted2)–\(ConnectionTiming.intervalMilliseconds(intervalMax).formatted2) ms, latency \(latency), timeout \(ConnectionTiming.supervisionTimeoutMilliseconds(timeout)) ms"
    }
}

extension Double {
    /// `7.5`, `30`: at most two decimals, no trailing zeros.
    package var formatted2: String {
        let s = String(fractionDigits: 2, self)
        guard s.contains(".") else { return s }
        var t = s
        while t.hasSuffix("0") { t.removeLast() }
        if t.hasSuffix(".") { t.removeLast() }
        return t
    }
}
