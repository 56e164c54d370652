import BLECore

/// What the nRF Sniffer says a UART packet is (the header's packet ID).
public struct NordicPacketID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let reqFollow = NordicPacketID(rawValue: 0x00)
    public static let eventFollow = NordicPacketID(rawValue: 0x01)
    /// Protocol version 3: an advertising physical channel PDU.
    public static let eventPacketAdvertising = NordicPacketID(rawValue: 0x02)
    public static let eventConnect = NordicPacketID(rawValue: 0x05)
    /// A received packet (version 3: a data physical channel PDU; before: any PDU).
    public static let eventPacketData = NordicPacketID(rawValue: 0x06)
    public static let reqScanCont = NordicPacketID(rawValue: 0x07)
    public static let eventDisconnect = NordicPacketID(rawValue: 0x09)

    public var description: String {
        switch self {
        case .reqFollow: "REQ_FOLLOW"
        case .eventFollow: "EVENT_FOLLOW"
        case .eventPacketAdvertising: "EVENT_PACKET_ADVERTISING"
        case .eventConnect: "EVENT_CONNECT"
        case .eventPacketData: "EVENT_PACKET_DATA"
        case .reqScanCont: "REQ_SCAN_CONT"
        case .eventDisconnect: "EVENT_DISCONNECT"
        default: "NordicPacketID(\(hex(rawValue)))"
        }
    }
}

/// The flags byte of the nRF Sniffer event packet.
///
/// ```
/// bit 0      CRC ok
/// bit 1      data: direction (1 = central → peripheral)   advertising: aux type bit 0 (channel < 37)
/// bit 2      data: encrypted                               advertising: aux type bit 1
/// bit 3      data: MIC ok                                  advertising: address resolved
/// bits 4–6   PHY (0 1M, 1 2M, 2 Coded)
/// ```
public struct NordicBLEFlags: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public var crcOK: Bool { rawValue & 0x01 != 0 }
    /// Data channel: true when the packet went central → peripheral.
    public var centralToPeripheral: Bool { rawValue & 0x02 != 0 }
    /// Data channel: the packet was encrypted on the air.
    public var encrypted: Bool { rawValue & 0x04 != 0 }
    /// Data channel, encrypted packets: the sniffer decrypted it and the MIC matched.
    public var micOK: Bool { rawValue & 0x08 != 0 }
    /// Advertising on a secondary channel: 0 AUX_ADV_IND, 1 AUX_CHAIN_IND, 2 AUX_SYNC_IND, 3 AUX_SCAN_RSP.
    public var auxType: UInt8 { (rawValue >> 1) & 0x03 }
    public var addressResolved: Bool { rawValue & 0x08 != 0 }
    public var phy: LEPHY { LEPHY(sniffer: (rawValue >> 4) & 0x07) }

    public init(crcOK: Bool, centralToPeripheral: Bool = false, encrypted: Bool = false, micOK: Bool = false, phy: LEPHY = .le1M) {
        rawValue = (crcOK ? 1 : 0) | (centralToPeripheral ? 2 : 0) | (encrypted ? 4 : 0) | (micOK ? 8 : 0) | (phy.snifferValue & 7) << 4
    }
}

