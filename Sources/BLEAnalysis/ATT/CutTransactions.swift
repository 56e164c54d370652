import BLECore
import BLEProtocols

/// ATT transactions whose PDUs the capturer cut. Android's filtered snoop log (btsnooz) keeps the first bytes of each
/// ACL record: the Mi Watch log's Find Information Request at frame 356 is answered at 357, whose record was cut from 19
/// to 15 bytes (tshark still reads opcode 0x05 there). The response was sent whole on the link: it answers the request,
/// or the next request looks sent before the answer (GATT-02, Core Spec Vol 3, Part F, 3.3.2). Likewise a request or
/// indication cut waits for its answer. Only the opcode is read: no value, no decode, no malformed finding.
extension ConnectionMachine {
    /// A cut ATT PDU of the LE fixed bearer (its opcode the first kept byte) through the bearer's
    /// ``ATTTransactions`` as a whole one goes (``pairATT(_:_:opcode:input:in:event:)``): a request or indication
    /// opens a transaction (the handle where the kept bytes hold it), a response, Error Response or confirmation
    /// answers the outstanding one. Commands, notifications and unknown opcodes have no transaction.
    func pairCutATT(_ kept: L2CAPPDU, opcode: ATTOpcode, direction: Direction, timestamp: Timestamp) {
        let method = opcode.method
        switch method {
        case .request, .response, .indication, .confirmation: break
        case .command, .notification, .unknown: return
        }
        let input = ATTInput(
            payload: kept.payload, frame: kept.lastFrame, l2capBytes: kept.bytes.count, direction: direction,
            timestamp: timestamp)
        let transaction = ATTTransactions.Input(
            opcode: opcode, method: method, pdu: nil, payload: kept.payload, direction: direction, frame: input.frame,
            timestamp: timestamp)
        let context = ATTContext(
            db: Self.serverDatabase(method, direction), direction: direction, frame: input.frame, timestamp: timestamp,
            l2capBytes: input.l2capBytes)
        // No timeline event: the PDU's fields were not captured (a held-back request's event is settled all the same).
        var event: TimelineEvent? = nil
        _ = pairATT(feedTransaction(transaction, bearer: .fixed), nil, opcode: opcode, input: input, in: context, event: &event)
    }
}
