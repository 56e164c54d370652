/// How an LE pairing authenticates (Core Spec Vol 3, Part H, 2.3.5.1): chosen from the Pairing Request's and
/// Response's OOB data flags, MITM flags and IO capabilities, and whether both asked for LE Secure Connections.
public struct SMPAssociationModel: Hashable, Sendable, CustomStringConvertible {
    public enum Method: String, Hashable, Sendable {
        case justWorks = "Just Works"
        case passkeyEntry = "Passkey Entry"
        case numericComparison = "Numeric Comparison"
        case outOfBand = "OOB"
    }

    public var method: Method
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
