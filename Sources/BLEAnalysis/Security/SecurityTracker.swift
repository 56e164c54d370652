import BLECore
import BLEProtocols

/// The pairing and encryption of one connection: its SMP PDUs (Core Spec Vol 3, Part H) and the HCI exchange that
/// starts encryption with a key (Vol 4, Part E: 7.7.65.5 LE Long Term Key Request, 7.8.25–26 its Reply and Negative
/// Reply, 7.7.8 Encryption Change). The link's encrypted-or-not fact itself lives in ``LinkState``: this machine's
/// ``Output/encryption(_:)`` is what writes it.
///
/// Pairing goes through three phases (Part H, 2.1): the feature exchange (Pairing Request and Response, 3.5.1–3.5.2),
/// key generation (confirm, random, public keys, DHKey check, 3.5.3–3.5.7), and key distribution (3.6: Encryption
/// Information with Central Identification, Identity Information with Identity Address Information, Signing Information).
/// A peripheral may ask for it with a Security Request (3.6.7); Pairing Failed (3.5.5) ends it with a reason.
///
/// Failure cases, named: Pairing Failed (``Output/pairingFailed(by:reason:)``), a key the host refused to give
/// (``Encryption/keyRefused``: a Negative Reply, the bond lost on this side), an Encryption Change with an error status
/// (``Output/encryptionFailed(_:)``; the link stays as it was). PDUs out of order are taken as they come (a capture may
/// start mid-pairing): a Pairing Response without its request still moves to key generation.
struct SecurityTracker: Hashable, Sendable {
    typealias Sender = EvidenceEvent.Sender

    enum Pairing: Hashable, Sendable {
        /// No pairing seen.
        case none
        /// The peripheral asked for security (Security Request).
        case securityRequested
        /// Phase 1: a Pairing Request waits for its response.
        case featureExchange
        /// Phase 2: the response came; the sides exchange confirm and random values (and public keys).
        case keyGeneration
        /// Phase 3: keys are being distributed (the link is encrypted with the key just generated).
        case keyDistribution
        /// Pairing Failed, with its reason.
        case failed(SMPPairingFailedReason)
    }

    enum Encryption: Hashable, Sendable {
        case off
        /// The controller asked the host for the long-term key of an encryption the central started.
        case keyRequested
        /// The host gave the key (LE Long Term Key Request Reply).
        case keyReplied
        /// The host had no key (Negative Reply): encryption will fail, or pairing follows.
        case keyRefused
        case on
    }

    /// What the HCI says about encryption on the connection.
    enum EncryptionInput: Hashable, Sendable {
        case longTermKeyRequested
        case longTermKeyReplied
        case longTermKeyRefused
        case changed(status: HCIStatus, enabled: Bool)
    }

    enum Output: Hashable, Sendable {
        case pairingRequested(by: Sender, authReq: SMPAuthReq)
        case pairingAccepted(by: Sender, authReq: SMPAuthReq)
        case securityRequested(by: Sender)
        case pairingFailed(by: Sender, reason: SMPPairingFailedReason)
        /// The first PDU of a key `sender` distributes (Encryption, Identity or Signing Information).
        case keyDistributed(by: Sender, SMPKeyDistribution)
        /// The link's encryption turned on or off (Encryption Change with success).
        case encryption(Bool)
        /// Encryption Change with an error status: the link stays as it was.
        case encryptionFailed(HCIStatus)
    }

