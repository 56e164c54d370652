import BLECore
import BLEProtocols

/// The highest rate notifications (or write commands) can reach for given link parameters.
///
/// Per ATT PDU of MTU bytes the sender transmits `MTU + 4` (L2CAP header) octets, split into LL
/// fragments of at most the data length; each fragment costs its packet time, the inter-frame space
/// (T_IFS, 150 µs, Core Spec Vol 6, Part B, 4.1.1), the peer's empty packet and another T_IFS:
///
/// ```
/// ceiling = (MTU − 3) · 8 / Σ over fragments (T(n) + 150 + T(0) + 150)   [bits/µs]
/// T_1M(n) = (10 + n) · 8 µs        preamble 1 + AA 4 + header 2 + CRC 3 octets at 1 µs/bit
/// T_2M(n) = (11 + n) · 4 µs        preamble 2 octets at 2 Mb/s
/// T_S8(n) = 400 + 64 · (5 + n) µs  preamble 80 + AA 256 + CI 16 + TERM1 24 + (header 2 + n + CRC 3) · 64 + TERM2 24
/// T_S2(n) = 382 + 16 · (5 + n) µs  same FEC block 1 (376 µs), payload at 2 µs/bit, TERM2 6 µs
/// ```
/// (Core Spec Vol 6, Part B, 2.1 and 2.2.) Encrypted fragments carry a 4-octet MIC (not the empty packets).
public enum ThroughputCeiling {
    /// LE PHY with the coding of the Coded PHY.
    public enum PHY: String, Hashable, Sendable {
        case le1M = "1M", le2M = "2M", codedS2 = "Coded S2", codedS8 = "Coded S8"

        /// From the PHY a link uses (LE Coded: S8 assumed, the worst case; nil for none or an unknown PHY).
        public init?(_ phy: LEPHY) {
            switch phy {
            case .le1M: self = .le1M
            case .le2M: self = .le2M
            case .leCoded: self = .codedS8
            default: return nil
            }
        }
    }

    public static let interFrameSpace = 150.0

    /// Air time in µs of an LL data packet with `octets` payload octets (MIC included).
    public static func packetTime(octets n: Int, phy: PHY) -> Double {
        let n = Double(max(0, n))
        switch phy {
        case .le1M: return (10 + n) * 8
        case .le2M: return (11 + n) * 4
        case .codedS8: return 400 + 64 * (5 + n)
        case .codedS2: return 382 + 16 * (5 + n)
        }
    }

    /// LL fragment sizes for `octets` L2CAP octets with at most `dataLength` octets per fragment.
    public static func fragments(octets: Int, dataLength: Int) -> [Int] {
        let dl = max(27, min(251, dataLength))
        var left = max(0, octets)
        var out: [Int] = []
        while left > 0 {
            out.append(min(dl, left))
            left -= min(dl, left)
        }
        return out
    }

    /// Time in µs to send one ATT PDU of `mtu` octets (with its L2CAP header) and get each fragment acknowledged.
    public static func pduTime(mtu: Int, dataLength: Int, phy: PHY, peerPHY: PHY? = nil, encrypted: Bool = false) -> Double {
        let mic = encrypted ? 4 : 0
        let ack = packetTime(octets: 0, phy: peerPHY ?? phy)
        return fragments(octets: mtu + 4, dataLength: dataLength).reduce(0) { total, n in
            total + packetTime(octets: n + mic, phy: phy) + interFrameSpace + ack + interFrameSpace
        }
    }

    /// Application bits per second of back-to-back notifications of `mtu − 3` value bytes.
    ///
    /// 1M/27/23 → 236.7 kbps, 1M/251/247 → 791 kbps, 2M/251/247 → 1402 kbps. Nil for an MTU below 23.
    public static func notificationCeiling(
        mtu: Int, dataLength: Int, phy: PHY, peerPHY: PHY? = nil,
        encrypted: Bool = false
    ) -> Double? {
        guard mtu >= 23 else { return nil }
        let t = pduTime(mtu: mtu, dataLength: dataLength, phy: phy, peerPHY: peerPHY, encrypted: encrypted)
        return Double(mtu - 3) * 8 / t * 1_000_000
    }

    /// The cap a per-event packet limit puts on throughput: `packets · payload · 8 / CI`.
    ///
    /// iOS sends about 4–5 packets per connection event; with CI 15 ms and 244-byte values, 4 packets → 520 kbps.
    public static func perEventCap(packetsPerEvent: Int, payloadBytes: Int, intervalMicroseconds: Int) -> Double? {
        guard intervalMicroseconds > 0, packetsPerEvent > 0 else { return nil }
        return Double(packetsPerEvent * payloadBytes) * 8 * 1_000_000 / Double(intervalMicroseconds)
    }

    /// How many PDUs fit in one connection event (the whole interval, no other traffic).
    public static func packetsPerEvent(
        mtu: Int, dataLength: Int, phy: PHY, intervalMicroseconds: Int,
        encrypted: Bool = false
    ) -> Int {
        let t = pduTime(mtu: mtu, dataLength: dataLength, phy: phy, encrypted: encrypted)
        guard t > 0 else { return 0 }
        return Int(Double(intervalMicroseconds) / t)
    }

    /// The ceiling for values going `direction` on a link as seen (`.tx`: the capturing host sends).
    public static func ceiling(for link: LinkSnapshot, direction: Direction) -> Double? {
        let tx = direction != .rx
        guard let phy = PHY(link.phy[direction]) else { return nil }
        let dl = Int(tx ? link.dataLength.maxTxOctets : link.dataLength.maxRxOctets)
        return notificationCeiling(
            mtu: link.mtu, dataLength: dl, phy: phy, peerPHY: PHY(tx ? link.phy.rx : link.phy.tx),
            encrypted: link.encrypted)
    }
}
