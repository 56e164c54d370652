import BLECore
import BLEProtocols
import BLESecurity

/// What the HCI or the air says about a link's security beyond the encryption procedure's steps
/// (``SecurityTracker/EncryptionInput``): the key a start names, the key size in force, refreshes and pauses, and the
/// BR/EDR pairing's steps (Core Spec Vol 4, Part E, 7.1.29, 7.5.7, 7.7.8, 7.7.22–24, 7.7.39–48).
enum SecurityInput: Equatable {
    /// Encryption starts with the key EDIV and Rand name: LE Enable Encryption (central), LE Long Term Key Request
    /// (peripheral), LL_ENC_REQ (air). BR/EDR (Set Connection Encryption, Authentication Requested) names none.
    case encryptionStarted(ediv: UInt16?, rand: UInt64?)
    /// Encryption Change's Encryption_Enabled value (v1), with the key size v2 adds.
    case encryptionDetails(enabledValue: UInt8, keySize: Int?)
    /// Encryption Key Refresh Complete with success, or LL_ENC_REQ's restart after a pause.
    case refreshed
    /// LL_PAUSE_ENC_RSP: encryption paused to change the key (Vol 6, Part B, 5.1.3.2).
    case paused
    /// Read Encryption Key Size's answer (7.5.7).
    case keySizeRead(Int)
    /// BR/EDR: the key size the link managers agreed (an LMP_encryption_key_size_req accepted, Vol 2, Part C,
    /// 4.2.5.4), when the controller logs LMP: before the encryption it applies to starts.
    case keySizeNegotiated(Int)
    /// BR/EDR: IO Capability Request (the controller asks this side: Secure Simple Pairing starts).
    case ioCapabilityRequested
    /// BR/EDR: this host asked its controller to authenticate the link (Authentication Requested, 7.1.15) or to encrypt
    /// it (Set Connection Encryption, 7.1.16): the command's name.
    case authenticationAsked(String)
    /// BR/EDR: Link Key Request (7.7.23): the controller asks for the key of an authentication under way.
    case linkKeyRequested
    /// BR/EDR: a side's IO capability, OOB data present and authentication requirements (IO Capability Request Reply
    /// from this side, IO Capability Response from the peer).
    case ioCapability(sender: EvidenceEvent.Sender, io: UInt8, oob: UInt8, authReq: UInt8)
    /// BR/EDR: the user step the controller asked for.
    case userStep(AssociationModel?)
    /// BR/EDR: this side's user answered the user step (User Confirmation or Passkey Request Reply, or Negative Reply).
    case userAnswered(SecurityPairing.UserAnswer)
    /// BR/EDR: PIN Code Request: legacy pairing.
    case pinRequested
    /// BR/EDR: Link Key Notification: the pairing made a key of this type.
    case linkKeyCreated(LinkKeyType)
    /// BR/EDR: Link Key Request Reply (true) or Negative Reply (false).
    case storedKeyAnswered(found: Bool)
    /// BR/EDR: Simple Pairing Complete or Authentication Complete with an error: the pairing failed.
    case pairingRefused(String)
    /// The bond an earlier link with the same peer left (given when the link opens).
    case bond(LinkSecurity.Bond)
    /// A key the host gave its controller, or the controller made, for the link (a fingerprint, never the key).
    case keyUsed(LinkSecurity.KeyUse)
    /// LE: the address a side used on the link (LE (Enhanced) Connection Complete, CONNECT_IND, this side's own address).
    case addressSeen(EvidenceEvent.Sender, SeenAddress)
    /// BR/EDR: a security setting of this side's host as the log showed it when the link opened.
    case hostSetting(HostSecuritySetting)
}

