import BLECapture
import BLECore

/// ACL after this side's HCI Reset on a handle no link holds, kept a moment in case its Connection Complete comes next:
/// a link's first packets can be logged ahead of the event that opens it (Windows BTVS: 3 ms, ``LinkAdoption``). After a
/// reset such ACL opens no link of its own (``HCIMachine/infersLinks(controller:)``), so without this it was dropped; held,
/// it is replayed into the link a Connection Complete opens within ``LinkAdoption/window`` of its first packet, and
/// otherwise let go (the capture's edges count it as stale, ``CaptureCompleteness``).
struct EarlyACLAfterReset {
    /// At most this many records per handle and this many handles (a log that sends ACL on a handle it never opens
    /// holds no more than this).
    static let maxRecords = 64
    static let maxHandles = 16
    private var held: [UInt32: [OwnedRecord]] = [:]

    var isEmpty: Bool { held.isEmpty }

    mutating func hold(_ record: CaptureRecord, handle: UInt16) {
        let key = UInt32(record.controllerIndex) << 16 | UInt32(handle & 0x0FFF)
        var list = held[key] ?? []
        // Too long since the first: no Connection Complete adopts these any more.
        if let first = list.first, !LinkAdoption.adopts(since: first.timestamp, at: record.timestamp) { list.removeAll() }
        guard list.count < Self.maxRecords, held[key] != nil || held.count < Self.maxHandles else { return }
        list.append(OwnedRecord(record))
        held[key] = list
    }

    /// The records held on `controller` for handles a link now holds (`isOpen`), whose first came within the adoption
    /// window before `now`, in frame order; those handles are let go whether adopted or not.
    mutating func take(controller: UInt16, at now: Timestamp, isOpen: (UInt16) -> Bool) -> [OwnedRecord] {
        var adopted: [OwnedRecord] = []
        for key in Array(held.keys) where key >> 16 == UInt32(controller) && isOpen(UInt16(key & 0xFFFF)) {
            if let list = held.removeValue(forKey: key), let first = list.first, LinkAdoption.adopts(since: first.timestamp, at: now) {
                adopted += list
            }
        }
        return adopted.sorted { $0.frame < $1.frame }
    }
}

extension Analyzer {
    /// After an event (a Connection Complete): the ACL held for the handles it opened goes to their links, as if it had
    /// come after the event.
    func replayEarlyACL(_ record: CaptureRecord) {
        let controller = record.controllerIndex
        let adopted = earlyACL.take(controller: controller, at: record.timestamp) { handle in
            table.link(controller: controller, handle: handle, frame: record.frame, timestamp: record.timestamp, infer: false) != nil
        }
        for held in adopted { held.withRecord { processACL($0, replayed: true) } }
    }
}
