import BLECodecs
import BLECore

// Telink BLE SDK OTA. Facts from telink-semi/telink_b85m_ble_single_connection_sdk:
//   b85_ble_sdk/stack/ble/service/ota/ota.h (commands, ota_end_t, ota_result_t, result codes, ota_pdu16_t),
//   b85_ble_sdk/stack/ble/service/uuid.h (TELINK_OTA_UUID_SERVICE, TELINK_SPP_DATA_OTA);
// and Telink's Android OtaPacketParser.java (Apache-2.0, "@author telink"; carried in
// zhuyouyi123/android-vue-demo android-studio-app/otaupgrade/…/ble/OtaPacketParser.java): the packet
// CRC is poly 0xA001 reflected, init 0xFFFF (CRC-16/MODBUS) over index + data, and the last packet
// is padded with 0xFF to 16 bytes.

/// A Telink OTA command: the u16 LE opening a value written to (or notified on) the OTA characteristic.
/// Values ≥ 0xFF00 are commands; anything lower is the index of a data packet.
public struct TelinkOTACommand: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let version = TelinkOTACommand(rawValue: 0xFF00)
    public static let start = TelinkOTACommand(rawValue: 0xFF01)
    /// `ota_end_t`: the last packet index u16 and its ones' complement u16.
    public static let end = TelinkOTACommand(rawValue: 0xFF02)
    /// `ota_startExt_t`: PDU length (16·n), version compare, 16 reserved bytes.
    public static let startExtended = TelinkOTACommand(rawValue: 0xFF03)
    public static let firmwareVersionRequest = TelinkOTACommand(rawValue: 0xFF04)
    public static let firmwareVersionResponse = TelinkOTACommand(rawValue: 0xFF05)
    /// `ota_result_t`: one result byte (server → client).
    public static let result = TelinkOTACommand(rawValue: 0xFF06)
    public static let schedulePDUCount = TelinkOTACommand(rawValue: 0xFF08)
    public static let scheduleFirmwareSize = TelinkOTACommand(rawValue: 0xFF09)
    public static let names = OTACodeTable<TelinkOTACommand>(
        [
            .version: "CMD_OTA_VERSION", .start: "CMD_OTA_START", .end: "CMD_OTA_END", .startExtended: "CMD_OTA_START_EXT",
            .firmwareVersionRequest: "CMD_OTA_FW_VERSION_REQ", .firmwareVersionResponse: "CMD_OTA_FW_VERSION_RSP",
            .result: "CMD_OTA_RESULT", .schedulePDUCount: "CMD_OTA_SCHEDULE_PDU_NUM",
            .scheduleFirmwareSize: "CMD_OTA_SCHEDULE_FW_SIZE",
        ],
        unknown: { "Command(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
    /// The first u16 of a value is a command, not a packet index.
    public static let firstCommand: UInt16 = 0xFF00
    /// Starts an update (the version query the client sends first included).
    public var startsUpdate: Bool { [.version, .start, .startExtended, .firmwareVersionRequest].contains(self) }
}

/// A Telink OTA result (`OTA_SUCCESS` … `OTA_LOGIC_ERR`).
public struct TelinkOTAResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = TelinkOTAResult(rawValue: 0x00)
    public static let names = OTACodeTable<TelinkOTAResult>(
        [
            .success: "OTA_SUCCESS", .init(rawValue: 0x01): "OTA_DATA_PACKET_SEQ_ERR", .init(rawValue: 0x02): "OTA_PACKET_INVALID",
            .init(rawValue: 0x03): "OTA_DATA_CRC_ERR", .init(rawValue: 0x04): "OTA_WRITE_FLASH_ERR",
            .init(rawValue: 0x05): "OTA_DATA_UNCOMPLETE", .init(rawValue: 0x06): "OTA_FLOW_ERR",
            .init(rawValue: 0x07): "OTA_FW_CHECK_ERR", .init(rawValue: 0x08): "OTA_VERSION_COMPARE_ERR",
            .init(rawValue: 0x09): "OTA_PDU_LEN_ERR", .init(rawValue: 0x0A): "OTA_FIRMWARE_MARK_ERR",
            .init(rawValue: 0x0B): "OTA_FW_SIZE_ERR", .init(rawValue: 0x0C): "OTA_DATA_PACKET_TIMEOUT",
            .init(rawValue: 0x0D): "OTA_TIMEOUT", .init(rawValue: 0x0E): "OTA_FAIL_DUE_TO_CONNECTION_TERMIANTE",
            .init(rawValue: 0x0F): "OTA_LOGIC_ERR",
        ],
        unknown: { "Result(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
}

/// A Telink OTA data packet (`ota_pdu16_t`, or 16·n data bytes after CMD_OTA_START_EXT):
///
///     0        2                      2+n      4+n
///     +--------+----------------------+--------+
///     | index  | data (n = 16·k)      | crc16  |   u16 LE; CRC-16/MODBUS of bytes 0..<2+n
///     +--------+----------------------+--------+
public struct TelinkOTAPacket: Hashable, Sendable {
    public var index: Int
    public var data: [UInt8]
    public var crc: UInt16
    public var computedCRC: UInt16

    /// Fails with `.invalidSize` unless the data is a non-empty multiple of 16 bytes.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let n = input.remaining - 4
        guard n > 0, n % 16 == 0 else { throw .invalidSize(expected: 20, got: input.remaining) }
        let covered = try input.readBytes(2 + n)
        computedCRC = UInt16(ChecksumAlgorithm.crc16Modbus.compute(covered))
        index = Int(covered[0]) | Int(covered[1]) << 8
        data = Array(covered[2...])
        crc = try UInt16(parsingLittleEndian: &input)
    }

    /// A packet with its CRC; `data` is padded with 0xFF to a multiple of 16 as the client does.
    public init(index: Int, data: [UInt8]) {
        self.index = index
        self.data = data + [UInt8](repeating: 0xFF, count: (16 - data.count % 16) % 16)
        computedCRC = UInt16(
            ChecksumAlgorithm.crc16Modbus.compute([UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8)] + self.data))
        crc = computedCRC
    }

    /// The bytes on the wire.
    public var bytes: [UInt8] {
        [UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8)] + data + [
            UInt8(truncatingIfNeeded: crc), UInt8(crc >> 8),
        ]
    }

    public var crcOK: Bool { crc == computedCRC }
}