extension SecurityTracker {
    /// One SMP PDU into the record (``LinkSecurity``), after the phases moved.
    mutating func record(smp: SMPPDU, sender: Sender, frame: Int, overBREDR: Bool = false) {
        switch smp {
        case .pairingRequest(let p):
            var new = SecurityPairing(frame: frame)
            new.initiator = sender
            // Over BR/EDR the MITM and IO fields are not used (Vol 3, Part H, 3.5.1): the BR/EDR pairing authenticated.
            new.procedure = overBREDR ? .crossTransport : nil
            new.mitmRequested = !overBREDR && p.authReq.contains(.mitm)
            if new.mitmRequested { new.mitmAskedBy = [sender] }
            new.offeredKeySizes = [Int(p.maxEncryptionKeySize)]
            new.ioCapabilities = [p.ioCapability.description]
            request = p
            record.pairings.recordPairing(new)
        case .pairingResponse(let p):
            answerPairing(p, frame: frame, overBREDR: overBREDR)
        case .pairingPublicKey(let x, let y):
            if record.pairings.isEmpty || record.pairings.last?.outcome != .unfinished {
                var new = SecurityPairing(frame: frame)
                new.procedure = .leSecureConnections
                record.pairings.recordPairing(new)
            }
            let i = record.pairings.count - 1
            // A public key in a pairing the feature exchange made legacy is out of place; it does not make it SC.
            if record.pairings[i].procedure == nil { record.pairings[i].procedure = .leSecureConnections }
            if record.pairings[i].procedure == .leLegacy, record.pairings[i].misplacedPublicKeyFrame == nil {
                record.pairings[i].misplacedPublicKeyFrame = frame
            }
            if record.pairings[i].invalidPublicKeyFrame == nil, !SecureConnections.isOnCurve(x: x, y: y) {
                record.pairings[i].invalidPublicKeyFrame = frame
            }
            if SecureConnections.isDebugPublicKey(x: x, y: y), record.pairings[i].debugKeyFrame == nil {
                record.pairings[i].debugKeyFrame = frame
            }
        case .pairingDHKeyCheck:
            guard let i = openPairing, record.pairings[i].dhKeyChecks[sender] == nil else { return }
            record.pairings[i].dhKeyChecks[sender] = frame
        case .pairingFailed(let reason):
            guard let i = openPairing else { return }
            record.pairings[i].outcome = .failed(frame: frame, by: sender, reason: reason.description)
            record.pairings[i].requiresSecureConnections = refusesLegacy(reason, sender: sender, pairing: record.pairings[i])
        case .encryptionInformation, .identityInformation, .signingInformation, .centralIdentification, .identityAddressInformation:
            guard let i = record.pairings.indices.last else { return }
            recordIdentity(smp, sender: sender, frame: frame, in: i)
            if !record.pairings[i].completed { record.pairings[i].outcome = .completed(frame: frame) }
            record.pairings[i].distributed = distributed
        default:
            break
        }
    }

    /// A responder in Secure Connections Only mode refuses a Pairing Request without the SC flag at once, with
    /// Authentication Requirements or Encryption Key Size (Vol 3, Part H, 2.3.5.1; it wants a 16-byte key too): the
    /// refusal is the next SMP PDU after the request, from the other side, before any Pairing Response. Inferred.
    private func refusesLegacy(_ reason: SMPPairingFailedReason, sender: Sender, pairing: SecurityPairing) -> Bool {
        guard reason == .authenticationRequirements || reason == .encryptionKeySize, let req = request else { return false }
        return pairing.responseFrame == nil && pairing.initiator != nil && pairing.initiator != sender
            && pairing.procedure != .crossTransport && !req.authReq.contains(.secureConnections)
    }

    /// Identity Information and the Identity Address Information that completes it (Vol 3, Part H, 3.6.4–3.6.5).
    private mutating func recordIdentity(_ smp: SMPPDU, sender: Sender, frame: Int, in i: Int) {
        switch smp {
        case .identityInformation(let irk):
            record.pairings[i].identities[sender] = DistributedIdentity(
                frame: frame, irkIsZero: irk.allSatisfy { $0 == 0 }, address: nil)
        case .identityAddressInformation(let type, let address):
            record.pairings[i].identities[sender]?.address = address.description + (type == 0x01 ? " (random)" : "")
        default:
            break
        }
    }

