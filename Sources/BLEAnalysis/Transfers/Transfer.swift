import BLECodecs
import BLECore

/// One application message rebuilt from several attribute values (chunks).
///
/// Framings: Apple's *BTLE Transfer* (chunks ended by a value that is exactly `EOM`), codec roles
/// (`total-count` + `sequence` records, `message-terminator`), and MCUmgr SMP messages whose 8-byte
/// header gives the length.
public struct Transfer: Hashable, Sendable {
    /// How the message boundaries were found.
    public enum Framing: String, Hashable, Sendable {
        /// Chunks ended by a terminator value (`EOM` by default).
        case terminator = "eom"
        /// Records carrying a `sequence` role, counted by a `total-count` or ended by a `message-terminator`.
        case records
        /// One MCUmgr SMP message (length from its header).
        case smp
    }

    public var framing: Framing
    public var connection: UInt16
    public var connectionNumber: Int
    /// Handle of the first chunk (records may come on several handles of one codec).
    public var handle: UInt16
    public var characteristic: BluetoothUUID?
    public var service: BluetoothUUID?
    public var direction: Direction
    /// Codec that gave the roles (record framing).
    public var codec: String?
    public var firstFrame: Int
    public var lastFrame: Int
    public var firstTime: Timestamp
    public var lastTime: Timestamp
    /// Frame of the terminator (`EOM`, message-terminator) when one ended the message.
    public var terminatorFrame: Int?
    /// Frame of the message announcing the count (`total-count` role).
    public var countFrame: Int?
    /// Number of values (chunks, records) that made up the message.
    public var chunks: Int
    /// The message bytes (chunks concatenated; at most ``TransferOptions/maxMessageBytes``).
    public var data: [UInt8]
    /// Bytes received, including any beyond the cap.
    public var byteCount: Int
    /// The whole message was seen (terminator seen, all records arrived, SMP length reached).
    public var complete: Bool
    /// Record framing: how many records were announced.
    public var expectedCount: Int?
    /// Record framing: indices that never arrived / arrived more than once.
    public var missingIndices: [Int] = []
    public var duplicateIndices: [Int] = []
    /// SMP framing: the message header.
    public var smp: SMPHeader?
    public var findings: [Finding] = []

    public init(
        framing: Framing, connection: UInt16, connectionNumber: Int, handle: UInt16,
        characteristic: BluetoothUUID?, service: BluetoothUUID?, direction: Direction, codec: String? = nil,
        firstFrame: Int, firstTime: Timestamp
    ) {
        self.framing = framing
        self.connection = connection
        self.connectionNumber = connectionNumber
        self.handle = handle
        self.characteristic = characteristic
        self.service = service
        self.direction = direction
        self.codec = codec
        self.firstFrame = firstFrame
        self.lastFrame = firstFrame
        self.firstTime = firstTime
        self.lastTime = firstTime
        chunks = 0
        data = []
        byteCount = 0
        complete = false
    }

    /// Message length in bytes (all bytes seen, even past the cap).
    public var length: Int { byteCount }

    /// From the first chunk to the last value of the message (terminator included), in µs.
    public var durationMicroseconds: Int64 { lastTime.microseconds(since: firstTime) }

    /// Message bits per second over ``durationMicroseconds``; nil for a message sent in one instant.
    public var rateBitsPerSecond: Double? {
        let d = durationMicroseconds
        guard d > 0 else { return nil }
        return Double(byteCount) * 8 * 1_000_000 / Double(d)
    }

    /// The message as text when it is printable UTF-8 (tabs and newlines allowed), cut to `limit` characters.
    public func textPreview(limit: Int = 80) -> String? {
        guard !data.isEmpty else { return nil }
        for b in data where b < 0x20 && b != 0x09 && b != 0x0A && b != 0x0D || b == 0x7F { return nil }
        guard let text = String(validating: data, as: UTF8.self) else { return nil }
        if text.count <= limit { return text }
        return String(text.prefix(limit)) + "…"
    }

    mutating func append(_ value: UnsafeRawBufferPointer, frame: Int, time: Timestamp, cap: Int) {
        chunks += 1
        lastFrame = frame
        lastTime = time
        let room = cap - data.count
        if value.count <= room {
            data.append(contentsOf: value)
        } else {
            if room > 0 { data.append(contentsOf: value[0..<room]) }
            if byteCount <= cap {
                findings.append(Finding(.warning, .transferTooLong(cap: cap), frame: frame))
            }
        }
        byteCount += value.count
    }
}

/// The 8-byte MCUmgr SMP header (big-endian fields).
///
/// ```
/// | op (3 bits) | flags | length u16 BE | group u16 BE | seq | id |
/// ```
public struct SMPHeader: Hashable, Sendable, CustomStringConvertible {
    /// 0 read, 1 read response, 2 write, 3 write response.
    public var op: UInt8
    public var flags: UInt8
    /// Length of the CBOR body after the header.
    public var length: UInt16
    public var group: UInt16
    public var sequence: UInt8
    public var id: UInt8

