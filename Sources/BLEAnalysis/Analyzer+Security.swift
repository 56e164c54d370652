import BLECore
import BLEProtocols

/// Pairing and encryption: each connection's ``SecurityTracker`` is fed the HCI exchange that starts encryption here
/// (its SMP PDUs by its ``ConnectionMachine``), and what it says goes to the link state (``LinkState``) and the evidence.
extension Analyzer {
    /// What the HCI said about encryption on the open connection `handle` names on `controller` (none: nothing to follow).
    func feedSecurity(_ input: SecurityTracker.EncryptionInput, controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp) {
        guard let i = table.lookup(ConnectionKey(controller: controller, handle: handle)) else { return }
        feedSecurity(input, connection: i, frame: frame, timestamp: timestamp)
    }

    func feedSecurity(_ input: SecurityTracker.EncryptionInput, connection index: Int, frame: Int, timestamp: Timestamp) {
        feedLink(.encryption(input), connection: index, frame: frame, timestamp: timestamp)
    }

    /// What the security tracker said: the link's encryption, or evidence the diagnosis reads.
    func applySecurity(_ output: SecurityTracker.Output, connection index: Int, frame: Int, timestamp: Timestamp) {
        guard let kind = output.evidence else { return }
        evidence(kind, frame: frame, timestamp: timestamp, connection: table[index].number)
    }
}

extension SecurityTracker.Output {
    /// The evidence the diagnosis reads of a verdict; nil for the link's encryption, which is the link machine's fact
    /// (``LinkMachine``): the Encryption Change event itself is the evidence (``HCIEvidence``).
    var evidence: EvidenceEvent.Kind? {
        switch self {
        case .encryption, .encryptionFailed: nil
        case .pairingRequested(let sender, let authReq): .pairingRequest(sender: sender, authReq: authReq)
        case .pairingAccepted(let sender, let authReq): .pairingResponse(sender: sender, authReq: authReq)
        case .securityRequested(let sender): .securityRequest(sender: sender)
        case .pairingFailed(let sender, let reason): .pairingFailed(sender: sender, reason: reason)
        case .keyDistributed(let sender, _): .keysDistributed(sender: sender)
        }
    }
}
