import BLECore

/// One AVCTP message (AVCTP 1.4, 6.1) carrying an AV/C frame of AVRCP (AVRCP 1.6, 4, 6): the transaction label,
/// command or response, the profile (0x110E for AVRCP), and the AV/C command or response.
///
/// ```
/// AVCTP: label(4) packet type(2) C/R(1) IPID(1) | PID (u16 BE) | AV/C: ctype(4) | subunit type(5) ID(3) | opcode | operands
/// ```
public struct AVCTPMessage: WireCodable {
    public var label: UInt8
    /// 0 single, 1 start, 2 continue, 3 end.
    public var packetType: UInt8
    public var isResponse: Bool
    /// The profile was not found by the receiver (IPID, 6.1.1).
    public var invalidProfile: Bool
    public var profile: UInt16?
    public var frame: AVCFrame?
    /// The bytes of a fragment, or an AV/C frame this decoder could not read.
    public var raw: [UInt8]

    public init(label: UInt8, isResponse: Bool, profile: UInt16 = 0x110E, frame: AVCFrame) {
        self.label = label; packetType = 0; self.isResponse = isResponse; invalidProfile = false; self.profile = profile
        self.frame = frame; raw = []
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let h = try input.readUInt8()
        label = h >> 4
        packetType = h >> 2 & 0x03
        isResponse = h & 0x02 != 0
        invalidProfile = h & 0x01 != 0
        switch packetType {
        case 0:
            profile = try UInt16(parsingBigEndian: &input)
        case 1:
            _ = try input.readUInt8()
            profile = try UInt16(parsingBigEndian: &input)
        default:
            profile = nil
        }
        let rest = input.readRemaining()
        raw = rest
        frame = packetType == 0 && !invalidProfile ? try? AVCFrame(bytes: rest) : nil
        if frame != nil { raw = [] }
    }

    public func encode(into w: inout ByteWriter) {
        w.write(label << 4 | packetType << 2 | (isResponse ? 0x02 : 0) | (invalidProfile ? 0x01 : 0))
        if let profile { w.write(bigEndian: profile) }
        if let frame { frame.encode(into: &w) } else { w.write(contentsOf: raw) }
    }
}

/// An AV/C command type or response code (AV/C General 1.0, 5.3.1–5.3.2; AVRCP 1.6, 6.7.1).
public struct AVCCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let control = AVCCode(rawValue: 0x0)
    public static let status = AVCCode(rawValue: 0x1)
    public static let notify = AVCCode(rawValue: 0x3)
    public static let notImplemented = AVCCode(rawValue: 0x8)
    public static let accepted = AVCCode(rawValue: 0x9)
    public static let rejected = AVCCode(rawValue: 0xA)
    public static let stable = AVCCode(rawValue: 0xC)
    public static let changed = AVCCode(rawValue: 0xD)
    public static let interim = AVCCode(rawValue: 0xF)
    static let names: [UInt8: String] = [
        0x0: "CONTROL", 0x1: "STATUS", 0x2: "SPECIFIC INQUIRY", 0x3: "NOTIFY", 0x4: "GENERAL INQUIRY", 0x8: "NOT IMPLEMENTED",
        0x9: "ACCEPTED", 0xA: "REJECTED", 0xB: "IN TRANSITION", 0xC: "STABLE", 0xD: "CHANGED", 0xF: "INTERIM",
    ]
    public var description: String { Self.names[rawValue] ?? "AVCCode(\(hex(rawValue)))" }
    /// NOT IMPLEMENTED or REJECTED: the target refused.
    public var isRefusal: Bool { rawValue == 0x8 || rawValue == 0xA }
}

/// An AV/C frame: code, subunit, opcode, operands; PASS THROUGH and the AVRCP vendor-dependent PDUs read.
public struct AVCFrame: WireCodable {
    public var code: AVCCode
    public var subunit: UInt8
    /// 0x7C PASS THROUGH, 0x00 VENDOR DEPENDENT, 0x30 UNIT INFO, 0x31 SUBUNIT INFO.
    public var opcode: UInt8
    public var operands: [UInt8]

    public init(code: AVCCode, subunit: UInt8 = 0x48, opcode: UInt8, operands: [UInt8]) {
        self.code = code; self.subunit = subunit; self.opcode = opcode; self.operands = operands
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        code = AVCCode(rawValue: try input.readUInt8() & 0x0F)
        subunit = try input.readUInt8()
        opcode = try input.readUInt8()
        operands = input.readRemaining()
    }
    public func encode(into w: inout ByteWriter) {
        w.write(code.rawValue); w.write(subunit); w.write(opcode); w.write(contentsOf: operands)
    }

    public static let passThrough: UInt8 = 0x7C
    public static let vendorDependent: UInt8 = 0x00

