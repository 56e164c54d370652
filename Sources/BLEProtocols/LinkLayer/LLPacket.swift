import BLECore

/// A link-layer packet on an uncoded PHY, preamble excluded (Core Spec Vol 6, Part B, 2.1):
///
/// ```
/// access address u32 LE | PDU header (2 bytes; 3 with CTEInfo) | payload (header length) | CRC (3 bytes)
/// ```
/// The header's second byte is the payload length for both advertising and data channel PDUs.
/// The CRC is kept as sent (3 bytes read little-endian); ``LLCRC`` recomputes it.
public struct LLPacket: WireCodable {
    public var accessAddress: LLAccessAddress
    /// The PDU: header and payload (and CTEInfo when the data header's CP bit is set).
    public var pdu: [UInt8]
    public var crc: UInt32

    public init(accessAddress: LLAccessAddress, pdu: [UInt8], crc: UInt32) {
        self.accessAddress = accessAddress
        self.pdu = pdu
        self.crc = crc
    }

    /// Builds a packet with a correct CRC.
    public init(accessAddress: LLAccessAddress, pdu: [UInt8], crcInit: UInt32) {
        self.init(accessAddress: accessAddress, pdu: pdu, crc: LLCRC.compute(crcInit: crcInit, over: pdu))
    }

    /// - Throws: ``DecodeError/truncated(needed:available:offset:)`` when the length field points past the record.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let view = try LLPacketView(parsing: &input, isDataChannel: nil)
        accessAddress = view.accessAddress
        pdu = Array(view.pdu)
        crc = view.crc
    }

    public func encode(into writer: inout ByteWriter) {
        accessAddress.encode(into: &writer)
        writer.write(contentsOf: pdu)
        writer.write(uint24LittleEndian: crc)
    }

    /// True when the stored CRC matches the one computed with `crcInit`.
    public func crcMatches(crcInit: UInt32) -> Bool { LLCRC.compute(crcInit: crcInit, over: pdu) == crc }
}

/// A borrowed view of a link-layer packet, for the hot path: nothing is copied.
///
/// Valid only as long as the record's bytes.
public struct LLPacketView {
    public var accessAddress: LLAccessAddress
    /// The two header bytes.
    public var header0: UInt8
    public var header1: UInt8
    /// Data channel PDUs with CP set: the CTEInfo byte.
    public var cteInfo: UInt8?
    /// Header and payload, as sent.
    public var pdu: UnsafeRawBufferPointer
    /// The payload (after the header and CTEInfo), `header1` bytes.
    public var payload: UnsafeRawBufferPointer
    public var crc: UInt32
    /// Offset of the access address in the record.
    public var offset: Int

    /// Reads a packet. `isDataChannel` decides whether the CP bit of the header is honoured
    /// (nil: data channel unless the access address is the advertising one).
    /// `codingIndicator`: the LE Coded PHY's 1-byte CI follows the access address (LT 256 records on Coded PHY);
    /// it is skipped and is not part of the PDU the CRC covers.
    ///
    /// Always inlined: called, it handed its 60-byte result back through memory that ``LLAirPacket`` then read in
    /// wider loads than were stored (store-forwarding stalls; docs/performance.md#ll-packet).
    @inlinable @inline(__always)
    public init(parsing input: inout ByteReader, isDataChannel: Bool?, codingIndicator: Bool = false) throws(DecodeError) {
        offset = input.absoluteOffset
        accessAddress = LLAccessAddress(rawValue: try UInt32(parsingLittleEndian: &input))
        if codingIndicator { try input.skip(1) }
        let start = input.remainingBytes
        header0 = try UInt8(parsing: &input)
        header1 = try UInt8(parsing: &input)
        let data = isDataChannel ?? !accessAddress.isAdvertising
        var headerSize = 2
        if data, header0 & 0x20 != 0 {
            cteInfo = try UInt8(parsing: &input)
            headerSize = 3
        } else {
            cteInfo = nil
        }
        payload = try input.readBytes(Int(header1))
        pdu = UnsafeRawBufferPointer(rebasing: start[0..<(headerSize &+ Int(header1))])
        let c = try input.readBytes(3)
        crc = UInt32(c[0]) | UInt32(c[1]) << 8 | UInt32(c[2]) << 16
    }
}

// MARK: - Advertising physical channel PDUs

