import BLECore

/// A sniffer's own clock beside the file's record times: where the two disagree by whole wraps of the sniffer's
/// counter, the host software that wrote the file misdated the records (added or dropped a wrap), and the record
/// times are put back on the sniffer's clock. Not a gap, and not time going backwards.
///
/// The clocks (what the pseudo-header holds, per link type):
/// ```
/// LT 272 nRF Sniffer, header version 3: event packet bytes 6–9, firmware time in µs, u32 LE: wraps every
///        2^32 µs (71 min 35 s). Versions 0–2 hold the time since the previous packet instead: no clock to compare.
/// LT 192 PPI, field 30006 (Ubertooth PPI-BTLE, 12 bytes): version u8 | channel MHz u16 | clkn_high u8 |
///        clk100ns u32, all LE: a 40-bit clock in 100 ns units; the host tool (ubertooth-btle) turns the 32-bit
///        clk100ns, which wraps every 2^32 × 100 ns (429.5 s), into record times.
/// LT 256 and 251 carry no clock: the record time is the only one.
/// ```
/// Real cases (issue 49): an nRF Sniffer capture whose record times jump 4294.967 s while the sniffer's clock moves
/// 6 ms (the LED controller capture in `../shared/captures`, frame 4125); an Ubertooth capture whose one record is
/// dated 429.497 s late (the HackenBluetooth shaver capture, frame 26037: +531.3 s, then −429.5 s at the next).
///
/// A record whose file time steps by `k` wraps more (or less) than the sniffer's clock, within ``tolerance``, is put at
/// the sniffer's step from the record before, and every later record moves with it until the next such step. An nRF
/// Sniffer's 32-bit clock cannot tell a real pause longer than its wrap from a misdated record: there a step is
/// corrected only when the sniffer's clock moved less than ``shortStep`` (a real pause of 71 min 35 s to 71 min 36 s
/// would be taken for a wrap).
struct SnifferClock {
    enum Kind {
        /// nRF Sniffer header version 3: µs, 32 bits.
        case nordic
        /// Ubertooth PPI-BTLE: 100 ns, 40 bits (the host wraps at 32).
        case ubertooth
    }

    /// The file's time may differ from the sniffer's by this much around a wrap (host timestamping jitter).
    static let tolerance: Int64 = 1_000_000
    /// A step of the sniffer's clock at or above this is itself a pause: never taken for a misdated record.
    static let shortStep: Int64 = 60_000_000

    private var previousFile: Int64?
    private var previousSniffer: Int64 = 0
    private var previousKind = Kind.nordic
    /// µs added to every record's file time from the last correction on, on the clock's own interface.
    private var offset: Int64 = 0
    /// The interface (pcapng interface id) and link type whose records carry the clock. A record of another interface
    /// (the Ethernet beside an Ubertooth in one pcapng) was dated by the host's own clock, never by the sniffer's
    /// wraps: it keeps its file time (the HackenBluetooth two-interface capture, frames 5043–5046).
    private var clockInterface: (index: UInt16, linkType: UInt32)?
    /// The corrected steps: (frame, µs moved, the sniffer's step in µs, the wrap's length in µs).
    private(set) var corrections: [(frame: Int, moved: Int64, snifferStep: Int64, wrap: Int64)] = []

    /// Only the link types whose records can carry a sniffer clock.
    static func applies(to linkType: UInt32) -> Bool {
        linkType == PcapLinkType.nordicBLE || linkType == PcapLinkType.ppi
    }

    /// The wrap of the clock the host software turns into record times, µs (a fraction for the Ubertooth's 100 ns).
    static func wrapMicroseconds(_ kind: Kind) -> Double {
        switch kind {
        case .nordic: 4_294_967_296
        case .ubertooth: 429_496_729.6
        }
    }

