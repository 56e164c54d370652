import BLECore
import BLEProtocols

/// Notifications whose records the capturer cut: whole on the link, their opcode and handle kept, their value not.
/// Android's filtered snoop log (btsnooz) keeps the first bytes of each ACL record; Windows' BTVS logs a HID mouse's
/// input reports as opcode and handle alone (the 40-minute Razer log: 28,842 of its 32,245 notifications, tshark
/// `btatt.opcode == 0x1b`). A notification whose value was not captured was still sent: it counts as one received
/// (``LinkActivity/notified``, which GATT-05 reads), and the Data line says how many were cut. Requests, responses and
/// confirmations the capturer cut still open and close their transactions (`CutTransactions.swift`).
extension ConnectionMachine {
    /// A PDU the capturer cut (``L2CAPReassembler/Step/cut(_:)``, ``L2CAPReassembler/Step/cutReassembled``), completed
    /// at `timestamp`: on the LE fixed ATT channel, a Handle Value Notification or Indication whose opcode and handle
    /// survived is counted as received, and a request, response, indication or confirmation whose opcode survived
    /// takes its part in the bearer's transactions (``pairCutATT(_:opcode:direction:timestamp:)``).
    func noteCutPDU(_ kept: L2CAPPDU, direction: Direction, timestamp: Timestamp) {
        guard kept.bytes.count >= 4 + 1, kept.channel == L2CAPCID.att.rawValue else { return }
        let payload = kept.payload
        let opcode = ATTOpcode(rawValue: payload[0])
        if opcode == .handleValueNotification || opcode == .handleValueIndication, payload.count >= 3 {
            let handle = UInt16(payload[1]) | UInt16(payload[2]) << 8
            connection.machine.feed(
                cutNotification: handle, indication: opcode == .handleValueIndication, frame: kept.lastFrame,
                direction: direction, activity: sink.recordsEvidence)
        }
        pairCutATT(kept, opcode: opcode, direction: direction, timestamp: timestamp)
    }
}

extension LinkMachine {
    /// A notification (or indication) on `handle` whose value the capturer cut: a notification counted, either noted per
    /// handle when the pass gathers evidence.
    mutating func feed(cutNotification handle: UInt16, indication: Bool, frame: Int, direction: Direction, activity noting: Bool) {
        guard direction == .rx else { return }
        if !indication { activity.cutNotifications += 1 }
        if noting { activity.notifiedTally.note(handle, frame: frame) }
    }
}
