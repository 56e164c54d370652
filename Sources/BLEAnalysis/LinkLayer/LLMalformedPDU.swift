import BLECore
import BLEProtocols

/// A data PDU of a connection whose shape no conforming Link Layer sends, its CRC good (Core Spec Vol 6, Part B, 2.4):
/// the evidence of the link-layer compliance rules that name the SweynTooth shapes (LL-04, LL-05).
package struct LLMalformedPDU: Hashable, Sendable {
    package enum Shape: Hashable, Sendable {
        /// LLID 0b00, reserved for future use (2.4): `length` octets of payload.
        case reservedLLID(length: Int)
        /// A CRC-good packet whose record holds `carried` octets of the `declared` its Length says: the sniffer kept
        /// fewer than it checked. Its Length is compared with the link's maximum (LL-05), which is what a receiver's buffer
        /// is sized by.
        case longerThanRecord(llid: UInt8, declared: Int, carried: Int)
        /// A CRC-good packet whose record holds its whole payload (`payload`, the Length's octets) but not all 3 CRC
        /// octets: the nRF Sniffer wrote it one octet short (the SweynTooth Cypress capture's 410 and 3960, the Telink
        /// one's 2169, all fuzzer PDUs). Its LLID and payload are read as a whole PDU's would be.
        case crcCut(llid: UInt8, payload: [UInt8])
    }
    package var handle: UInt16
    /// `.tx` central → peripheral, `.rx` peripheral → central.
    package var direction: Direction
    package var shape: Shape
    package var frame: Int
    package var timestamp: Timestamp
}

/// A data-channel packet whose CRC the capturer found good and whose header Length runs past the record (``LLAirPacket``
/// threw `truncated` for it): read again without trusting the Length, so its Length, the octets the record kept and its
/// direction are known. SweynTooth's Link Layer Length Overflow gives exactly this: a header saying 114 octets on a link
/// that never raised its 27-octet maximum, CRC good, the record holding 9 or 10 octets after the header (the NXP
/// capture, frames 14–282; tshark: "Malformed Packet"). The record's last 3 octets are then not the CRC: the sniffer
/// checked the CRC over the 114 octets on the air and kept only the start.
struct LLLengthOverflowPacket {
    var accessAddress: UInt32
    var header0: UInt8
    var declared: Int
    /// The payload octets the record holds after the header (its CRC octets, or what is left of them, included).
    var carried: Int
    /// When the record holds the whole payload and fewer than 3 CRC octets: the payload.
    var wholePayload: [UInt8]?
    var direction: Direction

    /// Nil unless the record is an nRF Sniffer or LT 256 data-channel packet on LE 1M or 2M whose capturer says the CRC
    /// passed and the direction, and whose Length is more than it carries.
    init?(linkType: UInt32, bytes: UnsafeRawBufferPointer) {
        var input = ByteReader(bytes)
        switch linkType {
        case LLAirPacket.linkTypeNordicBLE:
            guard let h = try? NordicBLEHeader(parsing: &input), h.flags.crcOK, h.flags.phy != .leCoded else { return nil }
            direction = h.flags.centralToPeripheral ? .tx : .rx
        case LLAirPacket.linkTypeLELLWithPHDR:
            guard let h = try? LERFHeader(parsing: &input), h.flags.contains(.crcChecked), h.flags.contains(.crcValid),
                h.flags.phy != .leCoded
            else { return nil }
            // A writer that leaves the direction unsaid leaves the sender unknown: not read as this shape.
            guard h.flags.direction != .unknown else { return nil }
            direction = h.flags.direction
        default:
            return nil
        }
        let all = input.remainingBytes
        guard all.count >= 6 else { return nil }
        accessAddress = all.loadUnaligned(as: UInt32.self).littleEndian
        guard !LLAccessAddress(rawValue: accessAddress).isAdvertising else { return nil }
        header0 = all[4]
        declared = Int(all[5])
        // A CTEInfo octet (CP set) sits between header and payload (the Telink fuzzer's 2184: Length 160, CP set).
        let start = 6 + (header0 & 0x20 != 0 ? 1 : 0)
        guard all.count >= start else { return nil }
        carried = all.count - start
        // Short of its Length, or holding the Length's octets with fewer than 3 CRC octets after them.
        wholePayload = declared <= carried ? Array(all[start..<(start + declared)]) : nil
        guard declared > carried || carried < declared + 3 else { return nil }
    }
}