    /// The Pairing Response: the association model from both feature exchanges (Vol 3, Part H, 2.3.5.1), the key size
    /// (the smaller maximum, 3.5.1), bonding.
    private mutating func answerPairing(_ p: SMPPairingParameters, frame: Int, overBREDR: Bool) {
        guard let i = openPairing, let req = request else {
            // The request is not in the log: what the response alone says.
            var new = SecurityPairing(frame: frame)
            new.procedure = overBREDR ? .crossTransport : nil
            new.offeredKeySizes = [Int(p.maxEncryptionKeySize)]
            new.mitmRequested = !overBREDR && p.authReq.contains(.mitm)
            record.pairings.recordPairing(new)
            return
        }
        request = nil
        let sc = req.authReq.contains(.secureConnections) && p.authReq.contains(.secureConnections)
        var pairing = record.pairings[i]
        if overBREDR {
            // Cross-transport key derivation: the key sizes and bonding count, the association model does not exist.
            pairing.procedure = .crossTransport
            pairing.bonding = req.authReq.contains(.bonding) && p.authReq.contains(.bonding)
            pairing.offeredKeySizes = [Int(req.maxEncryptionKeySize), Int(p.maxEncryptionKeySize)]
            pairing.keySize = Int(min(req.maxEncryptionKeySize, p.maxEncryptionKeySize))
            pairing.responseFrame = frame
            record.pairings[i] = pairing
            return
        }
        pairing.procedure = sc ? .leSecureConnections : .leLegacy
        let initiator = pairing.initiator ?? .local
        let responder: Sender = initiator == .local ? .peer : .local
        if let model = SMPAssociationModel(initiator: req, responder: p) {
            pairing.model = AssociationModel(model.method)
            pairing.modelSource = .observed(frame: frame)
            pairing.bonding = model.bonding
            pairing.passkey = model.passkeyDisplay.map {
                switch $0 {
                case .initiator: .shownBy(initiator)
                case .responder: .shownBy(responder)
                case .neither: .bothType
                }
            }
        }
        pairing.bondingDeclined = req.authReq.contains(.bonding) && !p.authReq.contains(.bonding)
        pairing.secureConnectionsDeclined = req.authReq.contains(.secureConnections) && !p.authReq.contains(.secureConnections)
        pairing.mitmRequested = req.authReq.contains(.mitm) || p.authReq.contains(.mitm)
        pairing.mitmAskedBy = Set([(initiator, req.authReq), (responder, p.authReq)].filter { $0.1.contains(.mitm) }.map(\.0))
        pairing.secureConnectionsAskedBy = Set(
            [(initiator, req.authReq), (responder, p.authReq)].filter { $0.1.contains(.secureConnections) }.map(\.0))
        pairing.offeredKeySizes = [Int(req.maxEncryptionKeySize), Int(p.maxEncryptionKeySize)]
        pairing.keySize = Int(min(req.maxEncryptionKeySize, p.maxEncryptionKeySize))
        pairing.ioCapabilities = [req.ioCapability.description, p.ioCapability.description]
        pairing.responseFrame = frame
        record.pairings[i] = pairing
    }

    /// The last pairing while it is still going.
    var openPairing: Int? {
        guard let i = record.pairings.indices.last, record.pairings[i].outcome == .unfinished else { return nil }
        return i
    }

    /// One step of the encryption procedure into the record.
    mutating func record(_ input: EncryptionInput, frame: Int) {
        switch input {
        case .longTermKeyRequested:
            break
        case .longTermKeyReplied:
            guard let i = record.sessions.indices.last, record.sessions[i].acceptedFrame == nil else { return }
            record.sessions[i].acceptedFrame = frame
        case .longTermKeyRefused:
            guard let i = record.sessions.indices.last, record.sessions[i].onFrame == nil else { return }
            record.sessions[i].failure = "no key (the host had none for it)"
            record.sessions[i].offFrame = frame
        case .changed(let status, let enabled):
            if status != .success {
                guard let i = record.sessions.indices.last, record.sessions[i].onFrame == nil else { return }
                record.sessions[i].failure = status.description
                record.sessions[i].offFrame = frame
            } else if enabled {
                encryptionOn(frame: frame)
            } else if let i = record.sessions.indices.last, record.sessions[i].offFrame == nil {
                record.sessions[i].offFrame = frame
            }
        }
    }

    /// Encryption on: the session that started (or one known only from this), its key's origin and size.
    private mutating func encryptionOn(frame: Int) {
        if record.sessions.last.map({ $0.onFrame != nil || $0.offFrame != nil }) ?? true {
            startSession(ediv: nil, rand: nil, frame: nil)
        }
        let i = record.sessions.count - 1
        guard record.sessions[i].onFrame == nil else { return }
        record.sessions[i].onFrame = frame
        if let agreed = negotiatedKeySize, record.sessions[i].keySize == nil {
            observeKeySize(agreed.size, session: i, frame: agreed.frame)
        }
        negotiatedKeySize = nil
        // A legacy pairing that distributes no key completes when the link encrypts with its STK (Vol 3, Part H, 2.4.4.1).
        if case .pairing(let f)? = record.sessions[i].origin, let p = record.pairings.lastIndex(where: { $0.frame == f }),
            record.pairings[p].outcome == .unfinished
        {
            record.pairings[p].outcome = .completed(frame: frame)
        }
        inferKeySize(session: i)
    }

