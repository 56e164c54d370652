import BLECore

/// An AVDTP signal identifier (AVDTP 1.3, 8.5).
public struct AVDTPSignal: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
    public static let discover = AVDTPSignal(0x01)
    public static let getCapabilities = AVDTPSignal(0x02)
    public static let setConfiguration = AVDTPSignal(0x03)
    public static let getConfiguration = AVDTPSignal(0x04)
    public static let reconfigure = AVDTPSignal(0x05)
    public static let open = AVDTPSignal(0x06)
    public static let start = AVDTPSignal(0x07)
    public static let close = AVDTPSignal(0x08)
    public static let suspend = AVDTPSignal(0x09)
    public static let abort = AVDTPSignal(0x0A)
    public static let securityControl = AVDTPSignal(0x0B)
    public static let getAllCapabilities = AVDTPSignal(0x0C)
    public static let delayReport = AVDTPSignal(0x0D)
    public var name: String? { AVDTPTable.names[rawValue] }
    public var description: String { name ?? "AVDTPSignal(\(hex(rawValue)))" }
}

/// An AVDTP message type (8.4.1): command, general reject, response accept, response reject.
public enum AVDTPMessageType: UInt8, Hashable, Sendable, CustomStringConvertible {
    case command = 0, generalReject = 1, accept = 2, reject = 3
    public var description: String {
        switch self {
        case .command: "command"
        case .generalReject: "general reject"
        case .accept: "accept"
        case .reject: "reject"
        }
    }
}

/// An AVDTP or A2DP error code of a reject (AVDTP 1.3, 8.20.6.2; A2DP 1.4, 5.1.3).
public struct AVDTPError: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    static let names: [UInt8: String] = [
        0x01: "BAD_HEADER_FORMAT", 0x11: "BAD_LENGTH", 0x12: "BAD_ACP_SEID", 0x13: "SEP_IN_USE", 0x14: "SEP_NOT_IN_USE",
        0x17: "BAD_SERV_CATEGORY", 0x18: "BAD_PAYLOAD_FORMAT", 0x19: "NOT_SUPPORTED_COMMAND", 0x1A: "INVALID_CAPABILITIES",
        0x22: "BAD_RECOVERY_TYPE", 0x23: "BAD_MEDIA_TRANSPORT_FORMAT", 0x25: "BAD_RECOVERY_FORMAT", 0x26: "BAD_ROHC_FORMAT",
        0x27: "BAD_CP_FORMAT", 0x28: "BAD_MULTIPLEXING_FORMAT", 0x29: "UNSUPPORTED_CONFIGURATION", 0x31: "BAD_STATE",
        // A2DP's own (A2DP 1.4, Table 5.5).
        0xC1: "INVALID_CODEC_TYPE", 0xC2: "NOT_SUPPORTED_CODEC_TYPE", 0xC3: "INVALID_SAMPLING_FREQUENCY",
        0xC4: "NOT_SUPPORTED_SAMPLING_FREQUENCY", 0xC5: "INVALID_CHANNEL_MODE", 0xC6: "NOT_SUPPORTED_CHANNEL_MODE",
        0xC7: "INVALID_SUBBANDS", 0xC8: "NOT_SUPPORTED_SUBBANDS", 0xC9: "INVALID_ALLOCATION_METHOD",
        0xCA: "NOT_SUPPORTED_ALLOCATION_METHOD", 0xCB: "INVALID_MINIMUM_BITPOOL_VALUE", 0xCC: "NOT_SUPPORTED_MINIMUM_BITPOOL_VALUE",
        0xCD: "INVALID_MAXIMUM_BITPOOL_VALUE", 0xCE: "NOT_SUPPORTED_MAXIMUM_BITPOOL_VALUE", 0xCF: "INVALID_LAYER",
        0xD0: "NOT_SUPPORTED_LAYER", 0xD1: "NOT_SUPPORTED_CRC", 0xD2: "NOT_SUPPORTED_MPF", 0xD3: "NOT_SUPPORTED_VBR",
        0xD4: "INVALID_BIT_RATE", 0xD5: "NOT_SUPPORTED_BIT_RATE", 0xD6: "INVALID_OBJECT_TYPE", 0xD7: "NOT_SUPPORTED_OBJECT_TYPE",
        0xD8: "INVALID_CHANNELS", 0xD9: "NOT_SUPPORTED_CHANNELS", 0xDA: "INVALID_VERSION", 0xDB: "NOT_SUPPORTED_VERSION",
        0xDC: "NOT_SUPPORTED_MAXIMUM_SUL", 0xDD: "INVALID_BLOCK_LENGTH", 0xE0: "INVALID_CP_TYPE", 0xE1: "INVALID_CP_FORMAT",
        0xE2: "INVALID_CODEC_PARAMETER", 0xE3: "NOT_SUPPORTED_CODEC_PARAMETER",
    ]
    public var description: String { Self.names[rawValue].map { "\($0) (\(hex(rawValue)))" } ?? "AVDTPError(\(hex(rawValue)))" }
}

