import BLECore
import BLEProtocols

/// One LE pairing attempt on a link: its Pairing Requests (a request sent again before any answer is the same attempt
/// asked again) and whether the other side answered (Pairing Response or Pairing Failed, Core Spec Vol 3, Part H,
/// 3.5.1 and 3.5.5). A request nobody answered is no pairing: what happened is "asked N times, never answered".
package struct PairingAttempt: Hashable, Sendable {
    package var connection: Int?
    /// The Pairing Requests' frames, the first one first.
    package var requests: [Int]
    package var firstEvent: Int
    package var lastEvent: Int
    /// The Pairing Response, Pairing Failed, key distribution or encryption that shows the pairing went on.
    package var answeredAt: Int?
    package var answered: Bool { answeredAt != nil }

    /// The attempts of `events` (indices into it), in order, on the connections `include` accepts.
    package static func all(_ events: [EvidenceEvent], include: (Int?) -> Bool) -> [PairingAttempt] {
        var out: [PairingAttempt] = []
        var open: [Int?: Int] = [:]
        for (i, ev) in events.enumerated() where include(ev.connection) {
            switch ev.kind {
            case .pairingRequest:
                if let k = open[ev.connection], !out[k].answered {
                    out[k].requests.append(ev.frame)
                    out[k].lastEvent = i
                } else {
                    open[ev.connection] = out.count
                    out.append(PairingAttempt(connection: ev.connection, requests: [ev.frame], firstEvent: i, lastEvent: i))
                }
            case .pairingResponse, .pairingFailed, .keysDistributed, .encryptionChange(_, .success, true):
                if let k = open[ev.connection], out[k].answeredAt == nil { out[k].answeredAt = ev.frame }
                if case .pairingFailed = ev.kind { open[ev.connection] = nil }
            default: break
            }
        }
        return out
    }
}
