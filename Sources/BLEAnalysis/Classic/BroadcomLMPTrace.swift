import BLECapture
import BLECore
import BLEProtocols

/// The LMP trace records a Broadcom controller writes beside its HCI: into an iPhone's PacketLogger log (record types
/// 0x0A sent, 0x0B received), or as H4 packet type 0x07 in a btsnoop or pcap H4 log (the BLUFFS Pixel Buds captures).
/// No vendor documents the layout and tshark shows the bytes undecoded; it was read from the iOS 12.2 audiostream log
/// (BCM43452) and is the same in the BLUFFS captures. It is taken only where it proves itself:
///
/// ```
/// sent:     | 0x00 | 4 bytes | peer BD_ADDR, low 4 bytes, MSB first | payload header: LENGTH << 3 | FLOW << 2 | LLID 3 | LMP PDU |
/// received: | 0x01 | 3 bytes | 0x8F | peer BD_ADDR low 4 | 4 bytes | LMP PDU (its length from the opcode) … stale bytes |
/// ```
///
/// A sent record proves the layout when its payload header is an LMP one (LLID 3, Core Spec Vol 2, Part B, 6.6.2) and
/// its LENGTH is the length of the PDU its opcode names (Vol 2, Part C, Tables 5.1–5.2). Received records, which state
/// no length, are read only once a sent record proved it and none failed (the first answer follows the first
/// request). Records that start otherwise are another trace (the BLUFFS captures' `f0 01`, an iPhone 18's or a Mac's
/// 0x0A records): neither read nor held against the layout.
struct BroadcomLMPTrace {
    private(set) var proven = 0
    private(set) var failed = 0
    /// The key size each peer's last LMP_encryption_key_size_req proposed (by the peer's low 32 address bits), and
    /// whether this side's link manager proposed it.
    var proposedKeySizes: [UInt32: (size: Int, byThisSide: Bool)] = [:]
    /// Whether the file's received records are read.
    var trusted: Bool { proven >= 1 && failed == 0 }

    /// The peer's address's low 32 bits, the PDU and whether this side sent it, when the record is a trace record
    /// this layout reads.
    mutating func read(_ record: CaptureRecord) -> (peerLow32: UInt32, pdu: LMPPDU, sent: Bool)? {
        guard record.kind == .other, let payload = Self.payload(record), let first = payload.first else { return nil }
        if first == 0x00 {
            guard payload.count >= 11, payload[9] & 0x03 == 0x03, let pdu = LMPPDU(payload[10...], length: Int(payload[9] >> 3))
            else {
                failed += 1
                return nil
            }
            proven += 1
            return (Self.low32(payload, at: 5), pdu, true)
        }
        guard first == 0x01, trusted, payload.count >= 14, let pdu = LMPPDU(payload[13...]) else { return nil }
        return (Self.low32(payload, at: 5), pdu, false)
    }

    /// The trace's bytes: a PacketLogger LMP record whole (its type byte is the raw type, not in `bytes`; an HCI dump
    /// record whose raw type is also its first byte starts with that type, which no trace record does); an H4 record
    /// of packet type 0x07 after that byte (btsnoop's H4 datalink, whose raw type is its flags, or LINKTYPE 187/201).
    static func payload(_ record: CaptureRecord) -> [UInt8]? {
        let bytes = record.bytes
        if record.rawType == 0x0A || record.rawType == 0x0B, record.linkType == 0 {
            return Array(bytes)
        }
        let h4 = record.linkType == PcapLinkType.h4 || record.linkType == PcapLinkType.h4WithPHDR || record.linkType == 0
        guard h4, record.rawType <= 3 || record.linkType != 0, bytes.first == 0x07 else { return nil }
        return Array(bytes.dropFirst())
    }

    /// Whether `address` (`B8:27:EB:C6:DB:91`) ends with the record's low 32 bits.
    static func matches(_ address: String, _ low32: UInt32) -> Bool {
        let tail = hexString((0..<4).map { UInt8(truncatingIfNeeded: low32 >> (8 * (3 - $0))) }, separator: ":")
        return address.uppercased().hasSuffix(tail.uppercased())
    }

    static func low32(_ b: [UInt8], at i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }
}