/// The pseudo-header of pcap link type 272 (`LINKTYPE_NORDIC_BLE`, nRF Sniffer for Bluetooth LE).
///
/// Facts from Wireshark's `packet-nordic_ble.c` and Nordic's sniffer documentation:
/// ```
/// version 0 (legacy): BE EF | packet id | counter u16 | 2 unused | payload len u8 |            event packet (9 bytes, no length byte)
/// version 1:  board id | header len u8 | payload len u8  | version | counter u16 | packet id | event packet
/// version 2/3: board id | payload len u16 LE             | version | counter u16 | packet id | event packet
/// event packet: length u8 (10) | flags | channel | RSSI (−dBm) | event counter u16 | time u32
///               time = µs from the end of the previous packet (version < 3), firmware timestamp in µs (version 3)
/// ```
/// The link-layer packet (access address onwards) follows the event packet.
public struct NordicBLEHeader: WireCodable {
    /// Board id (versions ≥ 1); 0 for the legacy version, which has the marker `0xBEEF` instead.
    public var boardID: UInt8
    public var protocolVersion: UInt8
    /// Version 1 only: length of the header after the board id.
    public var headerLength: UInt8
    /// Bytes after the header: the event packet plus the link-layer packet.
    public var payloadLength: UInt16
    public var packetCounter: UInt16
    public var packetID: NordicPacketID
    /// Length of the event packet (10); the link-layer packet starts that many bytes after its first byte.
    public var eventPacketLength: UInt8
    public var flags: NordicBLEFlags
    /// Channel index (0–36 data / secondary advertising, 37–39 primary advertising).
    public var channel: UInt8
    /// The raw RSSI sample; the signal strength is its negation (see ``rssi``).
    public var rssiSample: UInt8
    public var eventCounter: UInt16
    /// Version < 3: delta time end-to-start in µs; version 3: firmware timestamp in µs.
    public var time: UInt32

    public var rssi: Int { -Int(rssiSample) }

    /// True when the packet is a data channel PDU: packet id 0x06 for version 3; the access address decides for older versions.
    public func isDataChannel(accessAddress: LLAccessAddress) -> Bool {
        protocolVersion >= 3 ? packetID == .eventPacketData : !accessAddress.isAdvertising
    }

    /// Size of the header and event packet in bytes, i.e. the offset of the link-layer packet.
    public var size: Int {
        switch protocolVersion {
        case 0: return 8 + 9
        case 1: return 7 + Int(eventPacketLength)
        default: return 7 + Int(eventPacketLength)
        }
    }

    public init(
        boardID: UInt8 = 0, protocolVersion: UInt8 = 2, packetCounter: UInt16 = 0, packetID: NordicPacketID = .eventPacketData,
        flags: NordicBLEFlags, channel: UInt8, rssiSample: UInt8 = 50, eventCounter: UInt16 = 0, time: UInt32 = 0,
        linkLayerLength: Int
    ) {
        self.boardID = boardID
        self.protocolVersion = protocolVersion
        self.packetCounter = packetCounter
        self.packetID = packetID
        self.flags = flags
        self.channel = channel
        self.rssiSample = rssiSample
        self.eventCounter = eventCounter
        self.time = time
        eventPacketLength = 10
        headerLength = 6
        payloadLength = UInt16(truncatingIfNeeded: (protocolVersion == 0 ? 9 : 10) + linkLayerLength)
    }

