import BLECore
import BLEProtocols

/// How one link was secured, as its ``LinkMachine`` learned it: each pairing (LE legacy or Secure Connections, BR/EDR
/// Secure Simple Pairing or legacy PIN) with its association model and keys, and each encryption session with the key
/// it used, its algorithm and the key size in force. Every fact says where it came from (``FactSource``): a frame
/// stated it, it was worked out (the key size from the pairing's Maximum Encryption Key Size), or nil: not in the log.
///
/// Written only by the link's ``SecurityTracker`` (fed SMP PDUs and ``SecurityInput``s); read by the security rules
/// (`Diagnosis/Rules/Security/`), the story's "Security:" line, the report, JSON, `check`, `diff` and the fleet table.
public struct LinkSecurity: Hashable, Sendable {
    /// Every pairing on the link, in order (bounded: past 64 the last is replaced).
    public internal(set) var pairings: [SecurityPairing] = []
    /// Every encryption session (a start of encryption, answered or not), in order (bounded as ``pairings``).
    public internal(set) var sessions: [EncryptionSession] = []
    /// BR/EDR: the host's answers to Link Key Request (7.7.23): a stored key given (true) or none (false), by frame.
    public internal(set) var storedKeyAnswers: [StoredKeyAnswer] = []
    /// An earlier pairing with the same peer in this capture whose keys were kept (a bond), handed to the link when it
    /// opened: the key size a session with a stored key runs with, when nothing on this link states it.
    public internal(set) var bond: Bond?
    /// The keys the host handed its controller or the controller made for this link (LTKs of LE Enable Encryption and
    /// LE Long Term Key Request Reply; BR/EDR link keys of Link Key Request Reply and Link Key Notification), by a
    /// fingerprint (never the key), to tell the same key used with different peers (bounded: 16 kept).
    public internal(set) var keysUsed: [KeyUse] = []
    /// LE: the address each side used on the link and its kind (Core Spec Vol 6, Part B, 1.3), with the record that shows
    /// it; a side missing: not in the log. On air captures `local` is the central.
    public internal(set) var addresses: [EvidenceEvent.Sender: SeenAddress] = [:]
    /// BR/EDR: this side's security settings when the link opened (Secure Connections host support, Simple Pairing
    /// mode, Authentication Enable); a setting missing: not in the log.
    public internal(set) var hostSettings: [HostSecuritySetting.Kind: HostSecuritySetting] = [:]
    /// BR/EDR: this side's Secure Connections host support when the link opened; nil: not in the log.
    public var secureConnectionsHost: HostSecuritySetting? { hostSettings[.secureConnectionsHost] }
    /// BR/EDR: who started the link's first authentication: this host (its Authentication Requested or Set Connection
    /// Encryption), or the peer (a Link Key Request, IO Capability Request or Response or PIN Code Request no command of
    /// this host's asked for); nil: none in the log.
    public internal(set) var authenticationStart: AuthenticationStart?
    /// Notifications and indications sent while a pairing ran in the clear (a Pairing Request seen, the link not yet
    /// encrypted): their count and the first frames (up to 3). What they carried was readable to anyone on the air.
    public internal(set) var valuesInClearWhilePairing = ValuesInClear()

    public struct ValuesInClear: Hashable, Sendable {
        public var count = 0
        public var frames: [Int] = []
        mutating func note(_ frame: Int) {
            count += 1
            if frames.count < 3 { frames.append(frame) }
        }
    }

    public struct AuthenticationStart: Hashable, Sendable {
        public var byThisSide: Bool
        public var frame: Int
        /// The command or event that shows it.
        public var shownBy: String
    }
    /// BR/EDR: the first encryption that came on with no Set Connection Encryption of this host's (the peer's, or
    /// its authentication's), other than one the link came up with.
    public func encryptedUnasked(linkStart: Int) -> EncryptionSession? {
        sessions.first { $0.onFrame != nil }.flatMap { $0.startFrame == nil && $0.onFrame != linkStart ? $0 : nil }
    }

