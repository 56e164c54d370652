import BLECore

/// Whether the capturer checked a packet's CRC, and the result.
public enum LLCheck: UInt8, Hashable, Sendable {
    case notChecked, valid, invalid
}

/// One over-the-air packet of a capture record, its pseudo-header read (borrowed; no copy).
///
/// Link types (tcpdump.org): 272 nRF Sniffer (``NordicBLEHeader``), 256 LE LL with a 10-byte RF header
/// (``LERFHeader``), 251 LE LL with no pseudo-header. What the pseudo-header does not say stays unknown:
/// `direction` is `.unknown` for 251 and for 256 when its PDU type leaves it unspecified, `crc` is `.notChecked` when the capturer did not check it.
public struct LLAirPacket {
    public static let linkTypeLELL: UInt32 = 251
    public static let linkTypeLELLWithPHDR: UInt32 = 256
    public static let linkTypeNordicBLE: UInt32 = 272
    /// PPI: a header (version, flags, length u16 LE, inner DLT u32 LE, fields) before a packet of the inner DLT;
    /// DLT 147 (USER0) is what crackle and early Ubertooth tools use for LE link-layer packets.
    public static let linkTypePPI: UInt32 = 192

    /// Channel index 0–39 (0xFF when unknown).
    public var channel: UInt8
    public var crc: LLCheck
    /// For data channel PDUs: `.tx` central → peripheral, `.rx` peripheral → central, `.unknown` when the header does not say.
    public var direction: Direction
    public var isDataChannel: Bool
    /// The packet was encrypted on the air (nRF Sniffer flag; LT 256: MIC checked).
    public var encrypted: Bool
    /// Whether the capturer decrypted it and checked the MIC.
    public var mic: LLCheck
    /// The capturer says the payload is plaintext it decrypted (nRF Sniffer: encrypted and MIC ok; LT 256:
    /// the decrypted flag, or MIC checked and valid). Whether the MIC is still after the payload varies by
    /// capturer and is for the reader to find out.
    public var decryptedByCapturer: Bool
    /// The pseudo-header says for every data PDU whether it was encrypted (nRF Sniffer); otherwise only the
    /// LL encryption procedure tells.
    public var reportsEncryption: Bool
    public var phy: LEPHY
    public var rssi: Int?
    /// nRF Sniffer: the connection event counter.
    public var eventCounter: UInt16?
    /// PPI-BTLE (Ubertooth, crackle): the sniffer's own clock at the packet, in 100 ns ticks, wrapping at 2^32. Finer and
    /// steadier than the record times such writers give (crackle's run backwards), so event timing reads it instead.
    public var snifferClock100ns: UInt32?
    public var packet: LLPacketView