    /// - Throws: ``DecodeError/truncated(needed:available:offset:)`` for a short record,
    ///   ``DecodeError/invalidValue(field:value:offset:)`` for an event packet length below 10.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let first = try input.peekUInt8()
        if first == 0xBE, input.remaining >= 2, input.remainingBytes[1] == 0xEF {
            try input.skip(2)
            boardID = 0
            protocolVersion = 0
            headerLength = 0
            packetID = NordicPacketID(rawValue: try UInt8(parsing: &input))
            packetCounter = try UInt16(parsingLittleEndian: &input)
            try input.skip(2)
            payloadLength = UInt16(try UInt8(parsing: &input))
            eventPacketLength = 10
        } else if input.remaining >= 17, input.remainingBytes[3] >= 2 {
            // Versions 2 and 3 (every nRF Sniffer since 3.0): one bounds check for the 7 + 10 fixed bytes,
            // then plain loads: field-by-field checked reads were a tenth of an air capture's decode time.
            let p = input.remainingBytes
            boardID = p[0]
            payloadLength = UInt16(p[1]) | UInt16(p[2]) << 8
            protocolVersion = p[3]
            headerLength = 6
            packetCounter = UInt16(p[4]) | UInt16(p[5]) << 8
            packetID = NordicPacketID(rawValue: p[6])
            eventPacketLength = p[7]
            guard eventPacketLength >= 10 else {
                throw .invalidValue(
                    field: "nRF Sniffer event packet length", value: Int(eventPacketLength), offset: input.absoluteOffset + 7)
            }
            flags = NordicBLEFlags(rawValue: p[8])
            channel = p[9]
            rssiSample = p[10]
            eventCounter = UInt16(p[11]) | UInt16(p[12]) << 8
            time = UInt32(p[13]) | UInt32(p[14]) << 8 | UInt32(p[15]) << 16 | UInt32(p[16]) << 24
            try input.skip(17)
            if eventPacketLength > 10 { try input.skip(Int(eventPacketLength) - 10) }
            return
        } else {
            boardID = try UInt8(parsing: &input)
            guard input.remaining >= 3 else { throw .truncated(needed: 3, available: input.remaining, offset: input.absoluteOffset) }
            let version = input.remainingBytes[2]
            protocolVersion = version
            if version == 1 {
                headerLength = try UInt8(parsing: &input)
                payloadLength = UInt16(try UInt8(parsing: &input))
            } else {
                headerLength = 6
                payloadLength = try UInt16(parsingLittleEndian: &input)
            }
            try input.skip(1)  // the version, read above
            packetCounter = try UInt16(parsingLittleEndian: &input)
            packetID = NordicPacketID(rawValue: try UInt8(parsing: &input))
            let eventStart = input.absoluteOffset
            eventPacketLength = try UInt8(parsing: &input)
            guard eventPacketLength >= 10 else {
                throw .invalidValue(field: "nRF Sniffer event packet length", value: Int(eventPacketLength), offset: eventStart)
            }
        }
        flags = NordicBLEFlags(rawValue: try UInt8(parsing: &input))
        channel = try UInt8(parsing: &input)
        rssiSample = try UInt8(parsing: &input)
        eventCounter = try UInt16(parsingLittleEndian: &input)
        time = try UInt32(parsingLittleEndian: &input)
        if protocolVersion != 0, eventPacketLength > 10 { try input.skip(Int(eventPacketLength) - 10) }
    }

    public func encode(into writer: inout ByteWriter) {
        if protocolVersion == 0 {
            writer.write(0xBE); writer.write(0xEF)
            writer.write(packetID.rawValue)
            writer.write(littleEndian: packetCounter)
            writer.write(littleEndian: UInt16(0))
            writer.write(UInt8(truncatingIfNeeded: payloadLength))
        } else {
            writer.write(boardID)
            if protocolVersion == 1 {
                writer.write(headerLength)
                writer.write(UInt8(truncatingIfNeeded: payloadLength))
            } else {
                writer.write(littleEndian: payloadLength)
            }
            writer.write(protocolVersion)
            writer.write(littleEndian: packetCounter)
            writer.write(packetID.rawValue)
            writer.write(eventPacketLength)
        }
        writer.write(flags.rawValue)
        writer.write(channel)
        writer.write(rssiSample)
        writer.write(littleEndian: eventCounter)
        writer.write(littleEndian: time)
        if protocolVersion != 0, eventPacketLength > 10 {
            for _ in 10..<Int(eventPacketLength) { writer.write(0) }
        }
    }
}

