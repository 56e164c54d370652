import BLECodecs
import BLECore

// Espressif BLE OTA, the `ble_ota` component of esp-iot-solution (Bluedroid and NimBLE builds) and
// its Android client. Facts from:
//   espressif/esp-iot-solution examples/bluetooth/ble_ota/README.md (packet formats, ACK statuses),
//   components/bluetooth/ble_profiles/esp/ble_ota/src/ble_ota.c and nimble_ota.c (UUIDs, command and
//   sector handling, crc16_ccitt = CRC-16/XMODEM over bytes 0–17 of every command and ACK),
//   EspressifApps/esp-ble-ota-android BleOTAClient.kt and EspCRC16.java (4096-byte sectors, the
//   last packet of a sector carrying the sector's CRC-16 after its data).

/// An Espressif BLE OTA command id: the u16 LE at bytes 0–1 of a 20-byte command packet.
public struct EspressifOTACommand: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// Payload bytes 2–5: the firmware length, u32 LE.
    public static let start = EspressifOTACommand(rawValue: 0x0001)
    public static let stop = EspressifOTACommand(rawValue: 0x0002)
    /// The device's answer: bytes 2–3 the command answered, 4–5 its status.
    public static let ack = EspressifOTACommand(rawValue: 0x0003)
    public static let names = OTACodeTable<EspressifOTACommand>(
        [.start: "Start OTA", .stop: "Stop OTA", .ack: "Command ACK"],
        unknown: { "Command(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
}

/// The status of a command ACK (bytes 4–5).
public struct EspressifOTACommandStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let accept = EspressifOTACommandStatus(rawValue: 0x0000)
    public static let reject = EspressifOTACommandStatus(rawValue: 0x0001)
    public static let names = OTACodeTable<EspressifOTACommandStatus>(
        [.accept: "Accept", .reject: "Reject"], unknown: { "Status(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
}

/// The status of a sector ACK on the firmware characteristic (bytes 2–3).
public struct EspressifOTASectorStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let success = EspressifOTASectorStatus(rawValue: 0x0000)
    public static let crcError = EspressifOTASectorStatus(rawValue: 0x0001)
    /// Bytes 4–5 then hold the sector index the device expects.
    public static let sectorIndexError = EspressifOTASectorStatus(rawValue: 0x0002)
    public static let payloadLengthError = EspressifOTASectorStatus(rawValue: 0x0003)
    public static let names = OTACodeTable<EspressifOTASectorStatus>(
        [
            .success: "Success", .crcError: "CRC error", .sectorIndexError: "Sector index error",
            .payloadLengthError: "Payload length error",
        ],
        unknown: { "Status(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
}

/// A command packet (phone → COMMAND_CHAR) or command ACK (device → COMMAND_CHAR), and the sector ACK
/// (device → RECV_FW_CHAR): always 20 bytes, a CRC-16/XMODEM of bytes 0–17 at 18–19 (LE).
///
///     0      2                              18     20
///     +------+------------------------------+------+
///     | id   | payload (16)                 | crc  |   command: id, payload
///     +------+------+------+----------------+------+
///     | sect | stat | want | zeros          | crc  |   sector ACK
///     +------+------+------+----------------+------+
public struct EspressifOTAControlPacket: Hashable, Sendable {
    /// Bytes 0–1, 2–3 and 4–5 as u16 LE (command id, first and second payload words).
    public var word0: UInt16
    public var word1: UInt16
    public var word2: UInt16
    public var payload: [UInt8]
    public var crc: UInt16
    /// The CRC the 18 bytes before it give.
    public var computedCRC: UInt16

    /// Fails with `.invalidSize` unless the value is the 20 bytes the component always sends.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        guard input.remaining == 20 else { throw .invalidSize(expected: 20, got: input.remaining) }
        let covered = try input.readBytes(18)
        computedCRC = UInt16(ChecksumAlgorithm.crc16XModem.compute(covered))
        var head = ByteReader(covered)
        word0 = try UInt16(parsingLittleEndian: &head)
        payload = head.readRemaining()
        head = ByteReader(covered)
        try head.skip(2)
        word1 = try UInt16(parsingLittleEndian: &head)
        word2 = try UInt16(parsingLittleEndian: &head)
        crc = try UInt16(parsingLittleEndian: &input)
    }

    /// A packet of three words, zeros, and its CRC (`correctCRC: false` writes a wrong one, for tests).
    public init(_ word0: UInt16, _ word1: UInt16 = 0, _ word2: UInt16 = 0, correctCRC: Bool = true) {
        self.word0 = word0
        self.word1 = word1
        self.word2 = word2
        payload =
            [UInt8(truncatingIfNeeded: word1), UInt8(word1 >> 8), UInt8(truncatingIfNeeded: word2), UInt8(word2 >> 8)]
            + [UInt8](repeating: 0, count: 12)
        computedCRC = UInt16(ChecksumAlgorithm.crc16XModem.compute([UInt8(truncatingIfNeeded: word0), UInt8(word0 >> 8)] + payload))
        crc = correctCRC ? computedCRC : ~computedCRC
    }

    /// The 20 bytes on the wire.
    public var bytes: [UInt8] {
        [UInt8(truncatingIfNeeded: word0), UInt8(word0 >> 8)] + payload + [UInt8(truncatingIfNeeded: crc), UInt8(crc >> 8)]
    }

    public var crcOK: Bool { crc == computedCRC }
    /// Start OTA: the firmware length (payload bytes 2–5).
    public var firmwareLength: Int { Int(word1) | Int(word2) << 16 }
}

/// A firmware packet (phone → RECV_FW_CHAR): sector index u16 LE, packet sequence, data. Sequence
/// 0xFF marks the last packet of a sector, whose last two bytes are the CRC-16/XMODEM of the sector's
/// data (LE), not image bytes.
public struct EspressifOTAFirmwarePacket: Hashable, Sendable {
    public var sector: Int
    public var sequence: UInt8
    public var data: [UInt8]
    /// The sector's CRC, on the last packet of a sector.
    public var sectorCRC: UInt16?

    public static let lastSequence: UInt8 = 0xFF

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        sector = Int(try UInt16(parsingLittleEndian: &input))
        sequence = try UInt8(parsing: &input)
        if sequence == Self.lastSequence {
            guard input.remaining >= 2 else { throw .truncated(needed: 2, available: input.remaining, offset: input.offset) }
            data = try input.readArray(input.remaining - 2)
            sectorCRC = try UInt16(parsingLittleEndian: &input)
        } else {
            data = input.readRemaining()
        }
    }

    /// A packet; the last one of a sector (`sequence` 0xFF) carries `sectorCRC`.
    public init(sector: Int, sequence: UInt8, data: [UInt8], sectorCRC: UInt16? = nil) {
        self.sector = sector
        self.sequence = sequence
        self.data = data
        self.sectorCRC = sectorCRC
    }

    /// The bytes on the wire.
    public var bytes: [UInt8] {
        var out = [UInt8(truncatingIfNeeded: sector), UInt8(truncatingIfNeeded: sector >> 8), sequence] + data
        if let crc = sectorCRC { out += [UInt8(truncatingIfNeeded: crc), UInt8(crc >> 8)] }
        return out
    }

    /// The packets of one sector as the Espressif client cuts them: `step` data bytes each, sequence
    /// 0, 1, … and 0xFF on the last, which carries the CRC-16/XMODEM of the sector's data.
    public static func packets(sector: Int, data: [UInt8], step: Int) -> [EspressifOTAFirmwarePacket] {
        let starts = Array(stride(from: 0, to: data.count, by: step))
        let crc = UInt16(ChecksumAlgorithm.crc16XModem.compute(data))
        return starts.enumerated().map { i, start in
            let chunk = Array(data[start..<min(start + step, data.count)])
            let last = i == starts.count - 1
            return EspressifOTAFirmwarePacket(
                sector: sector, sequence: last ? lastSequence : UInt8(truncatingIfNeeded: i),
                data: chunk, sectorCRC: last ? crc : nil)
        }
    }

    public var isLast: Bool { sequence == Self.lastSequence }
}

/// Espressif BLE OTA (service 0x8018; esp-iot-solution `ble_ota`): Start OTA (`0001` + length) on
/// COMMAND (0x8022), answered `0003 0001 0000`; the image in 4096-byte sectors of write requests
/// to RECV_FW (0x8020), each `sector(u16) seq data`, the last packet of a sector `seq = FF` with
/// the sector's CRC-16; the device answers each sector on RECV_FW (`sector status …`); Stop OTA
/// (`0002`) answered `0003 0002 0000` ends it. PROGRESS_BAR (0x8021) and CUSTOMER (0x8023) are
/// counted only.
///
/// A sector ACK with an error status asks for that sector again (the README: "send the error ACK
/// for request retransmission"): matched to the first packet of the sector sent after it. The
/// image is rebuilt by sector index, the last sending of each sector winning; a sector whose CRC
/// does not match its data is named in a finding.
public struct EspressifBLEOTA: OTAProfile {
    public static let protocolName = OTAProtocol.espressifBLEOTA
    public static let service = BluetoothUUID(uuid16: 0x8018)
    public static let receiveFirmware = BluetoothUUID(uuid16: 0x8020)
    public static let progressBar = BluetoothUUID(uuid16: 0x8021)
    public static let command = BluetoothUUID(uuid16: 0x8022)
    public static let customer = BluetoothUUID(uuid16: 0x8023)
    public static let progress = OTAEndpoint(rawValue: "progress")
    public static let customerData = OTAEndpoint(rawValue: "customer")
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [
        receiveFirmware: .packet, progressBar: progress, command: .control, customer: customerData,
    ]
    /// Bytes of image per sector (the client's read size and the component's flash write unit).
    public static let sectorSize = 4096

    /// Sectors whose last packet was sent: their data (CRC removed).
    var sectors: [Int: [UInt8]] = [:]
    /// The sector being sent, its data so far, and whether it was sent before.
    var current: (sector: Int, data: [UInt8], resent: Bool)?
    /// Sector → index in `resends` of a request not yet answered.
    var requested: [Int: Int] = [:]
    /// The last sector error the device reported, while no sector was acknowledged after it.
    var sectorError: (status: EspressifOTASectorStatus, sector: Int)?
    var started = false
    var stopAccepted = false

    public init() {}

    static func commandPacket(_ v: OTAValue) -> EspressifOTAControlPacket? {
        guard v.endpoint == .control else { return nil }
        var reader = ByteReader(v.bytes)
        return try? EspressifOTAControlPacket(parsing: &reader)
    }

    public static func admission(_ v: OTAValue, open: EspressifBLEOTA?) -> OTAAdmission {
        if v.isSent, let c = commandPacket(v), EspressifOTACommand(rawValue: c.word0) == .start {
            if let open, open.current != nil || !open.sectors.isEmpty { return .restart("a new update") }
            return .join
        }
        return open == nil ? .ignore : .join
    }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        o.session.retransmissionUnit = "sector"
        switch (v.endpoint, v.isSent) {
        case (.control, _):
            guard let c = Self.commandPacket(v) else {
                o.account(e, "command")
                o.session.findings.append(Finding(.warning, .otaNote("command value of \(v.count) bytes, 20 expected"), frame: e.frame))
                return
            }
            if !c.crcOK {
                o.session.findings.append(
                    Finding(.warning, .otaNote("command CRC-16 \(hex(c.crc)), its bytes give \(hex(c.computedCRC))"), frame: e.frame))
            }
            v.isSent ? sentCommand(c, e, &o) : commandACK(c, e, &o)
        case (.packet, true):
            var reader = ByteReader(v.bytes)
            guard let p = try? EspressifOTAFirmwarePacket(parsing: &reader) else {
                o.account(e, "firmware")
                o.session.findings.append(Finding(.warning, .otaNote("firmware packet of \(v.count) bytes: too short"), frame: e.frame))
                return
            }
            firmware(p, e, &o)
        case (.packet, false):
            o.account(e, "sector ACK")
            var reader = ByteReader(v.bytes)
            guard let ack = try? EspressifOTAControlPacket(parsing: &reader) else { return }
            if !ack.crcOK {
                o.session.findings.append(
                    Finding(.warning, .otaNote("sector ACK CRC-16 \(hex(ack.crc)), its bytes give \(hex(ack.computedCRC))"), frame: e.frame)
                )
            }
            sectorACK(ack, e, &o)
        default:
            o.account(e, v.endpoint.description)
        }
    }

    mutating func sentCommand(_ c: EspressifOTAControlPacket, _ e: AttributeValueEvent, _ o: inout OTASessionBuilder) {
        let command = EspressifOTACommand(rawValue: c.word0)
        o.account(e, command.description)
        switch command {
        case .start:
            o.beginPhase("start", e)
            o.session.expectedSize = c.firmwareLength
        case .stop:
            o.beginPhase("stop", e)
        default:
            break
        }
    }

    mutating func commandACK(_ c: EspressifOTAControlPacket, _ e: AttributeValueEvent, _ o: inout OTASessionBuilder) {
        let answered = EspressifOTACommand(rawValue: c.word1)
        let status = EspressifOTACommandStatus(rawValue: c.word2)
        o.account(e, "ACK of \(answered): \(status)")
        guard EspressifOTACommand(rawValue: c.word0) == .ack else { return }
        guard status == .accept else {
            o.fail(
                code: Int(status.rawValue), name: "\(answered): \(status)",
                finding: "\(answered) answered \(status)", frame: e.frame)
            return
        }
        o.lastResponseOK = true
        switch answered {
        case .start: started = true
        case .stop: stopAccepted = true
        default: break
        }
    }

    mutating func firmware(_ p: EspressifOTAFirmwarePacket, _ e: AttributeValueEvent, _ o: inout OTASessionBuilder) {
        o.account(e, "sector \(p.sector) packet \(p.isLast ? "last" : String(p.sequence))")
        guard p.sector <= OTASessionBuilder.maximumIndex else {
            o.session.findings.append(Finding(.warning, .otaError("sector index \(p.sector) out of range: ignored"), frame: e.frame))
            return
        }
        o.beginPhase("transfer", e)
        if current?.sector != p.sector {
            if let c = current {
                o.session.findings.append(Finding(.warning, .otaNote("sector \(c.sector) left without its last packet"), frame: e.frame))
            }
            // The first packet of a sector sent before: a resend (asked for or not).
            let resent = sectors[p.sector] != nil || requested[p.sector] != nil
            if resent { o.session.retransmittedPackets.append(p.sector) }
            if let i = requested.removeValue(forKey: p.sector) { o.session.resends[i].resentFrame = e.frame }
            current = (p.sector, [], resent)
        }
        current?.data += p.data
        if current?.resent == true { o.session.retransmittedBytes += p.data.count }
        o.countPacket(e, bytes: p.data.count)
        guard p.isLast, let c = current else { return }
        current = nil
        let computed = UInt16(ChecksumAlgorithm.crc16XModem.compute(c.data))
        if let crc = p.sectorCRC, crc != computed {
            o.session.findings.append(
                Finding(
                    .warning, .otaNote("sector \(c.sector): CRC-16 \(hex(crc)) sent, its \(c.data.count) bytes give \(hex(computed))"),
                    frame: e.frame))
        }
        sectors[c.sector] = c.data
    }

    mutating func sectorACK(_ ack: EspressifOTAControlPacket, _ e: AttributeValueEvent, _ o: inout OTASessionBuilder) {
        let sector = Int(ack.word0)
        let status = EspressifOTASectorStatus(rawValue: ack.word1)
        if status == .success {
            sectorError = nil
            o.lastResponseOK = true
            return
        }
        // A sector-index error names the sector the device wants; the others ask for the sector again.
        let wanted = status == .sectorIndexError ? Int(ack.word2) : sector
        o.session.findings.append(Finding(.warning, .otaNote("sector \(sector): \(status), sector \(wanted) asked for"), frame: e.frame))
        sectorError = (status, wanted)
        o.session.resendRequests.append(wanted)
        o.session.resends.append(OTAResend(index: wanted, requestFrame: e.frame))
        requested[wanted] = o.session.resends.count - 1
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        if let failure = o.standingFailure {
            o.session.result = failure
        } else if stopAccepted {
            o.session.result = .success
        } else if let (status, sector) = sectorError {
            o.session.result = .failure(code: Int(status.rawValue), name: "\(status) (sector \(sector))")
        } else {
            o.cut(why, frame: frame)
        }
        if !requested.isEmpty {
            o.session.findings.append(
                Finding(
                    .warning, .otaNote("sector asked for again but never sent: \(indexList(requested.keys.sorted()))"),
                    frame: o.session.endFrame))
        }
        var all = sectors
        if let c = current, all[c.sector] == nil { all[c.sector] = c.data }
        guard let last = all.keys.max() else { return }
        var image: [UInt8] = []
        var missing: [Int] = []
        for i in 0...last {
            if let s = all[i] {
                if i < last && s.count != Self.sectorSize {
                    o.session.findings.append(
                        Finding(
                            .warning, .otaNote("sector \(i) holds \(s.count) bytes, \(Self.sectorSize) expected"), frame: o.session.endFrame
                        ))
                }
                image += s
            } else {
                missing.append(i)
            }
        }
        if !missing.isEmpty {
            o.session.findings.append(Finding(.warning, .otaMissingPackets(missing), frame: o.session.endFrame))
            if case .success = o.session.result { o.session.result = .incomplete("sectors missing but the device accepted Stop OTA") }
        }
        o.session.image = image
    }
}
