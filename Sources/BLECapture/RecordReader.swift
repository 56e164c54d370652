import BLECore

/// One format's record walker behind ``CaptureFile``.
protocol RecordReader: AnyObject {
    func next() -> CaptureRecord?
    var findings: [Finding] { get }
    var bytesConsumed: Int64 { get }
}

/// What every reader of length-prefixed records keeps: the frame count, whether the walk has ended,
/// and the findings that ended it. A reader stops at the first record whose header cannot be trusted
/// (its length fields would put every later record at a wrong offset) or at the end of the data.
struct RecordWalk {
    /// Frames returned so far (the next record is `frame + 1`).
    var frame = 0
    var stopped = false
    var truncation = TruncationTally()
    var nonHCI = NonHCIIndicatorTally()
    private var stored: [Finding] = []

    var findings: [Finding] { stored + [truncation.finding, nonHCI.finding].compactMap { $0 } }

    /// Ends the walk at a record whose length fields are impossible.
    mutating func stop(invalidLength detail: String, offset: Int64) {
        let frame = self.frame + 1
        stored.append(
            Finding(
                .warning, .captureInvalidRecordLength(frame: frame, offset: offset, detail: detail),
                frame: frame, offset: offset))
        stopped = true
    }

    /// Ends the walk where `source` has fewer than `needed` bytes: a cut file when some are left,
    /// plus the stream's read error (a failing disk, a corrupt gzip member) when there was one.
    mutating func stop(atEndOf source: ByteSource, needed: Int) {
        stopped = true
        let frame = self.frame + 1
        let left = source.available
        if left > 0 {
            stored.append(
                Finding(
                    .warning, .captureTruncatedFile(frame: frame, offset: source.offset, needed: needed, available: left),
                    frame: frame, offset: source.offset))
        }
        if let error = source.streamError {
            stored.append(Finding(.error, .captureReadError(error), frame: frame, offset: source.offset))
        }
    }

    /// Ends the walk at a record the file cuts short, where the reader learned the sizes itself
    /// (libpcap's "truncated dump file" message).
    mutating func stop(truncatedAt offset: Int64, needed: Int, available: Int) {
        let frame = self.frame + 1
        stored.append(
            Finding(
                .warning, .captureTruncatedFile(frame: frame, offset: offset, needed: needed, available: available),
                frame: frame, offset: offset))
        stopped = true
    }

    /// Ends the walk on a read error the format library reported as text.
    mutating func stop(readError message: String, offset: Int64) {
        let frame = self.frame + 1
        stored.append(Finding(.warning, .captureReadError("\(message) (record \(frame))"), frame: frame, offset: offset))
        stopped = true
    }

    /// Why a record that kept `captured` of `original` bytes cannot be right, or nil: a capture never
    /// keeps more than the packet had, nor more than `maximum`. `noun` names the field as the format does.
    @inline(__always)
    static func lengthProblem(captured: Int, original: Int, maximum: Int, noun: String) -> String? {
        guard captured > maximum || captured > original else { return nil }
        return captured > original
            ? "\(noun) length \(captured) exceeds original length \(original)"
            : "\(noun) length \(captured) exceeds the maximum \(maximum)"
    }
}

/// Counts records whose payload the capturer cut, reported as one finding.
struct TruncationTally {
    var count = 0
    var firstFrame = 0
    @inline(__always) mutating func note(frame: Int) {
        if count == 0 { firstFrame = frame }
        count &+= 1
    }
    var finding: Finding? {
        count == 0 ? nil : Finding(.info, .captureTruncatedRecords(count: count, first: firstFrame), frame: firstFrame)
    }
}

/// Records of an H4 datalink (btsnoop 1002, pcap LINKTYPE 187/201) whose packet indicator is none of the HCI packet
/// types 0x01–0x05 (Core v5.4 Vol 4, Part A, 2): kept as `.other`, reported once with the first one's place and type,
/// so a log that holds another tool's records (the ESP32 BR/EDR sniffer writes type 0x09) does not read as complete.
struct NonHCIIndicatorTally {
    var count = 0
    var firstFrame = 0
    var firstIndicator: UInt8 = 0
    @inline(__always) mutating func note(frame: Int, indicator: UInt8) {
        if count == 0 { (firstFrame, firstIndicator) = (frame, indicator) }
        count &+= 1
    }
    var finding: Finding? {
        count == 0
            ? nil
            : Finding(
                .warning, .captureNonHCIIndicator(count: count, first: firstFrame, indicator: firstIndicator),
                frame: firstFrame)
    }
}