    /// Reads the pseudo-header and the link-layer packet.
    /// - Throws: ``DecodeError`` for a record too short for its pseudo-header or for the length its PDU header states,
    ///   ``DecodeError/unsupported(_:)`` for another link type.
    @inlinable
    public init(linkType: UInt32, bytes: UnsafeRawBufferPointer) throws(DecodeError) {
        var input = ByteReader(bytes)
        switch linkType {
        case LLAirPacket.linkTypeNordicBLE:
            let h = try NordicBLEHeader(parsing: &input)
            guard input.remaining >= 4 else { throw .truncated(needed: 4, available: input.remaining, offset: input.absoluteOffset) }
            let aa = LLAccessAddress(rawValue: input.remainingBytes.loadUnaligned(as: UInt32.self).littleEndian)
            isDataChannel = h.isDataChannel(accessAddress: aa)
            channel = h.channel
            crc = h.flags.crcOK ? .valid : .invalid
            phy = h.flags.phy
            rssi = h.rssi
            eventCounter = h.eventCounter
            if isDataChannel {
                direction = h.flags.centralToPeripheral ? .tx : .rx
                encrypted = h.flags.encrypted
                mic = h.flags.encrypted ? (h.flags.micOK ? .valid : .invalid) : .notChecked
                decryptedByCapturer = h.flags.encrypted && h.flags.micOK
                reportsEncryption = true
            } else {
                direction = .unknown
                encrypted = false
                mic = .notChecked
                decryptedByCapturer = false
                reportsEncryption = false
            }
            if crc == .invalid {
                // A bad CRC means the length byte may be garbage: read what is there without trusting it.
                packet = try LLAirPacket.lenientPacket(&input, isDataChannel: isDataChannel)
            } else {
                packet = try LLPacketView(parsing: &input, isDataChannel: isDataChannel)
            }
        case LLAirPacket.linkTypeLELLWithPHDR, LLAirPacket.linkTypeLELL:
            var flags = LERFFlags(rawValue: 0)
            if linkType == LLAirPacket.linkTypeLELLWithPHDR {
                let h = try LERFHeader(parsing: &input)
                flags = h.flags
                channel = h.channelIndex
                rssi = h.flags.contains(.signalPowerValid) ? Int(h.signalPower) : nil
            } else {
                channel = 0xFF
                rssi = nil
            }
            crc = flags.contains(.crcChecked) ? (flags.contains(.crcValid) ? .valid : .invalid) : .notChecked
            mic = flags.contains(.micChecked) ? (flags.contains(.micValid) ? .valid : .invalid) : .notChecked
            encrypted = flags.contains(.micChecked) || flags.contains(.decrypted)
            decryptedByCapturer = flags.contains(.decrypted) || mic == .valid
            reportsEncryption = false
            phy = flags.phy
            eventCounter = nil
            guard input.remaining >= 4 else { throw .truncated(needed: 4, available: input.remaining, offset: input.absoluteOffset) }
            let aa = LLAccessAddress(rawValue: input.remainingBytes.loadUnaligned(as: UInt32.self).littleEndian)
            isDataChannel = !aa.isAdvertising
            // Writers that set the PDU type say the direction (Ubertooth, WHAD, Sniffle); when they do not, the
            // link-layer tracker infers it from the packet's place in its connection event.
            direction = isDataChannel ? flags.direction : .unknown
            // LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR on LE Coded: a coding indicator byte after the access address.
            let coded = linkType == LLAirPacket.linkTypeLELLWithPHDR && flags.phy == .leCoded
            if crc == .invalid && !coded {
                packet = try LLAirPacket.lenientPacket(&input, isDataChannel: isDataChannel)
            } else if crc == .notChecked && !coded {
                // Unchecked, a header whose length runs past the record is a header damaged on the air (Ubertooth writes
                // packets with bit errors: 86 advertisements "of 165 bytes" in 46-byte records in one corpus capture): its
                // CRC is not where the length puts it, so the packet is one that failed its CRC, not a malformed one.
                var strict = input
                if let whole = try? LLPacketView(parsing: &strict, isDataChannel: isDataChannel) {
                    packet = whole
                    input = strict
                } else {
                    crc = .invalid
                    packet = try LLAirPacket.lenientPacket(&input, isDataChannel: isDataChannel)
                }
            } else {
                packet = try LLPacketView(parsing: &input, isDataChannel: isDataChannel, codingIndicator: coded)
            }
        case LLAirPacket.linkTypePPI:
            _ = try UInt8(parsing: &input)  // version
            _ = try UInt8(parsing: &input)  // flags
            let headerLength = Int(try UInt16(parsingLittleEndian: &input))
            let inner = try UInt32(parsingLittleEndian: &input)
            guard headerLength >= 8, headerLength <= bytes.count else {
                throw .invalidValue(field: "PPI header length", value: headerLength, offset: 2)
            }
            let innerType: UInt32 =
                switch inner {
                case 147, LLAirPacket.linkTypeLELL: LLAirPacket.linkTypeLELL
                case LLAirPacket.linkTypeLELLWithPHDR, LLAirPacket.linkTypeNordicBLE: inner
                default: throw .unsupported("PPI carrying DLT \(inner) is not a link-layer capture")
                }
            self = try LLAirPacket(linkType: innerType, bytes: UnsafeRawBufferPointer(rebasing: bytes[headerLength...]))
            packet.offset += headerLength
            readPPIFields(UnsafeRawBufferPointer(rebasing: bytes[8..<headerLength]))
        default:
            throw .unsupported("link type \(linkType) is not a link-layer capture")
        }
    }

