import BLECapture
import BLECore
import BLEProtocols

/// The HCI commands and events that say how a link is secured, as the link's ``SecurityInput``s: the key an LE start
/// names, the encryption's mode and key size, refreshes, and the BR/EDR pairing's steps, which name the peer by its
/// BD_ADDR rather than a handle (Core Spec Vol 4, Part E, 7.1.10–11, 7.1.29, 7.5.7, 7.7.8, 7.7.22–24, 7.7.39–48,
/// 7.7.65.5, 7.8.24).
extension HCIMachine {
    /// A command's security input, if it has one.
    func noteSecurityRecord(_ packet: HCICommandPacket, _ record: CaptureRecord) {
        guard case .declared(let d) = packet.decoded else { return }
        switch d.value {
        case let e as LEEnableEncryption:
            feed(.security(.encryptionStarted(ediv: e.encryptedDiversifier, rand: e.randomNumber)), handle: e.handle, record, infer: false)
            feed(.security(.keyUsed(.init(frame: record.frame, kind: "LTK", key: e.longTermKey))), handle: e.handle, record, infer: false)
        case let r as LELongTermKeyRequestReply:
            feed(
                .security(.keyUsed(.init(frame: record.frame, kind: "LTK", key: r.longTermKey))), handle: r.handle & 0x0FFF, record,
                infer: false)
        case let s as SetConnectionEncryption where s.enable == 1:
            feed(.security(.authenticationAsked(SetConnectionEncryption.name)), handle: s.handle, record, infer: false)
            feed(.security(.encryptionStarted(ediv: nil, rand: nil)), handle: s.handle, record, infer: false)
        case let a as AuthenticationRequested:
            feed(.security(.authenticationAsked(AuthenticationRequested.name)), handle: a.handle, record, infer: false)
        case let r as IOCapabilityRequestReply:
            let input = SecurityInput.ioCapability(
                sender: .local, io: r.ioCapability, oob: r.oobDataPresent, authReq: r.authenticationRequirements)
            feed(.security(input), peer: r.address, record)
        case let r as LinkKeyRequestReply:
            feed(.security(.storedKeyAnswered(found: true)), peer: r.address, record)
            feed(.security(.keyUsed(.init(frame: record.frame, kind: "link key", key: r.key))), peer: r.address, record)
        case let r as LinkKeyRequestNegativeReply:
            feed(.security(.storedKeyAnswered(found: false)), peer: r.address, record)
        case let r as UserConfirmationRequestReply: userAnswered(r.address, accepted: true, verb: "confirmed", record)
        case let r as UserConfirmationRequestNegativeReply: userAnswered(r.address, accepted: false, verb: "rejected", record)
        case let r as UserPasskeyRequestReply: userAnswered(r.address, accepted: true, verb: "typed the passkey", record)
        case let r as UserPasskeyRequestNegativeReply: userAnswered(r.address, accepted: false, verb: "gave no passkey", record)
        default:
            break
        }
    }