    /// The sniffer's time of a record in µs and which clock it is, or nil when its pseudo-header holds none.
    static func snifferTime(_ linkType: UInt32, _ p: UnsafeRawBufferPointer) -> (Int64, Kind)? {
        switch linkType {
        case PcapLinkType.nordicBLE:
            // Version 3 (not the legacy 0xBEEF header): 7 header bytes, then the event packet (length ≥ 10).
            guard p.count >= 17, !(p[0] == 0xBE && p[1] == 0xEF), p[3] == 3, p[7] >= 10 else { return nil }
            let t = UInt32(p[13]) | UInt32(p[14]) << 8 | UInt32(p[15]) << 16 | UInt32(p[16]) << 24
            return (Int64(t), .nordic)
        case PcapLinkType.ppi:
            guard p.count >= 8 else { return nil }
            let headerLength = Int(p[2]) | Int(p[3]) << 8
            var at = 8
            while at + 4 <= min(headerLength, p.count) {
                let type = Int(p[at]) | Int(p[at + 1]) << 8
                let length = Int(p[at + 2]) | Int(p[at + 3]) << 8
                let data = at + 4
                if type == 30006, length >= 8, data + 8 <= p.count {
                    let low = UInt64(p[data + 4]) | UInt64(p[data + 5]) << 8 | UInt64(p[data + 6]) << 16 | UInt64(p[data + 7]) << 24
                    let ticks = UInt64(p[data + 3]) << 32 | low
                    return (Int64(ticks / 10), .ubertooth)
                }
                at = data + length
            }
            return nil
        default:
            return nil
        }
    }

    /// Puts `record`'s time on the sniffer's clock where the file's time is off by whole wraps.
    mutating func correct(_ record: inout CaptureRecord) {
        let file = record.timestamp.microseconds
        guard let (sniffer, kind) = Self.snifferTime(record.linkType, record.stored.baseAddress == nil ? record.bytes : record.stored)
        else {
            if offset != 0, let c = clockInterface, c.index == record.controllerIndex, c.linkType == record.linkType {
                record.timestamp = Timestamp(microseconds: file &+ offset)
            }
            return
        }
        clockInterface = (record.controllerIndex, record.linkType)
        defer {
            previousFile = file
            previousSniffer = sniffer
            previousKind = kind
        }
        if let before = previousFile, kind == previousKind {
            var step = sniffer &- previousSniffer
            // Modulo the nRF Sniffer's 32 bits, a step is forward up to half its range, backwards beyond.
            if kind == .nordic && step < -(1 << 31) { step &+= 1 << 32 } else if kind == .nordic && step >= 1 << 31 { step &-= 1 << 32 }
            let wrap = Self.wrapMicroseconds(kind)
            let residual = Double(file &- before &- step)
            let wraps = (residual / wrap).rounded()
            // The nRF Sniffer's clock is the wrapping one: a long step of it may be a real pause. The Ubertooth's 40 bits
            // are unambiguous for 30 hours.
            // A step back of the sniffer's clock within the tolerance is two packets out of order by µs: the Ubertooth's
            // host tool took such a step for a wrap of its 32 bits and dated the rest of the file 429.5 s later.
            // One wrap at a time: the host's error is one wrap counted where none was (or missed); a file time many wraps
            // off is no clock error of this kind (crackle's records with microsecond fields above 10^6 jump thousands of s).
            if abs(wraps) == 1, step > -Self.tolerance, kind == .ubertooth || step < Self.shortStep,
                abs(residual - wraps * wrap) <= Double(Self.tolerance)
            {
                // On the sniffer's step exactly: the file's times around it may be the host's, with their jitter.
                let moved = step &- (file &- before)
                offset &+= moved
                if corrections.count < 1000 { corrections.append((record.frame, moved, step, Int64(wrap.rounded()))) }
            }
        }
        if offset != 0 { record.timestamp = Timestamp(microseconds: file &+ offset) }
    }

    /// Said once: which records were moved and why.
    var finding: Finding? {
        guard let first = corrections.first else { return nil }
        let more = corrections.count > 1 ? " (+\(corrections.count - 1) more)" : ""
        let wraps = Int((Double(abs(first.moved)) / Double(first.wrap)).rounded())
        let clock = first.wrap == 4_294_967_296 ? "2^32 µs, the nRF Sniffer's clock" : "2^32 × 100 ns, the Ubertooth's clock"
        let seconds = String(fractionDigits: 6, Double(abs(first.moved)) / 1e6)
        let us = first.snifferStep
        let step =
            abs(us) < 1000
            ? "\(us) µs"
            : abs(us) < 1_000_000
                ? String(fractionDigits: 3, Double(us) / 1000) + " ms" : String(fractionDigits: 3, Double(us) / 1e6) + " s"
        return Finding(
            .info,
            FindingKind(
                .captureSnifferClockWrap,
                message:
                    "the file dates frame \(first.frame) \(seconds) s \(first.moved < 0 ? "later" : "earlier") than the sniffer's own clock, which moved \(step): \(wraps == 1 ? "one wrap" : "\(wraps) wraps") of \(clock) (the host software's error, not a gap); blescope uses the sniffer's clock from there on\(more), so its times differ from tshark's"
            ),
            frame: first.frame)
    }
}
