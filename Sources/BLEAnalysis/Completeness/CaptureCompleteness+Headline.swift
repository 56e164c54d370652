import BLECore

extension CaptureCompleteness {
    /// The host's set-up a log starts from (``startsAtSetUp``): its first command's frame and name.
    public struct SetUpStart: Hashable, Sendable {
        public var frame: Int
        /// `Read BD_ADDR`.
        public var command: String
    }

    /// One line for people: `incomplete: ACL payloads cut to 14 bytes (Android filtered snoop log) …`, the first item
    /// shown one that gives the verdict.
    public var headline: String {
        let verdict = verdict
        let worst = items.filter { $0.severity >= .warning }
        let shown = headlineItems
        let start =
            startsAtReset.map { "from the host's HCI Reset at frame \($0)" }
            ?? startsAtSetUp.map { "from the host's set-up at frame \($0.frame) (\($0.command); no HCI Reset)" }
        guard let first = shown.first else {
            return "complete: the log shows every record whole, in time order" + (start.map { ", " + $0 } ?? "")
        }
        // Notes only: the start is still the log's to tell (the Redmi LE Audio log, from HCI Reset, one link open at
        // the end).
        let from = worst.isEmpty ? start.map { "; " + $0 } ?? "" : ""
        return verdict + ": " + (first.brief ?? first.message) + (shown.count > 1 ? " (+\(shown.count - 1) more)" : "") + from
    }

    /// The items the headline tells, the one it shows first first: the warnings giving the verdict, the other warnings,
    /// or with none every note.
    var headlineItems: [Item] {
        let verdict = verdict
        let worst = items.filter { $0.severity >= .warning }
        return worst.isEmpty
            ? items : worst.filter { Self.verdict(of: $0.code) == verdict } + worst.filter { Self.verdict(of: $0.code) != verdict }
    }

    /// The message the headline shows whole (its first item's, when that has no brief form): `diagnose` keeps the
    /// story's caveat for it off the first screen, where the Log line just said it.
    public var headlineMessageInFull: String? {
        guard let first = headlineItems.first, first.brief == nil else { return nil }
        return first.message
    }
}
