import BLEAnalysis
import BLECore

/// The OTA pass/fail rule shared by `blescope ota --min-rate/--image` (``OTARun``) and `check`'s `ota:` expectations:
/// what is wrong with the sessions (nothing when every session succeeded, fast enough, with the expected image).
public struct OTAGate: Sendable {
    /// One reason to fail, with the frame that decides it (nil: no session at all).
    public struct Failure: Hashable, Sendable {
        public var text: String
        public var frame: Int?
        /// The session's connection (``OTASession/connectionNumber``).
        public var connection: Int? = nil
        /// Which test failed: `rate` (below the bound) is explained by the throughput findings, the others by what
        /// ended the session.
        public var reason: Reason = .result

        public enum Reason: Hashable, Sendable { case noSession, result, rate, image }
    }

    /// Sessions slower than this (bits per second, ``OTASession/throughputBitsPerSecond``) fail.
    public var minRateBitsPerSecond: Double?
    /// Names the bound in messages: `--min-rate 20kB/s` for the ota command, `min_rate 20kB/s` for check.
    public var rateLabel: String?
    /// Sessions whose image differs from this fail (``OTASession/compare(expected:)``).
    public var expectedImage: [UInt8]?
    /// A capture without any session fails.
    public var requireSession: Bool

    /// `requireSession` defaults to true when a rate or an image is asked for (there must be something to check).
    public init(
        minRateBitsPerSecond: Double? = nil, rateLabel: String? = nil, expectedImage: [UInt8]? = nil, requireSession: Bool? = nil
    ) {
        self.minRateBitsPerSecond = minRateBitsPerSecond
        self.rateLabel = rateLabel
        self.expectedImage = expectedImage
        self.requireSession = requireSession ?? (minRateBitsPerSecond != nil || expectedImage != nil)
    }

    public func failures(_ sessions: [OTASession]) -> [Failure] {
        var failures: [Failure] = []
        if sessions.isEmpty && requireSession {
            failures.append(Failure(text: "no update found in the capture", frame: nil, reason: .noSession))
        }
        for s in sessions {
            let name = "session on connection #\(s.connectionNumber) (\(s.protocolName.rawValue))"
            if s.result != .success {
                failures.append(Failure(text: "\(name): \(s.result)", frame: s.endFrame, connection: s.connectionNumber))
            }
            if let limit = minRateBitsPerSecond {
                let rate = s.throughputBitsPerSecond ?? 0
                if rate < limit {
                    failures.append(
                        Failure(
                            text: "\(name): \(formatRate(rate)) is below \(formatRate(limit))" + (rateLabel.map { " (\($0))" } ?? ""),
                            frame: s.lastPacketFrame ?? s.endFrame, connection: s.connectionNumber, reason: .rate))
                }
            }
            if let expectedImage {
                let c = s.compare(expected: expectedImage)
                if !c.matches {
                    failures.append(Failure(text: "\(name): image \(c)", frame: s.endFrame, connection: s.connectionNumber, reason: .image))
                }
            }
        }
        return failures
    }
}