/// The 4-bit PDU type of an advertising physical channel PDU (Core Spec Vol 6, Part B, 2.3).
/// Some values name several PDUs depending on the channel (primary or secondary); the primary name is printed.
public struct LLAdvertisingPDUType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x0F }
    public static let advInd = LLAdvertisingPDUType(rawValue: 0)
    public static let advDirectInd = LLAdvertisingPDUType(rawValue: 1)
    public static let advNonconnInd = LLAdvertisingPDUType(rawValue: 2)
    /// SCAN_REQ; AUX_SCAN_REQ on a secondary channel.
    public static let scanReq = LLAdvertisingPDUType(rawValue: 3)
    public static let scanRsp = LLAdvertisingPDUType(rawValue: 4)
    /// CONNECT_IND; AUX_CONNECT_REQ on a secondary channel.
    public static let connectInd = LLAdvertisingPDUType(rawValue: 5)
    public static let advScanInd = LLAdvertisingPDUType(rawValue: 6)
    /// ADV_EXT_IND; AUX_ADV_IND, AUX_SCAN_RSP, AUX_SYNC_IND, AUX_CHAIN_IND on secondary channels.
    public static let advExtInd = LLAdvertisingPDUType(rawValue: 7)
    public static let auxConnectRsp = LLAdvertisingPDUType(rawValue: 8)

    public var description: String {
        switch rawValue {
        case 0: "ADV_IND"
        case 1: "ADV_DIRECT_IND"
        case 2: "ADV_NONCONN_IND"
        case 3: "SCAN_REQ"
        case 4: "SCAN_RSP"
        case 5: "CONNECT_IND"
        case 6: "ADV_SCAN_IND"
        case 7: "ADV_EXT_IND"
        case 8: "AUX_CONNECT_RSP"
        default: "LLAdvertisingPDUType(\(hex(rawValue)))"
        }
    }
}

/// The 2-byte header of an advertising physical channel PDU.
///
/// ```
/// byte 0: PDU type (bits 0–3) | RFU (4) | ChSel (5) | TxAdd (6) | RxAdd (7)     byte 1: length
/// ```
public struct LLAdvertisingHeader: WireCodable {
    public var type: LLAdvertisingPDUType
    public var channelSelection: Bool
    public var txAddRandom: Bool
    public var rxAddRandom: Bool
    public var length: UInt8

    public init(
        type: LLAdvertisingPDUType, channelSelection: Bool = false, txAddRandom: Bool = false, rxAddRandom: Bool = false, length: UInt8
    ) {
        self.type = type
        self.channelSelection = channelSelection
        self.txAddRandom = txAddRandom
        self.rxAddRandom = rxAddRandom
        self.length = length
    }

    @inlinable public init(_ b0: UInt8, _ b1: UInt8) {
        type = LLAdvertisingPDUType(rawValue: b0 & 0x0F)
        channelSelection = b0 & 0x20 != 0
        txAddRandom = b0 & 0x40 != 0
        rxAddRandom = b0 & 0x80 != 0
        length = b1
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let b0 = try UInt8(parsing: &input)
        self.init(b0, try UInt8(parsing: &input))
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(type.rawValue | (channelSelection ? 0x20 : 0) | (txAddRandom ? 0x40 : 0) | (rxAddRandom ? 0x80 : 0))
        writer.write(length)
    }
}

/// The LLData of CONNECT_IND / AUX_CONNECT_REQ (Core Spec Vol 6, Part B, 2.3.3.1).
///
/// ```
/// AA u32 | CRCInit u24 | WinSize u8 | WinOffset u16 | Interval u16 | Latency u16 | Timeout u16 | ChM 5 bytes | Hop:5 SCA:3
/// ```
/// Times are in units of 1.25 ms (window, interval) and 10 ms (timeout).
public struct LLConnectionParameters: WireCodable {
    public var accessAddress: LLAccessAddress
    public var crcInit: UInt32
    public var windowSize: UInt8
    public var windowOffset: UInt16
    public var interval: UInt16
    public var latency: UInt16
    public var timeout: UInt16
    /// 37 bits, bit n = data channel n used.
    public var channelMap: UInt64
    public var hop: UInt8
    public var sleepClockAccuracy: UInt8

    public init(
        accessAddress: LLAccessAddress, crcInit: UInt32, windowSize: UInt8 = 2, windowOffset: UInt16 = 0, interval: UInt16,
        latency: UInt16 = 0, timeout: UInt16, channelMap: UInt64 = 0x1F_FFFF_FFFF, hop: UInt8 = 7, sleepClockAccuracy: UInt8 = 0
    ) {
        self.accessAddress = accessAddress
        self.crcInit = crcInit
        self.windowSize = windowSize
        self.windowOffset = windowOffset
        self.interval = interval
        self.latency = latency
        self.timeout = timeout
        self.channelMap = channelMap
        self.hop = hop
        self.sleepClockAccuracy = sleepClockAccuracy
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        accessAddress = try LLAccessAddress(parsing: &input)
        crcInit = try LLConnectionParameters.readUInt24(&input)
        windowSize = try UInt8(parsing: &input)
        windowOffset = try UInt16(parsingLittleEndian: &input)
        interval = try UInt16(parsingLittleEndian: &input)
        latency = try UInt16(parsingLittleEndian: &input)
        timeout = try UInt16(parsingLittleEndian: &input)
        channelMap = try LLConnectionParameters.readChannelMap(&input)
        let b = try UInt8(parsing: &input)
        hop = b & 0x1F
        sleepClockAccuracy = b >> 5
    }

