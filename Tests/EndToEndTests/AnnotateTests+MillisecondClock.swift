import BLETestSupport
import Foundation

/// The other place an annotated pcapng dates frames otherwise than its input: a PacketLogger file whose seconds field
/// counts milliseconds (BTstack's Windows port, 2022-04 to 2023-09; `capture.millisecond-clock`) is read, and copied,
/// in milliseconds from frame 1's time. The Thewbi BT400 log: tshark's 33075 s from frame 1 to 682 become 33.075 s.
extension AnnotateTests {
    /// Whether `convert` said (on stderr, with the reader's findings) that it read the times as milliseconds.
    static func readAsMilliseconds(convertStandardError: String) -> Bool {
        convertStandardError.contains("times read as milliseconds (inferred)")
    }

    /// The first frame whose copy is not frame 1's time plus its input's seconds since frame 1 read as milliseconds
    /// (nil: none).
    static func offTheMillisecondClock(before: [String], after: [String]) -> String? {
        var origin: Int64?
        for (a, b) in zip(before, after) {
            let (x, y) = (a.split(separator: " "), b.split(separator: " "))
            guard x.count > 2, y.count > 2, let tx = nanoseconds(x[2]), let ty = nanoseconds(y[2]) else { return "\(a) → \(b)" }
            let first = origin ?? tx
            origin = first
            if ty != first + (tx - first) / 1000 { return "\(a) → \(b)" }
        }
        return nil
    }
}
