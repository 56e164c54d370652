import BLECore
import BLEProtocols

/// What a BR/EDR link's profiles did, as the pass ends: the SDP records found, the RFCOMM channels, the A2DP streams
/// with their codec and media, the hands-free connection with its codec negotiation, AVRCP. Every item names its frames.
public struct ClassicProfilesResult: Hashable, Sendable {
    public var connection: Int
    public var sdp = SDPSummary()
    public var rfcomm: [RFCOMMChannel] = []
    public var a2dp = A2DPSummary()
    public var hfp: HFPSession?
    public var avrcp = AVRCPSummary()
    /// OBEX sessions on RFCOMM DLCs (PBAP, MAP, FTP, OPP).
    public var obex: [OBEXSession] = []
    public init(connection: Int) { self.connection = connection }
    public var isEmpty: Bool {
        sdp.requests == 0 && rfcomm.isEmpty && a2dp.signals == 0 && a2dp.streams.isEmpty && hfp == nil && avrcp.commands == 0
            && obex.isEmpty
    }
}

// MARK: SDP

/// One service record an SDP answer gave: its classes, profiles with versions, PSM or RFCOMM channel.
public struct SDPService: Hashable, Sendable {
    public var frame: Int
    /// The answer came from the peer (its services) or this side (answering the peer).
    public var fromPeer: Bool
    public var handle: UInt32?
    public var classes: [BluetoothUUID]
    public var profiles: [SDPProfileVersion]
    public var psm: UInt16?
    public var rfcommChannel: UInt8?
    public var name: String?
    public var supportedFeatures: UInt16?
    /// `Handsfree Audio Gateway`, the first class with a name.
    public var title: String { classes.lazy.compactMap(SDPServiceClass.name).first ?? classes.first?.description ?? "record" }
    /// `Audio Source 1.3`: the role (the first named class) with the first profile's version; the profile's own name
    /// when no class has one.
    public var roleText: String {
        guard let role = classes.lazy.compactMap(SDPServiceClass.name).first else { return profiles.first?.text ?? title }
        return profiles.first.map { "\(role) \(SDPRecord.versionText($0.version))" } ?? role
    }
}

public struct SDPProfileVersion: Hashable, Sendable {
    public var profile: BluetoothUUID
    /// 0xMMmm.
    public var version: UInt16
    /// `Handsfree 1.8`.
    public var text: String { "\(SDPServiceClass.name(profile) ?? profile.description) \(SDPRecord.versionText(version))" }
}

public struct SDPSummary: Hashable, Sendable {
    public var requests = 0
    public var responses = 0
    public var services: [SDPService] = []
    /// Error Responses: frame, who sent it, code.
    public var errors: [SDPErrorEvent] = []
    /// Requests no response answered by the link's end.
    public var unanswered: [Int] = []
    /// Attribute lists that did not decode (frame, why).
    public var malformed: [Int] = []
    /// Service searches (Service Search and Service Search Attribute Requests) with what their answers found.
    public var searches: [SDPSearch] = []
}

/// One service search: the classes asked for, and how many records the answer held (nil: no answer in the log).
public struct SDPSearch: Hashable, Sendable {
    public var frame: Int
    /// The peer asked (this side answers).
    public var fromPeer: Bool
    /// The UUIDs of the search pattern (Core Spec Vol 3, Part B, 4.5.1, 4.7.1).
    public var uuids: [BluetoothUUID]
    public var responseFrame: Int?
    public var found: Int?
    /// `Headset`: the pattern's UUIDs by their service class names.
    public var title: String {
        uuids.map { SDPServiceClass.name($0) ?? $0.description }.joined(separator: " + ")
    }
}

public struct SDPErrorEvent: Hashable, Sendable {
    public var frame: Int
    public var fromPeer: Bool
    public var code: SDPErrorCode
    public var requestFrame: Int?
}

// MARK: RFCOMM

/// One RFCOMM data link connection (DLCI ≥ 2), or the multiplexer itself (DLCI 0).
public struct RFCOMMChannel: Hashable, Sendable {
    public var dlci: UInt8
    public var serverChannel: UInt8 { dlci >> 1 }
    /// What SDP said runs on its server channel (`Handsfree`), or what its data shows (`AT commands`).
    public var service: String?
    public var openRequestFrame: Int?
    public var openFrame: Int?
    /// DM answered the SABM: refused.
    public var refusedFrame: Int?
    public var closeFrame: Int?
    /// Who sent the DISC (true: the peer).
    public var closedByPeer: Bool?
    public var maxFrameSize: UInt16?
    public var creditFlow = false
    /// Credits given each way (tx: by this side, rx: by the peer), and UIH data frames each way.
    public var creditsGiven = PerDirection()
    public var frames = PerDirection()
    public var bytes = PerDirection()
    /// MSC with FC set (the sender could not take more), frames.
    public var flowStops: [Int] = []
    /// Data frames sent with no credit left (credit-based flow control broken): frames.
    public var withoutCredit: [Int] = []
    /// Frames whose FCS did not check.
    public var badFCS: [Int] = []
}