    /// A key seen on the link, by fingerprint.
    public struct KeyUse: Hashable, Sendable {
        public var frame: Int
        /// `LTK` or `link key`.
        public var kind: String
        /// FNV-1a of the key's bytes: equal keys, equal fingerprints; the key itself is not kept.
        public var fingerprint: UInt64

        public init(frame: Int, kind: String, key: [UInt8]) {
            self.frame = frame
            self.kind = kind
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for b in key {
                h ^= UInt64(b)
                h = h &* 0x0000_0100_0000_01B3
            }
            fingerprint = h
        }
    }

    /// The host's answer to a BR/EDR Link Key Request at a frame.
    public struct StoredKeyAnswer: Hashable, Sendable {
        public var frame: Int
        public var found: Bool
    }

    /// The pairing of an earlier link with the same peer whose keys this link may use.
    public struct Bond: Hashable, Sendable {
        /// The earlier link's number and the frame its pairing started at.
        public var connection: Int
        public var pairing: SecurityPairing
    }

    public init() {}

    /// The latest pairing, if any.
    public var lastPairing: SecurityPairing? { pairings.last }
    /// The session whose encryption is in force at the end (or the last one that started).
    public var lastSession: EncryptionSession? { sessions.last }
    /// Whether encryption was on at some point.
    public var everEncrypted: Bool { sessions.contains { $0.onFrame != nil } }
    /// The smallest key size any session ran with, and the session.
    public var smallestKeySize: (size: Int, session: EncryptionSession)? {
        sessions.compactMap { s in s.keySize.map { ($0, s) } }.min { $0.0 < $1.0 }
    }
}

/// Who shows a Passkey Entry pairing's passkey and who types it.
public enum PasskeyRoles: Hashable, Sendable {
    case shownBy(EvidenceEvent.Sender)
    case bothType
}

/// Which pairing procedure ran (Core Spec Vol 3, Part H, 2.3 for LE; Vol 3, Part C, 5.2.2 and Vol 2, Part H, 7 for BR/EDR).
public enum PairingProcedure: String, Hashable, Sendable {
    case leLegacy = "LE legacy"
    case leSecureConnections = "LE Secure Connections"
    case secureSimplePairing = "Secure Simple Pairing"
    case legacyPIN = "legacy PIN"
    /// SMP on the BR/EDR Security Manager channel (L2CAP CID 0x0007) after a BR/EDR Secure Connections pairing: the LE
    /// keys are derived from the BR/EDR link key (Vol 3, Part H, 2.3.5.7, with h6 or h7). No TK, no STK, no association model
    /// (the IO capability, OOB and MITM fields are not used over BR/EDR, 3.5.1–3.5.2): nothing LE legacy to crack.
    case crossTransport = "cross-transport key derivation"

    public var isLE: Bool { self == .leLegacy || self == .leSecureConnections }
}

/// How a pairing authenticated the two devices: its association model (Vol 3, Part H, 2.3.5.1; Vol 3, Part C, 5.2.2.6),
/// or a PIN for BR/EDR legacy pairing.
public enum AssociationModel: String, Hashable, Sendable {
    case justWorks = "Just Works"
    case numericComparison = "Numeric Comparison"
    case passkeyEntry = "Passkey Entry"
    case outOfBand = "OOB"
    case pin = "PIN"

    /// Whether the model protects against a man in the middle (Just Works does not; a PIN only as far as it is long).
    public var authenticates: Bool { self != .justWorks && self != .pin }

    init(_ m: SMPAssociationModel.Method) {
        switch m {
        case .justWorks: self = .justWorks
        case .numericComparison: self = .numericComparison
        case .passkeyEntry: self = .passkeyEntry
        case .outOfBand: self = .outOfBand
        }
    }
}