    public func encode(into writer: inout ByteWriter) {
        accessAddress.encode(into: &writer)
        writer.write(uint24LittleEndian: crcInit)
        writer.write(windowSize)
        writer.write(littleEndian: windowOffset)
        writer.write(littleEndian: interval)
        writer.write(littleEndian: latency)
        writer.write(littleEndian: timeout)
        LLConnectionParameters.writeChannelMap(channelMap, &writer)
        writer.write(hop & 0x1F | sleepClockAccuracy << 5)
    }

    /// Connection interval in µs.
    public var intervalMicroseconds: Int { ConnectionTiming.intervalMicroseconds(interval) }
    /// Number of data channels in use.
    public var usedChannels: Int { (channelMap & 0x1F_FFFF_FFFF).nonzeroBitCount }

    static func readUInt24(_ input: inout ByteReader) throws(DecodeError) -> UInt32 {
        let a = try UInt8(parsing: &input), b = try UInt8(parsing: &input), c = try UInt8(parsing: &input)
        return UInt32(a) | UInt32(b) << 8 | UInt32(c) << 16
    }

    static func readChannelMap(_ input: inout ByteReader) throws(DecodeError) -> UInt64 {
        var m: UInt64 = 0
        for i in 0..<5 { m |= UInt64(try UInt8(parsing: &input)) << UInt64(8 * i) }
        return m
    }

    static func writeChannelMap(_ m: UInt64, _ writer: inout ByteWriter) {
        for i in 0..<5 { writer.write(UInt8(truncatingIfNeeded: m >> UInt64(8 * i))) }
    }
}

/// CONNECT_IND: initiator, advertiser and the connection's parameters.
public struct LLConnectInd: Hashable, Sendable {
    public var initiator: LLDeviceAddress
    public var advertiser: LLDeviceAddress
    public var parameters: LLConnectionParameters

    public init(initiator: LLDeviceAddress, advertiser: LLDeviceAddress, parameters: LLConnectionParameters) {
        self.initiator = initiator
        self.advertiser = advertiser
        self.parameters = parameters
    }
}

/// An advertising physical channel PDU, typed (Core Spec Vol 6, Part B, 2.3). AD data stays raw.
public enum LLAdvertisingPDU: Hashable, Sendable {
    case advInd(advertiser: LLDeviceAddress, data: [UInt8])
    case advDirectInd(advertiser: LLDeviceAddress, target: LLDeviceAddress)
    case advNonconnInd(advertiser: LLDeviceAddress, data: [UInt8])
    case scanReq(scanner: LLDeviceAddress, advertiser: LLDeviceAddress)
    case scanRsp(advertiser: LLDeviceAddress, data: [UInt8])
    case connectInd(LLConnectInd)
    case advScanInd(advertiser: LLDeviceAddress, data: [UInt8])
    /// ADV_EXT_IND and the AUX_* PDUs that share its format (type 7), and AUX_CONNECT_RSP (type 8).
    case extended(LLAdvertisingPDUType, LLExtendedAdvertisingPayload)
    /// A reserved type, payload kept.
    case unknown(LLAdvertisingPDUType, [UInt8])

    /// The PDU type this value encodes to.
    public var type: LLAdvertisingPDUType {
        switch self {
        case .advInd: .advInd
        case .advDirectInd: .advDirectInd
        case .advNonconnInd: .advNonconnInd
        case .scanReq: .scanReq
        case .scanRsp: .scanRsp
        case .connectInd: .connectInd
        case .advScanInd: .advScanInd
        case .extended(let t, _): t
        case .unknown(let t, _): t
        }
    }

    /// The advertiser's address when the PDU carries one.
    public var advertiser: LLDeviceAddress? {
        switch self {
        case .advInd(let a, _), .advDirectInd(let a, _), .advNonconnInd(let a, _), .scanRsp(let a, _), .advScanInd(let a, _): a
        case .scanReq(_, let a): a
        case .connectInd(let c): c.advertiser
        case .extended(_, let e): e.advertiser
        case .unknown: nil
        }
    }
}

/// An advertising physical channel PDU with its header: the unit that round-trips.
public struct LLAdvertisingPacketPDU: WireCodable {
    public var header: LLAdvertisingHeader
    public var pdu: LLAdvertisingPDU