/// One stream end point as Discover answers it (8.6.2): its SEID, whether in use, media type, source or sink.
public struct AVDTPEndpoint: Hashable, Sendable, CustomStringConvertible {
    public var seid: UInt8
    public var inUse: Bool
    /// 0 audio, 1 video, 2 multimedia.
    public var mediaType: UInt8
    public var isSink: Bool
    public init(seid: UInt8, inUse: Bool = false, mediaType: UInt8 = 0, isSink: Bool) {
        self.seid = seid; self.inUse = inUse; self.mediaType = mediaType; self.isSink = isSink
    }
    public var description: String {
        "SEID \(seid) \(mediaType == 0 ? "audio" : mediaType == 1 ? "video" : "media \(mediaType)") \(isSink ? "sink" : "source")"
            + (inUse ? " in use" : "")
    }
}

/// One service capability (8.21): category, then its bytes; the codec one decoded (``A2DPCodec``).
public struct AVDTPCapability: Hashable, Sendable {
    public var category: UInt8
    public var value: [UInt8]
    public init(category: UInt8, value: [UInt8]) { self.category = category; self.value = value }
    public static let mediaTransport: UInt8 = 1
    public static let reporting: UInt8 = 2
    public static let recovery: UInt8 = 3
    public static let contentProtection: UInt8 = 4
    public static let headerCompression: UInt8 = 5
    public static let multiplexing: UInt8 = 6
    public static let mediaCodec: UInt8 = 7
    public static let delayReporting: UInt8 = 8
    static let names: [UInt8: String] = [
        1: "Media Transport", 2: "Reporting", 3: "Recovery", 4: "Content Protection", 5: "Header Compression", 6: "Multiplexing",
        7: "Media Codec", 8: "Delay Reporting",
    ]
    public var name: String { Self.names[category] ?? "category \(category)" }
    /// The codec of a Media Codec capability.
    public var codec: A2DPCodec? { category == Self.mediaCodec ? A2DPCodec(capability: value) : nil }
    public var description: String { codec?.description ?? name }
}

/// The parameters of an AVDTP message, by signal and message type (8.6–8.19).
public enum AVDTPParameters: Hashable, Sendable {
    case none
    /// Discover's answer.
    case endpoints([AVDTPEndpoint])
    /// One SEID (Get (All) Capabilities, Get Configuration, Open, Close, Abort, and a Start or Suspend reject's first byte).
    case seid(UInt8)
    /// Start, Suspend: their SEIDs.
    case seids([UInt8])
    case capabilities([AVDTPCapability])
    /// Set Configuration: the acceptor's SEID, the initiator's, the configuration.
    case setConfiguration(acp: UInt8, int: UInt8, [AVDTPCapability])
    /// Reconfigure: the SEID and the new configuration.
    case reconfigure(acp: UInt8, [AVDTPCapability])
    /// A reject naming the failing category (Set Configuration, Reconfigure) or SEID (Start, Suspend) and its error.
    case reject(first: UInt8?, error: AVDTPError)
    case delayReport(seid: UInt8, tenthsOfMilliseconds: UInt16)
    /// Bytes this decoder does not read (a fragment of a longer message, security control).
    case raw([UInt8])
}

/// One AVDTP signalling message (AVDTP 1.3, 8.4): transaction label, packet type, message type, signal, parameters.
///
/// ```
/// single:  TTTT PP MM | RR SSSSSS | parameters          (PP 00)
/// start:   TTTT PP MM | NOSP      | RR SSSSSS | part    (PP 01)   continue / end: TTTT PP MM | part (10, 11)
/// ```
public struct AVDTPMessage: WireCodable {
    public var label: UInt8
    /// 0 single, 1 start, 2 continue, 3 end.
    public var packetType: UInt8
    public var messageType: AVDTPMessageType
    /// Nil on continue and end packets (the start packet named it).
    public var signal: AVDTPSignal?
    public var parameters: AVDTPParameters

