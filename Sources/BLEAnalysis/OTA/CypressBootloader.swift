import BLECore

// Cypress (Infineon) PSoC bootloader over the Bootloader Service. Facts from:
//   sparkfun/PSoC_Arduino_Support UART_Bootloader.cydsn/Bootloader_v1_30/PSoC3/API/Bootloader_PVT.h
//     (the Cypress Bootloader component v1.30: packet layout, SOP/EOP, commands 0x31–0x3C, status codes,
//     CRC-CCITT polynomial 0x8408 / initial 0xFFFF when the packet checksum is a CRC);
//   gv1/cybootload_linux cybtldr_command.h / cybtldr_command.c (Cypress bootloader host library: the
//     summation checksum, 2's complement of the 16-bit sum of every byte before it, and the CRC's final
//     inversion and byte swap; Program Row = array id, row number u16 LE, row data);
//   EkoDevices/CySmart_iOS_1.2.0.119_Source_Code CySmart/Classes/UtilClasses/Constants.h (CySmart:
//     Bootloader Service 00060000-F8CE-11E4-ABF4-0002A5D5C51B, characteristic 00060001-…).

/// A bootloader command (byte 1 of a packet the host writes).
public struct CypressBootloaderCommand: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let verifyChecksum = CypressBootloaderCommand(rawValue: 0x31)
    public static let getFlashSize = CypressBootloaderCommand(rawValue: 0x32)
    public static let sendData = CypressBootloaderCommand(rawValue: 0x37)
    public static let enterBootloader = CypressBootloaderCommand(rawValue: 0x38)
    /// Data: array id, row number u16 LE, the row's (last) bytes.
    public static let programRow = CypressBootloaderCommand(rawValue: 0x39)
    public static let verifyRow = CypressBootloaderCommand(rawValue: 0x3A)
    /// Exits and resets into the application; the bootloader does not answer.
    public static let exitBootloader = CypressBootloaderCommand(rawValue: 0x3B)
    public static let names = OTACodeTable<CypressBootloaderCommand>(
        [
            .verifyChecksum: "Verify checksum", .getFlashSize: "Get flash size", .init(rawValue: 0x33): "Get app status",
            .init(rawValue: 0x34): "Erase row", .init(rawValue: 0x35): "Sync bootloader", .init(rawValue: 0x36): "Set active app",
            .sendData: "Send data", .enterBootloader: "Enter bootloader", .programRow: "Program row", .verifyRow: "Verify row",
            .exitBootloader: "Exit bootloader", .init(rawValue: 0x3C): "Get metadata",
        ],
        unknown: { "Command(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
}

/// A bootloader status (byte 1 of a response packet).
public struct CypressBootloaderStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = CypressBootloaderStatus(rawValue: 0x00)
    public static let names = OTACodeTable<CypressBootloaderStatus>(
        [
            .success: "Success", .init(rawValue: 0x01): "ERR_KEY", .init(rawValue: 0x02): "ERR_VERIFY",
            .init(rawValue: 0x03): "ERR_LENGTH", .init(rawValue: 0x04): "ERR_DATA", .init(rawValue: 0x05): "ERR_CMD",
            .init(rawValue: 0x06): "ERR_DEVICE", .init(rawValue: 0x07): "ERR_VERSION", .init(rawValue: 0x08): "ERR_CHECKSUM",
            .init(rawValue: 0x09): "ERR_ARRAY", .init(rawValue: 0x0A): "ERR_ROW", .init(rawValue: 0x0B): "ERR_PROTECT",
            .init(rawValue: 0x0C): "ERR_APP", .init(rawValue: 0x0D): "ERR_ACTIVE", .init(rawValue: 0x0F): "ERR_UNK",
        ],
        unknown: { "Status(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
}

/// A bootloader packet, command or response:
///
///     0     1        2       4          4+n        6+n   7+n
///     +-----+--------+-------+----------+----------+-----+
///     | 01  | cmd or | size  | data (n) | checksum | 17  |   size and checksum u16 LE
///     |     | status |       |          |          |     |
///     +-----+--------+-------+----------+----------+-----+
///
/// The checksum covers bytes 0..<4+n: the 2's complement of their 16-bit sum, or (bootloaders built
/// with a CRC packet checksum) CRC-16/CCITT reflected (0x8408, initial 0xFFFF), inverted and byte-swapped.
public struct CypressBootloaderPacket: Hashable, Sendable {
    public static let startOfPacket: UInt8 = 0x01
    public static let endOfPacket: UInt8 = 0x17

    public enum ChecksumKind: String, Sendable { case sum, crc }

    /// The command (host) or status (bootloader) byte.
    public var code: UInt8
    public var data: [UInt8]
    public var checksum: UInt16
    /// Which checksum the packet's matches, nil when neither does.
    public var checksumKind: ChecksumKind?

    /// Fails unless the value is one whole packet: SOP, a size that fits, EOP.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let covered = input.remainingBytes
        let sop = try UInt8(parsing: &input)
        guard sop == Self.startOfPacket else { throw .invalidValue(field: "start of packet", value: Int(sop), offset: 0) }
        code = try UInt8(parsing: &input)
        let size = Int(try UInt16(parsingLittleEndian: &input))
        data = try input.readArray(size)
        checksum = try UInt16(parsingLittleEndian: &input)
        let eop = try UInt8(parsing: &input)
        guard eop == Self.endOfPacket else { throw .invalidValue(field: "end of packet", value: Int(eop), offset: 6 + size) }
        try input.expectEnd()
        let body = UnsafeRawBufferPointer(rebasing: covered[0..<(4 + size)])
        checksumKind = Self.sum(body) == checksum ? .sum : Self.crc(body) == checksum ? .crc : nil
    }

    /// A packet with its summation checksum.
    public init(code: UInt8, data: [UInt8]) {
        self.code = code
        self.data = data
        let body = [Self.startOfPacket, code, UInt8(truncatingIfNeeded: data.count), UInt8(truncatingIfNeeded: data.count >> 8)] + data
        checksum = body.withUnsafeBytes { Self.sum($0) }
        checksumKind = .sum
    }

    /// The bytes on the wire.
    public var bytes: [UInt8] {
        [Self.startOfPacket, code, UInt8(truncatingIfNeeded: data.count), UInt8(truncatingIfNeeded: data.count >> 8)] + data
            + [UInt8(truncatingIfNeeded: checksum), UInt8(checksum >> 8), Self.endOfPacket]
    }

    /// 2's complement of the 16-bit sum of the bytes.
    static func sum(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        var s: UInt16 = 0
        for b in bytes { s &+= UInt16(b) }
        return ~s &+ 1
    }

    /// CRC-16/CCITT reflected (0x8408), initial 0xFFFF, inverted, bytes swapped.
    static func crc(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        var c: UInt16 = 0xFFFF
        for b in bytes {
            var t = UInt16(b)
            for _ in 0..<8 {
                c = (c ^ t) & 1 != 0 ? (c >> 1) ^ 0x8408 : c >> 1
                t >>= 1
            }
        }
        c = ~c
        return c << 8 | c >> 8
    }
}

/// Cypress/Infineon PSoC bootloader over BLE (Bootloader Service 00060000-F8CE-11E4-ABF4-0002A5D5C51B,
/// one characteristic …0001-… written with commands and notifying responses): Enter bootloader, Get
/// flash size, then per flash row Send data (parts of the row) and Program row (array, row, the rest),
/// each answered with a status; Verify checksum (answer data 01: the application's checksum is valid);
/// Exit bootloader resets into the application.
///
/// The image is the rows' data in (array, row) order, as the .cyacd file lists them. A row programmed
/// again counts as resent.
public struct CypressBootloader: OTAProfile {
    public static let protocolName = OTAProtocol.cypressBootloader
    public static let service = BluetoothUUID("00060000-F8CE-11E4-ABF4-0002A5D5C51B")!
    public static let characteristic = BluetoothUUID("00060001-F8CE-11E4-ABF4-0002A5D5C51B")!
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [characteristic: .control]

    struct RowKey: Hashable, Comparable {
        var array: UInt8
        var row: UInt16
        static func < (a: RowKey, b: RowKey) -> Bool { (a.array, a.row) < (b.array, b.row) }
        var index: Int { Int(array) << 16 | Int(row) }
    }

    var rows: [RowKey: [UInt8]] = [:]
    var pending: [UInt8] = []
    /// The command the next response answers.
    var lastCommand: CypressBootloaderCommand?
    var checksumValid: Bool?
    var exited = false

    public init() {}

    static func packet(_ v: OTAValue) -> CypressBootloaderPacket? {
        var reader = ByteReader(v.bytes)
        return try? CypressBootloaderPacket(parsing: &reader)
    }

    public static func admission(_ v: OTAValue, open: CypressBootloader?) -> OTAAdmission {
        if v.isSent, let p = packet(v), CypressBootloaderCommand(rawValue: p.code) == .enterBootloader {
            if let open, !open.rows.isEmpty || open.exited { return .restart("a new update") }
            return .join
        }
        return open == nil ? .ignore : .join
    }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        o.session.retransmissionUnit = "index"
        guard let p = Self.packet(v) else {
            o.account(e, "bootloader value")
            o.session.findings.append(
                Finding(.warning, .otaNote("bootloader value of \(v.count) bytes is not one packet (01 … 17)"), frame: e.frame))
            return
        }
        if p.checksumKind == nil {
            o.session.findings.append(
                Finding(
                    .warning, .otaNote("packet checksum \(hex(p.checksum)) matches neither the sum nor the CRC of its bytes"),
                    frame: e.frame))
        }
        v.isSent ? command(p, e, &o) : response(p, e, &o)
    }

    mutating func command(_ p: CypressBootloaderPacket, _ e: AttributeValueEvent, _ o: inout OTASessionBuilder) {
        let c = CypressBootloaderCommand(rawValue: p.code)
        o.account(e, c.description)
        lastCommand = c
        switch c {
        case .enterBootloader:
            o.beginPhase("enter", e)
        case .sendData:
            o.beginPhase("program", e)
            pending += p.data
            o.countPacket(e, bytes: p.data.count)
        case .programRow:
            o.beginPhase("program", e)
            guard p.data.count >= 3 else { return }
            let key = RowKey(array: p.data[0], row: UInt16(p.data[1]) | UInt16(p.data[2]) << 8)
            let row = pending + p.data[3...]
            pending = []
            if rows[key] != nil {
                o.session.retransmittedPackets.append(key.index)
                o.session.retransmittedBytes += row.count
            }
            rows[key] = row
            o.countPacket(e, bytes: p.data.count - 3)
        case .verifyChecksum:
            o.beginPhase("verify", e)
        case .exitBootloader:
            o.beginPhase("exit", e)
            exited = true
        default:
            break
        }
    }

    mutating func response(_ p: CypressBootloaderPacket, _ e: AttributeValueEvent, _ o: inout OTASessionBuilder) {
        let status = CypressBootloaderStatus(rawValue: p.code)
        let answered = lastCommand.map(\.description) ?? "a command"
        o.account(e, "\(answered): \(status)")
        guard status == .success else {
            o.fail(code: Int(status.rawValue), name: status.description, finding: "\(answered) answered \(status)", frame: e.frame)
            return
        }
        o.lastResponseOK = true
        if lastCommand == .verifyChecksum, let valid = p.data.first {
            checksumValid = valid != 0
            if valid == 0 {
                o.session.findings.append(
                    Finding(.error, .otaError("Verify checksum: the application's checksum is not valid"), frame: e.frame))
            }
        }
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        if let failure = o.standingFailure {
            o.session.result = failure
        } else if checksumValid == false {
            o.session.result = .failure(code: nil, name: "application checksum not valid")
        } else if checksumValid == true && exited {
            o.session.result = .success
        } else {
            o.cut(why, frame: frame)
        }
        o.session.image = rows.keys.sorted().flatMap { rows[$0] ?? [] }
    }
}