    /// Builds the header from the PDU (length computed).
    public init(_ pdu: LLAdvertisingPDU, channelSelection: Bool = false, txAddRandom: Bool? = nil, rxAddRandom: Bool? = nil) {
        self.pdu = pdu
        var tx = false, rx = false
        switch pdu {
        case .advInd(let a, _), .advNonconnInd(let a, _), .scanRsp(let a, _), .advScanInd(let a, _): tx = a.isRandom
        case .advDirectInd(let a, let t): tx = a.isRandom; rx = t.isRandom
        case .scanReq(let s, let a): tx = s.isRandom; rx = a.isRandom
        case .connectInd(let c): tx = c.initiator.isRandom; rx = c.advertiser.isRandom
        case .extended(_, let e): tx = e.advertiser?.isRandom ?? false; rx = e.target?.isRandom ?? false
        case .unknown: break
        }
        var w = ByteWriter()
        LLAdvertisingPacketPDU.encodePayload(pdu, &w)
        header = LLAdvertisingHeader(
            type: pdu.type, channelSelection: channelSelection, txAddRandom: txAddRandom ?? tx,
            rxAddRandom: rxAddRandom ?? rx, length: UInt8(truncatingIfNeeded: w.count))
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        header = try LLAdvertisingHeader(parsing: &input)
        var p = try input.slice(Int(header.length))
        pdu = try LLAdvertisingPacketPDU.parsePayload(header, &p)
    }

    /// Decodes the payload of an advertising PDU whose header was already read.
    /// - Throws: ``DecodeError/truncated(needed:available:offset:)`` for a payload shorter than its type needs,
    ///   ``DecodeError/invalidSize(expected:got:)`` for fixed-size PDUs with extra bytes.
    public static func parsePayload(_ header: LLAdvertisingHeader, _ p: inout ByteReader) throws(DecodeError) -> LLAdvertisingPDU {
        let tx = header.txAddRandom, rx = header.rxAddRandom
        switch header.type {
        case .advInd: return .advInd(advertiser: try LLDeviceAddress(parsing: &p, isRandom: tx), data: p.readRemaining())
        case .advNonconnInd: return .advNonconnInd(advertiser: try LLDeviceAddress(parsing: &p, isRandom: tx), data: p.readRemaining())
        case .advScanInd: return .advScanInd(advertiser: try LLDeviceAddress(parsing: &p, isRandom: tx), data: p.readRemaining())
        case .scanRsp: return .scanRsp(advertiser: try LLDeviceAddress(parsing: &p, isRandom: tx), data: p.readRemaining())
        case .advDirectInd:
            let a = try LLDeviceAddress(parsing: &p, isRandom: tx), t = try LLDeviceAddress(parsing: &p, isRandom: rx)
            try p.expectEnd()
            return .advDirectInd(advertiser: a, target: t)
        case .scanReq:
            let s = try LLDeviceAddress(parsing: &p, isRandom: tx), a = try LLDeviceAddress(parsing: &p, isRandom: rx)
            try p.expectEnd()
            return .scanReq(scanner: s, advertiser: a)
        case .connectInd:
            let i = try LLDeviceAddress(parsing: &p, isRandom: tx), a = try LLDeviceAddress(parsing: &p, isRandom: rx)
            let params = try LLConnectionParameters(parsing: &p)
            try p.expectEnd()
            return .connectInd(LLConnectInd(initiator: i, advertiser: a, parameters: params))
        case .advExtInd, .auxConnectRsp:
            return .extended(header.type, try LLExtendedAdvertisingPayload(parsing: &p, txAddRandom: tx, rxAddRandom: rx))
        default:
            return .unknown(header.type, p.readRemaining())
        }
    }

    static func encodePayload(_ pdu: LLAdvertisingPDU, _ w: inout ByteWriter) {
        switch pdu {
        case .advInd(let a, let d), .advNonconnInd(let a, let d), .scanRsp(let a, let d), .advScanInd(let a, let d):
            a.encode(into: &w); w.write(contentsOf: d)
        case .advDirectInd(let a, let t): a.encode(into: &w); t.encode(into: &w)
        case .scanReq(let s, let a): s.encode(into: &w); a.encode(into: &w)
        case .connectInd(let c): c.initiator.encode(into: &w); c.advertiser.encode(into: &w); c.parameters.encode(into: &w)
        case .extended(_, let e): e.encode(into: &w)
        case .unknown(_, let d): w.write(contentsOf: d)
        }
    }

    public func encode(into writer: inout ByteWriter) {
        header.encode(into: &writer)
        LLAdvertisingPacketPDU.encodePayload(pdu, &writer)
    }
}
