import BLEProtocols
import BLESecurity

/// The TKs an LE legacy pairing can have, from the association model its Pairing Request and Response choose
/// (Core Spec Vol 3, Part H, 2.3.5.1, Tables 2.6 and 2.8): both sides compute the model from the same two PDUs, so a
/// real pairing's TK lies in it, and a search tries no more. A fuzzed or damaged capture whose PDUs say Just Works
/// costs one candidate, not a million (1.3 s in the release).
enum LegacyTKSpace: Hashable, Sendable {
    /// TK 0 (2.3.5.2).
    case justWorks
    /// The passkeys 000000–999999 (2.3.5.3), or the model is not known (a PDU missing, a reserved IO capability).
    case passkeys
    /// 128 bits from outside the link (2.3.5.4): no search can find it.
    case outOfBand

    init(request: [UInt8]?, response: [UInt8]?) {
        guard let initiator = request.flatMap(Self.parameters), let responder = response.flatMap(Self.parameters),
            let model = SMPAssociationModel(initiator: initiator, responder: responder)
        else {
            self = .passkeys
            return
        }
        switch model.method {
        case .justWorks: self = .justWorks
        case .outOfBand: self = .outOfBand
        case .passkeyEntry, .numericComparison: self = .passkeys
        }
    }

    /// How many candidates of ``LegacyPairingCracker``'s order (TK 0 first) the space holds.
    var candidates: Int {
        switch self {
        case .justWorks: 1
        case .passkeys: LegacyPairingCracker.candidateCount
        case .outOfBand: 0
        }
    }

    /// A Pairing Request or Response as carried (opcode first, 7 octets).
    private static func parameters(_ pdu: [UInt8]) -> SMPPairingParameters? {
        guard pdu.count == 7 else { return nil }
        return SMPPairingParameters(
            ioCapability: SMPIOCapability(rawValue: pdu[1]), oobDataFlag: pdu[2], authReq: SMPAuthReq(rawValue: pdu[3]),
            maxEncryptionKeySize: pdu[4], initiatorKeyDistribution: SMPKeyDistribution(rawValue: pdu[5]),
            responderKeyDistribution: SMPKeyDistribution(rawValue: pdu[6]))
    }
}

/// What c1 said about the TKs of a legacy pairing whose addresses are known (``LinkKeyStore``'s derive).
enum LegacyC1Outcome: Hashable, Sendable {
    case found
    /// No TK of the space gives the Pairing Confirm values (none tried for an out-of-band pairing).
    case noMatch(LegacyTKSpace)
    /// The capture's c1 budget ran out after `tried` TKs.
    case budgetSpent(tried: Int)
}