/// The flags word of the LE LL RF pseudo-header (pcap link type 256).
public struct LERFFlags: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let dewhitened = LERFFlags(rawValue: 0x0001)
    public static let signalPowerValid = LERFFlags(rawValue: 0x0002)
    public static let noisePowerValid = LERFFlags(rawValue: 0x0004)
    public static let decrypted = LERFFlags(rawValue: 0x0008)
    public static let referenceAccessAddressValid = LERFFlags(rawValue: 0x0010)
    public static let accessAddressOffensesValid = LERFFlags(rawValue: 0x0020)
    public static let channelAliased = LERFFlags(rawValue: 0x0040)
    public static let crcChecked = LERFFlags(rawValue: 0x0400)
    public static let crcValid = LERFFlags(rawValue: 0x0800)
    public static let micChecked = LERFFlags(rawValue: 0x1000)
    public static let micValid = LERFFlags(rawValue: 0x2000)

    public func contains(_ f: LERFFlags) -> Bool { rawValue & f.rawValue == f.rawValue }
    /// Bits 7–9: PDU type: 0 advertising or data of unspecified direction, 1 auxiliary advertising, 2 data central →
    /// peripheral, 3 data peripheral → central, 4 and 5 connected isochronous in those two directions, 6 broadcast
    /// isochronous (tcpdump.org LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR; Wireshark shows 3 as "Data, Slave to Master").
    public var pduType: UInt8 { UInt8(truncatingIfNeeded: (rawValue >> 7) & 0x7) }
    /// The direction the PDU type states: `.tx` central → peripheral, `.rx` peripheral → central, `.unknown` when
    /// the writer left it unspecified (type 0, as older writers do).
    public var direction: Direction {
        switch pduType {
        case 2, 4: .tx
        case 3, 5: .rx
        default: .unknown
        }
    }
    /// Bits 14–15: PHY (0 1M, 1 2M, 2 Coded).
    public var phy: LEPHY { LEPHY(sniffer: UInt8(truncatingIfNeeded: rawValue >> 14)) }
}

/// The 10-byte pseudo-header of pcap link type 256 (`LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR`).
///
/// ```
/// RF channel u8 (0–39, 2402 + 2k MHz) | signal dBm i8 | noise dBm i8 | access address offenses u8 |
/// reference access address u32 LE | flags u16 LE
/// ```
/// (tcpdump.org LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR; Wireshark `packet-btle_rf.c`.)
public struct LERFHeader: WireCodable {
    public var rfChannel: UInt8
    public var signalPower: Int8
    public var noisePower: Int8
    public var accessAddressOffenses: UInt8
    public var referenceAccessAddress: UInt32
    public var flags: LERFFlags

    public init(
        rfChannel: UInt8, signalPower: Int8 = 0, noisePower: Int8 = 0, accessAddressOffenses: UInt8 = 0,
        referenceAccessAddress: UInt32 = 0, flags: LERFFlags
    ) {
        self.rfChannel = rfChannel
        self.signalPower = signalPower
        self.noisePower = noisePower
        self.accessAddressOffenses = accessAddressOffenses
        self.referenceAccessAddress = referenceAccessAddress
        self.flags = flags
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        rfChannel = try UInt8(parsing: &input)
        signalPower = Int8(bitPattern: try UInt8(parsing: &input))
        noisePower = Int8(bitPattern: try UInt8(parsing: &input))
        accessAddressOffenses = try UInt8(parsing: &input)
        referenceAccessAddress = try UInt32(parsingLittleEndian: &input)
        flags = LERFFlags(rawValue: try UInt16(parsingLittleEndian: &input))
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(rfChannel)
        writer.write(UInt8(bitPattern: signalPower))
        writer.write(UInt8(bitPattern: noisePower))
        writer.write(accessAddressOffenses)
        writer.write(littleEndian: referenceAccessAddress)
        writer.write(littleEndian: flags.rawValue)
    }

    /// The link-layer channel index of the RF channel (RF 0 → 37, 12 → 38, 39 → 39; the others are data channels 0–36).
    public var channelIndex: UInt8 {
        LERFHeader.channelIndex(rfChannel: rfChannel)
    }

    @inlinable public static func channelIndex(rfChannel: UInt8) -> UInt8 {
        switch rfChannel {
        case 0: 37
        case 12: 38
        case 39: 39
        case 1...11: rfChannel - 1
        case 13...38: rfChannel - 2
        default: 0xFF
        }
    }
}
