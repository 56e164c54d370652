import BLECapture
import BLECore

/// Typed capture records for reader/writer tests.
public enum RecordFixtures {
    /// A small HCI conversation with every HCI kind in both directions, 1.5 ms apart from `start` (µs since 1970).
    public static func hciConversation(start: Int64 = 1_700_000_000_123_456) -> [OwnedRecord] {
        let packets: [(RecordKind, Direction, [UInt8])] = [
            (.command, .tx, [0x03, 0x0C, 0x00]),  // HCI_Reset
            (.event, .rx, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]),  // Command Complete
            (.acl, .tx, [0x40, 0x00, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x02, 0xF7, 0x00]),  // ATT MTU req
            (.acl, .rx, [0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x03, 0x17, 0x00]),
            (.sco, .tx, [0x41, 0x00, 0x03, 0xAA, 0xBB, 0xCC]),
            (.sco, .rx, [0x41, 0x00, 0x02, 0x11, 0x22]),
            (.iso, .tx, [0x60, 0x00, 0x04, 0x00, 0x01, 0x02, 0x03, 0x04]),
            (.iso, .rx, [0x60, 0x00, 0x02, 0x00, 0x05, 0x06]),
            (.event, .rx, [0x13, 0x05, 0x01, 0x40, 0x00, 0x01, 0x00]),  // Number Of Completed Packets
        ]
        return packets.enumerated().map { i, p in
            OwnedRecord(
                frame: i + 1, timestamp: Timestamp(microseconds: start + Int64(i) * 1_500), direction: p.1, kind: p.0,
                bytes: p.2)
        }
    }

    /// An Android bug report text carrying `records` as a btsnooz block (AOSP layout, ms timestamps).
    public static func btsnoozBugReport(_ records: [OwnedRecord], version: UInt8 = 2) -> [UInt8] {
        BTSnooz.bugReport(records, version: version)
    }

    /// Every record of a capture, owned.
    public static func readAll(_ file: CaptureFile) -> [OwnedRecord] {
        var out: [OwnedRecord] = []
        while let r = file.next() { out.append(OwnedRecord(r)) }
        return out
    }
}
