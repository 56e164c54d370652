import BLECore

/// A PacketLogger file whose seconds field counts milliseconds, told from its own records, and its times read so.
///
/// The writer known to do it: BTstack's Windows port (`platform/windows/hci_dump_windows_fs.c`, from its first
/// version, 2022-04, until its "fix timestamps" commit, 2023-09) divided the Windows FILETIME (100 ns units) by 10,000,
/// not 10,000,000, for the seconds field: milliseconds since 1601, less the 1601→1970 offset counted in seconds, cut to
/// 32 bits. Its microseconds field held the µs within that millisecond, always 0 as its clock (`GetLocalTime`) counts
/// whole milliseconds. tshark and PacketLogger read the field as seconds: a 33-second log spans 9 hours, and commands
/// answered in milliseconds take seconds (the Thewbi BT400 log of the corpus).
///
/// The record headers give it away, whoever wrote them, in a look-ahead over the first records:
/// - every microseconds field is 0 (a sub-second field that never moves), and
/// - most HCI commands are answered (Command Complete or Command Status for their opcode) one unit or more later.
/// HCI round trips take milliseconds: on a clock of seconds nearly all fall within one second (in the 60 other
/// PacketLogger files of the corpus, Samples and shared captures, at most 1 in 26 is answered a unit later), on a
/// clock of milliseconds nearly none do (the BTstack Windows log: 44 of 44, 1–65 units). A log whose microseconds are 0
/// only now and then, or whose commands are answered within the unit, keeps its times.
///
/// The times are then inferred, not the file's: frame 1 keeps the file's time (so it matches tshark's), and every later
/// record is that many milliseconds after it as the counter moved (a signed 32-bit step, so the counter's wrap at 2^32
/// ms, 49.7 days, is no step back). The date is not in such a log: the counter's origin is lost in the cut to 32 bits.
struct PacketLoggerClock {
    /// What the look-ahead saw, for the finding.
    struct Evidence {
        var records: Int
        var answered: Int
        var late: Int
        var minimumUnits: UInt32
        var maximumUnits: UInt32
        var medianUnits: UInt32
        /// The command answered latest: its frame and the answer's (the first of equals).
        var slowest: (command: Int, answer: Int)
    }

    /// Records the look-ahead reads at most, and the bytes it may hold for them.
    static let lookAheadRecords = 1000
    static let lookAheadBytes = 256 << 10
    /// Fewer answered commands than this decide nothing.
    static let minimumAnswered = 4
    /// A median round trip above this many units is no HCI round trip in milliseconds either (HCI's usual 2 s time-out).
    static let maximumMedianUnits: UInt32 = 2000

    let evidence: Evidence
    /// The file's time of the first record (µs), which the inferred times start from.
    private var origin: Int64?
    private var previousTick: UInt32 = 0
    /// Milliseconds since the first record.
    private var elapsed: Int64 = 0

    init(evidence: Evidence) { self.evidence = evidence }

    /// The record's time: the first record's file time plus the milliseconds the counter moved since.
    mutating func time(seconds: UInt32, microseconds: UInt32) -> Timestamp {
        guard let origin else {
            origin = Int64(seconds) &* 1_000_000 &+ Int64(microseconds)
            previousTick = seconds
            return Timestamp(microseconds: origin!)
        }
        elapsed &+= Int64(Int32(bitPattern: seconds &- previousTick))
        previousTick = seconds
        return Timestamp(microseconds: origin &+ elapsed &* 1000 &+ Int64(microseconds))
    }

    /// Reads the leading records of `window` (whole records only) and returns the evidence of a millisecond counter in
    /// the seconds field, or nil when the records do not show one.
    static func millisecondEvidence(_ window: UnsafeRawBufferPointer, bigEndian: Bool) -> Evidence? {
        guard let p = window.baseAddress else { return nil }
        var offset = 0, records = 0
        var pending: [UInt16: (frame: Int, tick: UInt32)] = [:]
        var units: [UInt32] = []
        var slowest: (command: Int, answer: Int, units: UInt32)?
        while records < lookAheadRecords, offset + PacketLogger.headerSize <= window.count {
            let h = p + offset
            let length = Int(bigEndian ? h.be32(0) : h.le32(0))
            guard length >= PacketLogger.minLength, length <= PacketLogger.maxLength, offset + 4 + length <= window.count else { break }
            let tick = bigEndian ? h.be32(4) : h.le32(4)
            guard (bigEndian ? h.be32(8) : h.le32(8)) == 0 else { return nil }
            records += 1
            let payload = UnsafeRawBufferPointer(start: h + PacketLogger.headerSize, count: length - PacketLogger.minLength)
            switch h.byte(12) {
            case PacketLogger.command where payload.count >= 3:
                pending[UInt16(payload[0]) | UInt16(payload[1]) << 8] = (records, tick)
            case PacketLogger.event:
                if let opcode = answeredOpcode(payload), let command = pending.removeValue(forKey: opcode) {
                    let u = tick &- command.tick
                    units.append(u)
                    if u > slowest?.units ?? 0 { slowest = (command.frame, records, u) }
                }
            default:
                break
            }
            offset += 4 + length
        }
        let late = units.count(where: { $0 > 0 })
        guard units.count >= minimumAnswered, late * 2 > units.count, let slowest else { return nil }
        let sorted = units.sorted()
        let median = sorted[sorted.count / 2]
        guard median <= maximumMedianUnits else { return nil }
        return Evidence(
            records: records, answered: units.count, late: late, minimumUnits: sorted.first!, maximumUnits: sorted.last!,
            medianUnits: median, slowest: (slowest.command, slowest.answer))
    }

    /// The opcode a Command Complete (0x0E) or Command Status (0x0F) event answers, or nil (and nil for 0x0000, a
    /// controller's "ready for commands", which answers none).
    private static func answeredOpcode(_ e: UnsafeRawBufferPointer) -> UInt16? {
        let opcode: UInt16
        if e.count >= 5, e[0] == 0x0E {
            opcode = UInt16(e[3]) | UInt16(e[4]) << 8
        } else if e.count >= 6, e[0] == 0x0F {
            opcode = UInt16(e[4]) | UInt16(e[5]) << 8
        } else {
            return nil
        }
        return opcode == 0 ? nil : opcode
    }

    /// Said once, at the answer that took the most units.
    var finding: Finding {
        let e = evidence
        return Finding(
            .info,
            FindingKind(
                .captureMillisecondClock,
                message:
                    "times read as milliseconds (inferred): the seconds field counts them. All \(e.records) records read ahead have "
                    + "microseconds 0, and \(e.late) of \(e.answered) HCI commands there are answered \(e.minimumUnits)–\(e.maximumUnits) "
                    + "units later (median \(e.medianUnits); the slowest, frame \(e.slowest.command) → \(e.slowest.answer)), where HCI "
                    + "round trips take milliseconds. Durations are 1/1000 of tshark's, times count from frame 1's, and the date "
                    + "is not in the log (BTstack's Windows port wrote PacketLogger logs so from 2022-04 to 2023-09)"),
            frame: e.slowest.answer)
    }
}
