/// How an LE pairing authenticates (Core Spec Vol 3, Part H, 2.3.5.1): chosen from the Pairing Request's and
/// Response's OOB data flags, MITM flags and IO capabilities, and whether both asked for LE Secure Connections.
public struct SMPAssociationModel: Hashable, Sendable, CustomStringConvertible {
    public enum Method: String, Hashable, Sendable {
        case justWorks = "Just Works"
        case passkeyEntry = "Passkey Entry"
        case numericComparison = "Numeric Comparison"
        case outOfBand = "OOB"
    }

    /// Passkey Entry: which side shows the passkey the other types (Table 2.8); nil for the other methods.
    public enum PasskeyDisplay: Hashable, Sendable {
        case initiator, responder
        /// Both sides have only a keyboard: the user types the same passkey on both.
        case neither
    }

    public var method: Method
    public var passkeyDisplay: PasskeyDisplay?
    /// LE Secure Connections: both sides set the SC bit of AuthReq (2.3.5.1); else LE legacy pairing.
    public var secureConnections: Bool
    /// Both sides asked for bonding (AuthReq bonding flags 01 in both, 3.5.1): the keys are stored.
    public var bonding: Bool

    public init(method: Method, secureConnections: Bool, bonding: Bool) {
        self.method = method
        self.secureConnections = secureConnections
        self.bonding = bonding
    }

    /// The model of a pairing from its Pairing Request (`initiator`) and Pairing Response (`responder`); nil when an IO
    /// capability is a reserved value and MITM decides (the tables have no row for it).
    public init?(initiator: SMPPairingParameters, responder: SMPPairingParameters) {
        let sc = initiator.authReq.contains(.secureConnections) && responder.authReq.contains(.secureConnections)
        let oobI = initiator.oobDataFlag == 1, oobR = responder.oobDataFlag == 1
        let mitm = initiator.authReq.contains(.mitm) || responder.authReq.contains(.mitm)
        let method: Method
        // Table 2.6 (legacy): OOB when both have OOB data; Table 2.7 (Secure Connections): when either has.
        if sc ? (oobI || oobR) : (oobI && oobR) {
            method = .outOfBand
        } else if !mitm {
            method = .justWorks
        } else if let m = Self.ioMethod(initiator.ioCapability, responder.ioCapability, secureConnections: sc) {
            method = m
        } else {
            return nil
        }
        self.init(
            method: method, secureConnections: sc,
            bonding: initiator.authReq.bondingFlags == 1 && responder.authReq.bondingFlags == 1)
        if method == .passkeyEntry { passkeyDisplay = Self.passkeyDisplay(initiator.ioCapability, responder.ioCapability) }
    }

    /// Table 2.8's Passkey Entry cells: a KeyboardOnly side types; facing KeyboardDisplay, the side with a display and
    /// no keyboard shows; two KeyboardDisplay sides: the initiator shows, the responder types.
    static func passkeyDisplay(_ i: SMPIOCapability, _ r: SMPIOCapability) -> PasskeyDisplay {
        if i == .keyboardOnly && r == .keyboardOnly { return .neither }
        if i == .keyboardOnly { return .responder }
        if r == .keyboardOnly { return .initiator }
        if i == .keyboardDisplay && r == .keyboardDisplay { return .initiator }
        return i == .keyboardDisplay ? .responder : .initiator
    }

    /// Table 2.8: the method from the two IO capabilities (symmetric in initiator and responder); nil for reserved ones.
    static func ioMethod(_ i: SMPIOCapability, _ r: SMPIOCapability, secureConnections sc: Bool) -> Method? {
        guard i.rawValue <= 4, r.rawValue <= 4 else { return nil }
        if i == .noInputNoOutput || r == .noInputNoOutput { return .justWorks }
        let yesNo: Set<SMPIOCapability> = [.displayYesNo, .keyboardDisplay]
        // DisplayYesNo or KeyboardDisplay on both sides: both can show a number and confirm it.
        if yesNo.contains(i) && yesNo.contains(r) {
            return sc ? .numericComparison : (i == .displayYesNo && r == .displayYesNo ? .justWorks : .passkeyEntry)
        }
        // A keyboard on either side (KeyboardOnly, or KeyboardDisplay facing a display-only side): Passkey Entry.
        let keyboard: Set<SMPIOCapability> = [.keyboardOnly, .keyboardDisplay]
        return keyboard.contains(i) || keyboard.contains(r) ? .passkeyEntry : .justWorks
    }

    /// `LE Secure Connections, Numeric Comparison, bonding`.
    public var description: String {
        "\(secureConnections ? "LE Secure Connections" : "LE legacy"), \(method.rawValue), \(bonding ? "bonding" : "no bonding")"
    }
}