/// Records whose timestamp's sub-second field is not below one second (``FindingKind/captureSubsecondOutOfRange``):
/// counted in the hot loop with one comparison, reported once with the first one's place.
struct SubsecondTally {
    var count = 0
    var firstFrame = 0
    var firstOffset: Int64 = 0
    var firstValue: UInt32 = 0
    @inline(__always) mutating func note(frame: Int, offset: Int64, value: UInt32) {
        if count == 0 { (firstFrame, firstOffset, firstValue) = (frame, offset, value) }
        count &+= 1
    }
    func finding(unit: String) -> Finding? {
        count == 0
            ? nil
            : Finding(
                .warning,
                .captureSubsecondOutOfRange(
                    count: count, first: firstFrame, offset: firstOffset, value: firstValue, unit: unit),
                frame: firstFrame, offset: firstOffset)
    }
}

/// Linux monitor (btsnoop datalink 2001, pcap LINKTYPE 254) opcodes, BlueZ `src/shared/btsnoop.h`.
enum LinuxMonitor {
    static let newIndex: UInt16 = 0, deleteIndex: UInt16 = 1, command: UInt16 = 2, event: UInt16 = 3
    static let aclTx: UInt16 = 4, aclRx: UInt16 = 5, scoTx: UInt16 = 6, scoRx: UInt16 = 7
    static let openIndex: UInt16 = 8, closeIndex: UInt16 = 9, indexInfo: UInt16 = 10, vendorDiag: UInt16 = 11
    static let systemNote: UInt16 = 12, userLogging: UInt16 = 13
    static let controlOpen: UInt16 = 14, controlClose: UInt16 = 15, controlCommand: UInt16 = 16, controlEvent: UInt16 = 17
    static let isoTx: UInt16 = 18, isoRx: UInt16 = 19

    /// Kind and direction of a monitor opcode.
    @inline(__always)
    static func classify(_ opcode: UInt16) -> (RecordKind, Direction) {
        switch opcode {
        case command: (.command, .tx)
        case event: (.event, .rx)
        case aclTx: (.acl, .tx)
        case aclRx: (.acl, .rx)
        case scoTx: (.sco, .tx)
        case scoRx: (.sco, .rx)
        case isoTx: (.iso, .tx)
        case isoRx: (.iso, .rx)
        case systemNote, userLogging: (.text, .unknown)
        case 0...17: (.monitor, .unknown)
        default: (.other, .unknown)
        }
    }

    /// The opcode that carries a record of this kind and direction (text is written as a system note).
    static func opcode(kind: RecordKind, direction: Direction, rawType: UInt32) -> UInt16? {
        switch kind {
        case .command: command
        case .event: event
        case .acl: direction == .rx ? aclRx : aclTx
        case .sco: direction == .rx ? scoRx : scoTx
        case .iso: direction == .rx ? isoRx : isoTx
        case .text: systemNote
        case .monitor, .other: rawType <= 0xFFFF ? UInt16(rawType) : nil
        default: nil
        }
    }

    /// User logging payload (priority u8, ident length u8, ident, message) composed as `ident: message`.
    /// Returns false when the payload is malformed (the caller then keeps the raw bytes).
    static func composeUserLogging(_ payload: UnsafeRawBufferPointer, into scratch: inout TextScratch) -> Bool {
        guard payload.count >= 2 else { return false }
        let identLength = Int(payload[1])
        guard 2 + identLength <= payload.count else { return false }
        scratch.reset(reserving: payload.count + 2)
        let ident = UnsafeRawBufferPointer(rebasing: payload[2..<2 + identLength])
        scratch.append(ident)
        if scratch.count > 0 { scratch.append(ascii: ": ") }
        scratch.append(UnsafeRawBufferPointer(rebasing: payload[(2 + identLength)...]))
        return true
    }
}
