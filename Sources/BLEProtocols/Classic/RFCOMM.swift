import BLECore

/// An RFCOMM frame type (TS 07.10, 5.2.1.3, as RFCOMM 1.2 uses it): the control field without its P/F bit.
public struct RFCOMMFrameType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let sabm = RFCOMMFrameType(rawValue: 0x2F)
    public static let ua = RFCOMMFrameType(rawValue: 0x63)
    public static let dm = RFCOMMFrameType(rawValue: 0x0F)
    public static let disc = RFCOMMFrameType(rawValue: 0x43)
    public static let uih = RFCOMMFrameType(rawValue: 0xEF)
    static let names: [UInt8: String] = [0x2F: "SABM", 0x63: "UA", 0x0F: "DM", 0x43: "DISC", 0xEF: "UIH"]
    public var description: String { Self.names[rawValue] ?? "RFCOMMFrameType(\(hex(rawValue)))" }
}

/// A multiplexer control message type on DLCI 0 (TS 07.10, 5.4.6.3; RFCOMM 1.2, 4): the type field's 6 bits.
public struct RFCOMMControlType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let pn = RFCOMMControlType(rawValue: 0x20)
    public static let psc = RFCOMMControlType(rawValue: 0x10)
    public static let cld = RFCOMMControlType(rawValue: 0x30)
    public static let test = RFCOMMControlType(rawValue: 0x08)
    public static let fcOn = RFCOMMControlType(rawValue: 0x28)
    public static let fcOff = RFCOMMControlType(rawValue: 0x18)
    public static let msc = RFCOMMControlType(rawValue: 0x38)
    public static let nsc = RFCOMMControlType(rawValue: 0x04)
    public static let rpn = RFCOMMControlType(rawValue: 0x24)
    public static let rls = RFCOMMControlType(rawValue: 0x14)
    static let names: [UInt8: String] = [
        0x20: "PN", 0x10: "PSC", 0x30: "CLD", 0x08: "Test", 0x28: "FCon", 0x18: "FCoff", 0x38: "MSC", 0x04: "NSC", 0x24: "RPN",
        0x14: "RLS",
    ]
    public var description: String { Self.names[rawValue] ?? "RFCOMMControlType(\(hex(rawValue)))" }
}

/// Parameter Negotiation (RFCOMM 1.2, 5.5.3; TS 07.10, 5.4.6.3.1): the DLC's frame size and, in the convergence-layer
/// field, whether credit-based flow control is asked (0xF) or granted (0xE), with the initial credits.
public struct RFCOMMParameterNegotiation: WireCodable {
    public var dlci: UInt8
    /// Frame type (bits 0–3) and convergence layer (bits 4–7).
    public var typeAndLayer: UInt8
    public var priority: UInt8
    public var ackTimer: UInt8
    public var maxFrameSize: UInt16
    public var maxRetransmissions: UInt8
    /// Initial credits (bits 0–2) with credit-based flow control.
    public var window: UInt8
    public init(
        dlci: UInt8, typeAndLayer: UInt8 = 0xF0, priority: UInt8 = 7, ackTimer: UInt8 = 0, maxFrameSize: UInt16,
        maxRetransmissions: UInt8 = 0, window: UInt8 = 7
    ) {
        self.dlci = dlci; self.typeAndLayer = typeAndLayer; self.priority = priority; self.ackTimer = ackTimer
        self.maxFrameSize = maxFrameSize; self.maxRetransmissions = maxRetransmissions; self.window = window
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        dlci = try input.readUInt8() & 0x3F
        typeAndLayer = try input.readUInt8()
        priority = try input.readUInt8() & 0x3F
        ackTimer = try input.readUInt8()
        maxFrameSize = try UInt16(parsingLittleEndian: &input)
        maxRetransmissions = try input.readUInt8()
        window = try input.readUInt8() & 0x07
    }
    public func encode(into w: inout ByteWriter) {
        w.write(dlci); w.write(typeAndLayer); w.write(priority); w.write(ackTimer)
        w.write(littleEndian: maxFrameSize); w.write(maxRetransmissions); w.write(window)
    }
    /// Credit-based flow control asked (0xF) or agreed (0xE) (RFCOMM 1.2, 6.5).
    public var creditFlow: Bool { typeAndLayer >> 4 == 0xF || typeAndLayer >> 4 == 0xE }
}

