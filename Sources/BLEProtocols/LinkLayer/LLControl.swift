import BLECore

/// The opcode of an LL control PDU (Core Spec 5.4, Vol 6, Part B, 2.4.2). Unknown values print as
/// `LLControlOpcode(0x7f)` and are kept.
public struct LLControlOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let connectionUpdateInd = LLControlOpcode(rawValue: 0x00)
    public static let channelMapInd = LLControlOpcode(rawValue: 0x01)
    public static let terminateInd = LLControlOpcode(rawValue: 0x02)
    public static let encReq = LLControlOpcode(rawValue: 0x03)
    public static let encRsp = LLControlOpcode(rawValue: 0x04)
    public static let startEncReq = LLControlOpcode(rawValue: 0x05)
    public static let startEncRsp = LLControlOpcode(rawValue: 0x06)
    public static let unknownRsp = LLControlOpcode(rawValue: 0x07)
    public static let featureReq = LLControlOpcode(rawValue: 0x08)
    public static let featureRsp = LLControlOpcode(rawValue: 0x09)
    public static let pauseEncReq = LLControlOpcode(rawValue: 0x0A)
    public static let pauseEncRsp = LLControlOpcode(rawValue: 0x0B)
    public static let versionInd = LLControlOpcode(rawValue: 0x0C)
    public static let rejectInd = LLControlOpcode(rawValue: 0x0D)
    public static let peripheralFeatureReq = LLControlOpcode(rawValue: 0x0E)
    public static let connectionParamReq = LLControlOpcode(rawValue: 0x0F)
    public static let connectionParamRsp = LLControlOpcode(rawValue: 0x10)
    public static let rejectExtInd = LLControlOpcode(rawValue: 0x11)
    public static let pingReq = LLControlOpcode(rawValue: 0x12)
    public static let pingRsp = LLControlOpcode(rawValue: 0x13)
    public static let lengthReq = LLControlOpcode(rawValue: 0x14)
    public static let lengthRsp = LLControlOpcode(rawValue: 0x15)
    public static let phyReq = LLControlOpcode(rawValue: 0x16)
    public static let phyRsp = LLControlOpcode(rawValue: 0x17)
    public static let phyUpdateInd = LLControlOpcode(rawValue: 0x18)
    public static let minUsedChannelsInd = LLControlOpcode(rawValue: 0x19)
    public static let cteReq = LLControlOpcode(rawValue: 0x1A)
    public static let cteRsp = LLControlOpcode(rawValue: 0x1B)
    public static let periodicSyncInd = LLControlOpcode(rawValue: 0x1C)
    public static let clockAccuracyReq = LLControlOpcode(rawValue: 0x1D)
    public static let clockAccuracyRsp = LLControlOpcode(rawValue: 0x1E)
    public static let cisReq = LLControlOpcode(rawValue: 0x1F)
    public static let cisRsp = LLControlOpcode(rawValue: 0x20)
    public static let cisInd = LLControlOpcode(rawValue: 0x21)
    public static let cisTerminateInd = LLControlOpcode(rawValue: 0x22)
    public static let powerControlReq = LLControlOpcode(rawValue: 0x23)
    public static let powerControlRsp = LLControlOpcode(rawValue: 0x24)
    public static let powerChangeInd = LLControlOpcode(rawValue: 0x25)
    public static let subrateReq = LLControlOpcode(rawValue: 0x26)
    public static let subrateInd = LLControlOpcode(rawValue: 0x27)
    public static let channelReportingInd = LLControlOpcode(rawValue: 0x28)
    public static let channelStatusInd = LLControlOpcode(rawValue: 0x29)
    public static let periodicSyncWRInd = LLControlOpcode(rawValue: 0x2A)

    /// The table entry, nil for an opcode Core 5.4 does not define.
    public var info: LLControlOpcodeInfo? {
        Int(rawValue) < LLControlTable.entries.count ? LLControlTable.entries[Int(rawValue)] : nil
    }

    public var name: String { info?.name ?? "LLControlOpcode(\(hex(rawValue)))" }
    public var description: String { name }
}