    public init(label: UInt8, messageType: AVDTPMessageType, signal: AVDTPSignal, parameters: AVDTPParameters = .none) {
        self.label = label; packetType = 0; self.messageType = messageType; self.signal = signal; self.parameters = parameters
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let h = try input.readUInt8()
        label = h >> 4
        packetType = h >> 2 & 0x03
        messageType = AVDTPMessageType(rawValue: h & 0x03)!
        switch packetType {
        case 0:
            signal = AVDTPSignal(try input.readUInt8() & 0x3F)
        case 1:
            _ = try input.readUInt8()  // NOSP
            signal = AVDTPSignal(try input.readUInt8() & 0x3F)
            parameters = .raw(input.readRemaining())
            return
        default:
            signal = nil
            parameters = .raw(input.readRemaining())
            return
        }
        parameters = try AVDTPTable.decode(signal!, messageType, &input)
    }

    public func encode(into w: inout ByteWriter) {
        w.write(label << 4 | packetType << 2 | messageType.rawValue)
        if let signal { w.write(signal.rawValue) }
        switch parameters {
        case .none: break
        case .endpoints(let list):
            for e in list {
                w.write(e.seid << 2 | (e.inUse ? 0x02 : 0))
                w.write(e.mediaType << 4 | (e.isSink ? 0x08 : 0))
            }
        case .seid(let s): w.write(s << 2)
        case .seids(let list): for s in list { w.write(s << 2) }
        case .capabilities(let caps): AVDTPTable.write(caps, &w)
        case .setConfiguration(let acp, let int, let caps):
            w.write(acp << 2)
            w.write(int << 2)
            AVDTPTable.write(caps, &w)
        case .reconfigure(let acp, let caps):
            w.write(acp << 2)
            AVDTPTable.write(caps, &w)
        case .reject(let first, let error):
            if let first { w.write(first) }
            w.write(error.rawValue)
        case .delayReport(let seid, let delay):
            w.write(seid << 2)
            w.write(bigEndian: delay)
        case .raw(let bytes): w.write(contentsOf: bytes)
        }
    }

    /// `Set Configuration command ACP SEID 1 INT SEID 2: SBC 44.1 kHz joint stereo …`.
    public var summary: String {
        var s = "\(signal?.description ?? "continuation") \(messageType)"
        switch parameters {
        case .none: break
        case .endpoints(let list): s += ": " + list.map(\.description).joined(separator: ", ")
        case .seid(let seid): s += " SEID \(seid)"
        case .seids(let list): s += " SEID " + list.map(String.init).joined(separator: ",")
        case .capabilities(let caps): s += ": " + caps.map(\.description).joined(separator: ", ")
        case .setConfiguration(let acp, let int, let caps):
            s += " ACP SEID \(acp) INT SEID \(int): " + caps.map(\.description).joined(separator: ", ")
        case .reconfigure(let acp, let caps): s += " SEID \(acp): " + caps.map(\.description).joined(separator: ", ")
        case .reject(let first, let error):
            s += " \(error)"
            if let first {
                s +=
                    signal == .start || signal == .suspend
                    ? " (SEID \(first >> 2))" : " (\(AVDTPCapability(category: first, value: []).name))"
            }
        case .delayReport(let seid, let delay): s += " SEID \(seid) delay \(String(fractionDigits: 1, Double(delay) / 10)) ms"
        case .raw(let bytes): s += " \(bytes.count) bytes"
        }
        return s
    }
}

/// The AVDTP table: each signal's name and how its commands and responses read (8.6–8.19).
public enum AVDTPTable {
    static let names: [UInt8: String] = [
        0x01: "Discover", 0x02: "Get Capabilities", 0x03: "Set Configuration", 0x04: "Get Configuration", 0x05: "Reconfigure",
        0x06: "Open", 0x07: "Start", 0x08: "Close", 0x09: "Suspend", 0x0A: "Abort", 0x0B: "Security Control",
        0x0C: "Get All Capabilities", 0x0D: "Delay Report",
    ]