/// Modem Status Command (TS 07.10, 5.4.6.3.7): a DLC's V.24 signals (flow control FC, RTC, RTR, IC, DV).
public struct RFCOMMModemStatus: WireCodable {
    public var dlci: UInt8
    public var signals: UInt8
    public var breakSignal: UInt8?
    public init(dlci: UInt8, signals: UInt8, breakSignal: UInt8? = nil) {
        self.dlci = dlci; self.signals = signals; self.breakSignal = breakSignal
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        dlci = try input.readUInt8() >> 2
        signals = try input.readUInt8()
        breakSignal = input.isAtEnd ? nil : try input.readUInt8()
    }
    public func encode(into w: inout ByteWriter) {
        w.write(dlci << 2 | 0x03)
        w.write(signals)
        if let b = breakSignal { w.write(b) }
    }
    /// FC: the sender cannot accept frames (bit 1).
    public var flowControl: Bool { signals & 0x02 != 0 }
}

/// One multiplexer control message (TS 07.10, 5.4.6): type with its command/response bit, then its values.
public struct RFCOMMControlMessage: WireCodable {
    public var type: RFCOMMControlType
    public var isCommand: Bool
    public var values: [UInt8]
    public init(type: RFCOMMControlType, isCommand: Bool, values: [UInt8]) {
        self.type = type; self.isCommand = isCommand; self.values = values
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let t = try input.readUInt8()
        type = RFCOMMControlType(rawValue: t >> 2)
        isCommand = t & 0x02 != 0
        let length = try RFCOMMFrame.readLength(&input)
        values = try input.readArray(length)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(type.rawValue << 2 | (isCommand ? 0x02 : 0) | 0x01)
        RFCOMMFrame.writeLength(values.count, &w)
        w.write(contentsOf: values)
    }
    public var parameterNegotiation: RFCOMMParameterNegotiation? {
        type == .pn ? try? RFCOMMParameterNegotiation(bytes: values) : nil
    }
    public var modemStatus: RFCOMMModemStatus? { type == .msc ? try? RFCOMMModemStatus(bytes: values) : nil }
    public var summary: String {
        let cr = isCommand ? "command" : "response"
        if let pn = parameterNegotiation {
            return "\(type) \(cr) dlci=\(pn.dlci) frameSize=\(pn.maxFrameSize)" + (pn.creditFlow ? " credits=\(pn.window)" : "")
        }
        if let m = modemStatus { return "\(type) \(cr) dlci=\(m.dlci) signals=\(hex(m.signals))" + (m.flowControl ? " FC" : "") }
        return "\(type) \(cr)" + (values.isEmpty ? "" : " \(hexString(values))")
    }
}

/// One RFCOMM frame in an L2CAP PDU (RFCOMM 1.2, 5; TS 07.10, 5.2): address (DLCI, C/R), control (type, P/F), length,
/// the credits a UIH frame with P/F carries under credit-based flow control, the information, the FCS.
///
/// ```
/// address: DDDDDD C 1   control: TTT P TTTT   length: LLLLLLL E [LLLLLLLL]   [credits] information  FCS
/// ```
public struct RFCOMMFrame: WireCodable {
    public var dlci: UInt8
    public var commandResponse: Bool
    public var type: RFCOMMFrameType
    public var pollFinal: Bool
    /// The credits of a UIH frame with P/F on a data DLC (credit-based flow control, RFCOMM 1.2, 6.5.2).
    public var credits: UInt8?
    public var information: [UInt8]
    public var fcs: UInt8

