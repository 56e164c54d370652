import BLECore
import BLEProtocols

/// What the BR/EDR rules share: the peer a handle names, and the authentication chain before a failure.
extension Evidence {
    /// The peer's address of the BR/EDR connection `number` (as the evidence spells addresses).
    package func classicPeer(_ number: Int?) -> String? { connection(number)?.peerAddress }

    /// The number of the latest BR/EDR connection with `peer` opened before `frame` (events that name only the address).
    package func classicConnection(peer: String?, before frame: Int) -> Int? {
        connections.last { $0.isBREDR && $0.peerAddress == peer && $0.startFrame < frame }?.number
    }

    /// This side's Delete Stored Link Key for `peer` before `frame`, with no new key for the peer between: the bond
    /// removed here (the moto g04s log: the JBL Clip 3's key deleted at 3038, Negative Reply at 3299). A deletion of
    /// every key counts only after this side had given or made a key for the peer in the log: stacks that keep their
    /// keys in the host clear the controller's at start-up (BlueZ), which removes no bond.
    package func keyDeleted(for peer: String, before frame: Int) -> EvidenceEvent? {
        var hadKey = false, deleted: EvidenceEvent? = nil
        for ev in events {
            if ev.frame >= frame { break }
            switch ev.kind {
            case .linkKeyAnswer(peer, true), .linkKeyCreated(peer): (hadKey, deleted) = (true, nil)
            case .storedLinkKeyDeleted(peer): deleted = ev
            case .storedLinkKeyDeleted(nil) where hadKey: deleted = ev
            default: break
            }
        }
        guard let deleted, !opensPairing(deleted, peer: peer) else { return nil }
        return deleted
    }

    /// A deletion that starts a pairing with the peer, not a removed bond: Android's bonding deletes the key it is
    /// about to make, a Remote Name Request or Create Connection for the same address within milliseconds (the moto
    /// g04s log: Create Connection 3404, Delete Stored Link Key 3406; the Broadcom classic AVDTP log: Delete 124, Remote
    /// Name Request 126, then a first pairing).
    func opensPairing(_ deletion: EvidenceEvent, peer: String) -> Bool {
        let beside: (EvidenceEvent) -> Bool = { ev in
            guard abs(ev.timestamp.microseconds(since: deletion.timestamp)) <= 1_000_000 else { return false }
            switch ev.kind {
            case .pageRequested(peer), .nameRequest(peer, false): return true
            default: return false
            }
        }
        return last(before: deletion.frame, where: beside) != nil || first(after: deletion.frame, where: beside) != nil
    }

    /// The events of `peer`'s authentication before `frame` and after its last completed one (a Simple Pairing
    /// Complete or Authentication Complete): Link Key Request, the host's answer, PIN Code Request, IO capabilities,
    /// Authentication Requested on its link.
    package func authenticationChain(peer: String?, connection: Int?, before frame: Int) -> [EvidenceEvent] {
        var chain: [EvidenceEvent] = []
        for ev in events {
            if ev.frame >= frame { break }
            switch ev.kind {
            case .linkKeyRequest(let p), .linkKeyAnswer(let p, _), .pinCodeRequest(let p), .ioCapabilityExchange(let p, _):
                if p == peer { chain.append(ev) }
            case .authenticationRequested:
                if ev.connection != nil && ev.connection == connection { chain.append(ev) }
            case .simplePairingComplete(let p, _):
                if p == peer { chain.removeAll() }
            case .authenticationComplete:
                if ev.connection != nil && ev.connection == connection { chain.removeAll() }
            default:
                break
            }
        }
        return chain
    }
}

extension EvidenceEvent.Kind {
    /// What a step of the authentication chain shows, for a cited frame.
    package var chainText: String? {
        switch self {
        case .linkKeyRequest: "Link Key Request: the controller asks for the stored key"
        case .linkKeyAnswer(_, true): "Link Key Request Reply: this side gave its stored key"
        case .linkKeyAnswer(_, false): "Link Key Request Negative Reply: this side has no key for the peer"
        case .pinCodeRequest: "PIN Code Request: legacy pairing"
        case .ioCapabilityExchange(_, .local): "IO Capability Request: Secure Simple Pairing starts"
        case .ioCapabilityExchange(_, .peer): "IO Capability Response: the peer's capabilities"
        case .authenticationRequested: "Authentication Requested by this side"
        default: nil
        }
    }
}

/// `0x04 Page Timeout` meanings for BR/EDR connection failures (Core Spec Vol 1, Part F, 2).
package func classicConnectionFailureCause(_ status: HCIStatus) -> String {
    switch status {
    case .pageTimeout: "the device did not answer the page: off, out of range, or not connectable (page scan off)"
    case .authenticationFailure, .pinOrKeyMissing: "authentication failed: a link key is missing or does not match"
    case .connectionTimeout: "the link timed out while it was being set up"
    case .connectionLimitExceeded, .synchronousConnectionLimitExceeded: "a connection limit was reached"
    case .connectionAlreadyExists: "a connection to the device already exists"
    case .connectionRejectedLimitedResources, .connectionRejectedSecurityReasons, .connectionRejectedUnacceptableBDADDR:
        "the device refused the connection (resources, security or its address)"
    case .connectionTerminatedByLocalHost: "this side cancelled it"
    case .unsupportedRemoteFeature: "the device does not support a feature the connection needs"
    case .llResponseTimeout: "an LMP response timed out"
    default: "see the status"
    }
}