/// BR/EDR link key types (Core Spec Vol 4, Part E, 7.7.24), an open code point.
public struct LinkKeyType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let combination = LinkKeyType(rawValue: 0x00)
    public static let debugCombination = LinkKeyType(rawValue: 0x03)
    public static let unauthenticatedP192 = LinkKeyType(rawValue: 0x04)
    public static let authenticatedP192 = LinkKeyType(rawValue: 0x05)
    public static let changedCombination = LinkKeyType(rawValue: 0x06)
    public static let unauthenticatedP256 = LinkKeyType(rawValue: 0x07)
    public static let authenticatedP256 = LinkKeyType(rawValue: 0x08)

    static let names: [UInt8: String] = [
        0x00: "combination key", 0x01: "local unit key", 0x02: "remote unit key", 0x03: "debug combination key",
        0x04: "unauthenticated combination key (P-192)", 0x05: "authenticated combination key (P-192)",
        0x06: "changed combination key", 0x07: "unauthenticated combination key (P-256)",
        0x08: "authenticated combination key (P-256)",
    ]

    public var description: String { Self.names[rawValue] ?? "LinkKeyType(\(hex(rawValue)))" }
    /// Authenticated (MITM-protected) per its type; nil for the legacy and debug keys, whose type does not say.
    public var authenticated: Bool? {
        switch rawValue {
        case 0x05, 0x08: true
        case 0x04, 0x07: false
        default: nil
        }
    }
    /// `P-192`, `P-256`, or nil (legacy keys).
    public var curve: String? {
        switch rawValue {
        case 0x04, 0x05: "P-192"
        case 0x03, 0x07, 0x08: "P-256"
        default: nil
        }
    }
}

/// One pairing on a link.
public struct SecurityPairing: Hashable, Sendable {
    public typealias Sender = EvidenceEvent.Sender
    /// How it ended.
    public enum Outcome: Hashable, Sendable {
        /// Still going when the link or the capture ended (or the log shows no end).
        case unfinished
        /// Keys generated: LE key distribution or encryption with the new key; BR/EDR Link Key Notification.
        case completed(frame: Int)
        /// Refused by `sender` (Pairing Failed, or a BR/EDR Simple Pairing / Authentication Complete error).
        case failed(frame: Int, by: Sender?, reason: String)
    }

    public var procedure: PairingProcedure?
    /// The frame it started at (Pairing Request, IO Capability Request, PIN Code Request, or the first PDU seen).
    public var frame: Int
    /// LE: the Pairing Response's frame, which settles the model and the key size.
    public var responseFrame: Int?
    /// Who started it (the Pairing Request's sender; BR/EDR: unknown from the events alone, nil).
    public var initiator: Sender?
    /// The association model with where it came from (LE: the feature exchange, observed at the Pairing Response;
    /// BR/EDR: the IO capabilities, or the user step the controller asked for), nil while neither shows.
    public var model: AssociationModel?
    public var modelSource: FactSource?
    /// A side asked for MITM protection (AuthReq MITM, Vol 3, Part H, 3.5.1; BR/EDR Authentication_Requirements odd).
    public var mitmRequested = false
    /// The sides that asked for it: one side's flag is enough to make the IO capabilities choose the model.
    public var mitmAskedBy: Set<Sender> = []
    /// Passkey Entry: the side that shows the passkey the other types (LE Vol 3, Part H, Table 2.8; BR/EDR the side
    /// that is not KeyboardOnly, Vol 3, Part C, 5.2.2.6); `.bothType` when both have only a keyboard; nil otherwise.
    public var passkey: PasskeyRoles?
    /// Both sides asked for bonding: the keys are kept.
    public var bonding = false
    /// LE: what the Pairing Request asked for and the Pairing Response did not give (Vol 3, Part H, 3.5.1-3.5.2):
    /// bonding (the responder's No Bonding: no keys are stored) and Secure Connections (the pairing ran legacy).
    public var bondingDeclined = false
    public var secureConnectionsDeclined = false
    /// LE: the sides whose AuthReq set the Secure Connections flag (Vol 3, Part H, 3.5.1): both, or the pairing is legacy.
    public var secureConnectionsAskedBy: Set<Sender> = []
    /// LE: the smaller Maximum Encryption Key Size of the two sides (Vol 3, Part H, 3.5.1, 2.3.4), at the response.
    public var keySize: Int?
    /// LE: each side's Maximum Encryption Key Size as offered (initiator, responder).
    public var offeredKeySizes: [Int] = []
    /// IO capabilities (initiator's or this side's first), as the spec names them.
    public var ioCapabilities: [String] = []
    /// The frame a side sent the spec's debug P-256 public key (Vol 3, Part H, 2.3.5.6.1), or a BR/EDR debug
    /// combination key was made.
    public var debugKeyFrame: Int?
    /// LE: a Pairing Public Key that is not a point on P-256, and one sent in a pairing the feature exchange made legacy.
    public var invalidPublicKeyFrame: Int?
    public var misplacedPublicKeyFrame: Int?
    /// LE Secure Connections: the DHKey Check each side sent (Vol 3, Part H, 2.3.5.6.5), by frame.
    public var dhKeyChecks: [Sender: Int] = [:]
    /// LE: the keys each side distributed (complete ones).
    public var distributed: [Sender: SMPKeyDistribution] = [:]
    /// LE: the identity each side distributed (Identity Information, Vol 3, Part H, 3.6.4, and Identity Address
    /// Information, 3.6.5): whether its IRK is all zeros, and the identity address.
    public var identities: [Sender: DistributedIdentity] = [:]
    /// BR/EDR: the new link key's type (Link Key Notification).
    public var linkKeyType: LinkKeyType?
    /// BR/EDR: how this side's user answered the user step, and how long it took (nil: no answer in the log).
    public var userAnswer: UserAnswer?

