import BLECore
import BLEProtocols

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
        case .keyDistributed(let sender, let key): .keysDistributed(sender: sender, key: key)
        }
    }
}
