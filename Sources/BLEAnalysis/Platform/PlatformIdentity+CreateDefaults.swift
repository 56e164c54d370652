import BLECore
import BLEProtocols

extension PlatformClues {
    /// The platform whose connection defaults (``PlatformBehaviour/connectionIntervalMin``, `…Max`,
    /// ``PlatformBehaviour/peripheralLatency``, ``PlatformBehaviour/supervisionTimeout``) the log's first LE Create
    /// Connection asks, all four exactly: inferred, since an app or a fork may ask the same values. Over the corpus
    /// (104 captures with a create) every match names the platform its log names otherwise, and bumble's Samples, whose
    /// interval range is one value, match none.
    func createDefaultsPlatform() -> PlatformIdentity? {
        guard let (asked, frame) = firstCreate else { return nil }
        let wanted: [(PlatformBehaviour, Double)] = [
            (.connectionIntervalMin, Double(asked.intervalMin) * 1.25), (.connectionIntervalMax, Double(asked.intervalMax) * 1.25),
            (.peripheralLatency, Double(asked.maxLatency)), (.supervisionTimeout, Double(asked.supervisionTimeout) * 10),
        ]
        let matches: [(Platform, timeout: PlatformFact)] = Self.tabled.compactMap { platform in
            let rows = wanted.map { behaviour, value in PlatformTable.defaultDuration(behaviour, value, for: platform) }
            guard rows.allSatisfy({ $0 != nil }), let timeout = rows.last ?? nil else { return nil }
            return (platform, timeout)
        }
        guard matches.count == 1, let (platform, timeout) = matches.first else { return nil }
        let timeoutMs = wanted[3].1
        let timeoutText = timeoutMs >= 1000 ? millisecondsText(Int(timeoutMs)) + " s" : millisecondsText(Int(timeoutMs * 1000)) + " ms"
        let values =
            "\(millisecondsText(Int(wanted[0].1 * 1000)))–\(millisecondsText(Int(wanted[1].1 * 1000))) ms, latency \(asked.maxLatency), timeout \(timeoutText)"
        let versions = timeout.versions == "all" ? platform.rawValue : timeout.versions
        return PlatformIdentity(
            platform, .inferred(what: "the connection defaults of \(versions) in the LE Create Connection at frame \(frame) (\(values))"))
    }

    /// The platforms whose connection defaults the table holds.
    static let tabled: [Platform] = {
        var seen: [Platform] = []
        for row in PlatformTable.rows where row.behaviour == .supervisionTimeout && !seen.contains(row.platform) {
            seen.append(row.platform)
        }
        return seen
    }()
}