/// Name and parameter size of one LL control opcode.
public struct LLControlOpcodeInfo: Hashable, Sendable {
    public var name: String
    /// Size of CtrData in bytes (the opcode byte excluded).
    public var size: Int
    /// True when CtrData must be exactly `size` bytes; false when `size` is a minimum.
    public var fixed: Bool
    public init(_ name: String, size: Int, fixed: Bool = true) {
        self.name = name
        self.size = size
        self.fixed = fixed
    }
}

/// The one table of LL control opcodes (Core Spec 5.4, Vol 6, Part B, 2.4.2), indexed by opcode.
public enum LLControlTable {
    public static let entries: [LLControlOpcodeInfo] = [
        .init("LL_CONNECTION_UPDATE_IND", size: 11),  // 0x00
        .init("LL_CHANNEL_MAP_IND", size: 7),
        .init("LL_TERMINATE_IND", size: 1),
        .init("LL_ENC_REQ", size: 22),
        .init("LL_ENC_RSP", size: 12),
        .init("LL_START_ENC_REQ", size: 0),
        .init("LL_START_ENC_RSP", size: 0),
        .init("LL_UNKNOWN_RSP", size: 1),
        .init("LL_FEATURE_REQ", size: 8),  // 0x08
        .init("LL_FEATURE_RSP", size: 8),
        .init("LL_PAUSE_ENC_REQ", size: 0),
        .init("LL_PAUSE_ENC_RSP", size: 0),
        .init("LL_VERSION_IND", size: 5),
        .init("LL_REJECT_IND", size: 1),
        .init("LL_PERIPHERAL_FEATURE_REQ", size: 8),
        .init("LL_CONNECTION_PARAM_REQ", size: 23),
        .init("LL_CONNECTION_PARAM_RSP", size: 23),  // 0x10
        .init("LL_REJECT_EXT_IND", size: 2),
        .init("LL_PING_REQ", size: 0),
        .init("LL_PING_RSP", size: 0),
        .init("LL_LENGTH_REQ", size: 8),
        .init("LL_LENGTH_RSP", size: 8),
        .init("LL_PHY_REQ", size: 2),
        .init("LL_PHY_RSP", size: 2),
        .init("LL_PHY_UPDATE_IND", size: 4),  // 0x18
        .init("LL_MIN_USED_CHANNELS_IND", size: 2),
        .init("LL_CTE_REQ", size: 1),
        .init("LL_CTE_RSP", size: 0),
        .init("LL_PERIODIC_SYNC_IND", size: 34),
        .init("LL_CLOCK_ACCURACY_REQ", size: 1),
        .init("LL_CLOCK_ACCURACY_RSP", size: 1),
        .init("LL_CIS_REQ", size: 35),
        .init("LL_CIS_RSP", size: 8),  // 0x20
        .init("LL_CIS_IND", size: 15),
        .init("LL_CIS_TERMINATE_IND", size: 3),
        .init("LL_POWER_CONTROL_REQ", size: 3),
        .init("LL_POWER_CONTROL_RSP", size: 4),
        .init("LL_POWER_CHANGE_IND", size: 4),
        .init("LL_SUBRATE_REQ", size: 10),
        .init("LL_SUBRATE_IND", size: 10),
        .init("LL_CHANNEL_REPORTING_IND", size: 3),  // 0x28
        .init("LL_CHANNEL_STATUS_IND", size: 10),
        .init("LL_PERIODIC_SYNC_WR_IND", size: 34, fixed: false),
    ]
}

/// LL_CONNECTION_UPDATE_IND parameters (units: 1.25 ms window/interval, 10 ms timeout).
public struct LLConnectionUpdate: Hashable, Sendable {
    public var windowSize: UInt8
    public var windowOffset: UInt16
    public var interval: UInt16
    public var latency: UInt16
    public var timeout: UInt16
    public var instant: UInt16
    public init(windowSize: UInt8, windowOffset: UInt16, interval: UInt16, latency: UInt16, timeout: UInt16, instant: UInt16) {
        self.windowSize = windowSize
        self.windowOffset = windowOffset
        self.interval = interval
        self.latency = latency
        self.timeout = timeout
        self.instant = instant
    }
}

