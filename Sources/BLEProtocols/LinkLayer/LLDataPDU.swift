import BLECore

/// LLID of a data channel PDU header (Core Spec Vol 6, Part B, 2.4).
public struct LLID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 3 }
    public static let reserved = LLID(rawValue: 0)
    /// Continuation fragment of an L2CAP message, or an empty PDU.
    public static let continuation = LLID(rawValue: 1)
    /// Start of an L2CAP message (or a complete one with no fragmentation).
    public static let start = LLID(rawValue: 2)
    /// LL control PDU.
    public static let control = LLID(rawValue: 3)

    public var description: String {
        switch rawValue {
        case 1: "LL data continuation"
        case 2: "LL data start"
        case 3: "LL control"
        default: "LLID(0)"
        }
    }
}

/// The header of a data physical channel PDU (Core Spec Vol 6, Part B, 2.4).
///
/// ```
/// byte 0: LLID (bits 0–1) | NESN (2) | SN (3) | MD (4) | CP (5) | RFU (6–7)     byte 1: length     [CTEInfo if CP]
/// ```
public struct LLDataHeader: WireCodable {
    public var llid: LLID
    public var nesn: Bool
    public var sn: Bool
    public var moreData: Bool
    /// CTEInfo, present when the CP bit is set.
    public var cteInfo: UInt8?
    public var length: UInt8
    public var rfu: UInt8

    public init(
        llid: LLID, nesn: Bool = false, sn: Bool = false, moreData: Bool = false, cteInfo: UInt8? = nil, length: UInt8, rfu: UInt8 = 0
    ) {
        self.llid = llid
        self.nesn = nesn
        self.sn = sn
        self.moreData = moreData
        self.cteInfo = cteInfo
        self.length = length
        self.rfu = rfu
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let b0 = try UInt8(parsing: &input)
        llid = LLID(rawValue: b0)
        nesn = b0 & 0x04 != 0
        sn = b0 & 0x08 != 0
        moreData = b0 & 0x10 != 0
        rfu = b0 >> 6
        length = try UInt8(parsing: &input)
        cteInfo = b0 & 0x20 != 0 ? try UInt8(parsing: &input) : nil
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(llid.rawValue | (nesn ? 4 : 0) | (sn ? 8 : 0) | (moreData ? 0x10 : 0) | (cteInfo != nil ? 0x20 : 0) | rfu << 6)
        writer.write(length)
        if let cteInfo { writer.write(cteInfo) }
    }
}

/// A data physical channel PDU: header and payload (an L2CAP fragment, or an LL control PDU).
public struct LLDataPDU: WireCodable {
    public var header: LLDataHeader
    public var payload: [UInt8]

    /// Builds the header's length from the payload.
    public init(llid: LLID, nesn: Bool = false, sn: Bool = false, moreData: Bool = false, payload: [UInt8]) {
        header = LLDataHeader(llid: llid, nesn: nesn, sn: sn, moreData: moreData, length: UInt8(truncatingIfNeeded: payload.count))
        self.payload = payload
    }

    public init(header: LLDataHeader, payload: [UInt8]) {
        self.header = header
        self.payload = payload
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        header = try LLDataHeader(parsing: &input)
        payload = try input.readArray(Int(header.length))
    }

    public func encode(into writer: inout ByteWriter) {
        header.encode(into: &writer)
        writer.write(contentsOf: payload)
    }

    /// An empty PDU (LLID 01, length 0): the keep-alive / acknowledgement of a connection event.
    public var isEmpty: Bool { header.llid == .continuation && payload.isEmpty }
}