    public init(op: UInt8, flags: UInt8, length: UInt16, group: UInt16, sequence: UInt8, id: UInt8) {
        self.op = op
        self.flags = flags
        self.length = length
        self.group = group
        self.sequence = sequence
        self.id = id
    }

    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let b0 = try UInt8(parsing: &input)
        op = b0 & 0x07
        flags = try UInt8(parsing: &input)
        length = try UInt16(parsingBigEndian: &input)
        group = try UInt16(parsingBigEndian: &input)
        sequence = try UInt8(parsing: &input)
        id = try UInt8(parsing: &input)
    }

    public var bytes: [UInt8] {
        [op, flags, UInt8(length >> 8), UInt8(length & 0xFF), UInt8(group >> 8), UInt8(group & 0xFF), sequence, id]
    }

    public var isRequest: Bool { op == 0 || op == 2 }

    public var description: String {
        let ops = ["read", "read-rsp", "write", "write-rsp"]
        let o = op < 4 ? ops[Int(op)] : "op\(op)"
        return "SMP \(o) group \(group) id \(id) seq \(sequence) len \(length)"
    }
}

/// How the chunked-transfer tracker finds messages.
public struct TransferOptions: Sendable {
    /// Apple's BTLE Transfer characteristic (`08590F7E-DB05-467E-8757-72F6FAEB13D4`).
    public static let appleTransferCharacteristic = BluetoothUUID("08590F7E-DB05-467E-8757-72F6FAEB13D4")!
    /// MCUmgr SMP characteristic (`DA2E7828-FBCE-4E01-AE9E-261174997C48` is the Zephyr default value handle UUID;
    /// the service is `8D53DC1D-1DB7-4CD3-868B-8A527460AA84`).
    public static let smpService = BluetoothUUID("8D53DC1D-1DB7-4CD3-868B-8A527460AA84")!
    public static let smpCharacteristic = BluetoothUUID("DA2E7828-FBCE-4E01-AE9E-261174997C48")!

    /// A value exactly equal to these bytes ends a message (never a match inside a chunk).
    public var terminator: [UInt8] = Array("EOM".utf8)
    /// Characteristics always followed with terminator framing.
    public var characteristics: Set<BluetoothUUID> = [TransferOptions.appleTransferCharacteristic]
    /// Handles always followed with terminator framing.
    public var handles: Set<UInt16> = []
    /// Only values going this way (nil: both).
    public var direction: Direction? = nil
    /// Also follow any other characteristic once a value equal to the terminator is seen on it.
    public var autoDetect = true
    /// Before a terminator is seen, a stream is buffered for at most this many values / bytes, then ignored.
    public var autoDetectMaxValues = 512
    public var autoDetectMaxBytes = 64 * 1024
    /// A message is cut at this many bytes (with a finding).
    public var maxMessageBytes = 16 * 1024 * 1024
    /// Follow codec roles (`total-count`, `sequence`, `message-terminator`).
    public var followRoles = true
    /// Rebuild MCUmgr SMP messages on the SMP service / characteristic.
    public var followSMP = true

    public init() {}

    /// Parses a terminator given as hex (`0x454f4d`, `hex:45 4f 4d`) or as text (`EOM`).
    public static func terminator(parsing text: String) -> [UInt8]? {
        if text.hasPrefix("hex:") { return bytes(fromHex: text.dropFirst(4)).flatMap { $0.isEmpty ? nil : $0 } }
        if text.hasPrefix("0x") || text.hasPrefix("0X") { return bytes(fromHex: text).flatMap { $0.isEmpty ? nil : $0 } }
        return text.isEmpty ? nil : Array(text.utf8)
    }
}

extension FindingKind {
    public static func transferTooLong(cap: Int) -> FindingKind {
        FindingKind(.transferTooLong, message: "message longer than \(cap) bytes: the rest is not kept")
    }
    public static func transferCut(_ why: String) -> FindingKind {
        FindingKind(.transferIncomplete, message: "message cut by \(why)")
    }
    public static var emptyTransfer: FindingKind {
        FindingKind(.transferEmpty, message: "end-of-message marker with no data before it")
    }
    public static func transferMissing(_ indices: [Int]) -> FindingKind {
        FindingKind(.transferMissingChunks, message: "missing chunk(s) \(indexList(indices))")
    }
    public static func transferDuplicate(_ index: Int) -> FindingKind {
        FindingKind(.transferDuplicateChunk, message: "chunk \(index) received again")
    }
    public static func transferOutOfRange(_ index: Int, count: Int) -> FindingKind {
        FindingKind(.transferIndexOutOfRange, message: "record index \(index) beyond the announced count \(count)")
    }
    public static func transferInvalidRecord(_ index: Int?, _ problems: [String]) -> FindingKind {
        FindingKind(
            .transferInvalidRecord,
            message: "record \(index.map(String.init) ?? "?") failed validation: \(problems.joined(separator: "; "))")
    }
    public static func transferSuperseded() -> FindingKind {
        FindingKind(.transferSuperseded, message: "a new count arrived before all announced records")
    }
    public static func smpBadHeader(_ what: String) -> FindingKind {
        FindingKind(.transferSMPBadHeader, message: "not an SMP message start: \(what)")
    }
}

/// `1, 2, 5-9` (at most 20 ranges shown).
func indexList(_ indices: [Int]) -> String {
    var parts: [String] = []
    var i = 0
    let s = indices.sorted()
    while i < s.count {
        var j = i
        while j + 1 < s.count, s[j + 1] == s[j] + 1 { j += 1 }
        parts.append(i == j ? "\(s[i])" : "\(s[i])-\(s[j])")
        i = j + 1
    }
    if parts.count > 20 { return parts.prefix(20).joined(separator: ", ") + ", …" }
    return parts.joined(separator: ", ")
}