/// Telink OTA (service 00010203-0405-0607-0809-0A0B0C0D1912): every value goes through one
/// characteristic (…2B12). The client writes CMD_OTA_VERSION and CMD_OTA_START (or
/// CMD_OTA_START_EXT with a PDU length), then data packets `index data crc16` as write commands
/// (index from 0, 16 data bytes in the legacy protocol), then CMD_OTA_END with the last index and its
/// ones' complement; the server notifies CMD_OTA_RESULT with a result code (newer SDKs; legacy
/// servers reboot without one).
///
/// The protocol has no resend request: a packet written again is counted as resent. The image is
/// rebuilt by packet index, and holds the 0xFF padding of the last packet when the firmware is not a
/// multiple of the PDU length (the size is not sent).
public struct TelinkOTA: OTAProfile {
    public static let protocolName = OTAProtocol.telinkOTA
    public static let service = BluetoothUUID("00010203-0405-0607-0809-0A0B0C0D1912")!
    public static let otaData = BluetoothUUID("00010203-0405-0607-0809-0A0B0C0D2B12")!
    /// One characteristic carries commands and data: the profile tells them apart by the first u16.
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [otaData: .control]

    var packets: [Int: [UInt8]] = [:]
    var lastIndex: Int?
    var result: TelinkOTAResult?
    var pduLength = 16

    public init() {}

    static func command(_ v: OTAValue) -> TelinkOTACommand? {
        guard let first = v.le16(0), UInt16(first) >= TelinkOTACommand.firstCommand else { return nil }
        return TelinkOTACommand(rawValue: UInt16(first))
    }

