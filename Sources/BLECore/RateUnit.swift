/// The one unit rates are printed in for a whole run: kbps unless `--units` says otherwise.
///
/// Every rate a person reads (tables, verdicts, OTA sessions, check results, reports) goes through ``format(_:)`` of
/// ``display``, so one run never mixes `790 bps` with `6.0 kbps`. JSON and CSV keep their `_bps` fields in bits per
/// second whatever the unit.
public enum RateUnit: String, CaseIterable, Sendable {
    case bps
    case kbps
    case megabitsPerSecond = "Mbps"
    case bytesPerSecond = "B/s"
    case kilobytesPerSecond = "kB/s"
    case megabytesPerSecond = "MB/s"

    /// Bits per second in one of this unit (decimal prefixes, as `--min-rate` reads them).
    public var bitsPerSecond: Double {
        switch self {
        case .bps: 1
        case .kbps: 1e3
        case .megabitsPerSecond: 1e6
        case .bytesPerSecond: 8
        case .kilobytesPerSecond: 8e3
        case .megabytesPerSecond: 8e6
        }
    }

    /// `178.6 kbps`: one decimal from 1 to 999, none from 1,000 (grouped), two significant digits below 1.
    public func format(_ bitsPerSecond: Double) -> String {
        number(bitsPerSecond) + " " + rawValue
    }

    /// The number alone, in this unit (``format(_:)`` without the unit).
    public func number(_ bitsPerSecond: Double) -> String {
        let v = bitsPerSecond / self.bitsPerSecond
        guard v.isFinite else { return v.description }
        let a = abs(v)
        if a == 0 { return "0" }
        if a >= 999.95 { return groupThousands(String(fractionDigits: 0, v)) }
        if a >= 0.995 { return String(fractionDigits: 1, v) }
        // Below one unit: two significant digits (0.38, 0.045), at most six decimals.
        var digits = 2
        var scaled = a * 10
        while scaled < 0.995 && digits < 6 {
            scaled *= 10
            digits += 1
        }
        return String(fractionDigits: digits, v)
    }

    /// Parses a rate with its unit: `30kB/s`, `160 kbps`, `2000B/s`, `1.2Mbps` (case-insensitive for the prefix;
    /// `b` is bits only in `bps`: `kB/s` and `kb/s` are both kilobytes per second, as `--min-rate` always read them).
    public static func parse(_ text: String) -> (bitsPerSecond: Double, unit: RateUnit)? {
        let t = text.lowercased().filter { $0 != " " }
        let suffixes: [(String, RateUnit)] = [
            ("mbps", .megabitsPerSecond), ("kbps", .kbps), ("bps", .bps), ("mb/s", .megabytesPerSecond), ("kb/s", .kilobytesPerSecond),
            ("b/s", .bytesPerSecond),
        ]
        for (suffix, unit) in suffixes where t.hasSuffix(suffix) {
            guard let v = Double(t.dropLast(suffix.count)), v >= 0, v.isFinite else { return nil }
            return (v * unit.bitsPerSecond, unit)
        }
        return nil
    }

    /// The unit of every rate printed in this process; set once, by the command line, before any output.
    public static var display: RateUnit {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    private static let current = Locked(RateUnit.kbps)
}

/// `178.6 kbps` in the run's unit (``RateUnit/display``).
public func formatRate(_ bitsPerSecond: Double) -> String { RateUnit.display.format(bitsPerSecond) }

/// `1234567` → `1,234,567`, keeping a sign and a fraction.
func groupThousands(_ digits: String) -> String {
    let negative = digits.hasPrefix("-")
    let body = negative ? digits.dropFirst() : Substring(digits)
    let whole = body.prefix { $0 != "." }
    let fraction = body.dropFirst(whole.count)
    var out = ""
    for (i, c) in whole.enumerated() {
        if i > 0, (whole.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (negative ? "-" : "") + out + fraction
}
