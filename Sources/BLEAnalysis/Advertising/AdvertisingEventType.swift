import BLECore

/// What kind of advertising PDU a report came from, in the bit layout of the LE Extended Advertising
/// Report's Event_Type (Core Spec Vol 4, Part E, 7.7.65.13): bit 0 connectable, 1 scannable, 2 directed,
/// 3 scan response, 4 legacy. The data status bits (5–6) are not part of the value.
///
/// Legacy reports (7.7.65.2) map to the legacy combinations of the same table (ADV_IND = 0x13, …).
/// A legacy event type outside 0–4 is kept as `0x8000 | code` and prints as `legacy(0x07)`.
public struct AdvertisingEventType: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let advInd = AdvertisingEventType(rawValue: 0x13)
    public static let advDirectInd = AdvertisingEventType(rawValue: 0x15)
    public static let advScanInd = AdvertisingEventType(rawValue: 0x12)
    public static let advNonconnInd = AdvertisingEventType(rawValue: 0x10)
    /// A legacy scan response whose advertisement type the report does not tell (legacy HCI event type 4).
    public static let scanRsp = AdvertisingEventType(rawValue: 0x18)
    public static let scanRspToAdvInd = AdvertisingEventType(rawValue: 0x1B)
    public static let scanRspToAdvScanInd = AdvertisingEventType(rawValue: 0x1A)

    /// From LE Advertising Report's event type: 0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 SCAN_RSP.
    public init(legacyReportEventType code: UInt8) {
        switch code {
        case 0: self = .advInd
        case 1: self = .advDirectInd
        case 2: self = .advScanInd
        case 3: self = .advNonconnInd
        case 4: self = .scanRsp
        default: self.init(rawValue: 0x8000 | UInt16(code))
        }
    }

    /// From LE Extended Advertising Report's event type (data status bits dropped).
    public init(extendedReportEventType bits: UInt16) { self.init(rawValue: bits & 0x1F) }

    /// From a link-layer advertising PDU type on the primary channels (Core Spec Vol 6, Part B, 2.3):
    /// 0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_NONCONN_IND, 4 SCAN_RSP, 6 ADV_SCAN_IND; nil for others
    /// (SCAN_REQ, CONNECT_IND, ADV_EXT_IND: their type comes from the extended header's AdvMode).
    public init?(linkLayerPDUType type: UInt8) {
        switch type & 0x0F {
        case 0: self = .advInd
        case 1: self = .advDirectInd
        case 2: self = .advNonconnInd
        case 4: self = .scanRsp
        case 6: self = .advScanInd
        default: return nil
        }
    }

    /// For an extended (non-legacy) advertisement from its AdvMode (0 non-connectable non-scannable,
    /// 1 connectable, 2 scannable), the directed and scan-response flags.
    public init(extendedAdvMode mode: UInt8, directed: Bool = false, scanResponse: Bool = false) {
        var v: UInt16 = 0
        if mode & 0x01 != 0 { v |= 0x01 }
        if mode & 0x02 != 0 { v |= 0x02 }
        if directed { v |= 0x04 }
        if scanResponse { v |= 0x08 }
        self.init(rawValue: v)
    }

    public var isConnectable: Bool { rawValue & 0x8001 == 0x01 }
    public var isScannable: Bool { rawValue & 0x8002 == 0x02 }
    public var isDirected: Bool { rawValue & 0x8004 == 0x04 }
    public var isScanResponse: Bool { rawValue & 0x8008 == 0x08 }
    public var isLegacy: Bool { rawValue & 0x10 != 0 || rawValue & 0x8000 != 0 }

    /// `ADV_IND`, `SCAN_RSP`, `ADV_EXT(connectable)`, `ADV_EXT(non-connectable)`, `legacy(0x07)`.
    public var description: String {
        if rawValue & 0x8000 != 0 { return "legacy(\(hex(UInt8(truncatingIfNeeded: rawValue))))" }
        if isLegacy {
            switch rawValue {
            case 0x13: return "ADV_IND"
            case 0x15, 0x14: return "ADV_DIRECT_IND"
            case 0x12: return "ADV_SCAN_IND"
            case 0x10: return "ADV_NONCONN_IND"
            case 0x18, 0x1A, 0x1B: return "SCAN_RSP"
            default: return "legacy(\(hex(UInt8(truncatingIfNeeded: rawValue))))"
            }
        }
        var parts: [String] = []
        if isConnectable { parts.append("connectable") }
        if isScannable { parts.append("scannable") }
        if isDirected { parts.append("directed") }
        if isScanResponse { parts.append("scan response") }
        return "ADV_EXT(" + (parts.isEmpty ? "non-connectable" : parts.joined(separator: ", ")) + ")"
    }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}
