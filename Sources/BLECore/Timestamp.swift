/// A point in time: microseconds since the Unix epoch, UTC.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    /// The farthest a timestamp may lie from the epoch: 2^53 µs, about 285 years either way.
    ///
    /// A corrupt record's clock can say anything, up to ±2^63 µs. Held within this bound, the difference of any two
    /// timestamps fits in an `Int64` (a rule subtracting two of them can never trap on overflow, which a fuzzed capture
    /// once made it do) and converts to a `Double` exactly. No real capture comes near it; a record held at the bound
    /// still shows as the jump in time it is (a gap, or time going backwards).
    public static let farthest: Int64 = 1 << 53

    @inlinable public init(microseconds: Int64) {
        self.microseconds = min(max(microseconds, -Timestamp.farthest), Timestamp.farthest)
    }

    public init(seconds: Int64, microseconds: Int64) {
        let (product, tooFar) = seconds.multipliedReportingOverflow(by: 1_000_000)
        let (sum, stillTooFar) = product.addingReportingOverflow(microseconds)
        self.init(microseconds: tooFar || stillTooFar ? (seconds < 0 ? -Timestamp.farthest : Timestamp.farthest) : sum)
    }

    /// Seconds since the epoch as a double (µs precision survives for any date this millennium).
    public var secondsSinceEpoch: Double { Double(microseconds) / 1_000_000 }

    @inlinable public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    /// Microseconds from `other` to `self`.
    @inlinable public func microseconds(since other: Timestamp) -> Int64 { microseconds &- other.microseconds }

    /// `2026-03-19 20:04:01.695475` (UTC).
    public var description: String { formatted(utcOffsetSeconds: 0) }

    /// `YYYY-MM-DD hh:mm:ss.uuuuuu` at the given offset from UTC (no time zone database needed).
    public func formatted(utcOffsetSeconds: Int = 0, dateSeparator: Character = " ") -> String {
        let shifted = microseconds &+ Int64(utcOffsetSeconds) &* 1_000_000
        var seconds = shifted / 1_000_000
        var micros = shifted % 1_000_000
        if micros < 0 { micros += 1_000_000; seconds -= 1 }
        var days = seconds / 86_400
        var secOfDay = seconds % 86_400
        if secOfDay < 0 { secOfDay += 86_400; days -= 1 }
        let (y, m, d) = Timestamp.civilFromDays(days)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return
            "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))\(dateSeparator)\(pad(secOfDay / 3600, 2)):\(pad(secOfDay / 60 % 60, 2)):\(pad(secOfDay % 60, 2)).\(pad(micros, 6))"
    }

    /// Seconds since the epoch with exactly six decimals, exact to the µs: `1741948200.410328`.
    public var epochSecondsText: String {
        let s = microseconds >= 0 ? microseconds / 1_000_000 : -((-microseconds + 999_999) / 1_000_000)
        let f = String(microseconds - s * 1_000_000)
        return "\(s)." + String(repeating: "0", count: 6 - f.count) + f
    }

    /// ISO 8601 with µs and `Z`: `2026-03-19T20:04:01.695475Z`.
    public var iso8601: String { formatted(dateSeparator: "T") + "Z" }

    /// Howard Hinnant's days-from-civil inverse: proleptic Gregorian (year, month, day) for a day count since 1970-01-01.
    static func civilFromDays(_ z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}

/// Formats a duration in µs for people: `812 µs`, `12.4 ms`, `3.207 s`, `1 h 02 min`.
public func formatDuration(microseconds us: Int64) -> String {
    let a = abs(us)
    if a < 1_000 { return "\(us) µs" }
    if a < 1_000_000 { return String(fractionDigits: 1, Double(us) / 1_000) + " ms" }
    if a < 600_000_000 { return String(fractionDigits: 3, Double(us) / 1_000_000) + " s" }
    let s = a / 1_000_000
    let sign = us < 0 ? "-" : ""
    if s < 86_400 {
        let min = s / 60 % 60
        return "\(sign)\(s / 3600) h \(min < 10 ? "0" : "")\(min) min"
    }
    return "\(sign)\(s / 86_400) d \(s / 3600 % 24) h"
}

extension String {
    /// Fixed-point formatting without Foundation: `String(fractionDigits: 2, 3.14159)` is `"3.14"`.
    public init(fractionDigits digits: Int, _ value: Double) {
        guard value.isFinite else { self = value.description; return }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = scaled / scale
        let intPart = whole.rounded(.towardZero)
        var frac = String(Int64(scaled - intPart * scale))
        if frac.count < digits { frac = String(repeating: "0", count: digits - frac.count) + frac }
        let sign = value < 0 && scaled != 0 ? "-" : ""
        self = digits == 0 ? "\(sign)\(Int64(intPart))" : "\(sign)\(Int64(intPart)).\(frac)"
    }
}