    /// A start of encryption: a new session, its key from this link's pairing when one is under way or just done
    /// (its STK or LTK), else a stored one.
    mutating func startSession(ediv: UInt16?, rand: UInt64?, frame: Int?) {
        var s = EncryptionSession()
        s.startFrame = frame
        s.ediv = ediv
        s.rand = rand
        // Keys derived across transports are not this transport's pairing: the BR/EDR session runs with the link key.
        if let p = record.pairings.last(where: { $0.procedure != .crossTransport }), p.procedure != nil || p.keySize != nil {
            switch p.outcome {
            case .unfinished: s.origin = .pairing(frame: p.frame)
            case .completed where p.procedure.map { !$0.isLE } ?? false:
                s.origin = record.sessions.contains { $0.origin == .pairing(frame: p.frame) } ? .stored : .pairing(frame: p.frame)
            default: s.origin = .stored
            }
        } else {
            s.origin = .stored
        }
        record.sessions.recordSession(s)
    }

    /// The key size a session runs with when nothing states it: the pairing's agreed maximum (Vol 3, Part H, 2.3.4),
    /// this link's or the bond's.
    private mutating func inferKeySize(session i: Int) {
        guard record.sessions[i].keySize == nil else { return }
        switch record.sessions[i].origin {
        case .pairing(let f)?:
            guard let p = record.pairings.last(where: { $0.frame == f }), let size = p.keySize else { return }
            record.sessions[i].keySize = size
            record.sessions[i].keySizeSource = .inferred(.pairingKeySize(frame: p.responseFrame ?? p.frame))
        case .stored?:
            guard let bond = record.bond, let size = bond.pairing.keySize, bond.pairing.procedure?.isLE ?? false else { return }
            record.sessions[i].keySize = size
            record.sessions[i].keySizeSource = .inferred(
                .bondKeySize(frame: bond.pairing.responseFrame ?? bond.pairing.frame, connection: bond.connection))
        case nil:
            return
        }
    }

    /// One ``SecurityInput`` into the record.
    mutating func record(_ input: SecurityInput, frame: Int) {
        switch input {
        case .encryptionStarted(let ediv, let rand):
            startSession(ediv: ediv, rand: rand, frame: frame)
        case .encryptionDetails(let value, let size):
            guard let i = record.sessions.indices.last else { return }
            record.sessions[i].enabledValue = value
            if let size { observeKeySize(size, session: i, frame: frame) }
        case .refreshed:
            guard let i = record.sessions.indices.last else { return }
            if record.sessions[i].onFrame == nil {
                // HCI: LE Enable Encryption on an encrypted link ends with Encryption Key Refresh Complete (7.7.39).
                record.sessions[i].enabledValue = record.sessions.dropLast().last?.enabledValue
                encryptionOn(frame: frame)
            }
            record.sessions[i].refreshFrames.append(frame)
        case .paused:
            guard let i = record.sessions.indices.last else { return }
            record.sessions[i].pauseFrames.append(frame)
        case .keySizeRead(let size):
            guard let i = record.sessions.indices.last else { return }
            observeKeySize(size, session: i, frame: frame)
        case .keySizeNegotiated(let size):
            // For the session being started, or the next one (the negotiation comes before LMP_start_encryption_req).
            if let i = record.sessions.indices.last, record.sessions[i].onFrame == nil, record.sessions[i].offFrame == nil {
                observeKeySize(size, session: i, frame: frame)
            } else {
                negotiatedKeySize = .init(size: size, frame: frame)
            }
        case .bond(let bond):
            record.bond = bond
        case .addressSeen(let side, let address):
            record.addresses[side] = address
        case .hostSetting(let setting):
            record.hostSettings[setting.kind] = setting
        case .keyUsed(let use):
            if record.keysUsed.count < 16 && !record.keysUsed.contains(where: { $0.fingerprint == use.fingerprint }) {
                record.keysUsed.append(use)
            }
        default:
            recordClassic(input, frame: frame)
        }
    }

    private mutating func observeKeySize(_ size: Int, session i: Int, frame: Int) {
        record.sessions[i].keySize = size
        record.sessions[i].keySizeSource = .observed(frame: frame)
    }
}
