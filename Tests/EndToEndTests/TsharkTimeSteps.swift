import BLETestSupport
import Foundation

/// Time going backwards, counted from tshark's fields alone (`FieldLogEndToEndTests.timeGoingBackwardsAgreesWithTshark`),
/// over what blescope calls records in time:
/// - A log's notes are no records in time: btmon's System Note and User Logging (monitor opcodes 12, 13) and
///   PacketLogger's text types (0xF7–0xFC syslog, kernel, kernel debug, error, power, note; 0xFE new controller). A
///   btmon user-logging note is dated when the daemon wrote it, after the packets it logs: the blue2th btmon log steps
///   back 10 times, every one from such a note to the packet after it (frames 79, 85, 93, …), never between packets.
/// - An Ubertooth's records are dated by its own clock: the PPI-BTLE field 30006 (version u8, channel u16, clkn_high u8,
///   clk100ns u32, LE; tshark 4.0 shows it undecoded as `ppi.reserved`) holds 40 bits of 100 ns. Where the file's
///   step differs from that clock's by one whole wrap of clk100ns (2^32 × 100 ns = 429.4967296 s, within 1 s), the
///   host tool (ubertooth-btle) counted a wrap that was none, and from there the records are put at the clock's step.
///   The clock itself steps back by up to 83 µs inside a connection event (the HackenBluetooth captures: a response
///   stamped before the packet it answers, frames 3743, 4565, 4898, 4935 and 4776, 5336, 5339, 5738), which is what
///   made the host tool count those wraps: those steps back are the sniffer's jitter, and are counted. Records of
///   another interface (the Ethernet beside the Ubertooth) keep the host's time.
enum TsharkTimeSteps {
    /// One wrap of the Ubertooth's 32-bit clk100ns, µs.
    static let ubertoothWrap = 429_496_729.6

    struct Count {
        /// Steps back between consecutive records in time.
        var backwards = 0
        /// The Ubertooth clock's own largest step back, µs (0 without one).
        var largestClockStepBack: Int64 = 0
    }

    static func count(_ path: String) -> Count? {
        guard
            let rows = TestEnvironment.tsharkFields([
                "-n", "-r", path, "-T", "fields", "-E", "occurrence=f", "-e", "frame.time_delta", "-e", "frame.interface_id", "-e",
                "hci_mon.opcode", "-e", "packetlogger.type", "-e", "ppi.reserved",
            ]), !rows.isEmpty
        else { return nil }
        var result = Count()
        var previous: Int64?
        // The time of each record, from the first one's and the deltas: tshark prints a time before 1970 (the Android logs
        // dated from year 0) with its fraction's sign mixed up, but each delta right.
        var fileNanoseconds =
            TestEnvironment.tshark(["-r", path, "-c", "1", "-T", "fields", "-e", "frame.time_epoch"]).map {
                nanoseconds($0.trimmingCharacters(in: .whitespacesAndNewlines))
            } ?? 0
        var offset: Int64 = 0
        var clock: (file: Int64, ticks: Int64, interface: String)?
        for (i, row) in rows.enumerated() where row.count >= 5 {
            if i > 0 { fileNanoseconds += nanoseconds(row[0]) }
            if ["12", "13"].contains(row[2]) || ["0xf7", "0xf8", "0xf9", "0xfa", "0xfb", "0xfc", "0xfe"].contains(row[3]) { continue }
            // µs, as blescope keeps times (rounded down).
            let file = fileNanoseconds >= 0 ? fileNanoseconds / 1000 : (fileNanoseconds - 999) / 1000
            var t = file
            if let ticks = ubertoothTicks(row[4]) {
                let now = ticks / 10
                if let c = clock {
                    let step = now - c.ticks
                    let residual = Double(file - c.file - step)
                    let wraps = (residual / ubertoothWrap).rounded()
                    if abs(wraps) == 1, step > -1_000_000, abs(residual - wraps * ubertoothWrap) <= 1_000_000 {
                        offset += step - (file - c.file)
                    }
                    result.largestClockStepBack = max(result.largestClockStepBack, -step)
                }
                clock = (file, now, row[1])
                t = file + offset
            } else if clock?.interface == row[1] {
                t = file + offset
            }
            if let p = previous, t < p { result.backwards += 1 }
            previous = t
        }
        return result
    }

    /// tshark's `frame.time_epoch` or `frame.time_delta` in ns.
    static func nanoseconds(_ text: String) -> Int64 {
        let negative = text.hasPrefix("-")
        let parts = text.drop { $0 == "-" }.split(separator: ".")
        let fraction = String((String(parts.count > 1 ? parts[1] : "") + "000000000").prefix(9))
        let magnitude = (Int64(parts.first ?? "") ?? 0) * 1_000_000_000 + (Int64(fraction) ?? 0)
        return negative ? -magnitude : magnitude
    }

    /// The PPI-BTLE clock in 100 ns ticks from the PPI fields tshark leaves undecoded (hex), or nil.
    static func ubertoothTicks(_ hex: String) -> Int64? {
        guard !hex.isEmpty else { return nil }
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while let j = hex.index(i, offsetBy: 2, limitedBy: hex.endIndex), i < hex.endIndex {
            guard let b = UInt8(hex[i..<j], radix: 16) else { return nil }
            bytes.append(b)
            i = j
        }
        var at = 0
        while at + 4 <= bytes.count {
            let type = Int(bytes[at]) | Int(bytes[at + 1]) << 8
            let length = Int(bytes[at + 2]) | Int(bytes[at + 3]) << 8
            if type == 30006, length >= 8, at + 12 <= bytes.count {
                let d = at + 4
                let low = Int64(bytes[d + 4]) | Int64(bytes[d + 5]) << 8 | Int64(bytes[d + 6]) << 16 | Int64(bytes[d + 7]) << 24
                return Int64(bytes[d + 3]) << 32 | low
            }
            at += 4 + length
        }
        return nil
    }
}