    /// This side's user's answer to a User Confirmation Request or User Passkey Request (Core Spec Vol 4, Part E,
    /// 7.1.30–33, 7.7.42–43): accepted (Reply) or rejected (Negative Reply), the request's and the answer's frames,
    /// and the time between them: how long the user took to confirm or type.
    public struct UserAnswer: Hashable, Sendable {
        public var accepted: Bool
        public var requestFrame: Int
        public var frame: Int
        public var microseconds: Int64
        /// `confirmed`, `rejected`, `typed the passkey`, `gave no passkey`.
        public var verb: String
        /// Answered under a second after the request: no person reads six digits and presses a key (or types a
        /// passkey) that fast, so the host answered (inferred from the time alone: a car kit's auto-confirm took
        /// 0.4 and 6.6 ms, BTstack's 83 µs; the users in the corpus took 1.6–23.2 s).
        public var answeredByHost: Bool { microseconds < 1_000_000 }

        public init(accepted: Bool, requestFrame: Int, frame: Int, microseconds: Int64, verb: String) {
            self.accepted = accepted
            self.requestFrame = requestFrame
            self.frame = frame
            self.microseconds = microseconds
            self.verb = verb
        }
    }
    public var outcome = Outcome.unfinished
    /// LE, inferred: the responder refused the Pairing Request, which did not set the SC flag, at once with
    /// Authentication Requirements or Encryption Key Size: it requires Secure Connections (SC Only mode, Vol 3, Part H,
    /// 2.3.5.1). The request is ``frame``, the refusal ``outcome``'s.
    public var requiresSecureConnections = false

    public init(frame: Int) { self.frame = frame }

    /// Authenticated (MITM protection achieved): from the link key type where BR/EDR says it, else the model.
    public var authenticated: Bool? {
        if let a = linkKeyType?.authenticated { return a }
        return model.map(\.authenticates)
    }

    /// The key exchange's curve: LE Secure Connections P-256, LE legacy none, BR/EDR from the link key type.
    public var curve: String? {
        if procedure == .leSecureConnections { return "P-256" }
        return linkKeyType?.curve
    }

    /// Whether it completed.
    public var completed: Bool { if case .completed = outcome { true } else { false } }
}

/// The identity a side distributed in an LE pairing (the IRK itself is not kept).
public struct DistributedIdentity: Hashable, Sendable {
    /// The Identity Information PDU.
    public var frame: Int
    /// An IRK of all zeros: no key to resolve private addresses with. A resolving list entry with a zero peer IRK makes
    /// the controller expect the peer's identity address (Core Spec Vol 6, Part B, 4.7): the device does not use
    /// privacy with this peer (Zephyr sends one when built without privacy).
    public var irkIsZero: Bool
    /// The Identity Address Information's address, `AA:BB:…` with `(random)` for a static random one.
    public var address: String?
}

