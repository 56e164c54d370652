import BLECore
import BLEProtocols

/// The one door into a link's facts: HCI events and air link-layer PDUs, translated into the same ``LinkInput``, go
/// through ``feedLink(_:connection:frame:timestamp:source:)`` to the connection's ``LinkMachine``; what it answers (a
/// security verdict, the link's end) is acted on here.
extension Analyzer {
    func feedLink(_ input: LinkInput, connection index: Int, frame: Int, timestamp: Timestamp, source: FactSource? = nil) {
        guard let output = table[index].machine.feed(input, frame: frame, timestamp: timestamp, source: source) else { return }
        switch output {
        case .lifecycle(.closed(let ending)): closeConnection(index: index, ending: ending)
        case .lifecycle(.disconnectFailed): break
        case .security(let verdict): applySecurity(verdict, connection: index, frame: frame, timestamp: timestamp)
        }
    }

    /// A link fact an air capture's LL procedure settled, as the ``LinkInput`` the HCI event would have become: the data
    /// length (LE Data Length Change), the encryption procedure's steps (LE Long Term Key Request, its Reply or
    /// Negative Reply, Encryption Change). The evidence of an encryption change is the one HCI's event gives.
    func linkLayerChanged(_ change: LLLinkChange, controller: UInt16) {
        guard let index = table.openIndex(handle: change.handle) else { return }
        let frame = change.frame, timestamp = change.timestamp
        switch change.change {
        case .dataLength(let length):
            // A controller reports a change only; a negotiation that confirms the value in force makes it observed.
            let fact = table[index].link.dataLength
            guard fact.value != length || !fact.isObserved else { return }
            feedLink(.dataLengthChanged(length), connection: index, frame: frame, timestamp: timestamp)
        case .keyRequested:
            feedLink(.encryption(.longTermKeyRequested), connection: index, frame: frame, timestamp: timestamp)
            // LL_ENC_REQ: the central starts encryption, as LE Enable Encryption says it on HCI.
            evidence(
                .encryptionStart(handle: change.handle), frame: frame, timestamp: timestamp, controller: controller,
                connection: table[index].number)
        case .keyGiven: feedLink(.encryption(.longTermKeyReplied), connection: index, frame: frame, timestamp: timestamp)
        case .keyRefused: feedLink(.encryption(.longTermKeyRefused), connection: index, frame: frame, timestamp: timestamp)
        case .encryption(let on, let inferred):
            guard table[index].isEncrypted != on else { return }
            feedLink(
                .encryption(.changed(status: .success, enabled: on)), connection: index, frame: frame, timestamp: timestamp,
                source: inferred ? .inferred(.encryptedPDU(frame: frame)) : nil)
            evidence(
                .encryptionChange(handle: change.handle, status: .success, enabled: on), frame: frame, timestamp: timestamp,
                controller: controller, connection: table[index].number)
        }
    }
}