/// LL_CONNECTION_PARAM_REQ / RSP parameters.
public struct LLConnectionParamRequest: Hashable, Sendable {
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    public var timeout: UInt16
    public var preferredPeriodicity: UInt8
    public var referenceConnEventCount: UInt16
    public var offsets: [UInt16]
    public init(
        intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16, preferredPeriodicity: UInt8 = 0,
        referenceConnEventCount: UInt16 = 0, offsets: [UInt16] = Array(repeating: 0xFFFF, count: 6)
    ) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.timeout = timeout
        self.preferredPeriodicity = preferredPeriodicity
        self.referenceConnEventCount = referenceConnEventCount
        self.offsets = offsets
    }
}

/// Data length parameters of LL_LENGTH_REQ / RSP.
public struct LLLengthParameters: Hashable, Sendable {
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16
    public var maxTxOctets: UInt16
    public var maxTxTime: UInt16
    public init(maxRxOctets: UInt16, maxRxTime: UInt16, maxTxOctets: UInt16, maxTxTime: UInt16) {
        self.maxRxOctets = maxRxOctets
        self.maxRxTime = maxRxTime
        self.maxTxOctets = maxTxOctets
        self.maxTxTime = maxTxTime
    }
}

/// An LL control PDU, typed (Core Spec 5.4, Vol 6, Part B, 2.4.2). Opcodes without a typed case (and unknown
/// opcodes) are kept in ``other(_:_:)`` with their raw CtrData.
public enum LLControlPDU: Hashable, Sendable {
    case connectionUpdateInd(LLConnectionUpdate)
    /// ChM (37 bits) and the instant.
    case channelMapInd(channelMap: UInt64, instant: UInt16)
    case terminateInd(errorCode: UInt8)
    case encReq(rand: UInt64, ediv: UInt16, skdCentral: UInt64, ivCentral: UInt32)
    case encRsp(skdPeripheral: UInt64, ivPeripheral: UInt32)
    case startEncReq
    case startEncRsp
    case unknownRsp(unknownType: LLControlOpcode)
    case featureReq(features: UInt64)
    case featureRsp(features: UInt64)
    case pauseEncReq
    case pauseEncRsp
    case versionInd(version: UInt8, companyID: UInt16, subversion: UInt16)
    case rejectInd(errorCode: UInt8)
    case peripheralFeatureReq(features: UInt64)
    case connectionParamReq(LLConnectionParamRequest)
    case connectionParamRsp(LLConnectionParamRequest)
    case rejectExtInd(rejectOpcode: LLControlOpcode, errorCode: UInt8)
    case pingReq
    case pingRsp
    case lengthReq(LLLengthParameters)
    case lengthRsp(LLLengthParameters)
    /// PHY bit fields: bit 0 1M, bit 1 2M, bit 2 Coded.
    case phyReq(txPHYs: UInt8, rxPHYs: UInt8)
    case phyRsp(txPHYs: UInt8, rxPHYs: UInt8)
    case phyUpdateInd(centralToPeripheralPHY: UInt8, peripheralToCentralPHY: UInt8, instant: UInt16)
    case minUsedChannelsInd(phys: UInt8, minUsedChannels: UInt8)
    case cteReq(minLength: UInt8, cteType: UInt8)
    case cteRsp
    case clockAccuracyReq(sca: UInt8)
    case clockAccuracyRsp(sca: UInt8)
    case cisTerminateInd(cigID: UInt8, cisID: UInt8, errorCode: UInt8)
    case powerControlReq(phy: UInt8, delta: Int8, txPower: Int8)
    case subrateReq(factorMin: UInt16, factorMax: UInt16, maxLatency: UInt16, continuationNumber: UInt16, timeout: UInt16)
    case subrateInd(factor: UInt16, baseEvent: UInt16, latency: UInt16, continuationNumber: UInt16, timeout: UInt16)
    /// Any other opcode (periodic sync, CIS request/response/indication, power control response, power change,
    /// channel reporting/status…) and unknown ones: CtrData raw.
    case other(LLControlOpcode, [UInt8])

