import BLECapture
import BLECore

/// HCI records the logger wrote twice: a command, or a Command Complete / Command Status, with the same bytes and the
/// same instant as the record before it. A host waits for the controller before its next command (Core Spec Vol 4,
/// Part E, 4.4: Num_HCI_Command_Packets), and a controller answers a command once, so neither repeats within one
/// microsecond: the btsnoop parser sample in the corpus has one LE Set Advertising Parameters (49) then seven
/// byte-identical completions at one instant (50–56), and thirteen identical commands at one instant (57–69). Such a
/// record is counted and said (one finding per run), not analysed again: the command is answered once.
struct RepeatedRecords {
    private var last: (kind: RecordKind, timestamp: Timestamp, bytes: [UInt8])?
    /// The finding of the run going on, and the frame it repeats.
    private var run: (finding: Int, original: Int, count: Int)?
    private var lastFrame = 0

    /// Whether `record` repeats the one before it; a record that does not is kept to compare the next with.
    mutating func repeats(_ record: CaptureRecord, findings: inout [Finding]) -> Bool {
        guard Self.mayRepeat(record) else {
            last = nil
            run = nil
            return false
        }
        if let l = last, l.kind == record.kind, l.timestamp == record.timestamp, l.bytes.elementsEqual(record.bytes) {
            note(record, findings: &findings)
            return true
        }
        last = (record.kind, record.timestamp, Array(record.bytes))
        lastFrame = record.frame
        run = nil
        return false
    }

    /// Commands, and the events that answer them (Command Complete 0x0E, Command Status 0x0F). Other events repeat
    /// legitimately (a Number Of Completed Packets for each packet), and data can repeat its bytes.
    private static func mayRepeat(_ record: CaptureRecord) -> Bool {
        switch record.kind {
        case .command: return true
        case .event: return record.bytes.first == 0x0E || record.bytes.first == 0x0F
        default: return false
        }
    }

    private mutating func note(_ record: CaptureRecord, findings: inout [Finding]) {
        if var r = run, r.finding < findings.count {
            r.count += 1
            findings[r.finding].kind = Self.kind(original: r.original, count: r.count, last: record.frame)
            run = r
            return
        }
        run = (findings.count, lastFrame, 1)
        findings.append(
            Finding(.info, Self.kind(original: lastFrame, count: 1, last: record.frame), frame: record.frame, offset: record.fileOffset))
    }

    static func kind(original: Int, count: Int, last: Int) -> FindingKind {
        let which = count == 1 ? "frame \(last) repeats" : "\(count) records (frames \(last - count + 1)–\(last)) repeat"
        return FindingKind(
            .hciRepeatedRecord,
            message:
                "\(which) frame \(original) byte for byte at the same instant: written again by the logger, counted once and not analysed again"
        )
    }
}
