import BLECapture
import BLECore
import BLEProtocols

extension Layer {
    /// A Link Manager Protocol PDU a controller logged (``BroadcomLMPTrace``).
    public static let lmp = Layer(rawValue: "lmp")
}

extension Analyzer {
    /// An LMP trace record a controller logged: a timeline line on the BR/EDR link to its peer, and the key size the two
    /// link managers agreed (an LMP_encryption_key_size_req the other side accepted, Core Spec Vol 2, Part C, 4.2.5.4)
    /// into the link's security record: the size Read Encryption Key Size would give, seen where the host never asked.
    func processLMP(_ record: CaptureRecord) {
        guard let (peer, pdu, sent) = lmp.read(record) else { return }
        let link = table.openLinks(controller: record.controllerIndex).first {
            table.peer(link: $0).map { BroadcomLMPTrace.matches($0, peer) } ?? false
        }
        if let size = pdu.proposedKeySize {
            lmp.proposedKeySizes[peer] = (size, sent)
        } else if pdu.opcode == 3, pdu.extendedOpcode == nil, pdu.parameters.first == 16, let proposal = lmp.proposedKeySizes[peer],
            proposal.byThisSide != sent, let link
        {
            table.feed(.security(.keySizeNegotiated(proposal.size)), link: link, frame: record.frame, timestamp: record.timestamp)
        }
        if pdu.opcode == 17, pdu.extendedOpcode == nil, let link, sink.recordsEvidence {
            sink.evidence(
                .lmpStartEncryption(sender: sent ? .local : .peer, random: pdu.parameters), frame: record.frame,
                timestamp: record.timestamp, controller: record.controllerIndex, connection: table.connectionNumber(link: link))
        }
        guard options.timeline else { return }
        var e = TimelineEvent(
            frame: record.frame, timestamp: record.timestamp, connection: link.map { table[$0].handle }, direction: sent ? .tx : .rx,
            layer: .lmp, code: UInt32(pdu.extendedOpcode.map { 0x7F00 | UInt16($0) } ?? UInt16(pdu.opcode)), name: pdu.name,
            summary: pdu.summary)
        e.connectionNumber = link.map { table.connectionNumber(link: $0) }
        table.emit(e, waiting: false)
    }
}
