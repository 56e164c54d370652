import BLECore
import BLEProtocols

/// BR/EDR pairing into the record: Secure Simple Pairing from the IO Capability exchange and the user step the
/// controller asks for (Core Spec Vol 3, Part C, 5.2.2.6; Vol 4, Part E, 7.7.40–48), legacy pairing from the PIN Code
/// Request (7.7.22), the result from Link Key Notification (7.7.24) or the failure from Simple Pairing Complete or
/// Authentication Complete.
extension SecurityTracker {
    /// One side's IO Capability exchange values.
    struct ClassicIO: Hashable, Sendable {
        var io: UInt8
        var oob: UInt8
        var authReq: UInt8
    }

    mutating func recordClassic(_ input: SecurityInput, frame: Int) {
        switch input {
        case .authenticationAsked(let command):
            if record.authenticationStart == nil { record.authenticationStart = .init(byThisSide: true, frame: frame, shownBy: command) }
        case .linkKeyRequested:
            peerStarted(frame: frame, shownBy: "Link Key Request")
        case .ioCapabilityRequested:
            peerStarted(frame: frame, shownBy: "IO Capability Request")
            _ = classicPairing(.secureSimplePairing, frame: frame)
        case let .ioCapability(sender, io, oob, authReq):
            // The peer's IO capabilities before this side was asked for its own: the peer started the pairing.
            if sender == .peer { peerStarted(frame: frame, shownBy: "IO Capability Response") }
            let i = classicPairing(.secureSimplePairing, frame: frame)
            classicIO[sender] = ClassicIO(io: io, oob: oob, authReq: authReq)
            record.pairings[i].mitmRequested = record.pairings[i].mitmRequested || authReq & 1 == 1
            if authReq & 1 == 1 { record.pairings[i].mitmAskedBy.insert(sender) }
            if let local = classicIO[.local], let peer = classicIO[.peer] {
                record.pairings[i].model = Self.sspModel(local, peer)
                if record.pairings[i].model == .passkeyEntry { record.pairings[i].passkey = Self.passkeyRoles(local, peer) }
                record.pairings[i].modelSource = .observed(frame: frame)
                // Dedicated or general bonding on both sides (Authentication_Requirements 0x02–0x05).
                record.pairings[i].bonding = (2...5).contains(local.authReq) && (2...5).contains(peer.authReq)
                record.pairings[i].ioCapabilities = [Self.ioName(local.io), Self.ioName(peer.io)]
            }
        case .userStep(let model):
            let i = classicPairing(.secureSimplePairing, frame: frame)
            // Passkey and OOB steps say the model; a confirmation is Numeric Comparison or Just Works, which the IO
            // capabilities decide.
            if let model, record.pairings[i].model != model {
                record.pairings[i].model = model
                record.pairings[i].modelSource = .observed(frame: frame)
            }
        case .userAnswered(let answer):
            guard let i = openPairing else { return }
            record.pairings[i].userAnswer = answer
        case .pinRequested:
            peerStarted(frame: frame, shownBy: "PIN Code Request")
            let i = classicPairing(.legacyPIN, frame: frame)
            record.pairings[i].model = .pin
            record.pairings[i].modelSource = .observed(frame: frame)
        case .linkKeyCreated(let type):
            let i = openPairing ?? newPairing(nil, frame: frame)
            record.pairings[i].linkKeyType = type
            record.pairings[i].outcome = .completed(frame: frame)
            if type == .debugCombination { record.pairings[i].debugKeyFrame = frame }
            classicIO = [:]
        case .storedKeyAnswered(let found):
            record.storedKeyAnswers.append(LinkSecurity.StoredKeyAnswer(frame: frame, found: found))
        case .pairingRefused(let reason):
            guard let i = openPairing else { return }
            record.pairings[i].outcome = .failed(frame: frame, by: nil, reason: reason)
            classicIO = [:]
        default:
            break
        }
    }

    /// A step of an authentication the controller asks about (Link Key Request, IO Capability Request or Response, PIN
    /// Code Request) with no command of this host's before it: the peer started it (its LMP challenge or pairing
    /// request, Vol 2, Part C, 4.2.1, 4.2.7).
    private mutating func peerStarted(frame: Int, shownBy: String) {
        if record.authenticationStart == nil { record.authenticationStart = .init(byThisSide: false, frame: frame, shownBy: shownBy) }
    }

    /// The open BR/EDR pairing of `procedure`, or a new one from `frame`.
    private mutating func classicPairing(_ procedure: PairingProcedure, frame: Int) -> Int {
        if let i = openPairing, record.pairings[i].procedure == procedure || record.pairings[i].procedure == nil {
            record.pairings[i].procedure = procedure
            return i
        }
        classicIO = [:]
        return newPairing(procedure, frame: frame)
    }

    private mutating func newPairing(_ procedure: PairingProcedure?, frame: Int) -> Int {
        var p = SecurityPairing(frame: frame)
        p.procedure = procedure
        record.pairings.recordPairing(p)
        return record.pairings.count - 1
    }

    /// The Secure Simple Pairing association model (Vol 3, Part C, 5.2.2.6, Table 5.7): OOB when either side has OOB
    /// data; Just Works (Numeric Comparison confirmed automatically) when neither asks for MITM protection or either
    /// side cannot both show and confirm; Passkey Entry when one side has only a keyboard and the other can show or
    /// type; Numeric Comparison between two DisplayYesNo sides.
    static func sspModel(_ a: ClassicIO, _ b: ClassicIO) -> AssociationModel {
        if a.oob != 0 || b.oob != 0 { return .outOfBand }
        guard a.authReq & 1 == 1 || b.authReq & 1 == 1 else { return .justWorks }
        let (x, y) = (a.io, b.io)
        // 0 DisplayOnly, 1 DisplayYesNo, 2 KeyboardOnly, 3 NoInputNoOutput.
        guard x <= 3, y <= 3, x != 3, y != 3 else { return .justWorks }
        if x == 2 || y == 2 { return .passkeyEntry }
        return x == 1 && y == 1 ? .numericComparison : .justWorks
    }

    /// Secure Simple Pairing's Passkey Entry (Table 5.7): the KeyboardOnly side types what the other shows; two
    /// KeyboardOnly sides both type it.
    static func passkeyRoles(_ local: ClassicIO, _ peer: ClassicIO) -> PasskeyRoles {
        let keyboardOnly: UInt8 = 2
        if local.io == keyboardOnly && peer.io == keyboardOnly { return .bothType }
        return .shownBy(local.io == keyboardOnly ? .peer : .local)
    }

    static func ioName(_ io: UInt8) -> String {
        switch io {
        case 0: "DisplayOnly"
        case 1: "DisplayYesNo"
        case 2: "KeyboardOnly"
        case 3: "NoInputNoOutput"
        default: "IO(\(hex(io)))"
        }
    }
}