// MARK: A2DP

/// One A2DP stream end point's configuration and media: the codec chosen, the stream's life (open, start, suspend,
/// close), its media packets, rate, RTP sequence gaps, timing jitter and stalls.
public struct A2DPStream: Hashable, Sendable {
    /// The acceptor's SEID (the configured end point) and the initiator's.
    public var acpSEID: UInt8
    public var intSEID: UInt8?
    /// This side configured it (the phone, as source, usually does).
    public var configuredByThisSide: Bool
    public var configurationFrame: Int
    public var configurationTime = Timestamp(microseconds: 0)
    public var codec: A2DPCodec?
    /// Reconfigurations accepted: frame and codec.
    public var reconfigurations: [A2DPReconfiguration] = []
    public var openFrame: Int?
    /// Each Start accepted (frame, time) and each Suspend accepted.
    public var starts: [Int] = []
    public var suspends: [Int] = []
    public var closeFrame: Int?
    public var abortFrame: Int?
    /// Media: packets, payload bytes, the first and last packet.
    public var media = A2DPMediaStats()
    public var delayReportMilliseconds: Double?
    /// Which end this side is (A2DP 1.4, 2.2: the source sends the media, the sink receives it), from the TSEP of a
    /// configured end point in a Discover answer (AVDTP 1.3, 8.6.2) at ``roleFrame``, else, with ``roleFrame`` nil, from
    /// who sent the media packets; nil when neither shows.
    public var thisSideIsSink: Bool?
    public var roleFrame: Int?
}

public struct A2DPReconfiguration: Hashable, Sendable {
    public var frame: Int
    public var time = Timestamp(microseconds: 0)
    public var codec: A2DPCodec?
}

/// Media packets of a stream (RTP over the AVDTP transport channel).
public struct A2DPMediaStats: Hashable, Sendable {
    public var packets = 0
    /// Of ``packets``, those this side sent (the rest the peer sent).
    public var packetsSent = 0
    public var bytes = 0
    public var firstFrame: Int?
    public var lastFrame: Int?
    public var firstTime: Timestamp?
    public var lastTime: Timestamp?
    /// Gaps in the RTP sequence numbers: how many and the packets missing in all.
    public var sequenceGaps = 0
    public var packetsMissing = 0
    /// Interarrival jitter (RFC 3550, 6.4.1) in ms, where the clock is known (the codec's sampling frequency).
    public var jitterMilliseconds: Double?
    /// Silences longer than the stall threshold while the stream was started (the host stopped feeding the link).
    public var stalls: [A2DPStall] = []
    /// SBC frames counted from the media payload headers.
    public var sbcFrames = 0
    public var durationMicroseconds: Int64 {
        guard let a = firstTime, let b = lastTime else { return 0 }
        return b.microseconds(since: a)
    }
    /// The time the stream ran: from each Start's first packet to the last before the next Start, summed. A suspended
    /// stream sends nothing (AVDTP 1.3, 8.15), so its pauses are no part of its rate: the BlueZ sink's two runs of 3.9 s
    /// and 5.9 s with 19.5 s suspended between them ran 9.8 s, not the 29.3 s from the first packet to the last.
    public var streamingMicroseconds: Int64 = 0
    /// Payload bits per second over the time the stream ran (``streamingMicroseconds``).
    public var bitsPerSecond: Double? {
        let d = streamingMicroseconds
        return d > 0 ? Double(bytes) * 8 / (Double(d) / 1e6) : nil
    }
}

public struct A2DPStall: Hashable, Sendable {
    /// The last packet before the silence and the first after it.
    public var fromFrame: Int
    public var toFrame: Int
    public var microseconds: Int64
}

/// AVDTP signalling of a link: procedures, rejections, end points.
public struct A2DPSummary: Hashable, Sendable {
    public var signals = 0
    /// End points the peer's Discover answer listed, and this side's own, with the answers' frames.
    public var peerEndpoints: [AVDTPEndpoint] = []
    public var peerEndpointsFrame: Int?
    public var localEndpoints: [AVDTPEndpoint] = []
    public var localEndpointsFrame: Int?
    /// The codecs the peer's capabilities offered, by SEID.
    public var peerCodecs: [UInt8: A2DPCodec] = [:]
    /// The codecs this side's own capabilities answers offered the peer, by SEID, and the first and last answer's frame.
    public var localCodecs: [UInt8: A2DPCodec] = [:]
    public var localCodecFrames: ClosedRange<Int>?
    public var streams: [A2DPStream] = []
    /// Rejections: frame, signal, error, and the command's frame.
    public var rejections: [AVDTPRejection] = []
    /// Commands no response answered.
    public var unanswered: [Int] = []
}