    public var opcode: LLControlOpcode {
        switch self {
        case .connectionUpdateInd: .connectionUpdateInd
        case .channelMapInd: .channelMapInd
        case .terminateInd: .terminateInd
        case .encReq: .encReq
        case .encRsp: .encRsp
        case .startEncReq: .startEncReq
        case .startEncRsp: .startEncRsp
        case .unknownRsp: .unknownRsp
        case .featureReq: .featureReq
        case .featureRsp: .featureRsp
        case .pauseEncReq: .pauseEncReq
        case .pauseEncRsp: .pauseEncRsp
        case .versionInd: .versionInd
        case .rejectInd: .rejectInd
        case .peripheralFeatureReq: .peripheralFeatureReq
        case .connectionParamReq: .connectionParamReq
        case .connectionParamRsp: .connectionParamRsp
        case .rejectExtInd: .rejectExtInd
        case .pingReq: .pingReq
        case .pingRsp: .pingRsp
        case .lengthReq: .lengthReq
        case .lengthRsp: .lengthRsp
        case .phyReq: .phyReq
        case .phyRsp: .phyRsp
        case .phyUpdateInd: .phyUpdateInd
        case .minUsedChannelsInd: .minUsedChannelsInd
        case .cteReq: .cteReq
        case .cteRsp: .cteRsp
        case .clockAccuracyReq: .clockAccuracyReq
        case .clockAccuracyRsp: .clockAccuracyRsp
        case .cisTerminateInd: .cisTerminateInd
        case .powerControlReq: .powerControlReq
        case .subrateReq: .subrateReq
        case .subrateInd: .subrateInd
        case .other(let o, _): o
        }
    }

    /// A one-line summary for timelines: `LL_LENGTH_REQ rx 251/2120 µs tx 251/2120 µs`.
    public var summary: String {
        let name = opcode.name
        switch self {
        case .connectionUpdateInd(let u):
            return
                "\(name) interval \(String(fractionDigits: 2, ConnectionTiming.intervalMilliseconds(u.interval))) ms latency \(u.latency) timeout \(ConnectionTiming.supervisionTimeoutMilliseconds(u.timeout)) ms instant \(u.instant)"
        case .channelMapInd(let m, let i): return "\(name) \((m & 0x1F_FFFF_FFFF).nonzeroBitCount) channels instant \(i)"
        case .terminateInd(let e), .rejectInd(let e): return "\(name) error \(hex(e))"
        case .encReq(_, let ediv, _, _): return "\(name) EDIV \(hex(ediv))"
        case .unknownRsp(let t): return "\(name) \(t.name)"
        case .featureReq(let f), .featureRsp(let f), .peripheralFeatureReq(let f): return "\(name) features \(hex(f))"
        case .versionInd(let v, let c, let s): return "\(name) version \(v) company \(hex(c)) subversion \(hex(s))"
        case .connectionParamReq(let p), .connectionParamRsp(let p):
            return
                "\(name) interval \(String(fractionDigits: 2, ConnectionTiming.intervalMilliseconds(p.intervalMin)))–\(String(fractionDigits: 2, ConnectionTiming.intervalMilliseconds(p.intervalMax))) ms latency \(p.latency) timeout \(ConnectionTiming.supervisionTimeoutMilliseconds(p.timeout)) ms"
        case .rejectExtInd(let o, let e): return "\(name) \(o.name) error \(hex(e))"
        case .lengthReq(let l), .lengthRsp(let l):
            return "\(name) rx \(l.maxRxOctets)/\(l.maxRxTime) µs tx \(l.maxTxOctets)/\(l.maxTxTime) µs"
        case .phyReq(let t, let r), .phyRsp(let t, let r): return "\(name) tx \(hex(t)) rx \(hex(r))"
        case .phyUpdateInd(let c, let p, let i): return "\(name) C→P \(hex(c)) P→C \(hex(p)) instant \(i)"
        case .minUsedChannelsInd(let p, let n): return "\(name) phys \(hex(p)) min \(n)"
        case .clockAccuracyReq(let s), .clockAccuracyRsp(let s): return "\(name) SCA \(s)"
        case .cisTerminateInd(let g, let c, let e): return "\(name) CIG \(g) CIS \(c) error \(hex(e))"
        case .other(let o, let d) where LLCISFields.opcodes.contains(o.rawValue):
            return name + " " + (LLCISFields.summary(o, d) ?? hexString(d))
        case .other(_, let d) where !d.isEmpty: return "\(name) \(hexString(d))"
        default: return name
        }
    }
}

/// An LL control PDU as carried in a data channel PDU with LLID 11: opcode then CtrData.
public struct LLControlPacket: WireCodable {
    public var pdu: LLControlPDU
    public init(_ pdu: LLControlPDU) { self.pdu = pdu }