    public init(
        dlci: UInt8, commandResponse: Bool = true, type: RFCOMMFrameType, pollFinal: Bool = false, credits: UInt8? = nil,
        information: [UInt8] = []
    ) {
        self.dlci = dlci; self.commandResponse = commandResponse; self.type = type; self.pollFinal = pollFinal || credits != nil
        self.credits = credits; self.information = information
        fcs = 0
        fcs = computedFCS
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let address = try input.readUInt8()
        dlci = address >> 2
        commandResponse = address & 0x02 != 0
        let control = try input.readUInt8()
        type = RFCOMMFrameType(rawValue: control & ~0x10)
        pollFinal = control & 0x10 != 0
        let length = try Self.readLength(&input)
        // Credits only on UIH data frames with P/F (DLCI 0 never carries them).
        credits = type == .uih && pollFinal && dlci != 0 ? try input.readUInt8() : nil
        information = try input.readArray(length)
        fcs = try input.readUInt8()
    }

    public func encode(into w: inout ByteWriter) {
        w.write(contentsOf: header)
        Self.writeLength(information.count, &w)
        if let credits { w.write(credits) }
        w.write(contentsOf: information)
        w.write(fcs)
    }

    var header: [UInt8] { [dlci << 2 | (commandResponse ? 0x02 : 0) | 0x01, type.rawValue | (pollFinal ? 0x10 : 0)] }

    /// The FCS the frame should carry: CRC-8 (TS 07.10, 5.2.1.6) over address and control for UIH, and the length too
    /// for the other frames.
    public var computedFCS: UInt8 {
        var covered = header
        if type != .uih {
            var w = ByteWriter()
            Self.writeLength(information.count, &w)
            covered += w.bytes
        }
        return Self.fcs(covered)
    }
    public var fcsValid: Bool { fcs == computedFCS }

    /// The server channel a DLC belongs to (DLCI = channel << 1 | direction bit, RFCOMM 1.2, 5.4).
    public var serverChannel: UInt8 { dlci >> 1 }

    static func readLength(_ input: inout ByteReader) throws(DecodeError) -> Int {
        let first = try input.readUInt8()
        if first & 1 == 1 { return Int(first >> 1) }
        return Int(first >> 1) | Int(try input.readUInt8()) << 7
    }

    static func writeLength(_ n: Int, _ w: inout ByteWriter) {
        if n < 128 {
            w.write(UInt8(n << 1 | 1))
        } else {
            w.write(UInt8(truncatingIfNeeded: n << 1))
            w.write(UInt8(truncatingIfNeeded: n >> 7))
        }
    }

    /// TS 07.10 Annex B: reflected CRC-8, polynomial x^8+x^2+x+1 (0xE0 reflected), initial 0xFF, result complemented.
    static func fcs(_ bytes: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0xFF
        for b in bytes {
            crc ^= b
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xE0 : crc >> 1 }
        }
        return 0xFF &- crc
    }

    /// The multiplexer control messages a UIH frame on DLCI 0 carries.
    public var controlMessages: [RFCOMMControlMessage]? {
        guard dlci == 0, type == .uih else { return nil }
        return try? withByteReader(information) { (r: inout ByteReader) throws(DecodeError) -> [RFCOMMControlMessage] in
            var out: [RFCOMMControlMessage] = []
            while !r.isAtEnd { out.append(try RFCOMMControlMessage(parsing: &r)) }
            return out
        }
    }

    /// `UIH dlci=2 (channel 1) credits=5 12 bytes`: the timeline's summary.
    public var summary: String {
        var s = "\(type) dlci=\(dlci)"
        if dlci != 0 { s += " (channel \(serverChannel))" }
        if let credits { s += " credits=\(credits)" }
        if let messages = controlMessages { return s + " " + messages.map(\.summary).joined(separator: "; ") }
        if !information.isEmpty { s += " \(information.count) bytes" }
        if !fcsValid { s += " bad FCS \(hex(fcs)) (expected \(hex(computedFCS)))" }
        return s
    }
}