/// One start of encryption on a link and what it ran with until it stopped.
public struct EncryptionSession: Hashable, Sendable {
    /// The key the start named: a key of this link's pairing (STK or a Secure Connections LTK, EDIV and Rand zero
    /// during pairing), or a stored key (a bond).
    public enum KeyOrigin: Hashable, Sendable {
        /// The pairing on this link that started at `frame`.
        case pairing(frame: Int)
        /// A key stored by an earlier pairing (EDIV/Rand, BR/EDR Link Key Request Reply, or no pairing on this link).
        case stored
    }

    /// The start: LL_ENC_REQ, LE Enable Encryption, LE Long Term Key Request, Set Connection Encryption, or (nil) not
    /// seen, the session known only from its Encryption Change.
    public var startFrame: Int?
    /// LE: the EDIV and Rand the start named (Vol 6, Part B, 2.4.2.4; Vol 4, Part E, 7.7.65.5, 7.8.24).
    public var ediv: UInt16?
    public var rand: UInt64?
    public var origin: KeyOrigin?
    /// The key accepted: the host's LE Long Term Key Request Reply, or on air the peripheral's LL_START_ENC_REQ.
    public var acceptedFrame: Int?
    /// Encryption on (Encryption Change, or on air the peripheral's LL_START_ENC_RSP / the first encrypted PDU).
    public var onFrame: Int?
    /// Encryption_Enabled of the Encryption Change (1: E0 on BR/EDR, AES-CCM on LE; 2: AES-CCM on BR/EDR, 7.7.8).
    public var enabledValue: UInt8?
    /// Encryption off, or the start refused (an error status, LL_REJECT_IND, a key refused).
    public var offFrame: Int?
    public var failure: String?
    /// Encryption Key Refresh Complete, or LL_ENC_REQ again after a pause (Vol 6, Part B, 5.1.3.2).
    public var refreshFrames: [Int] = []
    public var pauseFrames: [Int] = []
    /// The key size in force and where it came from: Read Encryption Key Size or Encryption Change v2 (observed), the
    /// pairing's Maximum Encryption Key Size (inferred), nil: not in the log.
    public var keySize: Int?
    public var keySizeSource: FactSource?

    /// `AES-CCM` or `E0` (Vol 4, Part E, 7.7.8; LE encrypts only with AES-CCM, Vol 6, Part E), nil when BR/EDR's
    /// Encryption Change did not say or encryption never came on.
    public func algorithm(isLE: Bool) -> String? {
        guard onFrame != nil else { return nil }
        if isLE { return "AES-CCM" }
        guard let v = enabledValue, v != 0 else { return nil }
        return v == 2 ? "AES-CCM" : "E0"
    }

    /// EDIV and Rand both zero (what a Secure Connections LTK or an STK is named by, Vol 3, Part H, 2.4.4.1 / 2.3.5.6.5).
    public var zeroDiversifier: Bool { (ediv ?? 0) == 0 && (rand ?? 0) == 0 }

    /// LE, a stored key: the pairing procedure that made it, inferred from how the start names it, with the start's
    /// frame. A Secure Connections LTK is named by EDIV and Rand zero (Vol 3, Part H, 2.4.4 and 3.6.1: no Central
    /// Identification is distributed); a legacy LTK by the EDIV and Rand distributed with it (3.6.2), which the
    /// distributing device makes random (2.4.2.3). Inferred, not seen: a legacy stack may distribute zeros.
    public var storedKeyProcedure: (procedure: PairingProcedure, frame: Int)? {
        guard origin == .stored, let start = startFrame, ediv != nil || rand != nil else { return nil }
        return (zeroDiversifier ? .leSecureConnections : .leLegacy, start)
    }
}

extension Array where Element == SecurityPairing {
    mutating func recordPairing(_ p: SecurityPairing) { if count >= 64 { self[count - 1] = p } else { append(p) } }
}

extension Array where Element == EncryptionSession {
    mutating func recordSession(_ s: EncryptionSession) { if count >= 64 { self[count - 1] = s } else { append(s) } }
}
