import BLECore

/// Where an nRF Sniffer's own packet counter skips values: the firmware numbers every message it sends its host (u16,
/// header versions 2 and 3: bytes 4–5 after the board id), so a counter that moves by more than one between two records
/// of the file says messages were sent that the file does not hold. Most are packets lost between the sniffer and the
/// file (a host that fell behind, a full buffer) or left out by the host; a few may be the firmware's own messages (its
/// follow, connect and disconnect events take a value each). The file's times may then be the host's, not the air's: on
/// the LED capture (`../shared/captures`) the counter skips 4145 → 12970 at frame 4121 while the sniffer's clock moves
/// 23.871887 s and the file's time 0.190 ms (issue 49, 2 (i)).
public struct NordicCounterSkips: Hashable, Sendable {
    /// One skip: its frame, the values skipped, how far the sniffer's clock moved (µs; nil without a clock, header
    /// version 2) and the file's time (µs).
    public struct Skip: Hashable, Sendable {
        public var frame: Int
        public var values: Int
        public var snifferMicroseconds: Int64?
        public var fileMicroseconds: Int64
    }

    /// Counter values skipped in all, in how many places, from which frame; the largest skip.
    public private(set) var skipped = 0
    public private(set) var places = 0
    public private(set) var firstFrame: Int?
    public private(set) var largest: Skip?
    private var board: Int = -1
    private var counter: UInt16 = 0
    private var clock: UInt32?
    private var file: Int64 = 0

    public init() {}

    /// The counter of one nRF Sniffer record (LINKTYPE 272): a step of 2 to 2^15 is a skip; a step back is a new
    /// session of the sniffer (its counter starts again), not a skip; another board's record starts its own count.
    public mutating func add(_ record: CaptureRecord) {
        guard record.linkType == 272 else { return }
        let p = record.bytes
        guard p.count >= 7, !(p[0] == 0xBE && p[1] == 0xEF), p[3] == 2 || p[3] == 3 else { return }
        let value = UInt16(p[4]) | UInt16(p[5]) << 8
        var time: UInt32?
        if p[3] == 3, p.count >= 17, p[7] >= 10 {
            time = UInt32(p[13]) | UInt32(p[14]) << 8 | UInt32(p[15]) << 16 | UInt32(p[16]) << 24
        }
        let now = record.timestamp.microseconds
        defer { (board, counter, clock, file) = (Int(p[0]), value, time, now) }
        guard board == Int(p[0]) else { return }
        let step = Int(value &- counter)
        guard step >= 2, step < 0x8000 else { return }
        skipped += step - 1
        places += 1
        if firstFrame == nil { firstFrame = record.frame }
        if step - 1 > largest?.values ?? 0 {
            // The sniffer's clock is u32 µs: its step modulo 2^32.
            let moved = time.flatMap { t in clock.map { Int64(t &- $0) } }
            largest = Skip(frame: record.frame, values: step - 1, snifferMicroseconds: moved, fileMicroseconds: now - file)
        }
    }

    /// `the nRF Sniffer's packet counter skipped 8869 values in 22 places (first at frame 4120) …`; nil when it never did.
    public var text: String? {
        guard let firstFrame, let largest else { return nil }
        let clock = largest.snifferMicroseconds.map { ", where the sniffer's clock moved \(Self.duration($0))" } ?? ""
        return
            "the nRF Sniffer's packet counter skipped \(skipped) value\(skipped == 1 ? "" : "s") in \(places) place\(places == 1 ? "" : "s") (first at frame \(firstFrame)): up to \(skipped) packet\(skipped == 1 ? "" : "s") it sent its host are not in the file (lost on the way or left out by the host; the firmware's own events take values too); the largest skip, \(largest.values) at frame \(largest.frame)\(clock) and the file's time \(Self.duration(largest.fileMicroseconds))"
    }

    static func duration(_ us: Int64) -> String {
        abs(us) < 1000
            ? "\(us) µs"
            : abs(us) < 1_000_000
                ? String(fractionDigits: 3, Double(us) / 1000) + " ms" : String(fractionDigits: 6, Double(us) / 1e6) + " s"
    }
}