    static func decode(_ signal: AVDTPSignal, _ type: AVDTPMessageType, _ r: inout ByteReader) throws(DecodeError) -> AVDTPParameters {
        switch (signal, type) {
        case (_, .generalReject): return r.isAtEnd ? .none : .raw(r.readRemaining())
        case (.discover, .command), (.open, .accept), (.start, .accept), (.close, .accept), (.suspend, .accept), (.abort, .accept),
            (.setConfiguration, .accept), (.reconfigure, .accept), (.delayReport, .accept):
            return r.isAtEnd ? .none : .raw(r.readRemaining())
        case (.discover, .accept):
            var list: [AVDTPEndpoint] = []
            while !r.isAtEnd {
                let a = try r.readUInt8(), b = try r.readUInt8()
                list.append(AVDTPEndpoint(seid: a >> 2, inUse: a & 0x02 != 0, mediaType: b >> 4, isSink: b & 0x08 != 0))
            }
            return .endpoints(list)
        case (.getCapabilities, .command), (.getAllCapabilities, .command), (.getConfiguration, .command), (.open, .command),
            (.close, .command), (.abort, .command):
            return .seid(try r.readUInt8() >> 2)
        case (.start, .command), (.suspend, .command):
            var list: [UInt8] = []
            while !r.isAtEnd { list.append(try r.readUInt8() >> 2) }
            return .seids(list)
        case (.getCapabilities, .accept), (.getAllCapabilities, .accept), (.getConfiguration, .accept):
            return .capabilities(try capabilities(&r))
        case (.setConfiguration, .command):
            let acp = try r.readUInt8() >> 2, int = try r.readUInt8() >> 2
            return .setConfiguration(acp: acp, int: int, try capabilities(&r))
        case (.reconfigure, .command):
            let acp = try r.readUInt8() >> 2
            return .reconfigure(acp: acp, try capabilities(&r))
        case (.setConfiguration, .reject), (.reconfigure, .reject), (.start, .reject), (.suspend, .reject):
            // Category (configuration) or SEID (start, suspend), then the error (8.9.3, 8.11.3, 8.13.3, 8.15.3).
            let first = try r.readUInt8()
            return .reject(first: first, error: AVDTPError(rawValue: try r.readUInt8()))
        case (_, .reject):
            return .reject(first: nil, error: AVDTPError(rawValue: try r.readUInt8()))
        case (.delayReport, .command):
            return .delayReport(seid: try r.readUInt8() >> 2, tenthsOfMilliseconds: try UInt16(parsingBigEndian: &r))
        default:
            return r.isAtEnd ? .none : .raw(r.readRemaining())
        }
    }

    static func capabilities(_ r: inout ByteReader) throws(DecodeError) -> [AVDTPCapability] {
        var out: [AVDTPCapability] = []
        while !r.isAtEnd {
            let category = try r.readUInt8()
            let length = Int(try r.readUInt8())
            out.append(AVDTPCapability(category: category, value: try r.readArray(length)))
        }
        return out
    }

    static func write(_ caps: [AVDTPCapability], _ w: inout ByteWriter) {
        for c in caps {
            w.write(c.category)
            w.write(UInt8(c.value.count))
            w.write(contentsOf: c.value)
        }
    }
}

/// An RTP header of an A2DP media packet (RFC 3550, 5.1; A2DP 1.4, 4.3.4 / AVDTP 7.2).
public struct RTPHeader: WireCodable {
    public var payloadType: UInt8
    public var marker: Bool
    public var sequence: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    /// CSRC entries and an extension skipped: the payload starts after them.
    public var headerLength: Int
    public init(payloadType: UInt8 = 96, marker: Bool = false, sequence: UInt16, timestamp: UInt32, ssrc: UInt32 = 1) {
        self.payloadType = payloadType; self.marker = marker; self.sequence = sequence; self.timestamp = timestamp; self.ssrc = ssrc
        headerLength = 12
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let start = input.offset
        let b0 = try input.readUInt8()
        guard b0 >> 6 == 2 else { throw .invalidValue(field: "RTP version", value: Int(b0 >> 6), offset: input.absoluteOffset - 1) }
        let b1 = try input.readUInt8()
        marker = b1 & 0x80 != 0
        payloadType = b1 & 0x7F
        sequence = try UInt16(parsingBigEndian: &input)
        timestamp = try UInt32(parsingBigEndian: &input)
        ssrc = try UInt32(parsingBigEndian: &input)
        try input.skip(Int(b0 & 0x0F) * 4)
        if b0 & 0x10 != 0 {
            try input.skip(2)
            try input.skip(Int(try UInt16(parsingBigEndian: &input)) * 4)
        }
        headerLength = input.offset - start
    }
    public func encode(into w: inout ByteWriter) {
        w.write(UInt8(0x80))
        w.write((marker ? 0x80 : 0) | payloadType)
        w.write(bigEndian: sequence)
        w.write(bigEndian: timestamp)
        w.write(bigEndian: ssrc)
    }
}
