/// GATT attribute types blescope acts on, as 16-bit UUIDs (Core Spec Vol 3, Part G, 3.1–3.3 and 7.1; Assigned
/// Numbers 3.5–3.8): the declarations that make a database's layout, the descriptor that turns notifications on,
/// and the characteristic that says part of a database changed.
public enum GATTAttributeType {
    /// «Primary Service» declaration (3.1).
    public static let primaryService: UInt16 = 0x2800
    /// «Secondary Service» declaration (3.1).
    public static let secondaryService: UInt16 = 0x2801
    /// «Include» declaration (3.2).
    public static let include: UInt16 = 0x2802
    /// «Characteristic» declaration (3.3.1).
    public static let characteristic: UInt16 = 0x2803
    /// The four declarations.
    public static let declarations: ClosedRange<UInt16> = 0x2800...0x2803
    /// The name of one of the four declarations as the Assigned Numbers document (3.5, "GATT Declarations") and
    /// Wireshark give it; nil for any other UUID.
    public static func declarationName(_ uuid16: UInt16) -> String? {
        switch uuid16 {
        case primaryService: "Primary Service"
        case secondaryService: "Secondary Service"
        case include: "Include"
        case characteristic: "Characteristic"
        default: nil
        }
    }
    /// Client Characteristic Configuration descriptor (3.3.3.3).
    public static let clientCharacteristicConfiguration: UInt16 = 0x2902
    /// Service Changed characteristic (7.1).
    public static let serviceChanged: UInt16 = 0x2A05
}