    /// A declared event's security input, if it has one (after the event's own link input).
    func noteSecurityRecord(_ d: HCIDeclared, _ record: CaptureRecord) {
        switch d.value {
        case let r as LELongTermKeyRequest:
            feed(.security(.encryptionStarted(ediv: r.encryptedDiversifier, rand: r.randomNumber)), handle: r.handle, record, infer: false)
        case let e as EncryptionChange: encryptionDetails(e, keySize: nil, record)
        // A key size of 0 with encryption on is none the specification allows (1–16 octets): the controller did not
        // report the size (an iPhone's sysdiagnose log, bafang: 19 of them), so it is unknown, not a 0-octet key.
        case let e2 as EncryptionChangeV2: encryptionDetails(e2.change, keySize: e2.keySize == 0 ? nil : Int(e2.keySize), record)
        case let k as EncryptionKeyRefreshComplete where k.status == .success:
            feed(.security(.refreshed), handle: k.handle, record, infer: false)
        case let r as LinkKeyRequest: feed(.security(.linkKeyRequested), peer: r.address, record)
        case let r as IOCapabilityRequest: feed(.security(.ioCapabilityRequested), peer: r.address, record)
        case let r as IOCapabilityResponse:
            let input = SecurityInput.ioCapability(
                sender: .peer, io: r.ioCapability, oob: r.oobDataPresent, authReq: r.authenticationRequirements)
            feed(.security(input), peer: r.address, record)
        case let r as UserConfirmationRequest:
            userAsked(r.address, record)
            feed(.security(.userStep(nil)), peer: r.address, record)
        case let r as UserPasskeyRequest:
            userAsked(r.address, record)
            feed(.security(.userStep(.passkeyEntry)), peer: r.address, record)
        case let r as UserPasskeyNotification: feed(.security(.userStep(.passkeyEntry)), peer: r.address, record)
        case let r as RemoteOOBDataRequest: feed(.security(.userStep(.outOfBand)), peer: r.address, record)
        case let r as PINCodeRequest: feed(.security(.pinRequested), peer: r.address, record)
        case let n as LinkKeyNotification:
            feed(.security(.linkKeyCreated(LinkKeyType(rawValue: n.keyType))), peer: n.address, record)
            feed(.security(.keyUsed(.init(frame: record.frame, kind: "link key", key: n.key))), peer: n.address, record)
        case let s as SimplePairingComplete where s.status != .success:
            feed(.security(.pairingRefused("Simple Pairing Complete: \(s.status)")), peer: s.address, record)
        case let a as AuthenticationComplete where a.status != .success:
            feed(.security(.pairingRefused("Authentication Complete: \(a.status)")), handle: a.handle, record, infer: false)
        case let t as LEAdvertisingSetTerminated where t.status == .success:
            let handle = t.connectionHandle & 0x0FFF
            if let local = localAddresses.advertisingSetTerminated(
                set: t.advertisingHandle, handle: handle, controller: record.controllerIndex)
            {
                feed(.security(.addressSeen(.local, local)), handle: handle, record, infer: false)
            }
        default:
            break
        }
    }

    /// Read Encryption Key Size's answer (7.5.7) to its link.
    func noteKeySize(_ returns: HCIReturnParameters, _ record: CaptureRecord) {
        guard case .declared(let d) = returns, let r = d.as(ReadEncryptionKeySizeReturn.self), r.status == .success else { return }
        feed(.security(.keySizeRead(Int(r.keySize))), handle: r.handle & 0x0FFF, record, infer: false)
    }

    /// Encryption Change: its mode (E0 or AES-CCM) and v2's key size; a refused one ends the start it answers.
    private func encryptionDetails(_ e: EncryptionChange, keySize: Int?, _ record: CaptureRecord) {
        guard e.status == .success else {
            feed(.encryption(.changed(status: e.status, enabled: false)), handle: e.handle, record, infer: false)
            return
        }
        feed(.security(.encryptionDetails(enabledValue: e.encryptionEnabled, keySize: keySize)), handle: e.handle, record, infer: false)
    }

    /// A user step the controller asks this side about, held until the host answers it.
    private func userAsked(_ peer: BDAddress, _ record: CaptureRecord) {
        guard classic.pendingUserSteps.count < ClassicHCIState.maxHeld else { return }
        classic.pendingUserSteps[ClassicHCIState.key(record.controllerIndex, peer.description)] = (record.frame, record.timestamp)
    }

    /// The host's answer to the user step it was asked: the user's, with the time since the request.
    private func userAnswered(_ peer: BDAddress, accepted: Bool, verb: String, _ record: CaptureRecord) {
        guard let asked = classic.pendingUserSteps.removeValue(forKey: ClassicHCIState.key(record.controllerIndex, peer.description))
        else { return }
        let answer = SecurityPairing.UserAnswer(
            accepted: accepted, requestFrame: asked.frame, frame: record.frame,
            microseconds: record.timestamp.microseconds(since: asked.timestamp), verb: verb)
        feed(.security(.userAnswered(answer)), peer: peer, record)
    }

    /// `input` to the BR/EDR link open with `peer` on the record's controller (none: the event stays evidence only).
    private func feed(_ input: LinkInput, peer: BDAddress, _ record: CaptureRecord) {
        guard let i = links.link(controller: record.controllerIndex, peer: peer.description) else { return }
        links.feed(input, link: i, frame: record.frame, timestamp: record.timestamp)
    }
}
