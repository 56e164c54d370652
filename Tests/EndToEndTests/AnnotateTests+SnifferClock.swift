import BLETestSupport
import Foundation

/// The one place an annotated pcapng may date a frame otherwise than its input: where the host software that wrote an
/// air capture dated records whole wraps of the sniffer's counter away from the sniffer's own clock, blescope puts
/// them back on that clock (SnifferClock, issue 49), and so does the copy it writes. The LED controller capture's frame
/// 4125: the file says 4294.967009 s after frame 4124, the nRF Sniffer's clock (`nordic_ble.time`) 1.25 ms. Frames of
/// another interface (Ethernet beside the Ubertooth) are on no sniffer clock and keep their time.
extension AnnotateTests {
    /// The sniffer's own clock of each frame in µs, as tshark reads the pseudo-header: the nRF Sniffer's
    /// `nordic_ble.time` (32 bits), the Ubertooth PPI-BTLE field (type 30006, 12 octets, which tshark 4.0 leaves as
    /// `ppi.reserved`: version, channel u16, clkn_high, then clk100ns u32 LE: a 40-bit clock in 100 ns). Empty for
    /// captures without one.
    static func snifferClock(_ path: String, options: [String]) -> [Int: (µs: Int64, wrap: Int64)] {
        guard
            let rows = TestEnvironment.tsharkFields(
                options + ["-r", path, "-T", "fields", "-e", "frame.number", "-e", "nordic_ble.time", "-e", "ppi.reserved"])
        else { return [:] }
        var out: [Int: (µs: Int64, wrap: Int64)] = [:]
        for row in rows where row.count == 3 {
            guard let frame = Int(row[0]) else { continue }
            if let t = Int64(row[1]) {
                out[frame] = (t, 1 << 32)
            } else if let field = row[2].split(separator: ",").first(where: { $0.hasPrefix("36750c00") }), field.count >= 24 {
                let b = stride(from: 0, to: 24, by: 2).compactMap { i -> UInt64? in
                    let at = field.index(field.startIndex, offsetBy: i)
                    return UInt64(field[at..<field.index(at, offsetBy: 2)], radix: 16)
                }
                guard b.count == 12 else { continue }
                let ticks = b[7] << 32 | b[8] | b[9] << 8 | b[10] << 16 | b[11] << 24
                out[frame] = (Int64(ticks / 10), 429_496_730)
            }
        }
        return out
    }

    /// `frame.time_epoch` in ns (nil for a time before 1970, which tshark prints negative).
    static func nanoseconds(_ epoch: Substring) -> Int64? {
        let parts = epoch.split(separator: ".")
        guard parts.count == 2, let s = Int64(parts[0]), s >= 0 else { return nil }
        let fraction = String(parts[1].prefix(9)).padding(toLength: 9, withPad: "0", startingAt: 0)
        return Int64(fraction).map { s * 1_000_000_000 + $0 }
    }

    /// The frames whose time in the copy (`after`) differs from the input's (`before`) without the sniffer's clock
    /// saying so: at each frame where the copy's shift from the input changes, the shift must change by whole wraps of
    /// the sniffer's counter (within 1 s of host jitter) and the copy's step from the frame before must be the
    /// sniffer's step (within 1 µs); a shift carried on unchanged to later frames is the same correction. Returns the
    /// first frame that breaks this (nil: none) and how many frames were moved.
    static func unexplainedTimes(
        before: [String], after: [String], clock: [Int: (µs: Int64, wrap: Int64)]
    ) -> (firstBroken: String?, moved: Int) {
        var shift: Int64 = 0, moved = 0
        var previous: (frame: Int, after: Int64)?
        for (a, b) in zip(before, after) {
            let (x, y) = (a.split(separator: " "), b.split(separator: " "))
            guard x.count > 2, y.count > 2, let frame = Int(x[0]), let tx = nanoseconds(x[2]), let ty = nanoseconds(y[2]) else {
                previous = nil
                continue
            }
            let now = ty - tx
            // A frame of another interface than the sniffer's (the Ubertooth capture's Ethernet frames 5043-5046, DNS)
            // has no sniffer clock and keeps the time its own clock gave it; the sniffer's frames around it keep
            // their correction (5042 and 5047: 392.616 and 392.706 s, around the DNS query at 392.561 s, where the
            // file's misdated 822.113 and 822.203 s are 7 minutes off it).
            if now == 0, clock[frame] == nil, shift != 0 { continue }
            if now != shift {
                guard let p = previous, let c = clock[frame], let cp = clock[p.frame] else { return ("\(a) → \(b)", moved) }
                var step = c.µs - cp.µs
                if c.wrap == 1 << 32 { step = (step + (1 << 31)) & 0xFFFF_FFFF - (1 << 31) }
                let change = Double(now - shift) / 1000, wraps = (change / Double(c.wrap)).rounded()
                let onTheClock = abs((ty - p.after) / 1000 - step) <= 1
                guard wraps != 0, abs(change - wraps * Double(c.wrap)) <= 1_000_000, onTheClock else { return ("\(a) → \(b)", moved) }
                shift = now
            }
            if now != 0 { moved += 1 }
            previous = (frame, ty)
        }
        return (nil, moved)
    }
}