    private(set) var pairing = Pairing.none
    /// A pairing runs and the link is not encrypted yet: from the Pairing Request to the encryption with its key.
    var pairingInClear: Bool {
        switch pairing {
        case .featureExchange, .keyGeneration: encryption != .on
        default: false
        }
    }
    private(set) var encryption = Encryption.off
    /// The keys each side distributed in the latest pairing (complete ones: both PDUs of EncKey and IdKey seen).
    private(set) var distributed: [Sender: SMPKeyDistribution] = [:]
    /// Keys whose first PDU came and whose second is awaited (EncKey: Central Identification; IdKey: Identity Address).
    private var started: [Sender: SMPKeyDistribution] = [:]
    /// How the link was secured, pairing by pairing and session by session (``LinkSecurity``).
    var record = LinkSecurity()
    /// The Pairing Request whose response is awaited (the model needs both).
    var request: SMPPairingParameters?
    /// BR/EDR: each side's IO Capability exchange in the pairing under way.
    var classicIO: [Sender: ClassicIO] = [:]
    /// A key size the link managers agreed before the encryption it applies to started (``SecurityInput/keySizeNegotiated(_:)``).
    var negotiatedKeySize: NegotiatedKeySize?
    struct NegotiatedKeySize: Hashable, Sendable {
        var size: Int
        var frame: Int
    }

    /// One SMP PDU sent by `sender` at `frame`; nil for those that only move the pairing along (confirm, random, public
    /// key, …). The record (``record``) takes every one. `overBREDR`: it came on the BR/EDR Security Manager channel
    /// (L2CAP CID 0x0007): cross-transport key derivation (``PairingProcedure/crossTransport``).
    mutating func feed(smp: SMPPDU, sender: Sender, frame: Int, overBREDR: Bool = false) -> Output? {
        let output = phase(smp: smp, sender: sender)
        record(smp: smp, sender: sender, frame: frame, overBREDR: overBREDR)
        return output
    }

    private mutating func phase(smp: SMPPDU, sender: Sender) -> Output? {
        switch smp {
        case .securityRequest:
            if pairing == .none { pairing = .securityRequested }
            return .securityRequested(by: sender)
        case .pairingRequest(let p):
            pairing = .featureExchange
            distributed = [:]
            started = [:]
            return .pairingRequested(by: sender, authReq: p.authReq)
        case .pairingResponse(let p):
            pairing = .keyGeneration
            return .pairingAccepted(by: sender, authReq: p.authReq)
        case .pairingConfirm, .pairingRandom, .pairingPublicKey, .pairingDHKeyCheck, .pairingKeypressNotification:
            if pairing == .featureExchange { pairing = .keyGeneration }
            return nil
        case .pairingFailed(let reason):
            pairing = .failed(reason)
            return .pairingFailed(by: sender, reason: reason)
        case .encryptionInformation:
            return startKey(.encKey, by: sender)
        case .identityInformation:
            return startKey(.idKey, by: sender)
        case .signingInformation:
            // One PDU is the whole key.
            pairing = .keyDistribution
            distributed[sender, default: []].insert(.signKey)
            return .keyDistributed(by: sender, .signKey)
        case .centralIdentification:
            finishKey(.encKey, by: sender)
            return nil
        case .identityAddressInformation:
            finishKey(.idKey, by: sender)
            return nil
        case .unknown:
            return nil
        }
    }

    /// What the HCI says about encryption at `frame`; nil when only the procedure moved on (the key asked for, given or
    /// refused). The record takes every step.
    mutating func feed(_ input: EncryptionInput, frame: Int) -> Output? {
        record(input, frame: frame)
        return step(input)
    }

    private mutating func step(_ input: EncryptionInput) -> Output? {
        switch input {
        case .longTermKeyRequested:
            encryption = .keyRequested
        case .longTermKeyReplied:
            encryption = .keyReplied
        case .longTermKeyRefused:
            encryption = .keyRefused
        case .changed(let status, let enabled):
            guard status == .success else { return .encryptionFailed(status) }
            encryption = enabled ? .on : .off
            return .encryption(enabled)
        }
        return nil
    }

    private mutating func startKey(_ key: SMPKeyDistribution, by sender: Sender) -> Output {
        pairing = .keyDistribution
        started[sender, default: []].insert(key)
        return .keyDistributed(by: sender, key)
    }

    private mutating func finishKey(_ key: SMPKeyDistribution, by sender: Sender) {
        guard started[sender]?.contains(key) == true else { return }
        started[sender]?.remove(key)
        distributed[sender, default: []].insert(key)
    }
}