    public static func admission(_ v: OTAValue, open: TelinkOTA?) -> OTAAdmission {
        if v.isSent, let c = command(v), c.startsUpdate {
            if let open, !open.packets.isEmpty || open.result != nil { return .restart("a new update") }
            return .join
        }
        return open == nil ? .ignore : .join
    }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        o.session.retransmissionUnit = "index"
        if let c = Self.command(v) {
            o.account(e, c.description)
            v.isSent ? sent(c, v, &o) : received(c, v, &o)
            return
        }
        guard v.isSent else { o.account(e, "notification"); return }
        var reader = ByteReader(v.bytes)
        guard let p = try? TelinkOTAPacket(parsing: &reader) else {
            o.account(e, "packet")
            o.session.findings.append(
                Finding(
                    .warning, .otaNote("OTA value of \(v.count) bytes is neither a command nor index + 16·n bytes + CRC"), frame: e.frame))
            return
        }
        o.account(e, "packet \(p.index)")
        o.beginPhase("transfer", e)
        if !p.crcOK {
            o.session.findings.append(
                Finding(.warning, .otaNote("packet \(p.index): CRC-16 \(hex(p.crc)), its bytes give \(hex(p.computedCRC))"), frame: e.frame)
            )
        }
        if p.data.count != pduLength {
            o.session.findings.append(
                Finding(.warning, .otaNote("packet \(p.index) carries \(p.data.count) bytes, PDU length \(pduLength)"), frame: e.frame))
        }
        guard p.index <= OTASessionBuilder.maximumIndex else { return }
        if let old = packets[p.index] {
            o.session.retransmittedPackets.append(p.index)
            o.session.retransmittedBytes += p.data.count
            if old != p.data {
                o.session.findings.append(Finding(.warning, .otaNote("packet \(p.index) resent with different bytes"), frame: e.frame))
            }
        }
        packets[p.index] = p.data
        o.countPacket(e, bytes: p.data.count)
    }

    mutating func sent(_ c: TelinkOTACommand, _ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        switch c {
        case .version, .firmwareVersionRequest:
            o.beginPhase("version", e)
        case .start:
            o.beginPhase("start", e)
        case .startExtended:
            o.beginPhase("start", e)
            if v.count >= 3, v[2] > 0, v[2] % 16 == 0 { pduLength = Int(v[2]) }
        case .end:
            o.beginPhase("end", e)
            guard let last = v.le16(2), let check = v.le16(4) else { return }
            lastIndex = last
            o.session.expectedPackets = last + 1
            if UInt16(check) != ~UInt16(last) {
                o.session.findings.append(
                    Finding(
                        .warning,
                        .otaNote("CMD_OTA_END: last index \(last) with check \(hex(UInt16(check))), \(hex(~UInt16(last))) expected"),
                        frame: e.frame))
            }
        default:
            break
        }
    }

    mutating func received(_ c: TelinkOTACommand, _ v: OTAValue, _ o: inout OTASessionBuilder) {
        guard c == .result, v.count >= 3 else { return }
        let r = TelinkOTAResult(rawValue: v[2])
        result = r
        if r == .success {
            o.lastResponseOK = true
        } else {
            o.fail(code: Int(r.rawValue), name: r.description, finding: "CMD_OTA_RESULT: \(r)", frame: v.event.frame)
        }
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        let last = lastIndex ?? packets.keys.max() ?? -1
        let missing = last < 0 ? [] : (0...last).filter { packets[$0] == nil }
        if let failure = o.standingFailure {
            o.session.result = failure
        } else if result == .success {
            o.session.result = .success
        } else if lastIndex != nil && missing.isEmpty && !packets.isEmpty {
            // Legacy servers check the packets and reboot without CMD_OTA_RESULT.
            o.session.result = .success
            o.session.findings.append(
                Finding(
                    .warning, .otaNote("no CMD_OTA_RESULT: success taken from CMD_OTA_END after every packet 0…\(last)"),
                    frame: o.session.endFrame))
        } else {
            o.cut(why, frame: frame)
        }
        if !missing.isEmpty {
            o.session.findings.append(Finding(.warning, .otaMissingPackets(missing), frame: o.session.endFrame))
            if case .success = o.session.result { o.session.result = .incomplete("packets missing but the device reported success") }
        }
        guard last >= 0 else { return }
        var image: [UInt8] = []
        for i in 0...last { image += packets[i] ?? [UInt8](repeating: 0xFF, count: pduLength) }
        o.session.image = image
    }
}
