import BLECore
import BLEProtocols

/// Pairing and encryption: each connection's ``SecurityTracker`` is fed its SMP PDUs and the HCI exchange that starts
/// encryption, and what it says goes to the link state (``LinkState``), the evidence and the timeline.
extension Analyzer {
    /// One SMP PDU of connection `index`: the key store learns from it (air captures decrypt with what it derives), the
    /// connection's security tracker follows the pairing.
    func processSMP(_ pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp, state: ConnectionState) {
        counters.smpPDUs += 1
        var reader = ByteReader(pdu.payload)
        let handle = connections[index].handle
        do {
            let smp = try SMPPDU(parsing: &reader)
            let c = connections[index]
            keyStore.smp(
                smp, raw: pdu.payload, handle: handle, centralToPeripheral: c.centralToPeripheral(direction), frame: pdu.lastFrame,
                central: c.centralAddressValue, peripheral: c.peripheralAddressValue)
            recordPairingFeatures(
                smp, sender: direction == .rx ? .peer : .local, connection: index, frame: pdu.lastFrame, timestamp: timestamp)
            if let output = connections[index].machine.feed(smp: smp, sender: direction == .rx ? .peer : .local) {
                applySecurity(output, connection: index, frame: pdu.lastFrame, timestamp: timestamp)
            }
            if options.timeline {
                var e = TimelineEvent(
                    frame: pdu.lastFrame, timestamp: timestamp, connection: handle, direction: direction,
                    layer: .smp, code: UInt32(smp.code.rawValue), name: smp.code.description, summary: smp.summary)
                if case .pairingFailed = smp { e.status = smp.summary }
                emit(e)
            }
        } catch {
            findings.append(Finding(.warning, .malformed("SMP PDU", error), frame: pdu.lastFrame))
        }
    }

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
        let kind: EvidenceEvent.Kind
        switch output {
        case .encryption, .encryptionFailed:
            // The link's fact is the machine's (``LinkMachine``); the
            // Encryption Change event itself is the evidence (``HCIEvidence``).
            return
        case .pairingRequested(let sender, let authReq): kind = .pairingRequest(sender: sender, authReq: authReq)
        case .pairingAccepted(let sender, let authReq): kind = .pairingResponse(sender: sender, authReq: authReq)
        case .securityRequested(let sender): kind = .securityRequest(sender: sender)
        case .pairingFailed(let sender, let reason): kind = .pairingFailed(sender: sender, reason: reason)
        case .keyDistributed(let sender, _): kind = .keysDistributed(sender: sender)
        }
        evidence(kind, frame: frame, timestamp: timestamp, connection: connections[index].number)
    }
}
