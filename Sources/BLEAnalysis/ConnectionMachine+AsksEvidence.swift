import BLECore
import BLEProtocols

extension ConnectionMachine {
    /// An Exchange MTU Response on the LE fixed bearer as evidence (``EvidenceEvent/Kind/mtuExchange``): the request's
    /// sender is the client (Core Spec Vol 3, Part F, 3.4.2.1: the client sends its Client Rx MTU, the server answers
    /// with its Server Rx MTU), so it is the other side than the response's. A response whose request the capture
    /// missed (a log started mid-exchange) keeps who must have asked, and no client value nor ATT_MTU.
    func recordMTUExchange(server: Int, client: Int?, _ request: ATTTransaction?, in context: ATTContext) {
        let requester: EvidenceEvent.Sender = context.direction == .rx ? .local : .peer
        let seen = request?.opcode == .exchangeMTURequest ? request : nil
        let clientMTU = seen == nil ? nil : client
        sink.evidence(
            .mtuExchange(
                requester: requester, client: clientMTU, server: server, effective: clientMTU.map { max(23, min($0, server)) },
                requestFrame: seen?.frame),
            frame: context.frame, timestamp: context.timestamp, controller: connection.controller, connection: number)
    }
}

extension ConnectionMachine {
    /// A Pairing Request or Response with its features as evidence (``EvidenceEvent/Kind/pairingFeatures``): what
    /// `diff` reads for the association model (Core Spec Vol 3, Part H, 2.3.5.1).
    func recordPairingFeatures(_ smp: SMPPDU, sender: EvidenceEvent.Sender, frame: Int, timestamp: Timestamp) {
        let kind: EvidenceEvent.Kind
        switch smp {
        case .pairingRequest(let p): kind = .pairingFeatures(sender: sender, response: false, parameters: p)
        case .pairingResponse(let p): kind = .pairingFeatures(sender: sender, response: true, parameters: p)
        default: return
        }
        sink.evidence(kind, frame: frame, timestamp: timestamp, controller: connection.controller, connection: number)
    }
}
