import BLECore

/// `diff --fail-on rate-drop=10%,new-error,gatt-changed,mtu-lower`: named thresholds a CI job holds a run to against a
/// golden capture. Each difference that crosses one is a breach, said on one line with the frames on both sides.
public struct DiffGate: Sendable, Equatable {
    public enum Threshold: Sendable, Equatable {
        /// A stream's rate (streams of ten packets or more on both sides) or an update's rate in B lower than A's by at
        /// least this fraction.
        case rateDrop(Double)
        /// A diagnosis rule at error or worse that A does not have.
        case newError
        /// Any service, characteristic, descriptor or property added, removed or changed (or handles moved).
        case gattChanged
        /// A connection's ATT_MTU lower in B.
        case mtuLower

        public var name: String {
            switch self {
            case .rateDrop(let f): "rate-drop=" + String(fractionDigits: 0, f * 100) + "%"
            case .newError: "new-error"
            case .gattChanged: "gatt-changed"
            case .mtuLower: "mtu-lower"
            }
        }
    }

    public var thresholds: [Threshold]

    /// What a threshold list cannot mean, in words.
    public struct ParseError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Parses `rate-drop=10%,new-error,gatt-changed,mtu-lower` (any subset, any order).
    public init(parsing text: String) throws(ParseError) {
        var out: [Threshold] = []
        for raw in text.split(separator: ",") {
            let item = raw.trimmingWhitespace()
            if item.hasPrefix("rate-drop=") {
                var number = String(item.dropFirst("rate-drop=".count))
                if number.hasSuffix("%") { number.removeLast() }
                guard let v = Double(number), v > 0, v <= 100 else {
                    throw ParseError(description: "--fail-on: \(item): rate-drop takes a percentage above 0, e.g. rate-drop=10%")
                }
                out.append(.rateDrop(v / 100))
                continue
            }
            switch item {
            case "new-error": out.append(.newError)
            case "gatt-changed": out.append(.gattChanged)
            case "mtu-lower": out.append(.mtuLower)
            default:
                throw ParseError(
                    description: "--fail-on: unknown threshold '\(item)' (known: rate-drop=N%, new-error, gatt-changed, mtu-lower)")
            }
        }
        guard !out.isEmpty else { throw ParseError(description: "--fail-on: no threshold given") }
        thresholds = out
    }

    /// One difference that crosses a threshold.
    public struct Breach: Sendable, Hashable {
        public var threshold: String
        public var difference: Difference
        /// `rate-drop=10%: #1↔#1 stream 0x2A37 rx notify rate: 120 kbps → 80 kbps (-33 %) (A #12, B #40)`.
        public var line: String { "\(threshold): \(difference.sentence) (\(difference.framesText))" }
    }

    /// The breaches of `diff`, threshold by threshold in the order given.
    public func breaches(_ diff: CaptureDiff) -> [Breach] {
        var out: [Breach] = []
        for t in thresholds {
            for d in diff.differences where crosses(d, t) { out.append(Breach(threshold: t.name, difference: d)) }
        }
        return out
    }

    func crosses(_ d: Difference, _ t: Threshold) -> Bool {
        switch t {
        case .rateDrop(let limit):
            // A stream of fewer than ten packets on a side (impact info) has no rate worth a gate.
            guard d.kind == "rate", d.impact != .info, let change = d.change else { return false }
            return change <= -limit
        case .newError: return d.section == .diagnosis && d.kind == "rule-new" && d.impact == .major
        case .gattChanged: return d.section == .gatt
        case .mtuLower:
            guard d.section == .link, d.kind == "mtu", let a = d.a.flatMap(leadingNumber), let b = d.b.flatMap(leadingNumber) else {
                return false
            }
            return b < a
        }
    }

    /// `247 (inferred)` → 247.
    func leadingNumber(_ s: String) -> Double? { Double(s.prefix { $0.isNumber || $0 == "." }) }
}
