import BLECore

/// An LE PHY: the one type HCI events, link-layer control PDUs and sniffer pseudo-headers share.
///
/// The raw value is the HCI encoding, 1 = LE 1M, 2 = LE 2M, 3 = LE Coded (0 "none" where a report has no
/// secondary PHY), as in LE PHY Update Complete (Core Spec Vol 4, Part E, 7.7.65.12) and the extended
/// advertising report. The same PHYs travel in two other encodings, converted here by name:
/// - the link layer's PHY bit field (``init(llBits:)``, ``llBit``): bit 0 LE 1M, bit 1 LE 2M, bit 2 LE Coded, in
///   LL_PHY_REQ, LL_PHY_RSP and LL_PHY_UPDATE_IND (Core Spec Vol 6, Part B, 2.4.2.22), and in the HCI LE Set PHY masks;
/// - the sniffer pseudo-headers' 0-based PHY field (``init(sniffer:)``, ``snifferValue``): 0 LE 1M, 1 LE 2M,
///   2 LE Coded (nRF Sniffer flags bits 4–6, `LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR` flags bits 14–15).
/// An unknown value is kept and prints as `LEPHY(0x05)`.
public struct LEPHY: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let none = LEPHY(rawValue: 0)
    public static let le1M = LEPHY(rawValue: 1)
    public static let le2M = LEPHY(rawValue: 2)
    public static let leCoded = LEPHY(rawValue: 3)

    /// From the LL PHY bit field (Core Spec Vol 6, Part B, 2.4.2.22): the lowest bit set names the PHY (an
    /// LL_PHY_UPDATE_IND sets at most one); nil for 0, which there means "this direction does not change".
    @inlinable public init?(llBits: UInt8) {
        if llBits & 0x01 != 0 {
            self = .le1M
        } else if llBits & 0x02 != 0 {
            self = .le2M
        } else if llBits & 0x04 != 0 {
            self = .leCoded
        } else {
            return nil
        }
    }

    /// This PHY's bit in the LL PHY bit field (Core Spec Vol 6, Part B, 2.4.2.22); 0 for none or an unknown PHY.
    @inlinable public var llBit: UInt8 {
        switch self {
        case .le1M: 0x01
        case .le2M: 0x02
        case .leCoded: 0x04
        default: 0
        }
    }

    /// From a sniffer pseudo-header's 0-based PHY field (0 LE 1M, 1 LE 2M, 2 LE Coded; higher values are
    /// reserved and kept as unknown PHYs).
    @inlinable public init(sniffer value: UInt8) { rawValue = value &+ 1 }

    /// The 0-based value a sniffer pseudo-header carries for this PHY.
    @inlinable public var snifferValue: UInt8 { rawValue &- 1 }

    public var description: String {
        switch rawValue {
        case 0: "none"
        case 1: "1M"
        case 2: "2M"
        case 3: "Coded"
        default: "LEPHY(\(hex(rawValue)))"
        }
    }

    /// Air time in µs of a packet with `pduBytes` bytes of PDU (header + payload, with MIC) (Core Spec Vol 6,
    /// Part B, 2.1): preamble + access address + PDU + CRC at 1 or 2 Mbit/s. LE Coded is taken as S8 (the worst
    /// case); any other value as LE 1M.
    @inlinable public func airTime(pduBytes: Int) -> Int {
        switch self {
        case .le2M: (2 + 4 + pduBytes + 3) * 4
        case .leCoded: 80 + 256 + 16 + 24 + (pduBytes + 3) * 64 + 24
        default: (1 + 4 + pduBytes + 3) * 8
        }
    }
}

/// The PHY of each direction of a connection, as seen from the capturing side: `tx` what it sends on, `rx` what
/// it receives on (LE PHY Update Complete, Core Spec Vol 4, Part E, 7.7.65.12).
public struct PHYPair: Hashable, Sendable, CustomStringConvertible {
    public var tx: LEPHY
    public var rx: LEPHY
    public init(tx: LEPHY, rx: LEPHY) { self.tx = tx; self.rx = rx }
    /// Both directions on LE 1M: what a connection is taken to use until a PHY update is seen.
    public static let le1M = PHYPair(tx: .le1M, rx: .le1M)
    /// The PHY values going `direction` travel on (`.tx`, or anything but `.rx`, is the capturing side's send PHY).
    @inlinable public subscript(direction: Direction) -> LEPHY { direction == .rx ? rx : tx }
    public var description: String { tx == rx ? tx.description : "tx \(tx) / rx \(rx)" }
}