    /// The PPI-BTLE field (type 30006, 12 bytes: version u8, frequency MHz u16, clock high u8, clock u32 in 100 ns, four
    /// RSSI bytes; Ubertooth's ppi.h) gives the channel and the sniffer's clock; other fields are skipped.
    @usableFromInline
    mutating func readPPIFields(_ fields: UnsafeRawBufferPointer) {
        var at = 0
        while at + 4 <= fields.count {
            let type = UInt16(fields[at]) | UInt16(fields[at + 1]) << 8
            let length = Int(UInt16(fields[at + 2]) | UInt16(fields[at + 3]) << 8)
            let body = at + 4
            guard body + length <= fields.count else { return }
            if type == 30006, length >= 8 {
                let frequency = Int(UInt16(fields[body + 1]) | UInt16(fields[body + 2]) << 8)
                if channel == 0xFF, let index = LLAirPacket.channelIndex(megahertz: frequency) { channel = index }
                snifferClock100ns = fields.loadUnaligned(fromByteOffset: body + 4, as: UInt32.self).littleEndian
            }
            at = body + length
        }
    }

    /// The channel index of an LE RF channel's centre frequency (2402 + 2k MHz; Vol 6, Part A, 2).
    @usableFromInline
    static func channelIndex(megahertz: Int) -> UInt8? {
        guard megahertz >= 2402, megahertz <= 2480, megahertz % 2 == 0 else { return nil }
        return LERFHeader.channelIndex(rfChannel: UInt8((megahertz - 2402) / 2))
    }

    /// For CRC-bad packets: the header's length cannot be trusted, so the payload is whatever lies between
    /// the header and the last 3 bytes.
    @usableFromInline
    static func lenientPacket(_ input: inout ByteReader, isDataChannel: Bool) throws(DecodeError) -> LLPacketView {
        var copy = input
        if let v = try? LLPacketView(parsing: &copy, isDataChannel: isDataChannel) { input = copy; return v }
        // Rebuild a view over what there is: AA, 2 header bytes, the rest minus a 3-byte CRC.
        guard input.remaining >= 9 else { throw .truncated(needed: 9, available: input.remaining, offset: input.absoluteOffset) }
        let all = input.remainingBytes
        let pduLen = all.count - 7
        var v = LLPacketView.unchecked(all: all, pduLength: pduLen, origin: input.absoluteOffset)
        v.crc = UInt32(all[all.count - 3]) | UInt32(all[all.count - 2]) << 8 | UInt32(all[all.count - 1]) << 16
        try input.skip(all.count)
        return v
    }
}

extension LLPacketView {
    @usableFromInline
    static func unchecked(all: UnsafeRawBufferPointer, pduLength: Int, origin: Int) -> LLPacketView {
        LLPacketView(
            accessAddress: LLAccessAddress(rawValue: all.loadUnaligned(as: UInt32.self).littleEndian),
            header0: all[4], header1: all[5], cteInfo: nil,
            pdu: UnsafeRawBufferPointer(rebasing: all[4..<(4 + pduLength)]),
            payload: UnsafeRawBufferPointer(rebasing: all[6..<(4 + pduLength)]), crc: 0, offset: origin)
    }

    @usableFromInline
    init(
        accessAddress: LLAccessAddress, header0: UInt8, header1: UInt8, cteInfo: UInt8?, pdu: UnsafeRawBufferPointer,
        payload: UnsafeRawBufferPointer, crc: UInt32, offset: Int
    ) {
        self.accessAddress = accessAddress
        self.header0 = header0
        self.header1 = header1
        self.cteInfo = cteInfo
        self.pdu = pdu
        self.payload = payload
        self.crc = crc
        self.offset = offset
    }
}