    /// - Throws: ``DecodeError/invalidSize(expected:got:)`` when CtrData is not the size the table gives for the opcode
    ///   (larger is accepted for opcodes whose size is a minimum); unknown opcodes are kept raw.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let op = LLControlOpcode(rawValue: try UInt8(parsing: &input))
        guard let info = op.info else {
            pdu = .other(op, input.readRemaining())
            return
        }
        let n = input.remaining
        guard n == info.size || (!info.fixed && n > info.size) else { throw .invalidSize(expected: info.size + 1, got: n + 1) }
        var p = try input.slice(n)
        func u8() throws(DecodeError) -> UInt8 { try UInt8(parsing: &p) }
        func u16() throws(DecodeError) -> UInt16 { try UInt16(parsingLittleEndian: &p) }
        func u32() throws(DecodeError) -> UInt32 { try UInt32(parsingLittleEndian: &p) }
        func u64() throws(DecodeError) -> UInt64 { try UInt64(parsingLittleEndian: &p) }
        switch op {
        case .connectionUpdateInd:
            pdu = .connectionUpdateInd(
                LLConnectionUpdate(
                    windowSize: try u8(), windowOffset: try u16(), interval: try u16(),
                    latency: try u16(), timeout: try u16(), instant: try u16()))
        case .channelMapInd:
            pdu = .channelMapInd(channelMap: try LLConnectionParameters.readChannelMap(&p), instant: try u16())
        case .terminateInd: pdu = .terminateInd(errorCode: try u8())
        case .encReq: pdu = .encReq(rand: try u64(), ediv: try u16(), skdCentral: try u64(), ivCentral: try u32())
        case .encRsp: pdu = .encRsp(skdPeripheral: try u64(), ivPeripheral: try u32())
        case .startEncReq: pdu = .startEncReq
        case .startEncRsp: pdu = .startEncRsp
        case .unknownRsp: pdu = .unknownRsp(unknownType: LLControlOpcode(rawValue: try u8()))
        case .featureReq: pdu = .featureReq(features: try u64())
        case .featureRsp: pdu = .featureRsp(features: try u64())
        case .pauseEncReq: pdu = .pauseEncReq
        case .pauseEncRsp: pdu = .pauseEncRsp
        case .versionInd: pdu = .versionInd(version: try u8(), companyID: try u16(), subversion: try u16())
        case .rejectInd: pdu = .rejectInd(errorCode: try u8())
        case .peripheralFeatureReq: pdu = .peripheralFeatureReq(features: try u64())
        case .connectionParamReq, .connectionParamRsp:
            var r = LLConnectionParamRequest(
                intervalMin: try u16(), intervalMax: try u16(), latency: try u16(), timeout: try u16(),
                preferredPeriodicity: try u8(), referenceConnEventCount: try u16(), offsets: [])
            for _ in 0..<6 { r.offsets.append(try u16()) }
            pdu = op == .connectionParamReq ? .connectionParamReq(r) : .connectionParamRsp(r)
        case .rejectExtInd: pdu = .rejectExtInd(rejectOpcode: LLControlOpcode(rawValue: try u8()), errorCode: try u8())
        case .pingReq: pdu = .pingReq
        case .pingRsp: pdu = .pingRsp
        case .lengthReq, .lengthRsp:
            let l = LLLengthParameters(maxRxOctets: try u16(), maxRxTime: try u16(), maxTxOctets: try u16(), maxTxTime: try u16())
            pdu = op == .lengthReq ? .lengthReq(l) : .lengthRsp(l)
        case .phyReq: pdu = .phyReq(txPHYs: try u8(), rxPHYs: try u8())
        case .phyRsp: pdu = .phyRsp(txPHYs: try u8(), rxPHYs: try u8())
        case .phyUpdateInd: pdu = .phyUpdateInd(centralToPeripheralPHY: try u8(), peripheralToCentralPHY: try u8(), instant: try u16())
        case .minUsedChannelsInd: pdu = .minUsedChannelsInd(phys: try u8(), minUsedChannels: try u8())
        case .cteReq:
            let b = try u8()
            pdu = .cteReq(minLength: b & 0x1F, cteType: b >> 6)
        case .cteRsp: pdu = .cteRsp
        case .clockAccuracyReq: pdu = .clockAccuracyReq(sca: try u8())
        case .clockAccuracyRsp: pdu = .clockAccuracyRsp(sca: try u8())
        case .cisTerminateInd: pdu = .cisTerminateInd(cigID: try u8(), cisID: try u8(), errorCode: try u8())
        case .powerControlReq: pdu = .powerControlReq(phy: try u8(), delta: Int8(bitPattern: try u8()), txPower: Int8(bitPattern: try u8()))
        case .subrateReq:
            pdu = .subrateReq(
                factorMin: try u16(), factorMax: try u16(), maxLatency: try u16(), continuationNumber: try u16(), timeout: try u16())
        case .subrateInd:
            pdu = .subrateInd(
                factor: try u16(), baseEvent: try u16(), latency: try u16(), continuationNumber: try u16(), timeout: try u16())
        default:
            pdu = .other(op, p.readRemaining())
        }
    }

    public func encode(into w: inout ByteWriter) {
        w.write(pdu.opcode.rawValue)
        switch pdu {
        case .connectionUpdateInd(let u):
            w.write(u.windowSize); w.write(littleEndian: u.windowOffset); w.write(littleEndian: u.interval)
            w.write(littleEndian: u.latency); w.write(littleEndian: u.timeout); w.write(littleEndian: u.instant)
        case .channelMapInd(let m, let i): LLConnectionParameters.writeChannelMap(m, &w); w.write(littleEndian: i)
        case .terminateInd(let e), .rejectInd(let e): w.write(e)
        case .encReq(let r, let e, let s, let iv):
            w.write(littleEndian: r); w.write(littleEndian: e); w.write(littleEndian: s); w.write(littleEndian: iv)
        case .encRsp(let s, let iv): w.write(littleEndian: s); w.write(littleEndian: iv)
        case .startEncReq, .startEncRsp, .pauseEncReq, .pauseEncRsp, .pingReq, .pingRsp, .cteRsp: break
        case .unknownRsp(let t): w.write(t.rawValue)
        case .featureReq(let f), .featureRsp(let f), .peripheralFeatureReq(let f): w.write(littleEndian: f)
        case .versionInd(let v, let c, let s): w.write(v); w.write(littleEndian: c); w.write(littleEndian: s)
        case .connectionParamReq(let r), .connectionParamRsp(let r):
            w.write(littleEndian: r.intervalMin); w.write(littleEndian: r.intervalMax); w.write(littleEndian: r.latency)
            w.write(littleEndian: r.timeout); w.write(r.preferredPeriodicity); w.write(littleEndian: r.referenceConnEventCount)
            for i in 0..<6 { w.write(littleEndian: i < r.offsets.count ? r.offsets[i] : 0xFFFF) }
        case .rejectExtInd(let o, let e): w.write(o.rawValue); w.write(e)
        case .lengthReq(let l), .lengthRsp(let l):
            w.write(littleEndian: l.maxRxOctets); w.write(littleEndian: l.maxRxTime); w.write(littleEndian: l.maxTxOctets);
            w.write(littleEndian: l.maxTxTime)
        case .phyReq(let t, let r), .phyRsp(let t, let r): w.write(t); w.write(r)
        case .phyUpdateInd(let c, let p, let i): w.write(c); w.write(p); w.write(littleEndian: i)
        case .minUsedChannelsInd(let p, let n): w.write(p); w.write(n)
        case .cteReq(let l, let t): w.write(l & 0x1F | t << 6)
        case .clockAccuracyReq(let s), .clockAccuracyRsp(let s): w.write(s)
        case .cisTerminateInd(let g, let c, let e): w.write(g); w.write(c); w.write(e)
        case .powerControlReq(let p, let d, let t): w.write(p); w.write(UInt8(bitPattern: d)); w.write(UInt8(bitPattern: t))
        case .subrateReq(let a, let b, let c, let d, let e), .subrateInd(let a, let b, let c, let d, let e):
            w.write(littleEndian: a); w.write(littleEndian: b); w.write(littleEndian: c); w.write(littleEndian: d); w.write(littleEndian: e)
        case .other(_, let d): w.write(contentsOf: d)
        }
    }
}
