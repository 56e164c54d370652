import BLECapture
import BLECore
import BLEProtocols

/// The LMP records an iPhone's Broadcom controller writes into PacketLogger (record types 0x0A sent, 0x0B received).
/// Apple documents no layout and tshark shows them as "Sent/Recv LMP Data"; this one was read from the iOS 12.2
/// audiostream log (BCM43452) and is taken only where it proves itself:
///
/// ```
/// sent:     | 5 bytes | peer BD_ADDR, low 4 bytes, MSB first | payload header: LENGTH << 3 | FLOW << 2 | LLID 3 | LMP PDU |
/// received: | 0x01 | 8 bytes (peer BD_ADDR low 4 at 4–7) | 4 bytes | LMP PDU (its length from the opcode) … stale bytes |
/// ```
///
/// A sent record proves the layout when its payload header is an LMP one (LLID 3, Core Spec Vol 2, Part B, 6.6.2) and
/// its LENGTH is the length of the PDU its opcode names (Vol 2, Part C, Tables 5.1–5.2). Received records, which state
/// no length, are read only once a sent record proved it and none failed (the first answer follows the first request); a file whose records do not fit (other
/// chips log other layouts: an iPhone 18's, a Mac's 2-byte records) stays undecoded, its records counted as before.
struct PacketLoggerLMP {
    private(set) var proven = 0
    private(set) var failed = 0
    /// The key size each peer's last LMP_encryption_key_size_req proposed (by the peer's low 32 address bits).
    var proposedKeySizes: [UInt32: Int] = [:]
    /// Whether the file's received records are read.
    var trusted: Bool { proven >= 1 && failed == 0 }

    /// The peer's address's low 32 bits and the PDU, when the record is one this layout reads.
    mutating func read(_ record: CaptureRecord) -> (peerLow32: UInt32, pdu: LMPPDU)? {
        guard record.kind == .other, record.rawType == 0x0A || record.rawType == 0x0B else { return nil }
        let bytes = Array(record.bytes)
        if record.rawType == 0x0A {
            guard bytes.count >= 11, bytes[9] & 0x03 == 0x03,
                let pdu = LMPPDU(bytes[10...], length: Int(bytes[9] >> 3))
            else {
                failed += 1
                return nil
            }
            proven += 1
            return (Self.low32(bytes, at: 5), pdu)
        }
        guard trusted, bytes.count >= 14, bytes[0] == 0x01, let pdu = LMPPDU(bytes[13...]) else { return nil }
        return (Self.low32(bytes, at: 5), pdu)
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