public struct AVDTPRejection: Hashable, Sendable {
    public var frame: Int
    public var signal: AVDTPSignal
    public var error: AVDTPError?
    public var commandFrame: Int?
    /// The peer rejected this side's command (true) or this side the peer's.
    public var byPeer: Bool
}

// MARK: HFP

/// The hands-free service level connection and its calls' audio: features, indicators, codec negotiation, call state,
/// volume, and the SCO/eSCO links it asked for.
public struct HFPSession: Hashable, Sendable {
    public var dlci: UInt8
    /// This side is the audio gateway (it answers AT commands: the phone) or the hands-free unit.
    public var thisSideIsGateway: Bool
    public var handsFreeFeatures: Int?
    public var gatewayFeatures: Int?
    /// The gateway's +BRSF line.
    public var gatewayFeaturesFrame: Int?
    /// AT+BAC: the codecs the hands-free unit offered, and where.
    public var availableCodecs: [Int] = []
    public var availableCodecsFrame: Int?
    /// Each +BCS the gateway sent (frame, codec) and whether AT+BCS confirmed it.
    public var codecSelections: [HFPCodecSelection] = []
    /// The indicator names of +CIND=? in order, and each +CIEV change (frame, name, value).
    public var indicators: [String] = []
    public var indicatorChanges: [HFPIndicatorChange] = []
    /// The service level connection: up at the frame of its last step's OK, or failed (frame and why).
    public var slcFrame: Int?
    public var slcFailure: HFPFailure?
    /// Commands answered ERROR or +CME ERROR (frame, command, result).
    public var errors: [HFPFailure] = []
    /// Commands that got no final result: another command from the same side came first, or the log ended (frame of
    /// the command, its text).
    public var unanswered: [HFPFailure] = []
    /// SDP named the channel's service the Headset Profile (Headset, Headset Audio Gateway, Headset HS) and not
    /// Hands-Free: HSP, which has no service level connection.
    public var headsetProfile = false
    /// Speaker and microphone gains set (AT+VGS/+VGS, AT+VGM/+VGM): the last value and its frame.
    public var speakerGain: Int?
    public var speakerGainFrame: Int?
    public var microphoneGain: Int?
    /// RING, ATA, AT+CHUP, ATD: call events (frame, what).
    public var callEvents: [HFPCallEvent] = []
    public var lines = 0

}

public struct HFPCodecSelection: Hashable, Sendable {
    public var frame: Int
    public var codec: Int
    public var confirmedFrame: Int?
    public var time: Timestamp
    public init(frame: Int, codec: Int, confirmedFrame: Int? = nil, time: Timestamp = Timestamp(microseconds: 0)) {
        self.frame = frame; self.codec = codec; self.confirmedFrame = confirmedFrame; self.time = time
    }
    /// Equal by what the capture said (frame, codec, confirmation), whatever the time.
    public static func == (a: Self, b: Self) -> Bool { a.frame == b.frame && a.codec == b.codec && a.confirmedFrame == b.confirmedFrame }
    public func hash(into h: inout Hasher) { h.combine(frame); h.combine(codec) }
}

public struct HFPIndicatorChange: Hashable, Sendable {
    public var frame: Int
    public var name: String
    public var value: Int
    public var time = Timestamp(microseconds: 0)
    /// Equal by what the capture said (frame, indicator, value), whatever the time.
    public static func == (a: Self, b: Self) -> Bool { a.frame == b.frame && a.name == b.name && a.value == b.value }
    public func hash(into h: inout Hasher) { h.combine(frame); h.combine(name); h.combine(value) }
}

public struct HFPFailure: Hashable, Sendable {
    public var frame: Int
    public var command: String
    public var why: String
    /// `the AG's +BRSF: 871 (184) has no HF indicators`: the gateway's features lack the one the command is for.
    public var cause: String? = nil
}

public struct HFPCallEvent: Hashable, Sendable {
    public var frame: Int
    public var what: String
    public var time = Timestamp(microseconds: 0)
    /// Equal by what the capture said (frame, event), whatever the time.
    public static func == (a: Self, b: Self) -> Bool { a.frame == b.frame && a.what == b.what }
    public func hash(into h: inout Hasher) { h.combine(frame); h.combine(what) }
}

// MARK: AVRCP

public struct AVRCPSummary: Hashable, Sendable {
    public var commands = 0
    public var responses = 0
    /// Pass-through operations pressed (frame, name).
    public var operations: [AVRCPEvent] = []
    /// Notifications registered (event names) and CHANGED ones received.
    public var registered: [String] = []
    public var changed: [AVRCPEvent] = []
    /// NOT IMPLEMENTED or REJECTED answers: frame, what was refused.
    public var rejections: [AVRCPEvent] = []
    /// Absolute volume set or notified (0–127), the last.
    public var volume: Int?
    public var volumeFrame: Int?
}

public struct AVRCPEvent: Hashable, Sendable {
    public var frame: Int
    public var what: String
}