    /// A PASS THROUGH's operation (bits 0–6) and whether released (bit 7) (AV/C Panel Subunit, 9.4; AVRCP 1.6, 4.6.1).
    public var passThroughOperation: (operation: UInt8, released: Bool)? {
        guard opcode == Self.passThrough, let first = operands.first else { return nil }
        return (first & 0x7F, first & 0x80 != 0)
    }
    /// The AVRCP PDU of a VENDOR DEPENDENT frame with the Bluetooth SIG company ID 0x001958 (AVRCP 1.6, 6.3.1).
    public var avrcpPDU: (pdu: UInt8, parameters: [UInt8])? {
        guard opcode == Self.vendorDependent, operands.count >= 7, operands[0] == 0x00, operands[1] == 0x19, operands[2] == 0x58 else {
            return nil
        }
        let length = Int(operands[5]) << 8 | Int(operands[6])
        return (operands[3], Array(operands.dropFirst(7).prefix(length)))
    }

    static let operations: [UInt8: String] = [
        0x41: "volume up", 0x42: "volume down", 0x43: "mute", 0x44: "play", 0x45: "stop", 0x46: "pause", 0x47: "record",
        0x48: "rewind", 0x49: "fast forward", 0x4A: "eject", 0x4B: "forward", 0x4C: "backward", 0x7E: "vendor unique",
    ]
    static let pdus: [UInt8: String] = [
        0x10: "GetCapabilities", 0x11: "ListPlayerApplicationSettingAttributes", 0x13: "GetCurrentPlayerApplicationSettingValue",
        0x14: "SetPlayerApplicationSettingValue", 0x20: "GetElementAttributes", 0x30: "GetPlayStatus", 0x31: "RegisterNotification",
        0x40: "RequestContinuingResponse", 0x41: "AbortContinuingResponse", 0x50: "SetAbsoluteVolume", 0x60: "SetAddressedPlayer",
        0x70: "SetBrowsedPlayer", 0x71: "GetFolderItems", 0x74: "PlayItem", 0x90: "AddToNowPlaying",
    ]
    static let events: [UInt8: String] = [
        0x01: "PLAYBACK_STATUS_CHANGED", 0x02: "TRACK_CHANGED", 0x03: "TRACK_REACHED_END", 0x04: "TRACK_REACHED_START",
        0x05: "PLAYBACK_POS_CHANGED", 0x06: "BATT_STATUS_CHANGED", 0x07: "SYSTEM_STATUS_CHANGED",
        0x08: "PLAYER_APPLICATION_SETTING_CHANGED", 0x09: "NOW_PLAYING_CONTENT_CHANGED", 0x0A: "AVAILABLE_PLAYERS_CHANGED",
        0x0B: "ADDRESSED_PLAYER_CHANGED", 0x0C: "UIDS_CHANGED", 0x0D: "VOLUME_CHANGED",
    ]
    /// AVRCP status codes of a REJECTED vendor-dependent response (AVRCP 1.6, 6.15.3).
    static let statuses: [UInt8: String] = [
        0x00: "invalid command", 0x01: "invalid parameter", 0x02: "parameter content error", 0x03: "internal error",
        0x04: "operation completed without error", 0x05: "UID changed", 0x07: "invalid direction", 0x08: "not a directory",
        0x09: "does not exist", 0x0A: "invalid scope", 0x0B: "range out of bounds", 0x0C: "folder item is not playable",
        0x0D: "media in use", 0x0E: "now playing list full", 0x0F: "search not supported", 0x10: "search in progress",
        0x11: "invalid player id", 0x12: "player not browsable", 0x13: "player not addressed", 0x14: "no valid search results",
        0x15: "no available players", 0x16: "addressed player changed",
    ]

    /// What a reader calls the frame: `play pressed`, `RegisterNotification VOLUME_CHANGED`, `SetAbsoluteVolume 64 (50 %)`.
    public var what: String {
        if let p = passThroughOperation {
            return "\(Self.operations[p.operation] ?? "operation \(hex(p.operation))") \(p.released ? "released" : "pressed")"
        }
        if case let (pdu, params)? = avrcpPDU {
            let name = Self.pdus[pdu] ?? "PDU \(hex(pdu))"
            // A REJECTED response carries a status, not the command's parameters (a rejected RegisterNotification
            // names no event).
            if code == .rejected, let s = params.first { return "\(name) rejected: \(Self.statuses[s] ?? hex(s))" }
            switch pdu {
            case 0x31 where !params.isEmpty: return "\(name) \(Self.events[params[0]] ?? hex(params[0]))"
            case 0x50 where !params.isEmpty:
                let v = Int(params[0] & 0x7F)
                return "\(name) \(v) (\(v * 100 / 127) %)"
            default: return name
            }
        }
        switch opcode {
        case 0x30: return "UNIT INFO"
        case 0x31: return "SUBUNIT INFO"
        default: return "opcode \(hex(opcode))"
        }
    }

    /// The notification event a RegisterNotification command or response names.
    public var notificationEvent: String? {
        guard case let (pdu, params)? = avrcpPDU, pdu == 0x31, code != .rejected, let e = params.first else { return nil }
        return Self.events[e] ?? hex(e)
    }
    /// The absolute volume (0–127) a SetAbsoluteVolume or a VOLUME_CHANGED notification carries.
    public var absoluteVolume: Int? {
        guard case let (pdu, params)? = avrcpPDU else { return nil }
        if pdu == 0x50, let v = params.first { return Int(v & 0x7F) }
        if pdu == 0x31, params.count >= 2, params[0] == 0x0D, code == .changed || code == .interim { return Int(params[1] & 0x7F) }
        return nil
    }
}
