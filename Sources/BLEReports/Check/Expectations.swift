import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEProtocols
import Yams

/// One thing a capture must (or must not) show, read from an expectations file (`blescope check --expect`).
///
/// ```yaml
/// expect:
///   - ota: {protocol: nordic-secure-dfu, min_rate: 20kB/s}     # an update of that protocol succeeds, at least that fast
///   - transfer: {uuid: 08590F7E-DB05-467E-8757-72F6FAEB13D4}  # a transfer on that characteristic completes
///   - no_att_error: {handle: 0x0012}                          # no Error Response about that handle (any handle without)
///   - no_disconnection: {reason: 0x08}                        # no disconnection for that reason (any reason without)
///   - latency: {request: Write Request, max_ms: 100}          # every such request answered within the bound
///   - link_quality: {min_rssi: -80}                           # quality reports never below the floor
/// ```
public enum Expectation: Hashable, Sendable {
    case ota(protocolName: String?, minRateBitsPerSecond: Double?, rateText: String?, imagePath: String?)
    case transfer(uuid: BluetoothUUID?, handle: UInt16?)
    case noATTError(handle: UInt16?, except: [String])
    case noDisconnection(reason: String?)
    case latency(request: String, handle: UInt16?, maxMicroseconds: Int64)
    case linkQuality(minRSSI: Int?, maxRetransmissionsPerReport: Int?, allowApproachingLSTO: Bool)

    /// How the expectation reads in a result line: `ota nordic-secure-dfu succeeds at ≥ 20kB/s`.
    public var title: String {
        switch self {
        case let .ota(p, _, rate, image):
            return "ota \(p ?? "(any protocol)") succeeds" + (rate.map { " at ≥ \($0)" } ?? "") + (image.map { " with image \($0)" } ?? "")
        case let .transfer(uuid, handle):
            return "transfer on " + (uuid.map { $0.description } ?? handle.map { hex($0, width: 4) } ?? "any characteristic") + " completes"
        case let .noATTError(handle, except):
            return "no ATT error" + (handle.map { " on handle \(hex($0, width: 4))" } ?? "")
                + (except.isEmpty ? "" : " (except \(except.joined(separator: ", ")))")
        case let .noDisconnection(reason):
            return "no disconnection" + (reason.map { " with reason \($0)" } ?? "")
        case let .latency(request, handle, max):
            return "latency of \(request)" + (handle.map { " on \(hex($0, width: 4))" } ?? "") + " under \(max / 1000) ms"
        case let .linkQuality(rssi, retx, lsto):
            var parts: [String] = []
            if let rssi { parts.append("RSSI ≥ \(rssi) dBm") }
            if let retx { parts.append("≤ \(retx) retransmissions per report") }
            if !lsto { parts.append("no approaching supervision timeout") }
            return "link quality above the floor (" + parts.joined(separator: ", ") + ")"
        }
    }
}

/// What an expectations file says is wrong with it: `file:line: message`.
public struct ExpectationFileError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }
}

extension Expectation {
    /// Parses an expectations file: a list under `expect:` (or the document itself), one single-key mapping per
    /// expectation. Unknown kinds and keys are errors, so a typo never passes silently.
    public static func parse(yaml text: String, path: String = "expectations") throws -> [Expectation] {
        let document: Any?
        do { document = try Yams.load(yaml: text) } catch {
            throw ExpectationFileError(message: "\(path): not YAML: \(error)")
        }
        let list: [Any]
        if let l = document as? [Any] {
            list = l
        } else if let m = document as? [String: Any], let l = m["expect"] as? [Any] {
            list = l
        } else {
            throw ExpectationFileError(message: "\(path): expected a list of expectations under 'expect:'")
        }
        var out: [Expectation] = []
        for (i, item) in list.enumerated() {
            let at = "\(path): expectation \(i + 1)"
            guard let m = item as? [String: Any], m.count == 1, let (kind, value) = m.first else {
                throw ExpectationFileError(
                    message: "\(at): one key per expectation (ota, transfer, no_att_error, no_disconnection, latency, link_quality)")
            }
            let o = (value as? [String: Any]) ?? [:]
            if !(value is [String: Any]) && (value is String || value is Int || value is [Any]) {
                throw ExpectationFileError(message: "\(at): '\(kind)' takes a mapping")
            }
            func allow(_ keys: Set<String>) throws {
                if let bad = o.keys.sorted().first(where: { !keys.contains($0) }) {
                    throw ExpectationFileError(
                        message: "\(at): '\(kind)' has no key '\(bad)' (known: \(keys.sorted().joined(separator: ", ")))")
                }
            }
            func handle(_ key: String) throws -> UInt16? {
                guard let v = o[key] else { return nil }
                if let n = v as? Int, (0...0xFFFF).contains(n) { return UInt16(n) }
                if let s = v as? String, let n = UInt16(s.lowercased().hasPrefix("0x") ? String(s.dropFirst(2)) : s, radix: 16) { return n }
                throw ExpectationFileError(message: "\(at): \(key) '\(v)' is not a handle (0x0012)")
            }
            switch kind {
            case "ota":
                try allow(["protocol", "min_rate", "image"])
                var rate: Double? = nil
                if let r = o["min_rate"] {
                    guard let v = parseRate("\(r)") else {
                        throw ExpectationFileError(message: "\(at): min_rate '\(r)': e.g. 20kB/s or 160kbps")
                    }
                    rate = v
                }
                out.append(
                    .ota(
                        protocolName: o["protocol"].map { "\($0)" }, minRateBitsPerSecond: rate, rateText: o["min_rate"].map { "\($0)" },
                        imagePath: o["image"].map { "\($0)" }))
            case "transfer":
                try allow(["uuid", "handle"])
                var uuid: BluetoothUUID? = nil
                if let u = o["uuid"] {
                    guard let v = BluetoothUUID("\(u)") else { throw ExpectationFileError(message: "\(at): uuid '\(u)' is not a UUID") }
                    uuid = v
                }
                out.append(.transfer(uuid: uuid, handle: try handle("handle")))
            case "no_att_error":
                try allow(["handle", "except"])
                out.append(.noATTError(handle: try handle("handle"), except: (o["except"] as? [Any])?.map { "\($0)" } ?? []))
            case "no_disconnection":
                try allow(["reason"])
                var reason: String? = nil
                if let r = o["reason"] {
                    if let n = r as? Int {
                        reason = HCIStatus(rawValue: UInt8(truncatingIfNeeded: n)).description
                    } else if let s = r as? String, s.lowercased().hasPrefix("0x"), let n = UInt8(s.dropFirst(2), radix: 16) {
                        reason = HCIStatus(rawValue: n).description
                    } else {
                        reason = "\(r)"
                    }
                }
                out.append(.noDisconnection(reason: reason))
            case "latency":
                try allow(["request", "handle", "max_ms"])
                guard let request = o["request"].map({ "\($0)" }) else {
                    throw ExpectationFileError(message: "\(at): latency needs 'request' (e.g. Write Request)")
                }
                guard let ms = (o["max_ms"] as? Int).map(Double.init) ?? (o["max_ms"] as? Double), ms > 0 else {
                    throw ExpectationFileError(message: "\(at): latency needs 'max_ms' (a positive number)")
                }
                out.append(.latency(request: request, handle: try handle("handle"), maxMicroseconds: Int64(ms * 1000)))
            case "link_quality":
                try allow(["min_rssi", "max_retransmissions_per_report", "allow_approaching_lsto"])
                out.append(
                    .linkQuality(
                        minRSSI: o["min_rssi"] as? Int, maxRetransmissionsPerReport: o["max_retransmissions_per_report"] as? Int,
                        allowApproachingLSTO: o["allow_approaching_lsto"] as? Bool ?? false))
            default:
                throw ExpectationFileError(
                    message: "\(at): unknown expectation '\(kind)' (ota, transfer, no_att_error, no_disconnection, latency, link_quality)")
            }
        }
        return out
    }

    /// `20kB/s` → 160,000 bits/s; units kbps, Mbps, bps, kB/s, MB/s, B/s; nil when not a rate.
    public static func parseRate(_ text: String) -> Double? {
        let t = text.lowercased().replacingAll(" ", with: "")
        let units: [(String, Double)] = [("mbps", 1e6), ("kbps", 1e3), ("bps", 1), ("mb/s", 8e6), ("kb/s", 8e3), ("b/s", 8)]
        for (suffix, factor) in units where t.hasSuffix(suffix) {
            guard let v = Double(t.dropLast(suffix.count)), v >= 0 else { return nil }
            return v * factor
        }
        return nil
    }
}

/// The result of one expectation on one capture.
public struct ExpectationResult: Hashable, Sendable {
    public var expectation: Expectation
    public var file: String
    public var passed: Bool
    /// Why, with the deciding frame in the text.
    public var detail: String
    /// The frame that decides (the failing event, or the one that satisfies the expectation).
    public var frame: Int?
}

/// The OTA pass/fail rule shared by `blescope ota --min-rate/--image` (``OTARun``) and `check`'s `ota:` expectations:
/// what is wrong with the sessions (nothing when every session succeeded, fast enough, with the expected image).
public struct OTAGate: Sendable {
    /// One reason to fail, with the frame that decides it (nil: no session at all).
    public struct Failure: Hashable, Sendable {
        public var text: String
        public var frame: Int?
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
        if sessions.isEmpty && requireSession { failures.append(Failure(text: "no update found in the capture", frame: nil)) }
        for s in sessions {
            let name = "session on connection #\(s.connectionNumber) (\(s.protocolName.rawValue))"
            if s.result != .success { failures.append(Failure(text: "\(name): \(s.result)", frame: s.endFrame)) }
            if let limit = minRateBitsPerSecond {
                let rate = s.throughputBitsPerSecond ?? 0
                if rate < limit {
                    failures.append(
                        Failure(
                            text: "\(name): \(formatRate(rate)) is below \(formatRate(limit))" + (rateLabel.map { " (\($0))" } ?? ""),
                            frame: s.lastPacketFrame ?? s.endFrame))
                }
            }
            if let expectedImage {
                let c = s.compare(expected: expectedImage)
                if !c.matches { failures.append(Failure(text: "\(name): image \(c)", frame: s.endFrame)) }
            }
        }
        return failures
    }
}

/// Everything one pass over a capture gathers for the expectations.
public struct CheckFacts: Sendable {
    public struct ATTError: Hashable, Sendable {
        public var frame: Int; public var handle: UInt16?; public var error: String; public var summary: String
    }
    public struct Request: Hashable, Sendable {
        public var frame: Int; public var name: String; public var handle: UInt16?; public var latency: Int64?;
        public var responseFrame: Int?
    }
    public var otaSessions: [OTASession] = []
    public var transfers: [Transfer] = []
    public var connections: [Connection] = []
    public var attErrors: [ATTError] = []
    public var requests: [Request] = []

    /// One pass: the analyzer with the OTA and transfer trackers, ATT errors and requests taken from the timeline.
    public static func gather(_ capture: CaptureFile, options: AnalyzerOptions = AnalyzerOptions()) -> CheckFacts {
        var facts = CheckFacts()
        var options = options
        options.timeline = true
        var errors: [ATTError] = [], requests: [Request] = []
        let analysis = CaptureAnalysis.analyze(
            capture, options: options,
            observing: Observing(transfers: TransferOptions(), otaStallThreshold: OTATracker().stallThreshold),
            onEvent: { e, _ in
                guard e.layer == .att else { return }
                if e.name == "Error Response" {
                    if errors.count < 100_000 {
                        errors.append(ATTError(frame: e.frame, handle: e.handle, error: e.status ?? "", summary: e.summary))
                    }
                } else if e.isRequest, requests.count < 1_000_000 {
                    requests.append(
                        Request(frame: e.frame, name: e.name, handle: e.handle, latency: e.latency, responseFrame: e.responseFrame))
                }
            })
        facts.otaSessions = analysis.otaSessions ?? []
        facts.transfers = analysis.transfers?.transfers ?? []
        facts.connections = analysis.connections
        facts.attErrors = errors
        facts.requests = requests
        return facts
    }

    /// Judges `expectation` on these facts; `images` holds the bytes of each `image:` file named.
    public func evaluate(_ expectation: Expectation, file: String, images: [String: [UInt8]] = [:]) -> ExpectationResult {
        func result(_ passed: Bool, _ detail: String, _ frame: Int?) -> ExpectationResult {
            ExpectationResult(expectation: expectation, file: file, passed: passed, detail: detail, frame: frame)
        }
        switch expectation {
        case let .ota(protocolName, minRate, rateText, imagePath):
            let sessions = otaSessions.filter { protocolName == nil || $0.protocolName.rawValue == protocolName }
            guard !sessions.isEmpty else {
                return result(
                    false,
                    "no \(protocolName ?? "firmware") update in the capture (\(otaSessions.count) other session\(otaSessions.count == 1 ? "" : "s"))",
                    nil)
            }
            let gate = OTAGate(
                minRateBitsPerSecond: minRate, rateLabel: rateText.map { "min_rate \($0)" },
                expectedImage: imagePath.flatMap { images[$0] }, requireSession: true)
            let failures = gate.failures(sessions)
            if let f = failures.first { return result(false, f.text + (f.frame.map { " (frame \($0))" } ?? ""), f.frame) }
            let s = sessions[0]
            return result(
                true,
                "\(s.protocolName.rawValue) on connection #\(s.connectionNumber): success, "
                    + (s.throughputBitsPerSecond.map { formatBitRate($0) } ?? "-") + ", frames \(s.startFrame)–\(s.endFrame)", s.endFrame)
        case let .transfer(uuid, handle):
            let matching = transfers.filter { t in (uuid == nil || t.characteristic == uuid) && (handle == nil || t.handle == handle) }
            if let done = matching.first(where: \.complete) {
                return result(
                    true,
                    "\(formatCount(done.length)) bytes complete on connection #\(done.connectionNumber), frames \(done.firstFrame)–\(done.lastFrame)",
                    done.lastFrame)
            }
            if let cut = matching.first {
                return result(
                    false, "transfer cut: \(formatCount(cut.length)) bytes, frames \(cut.firstFrame)–\(cut.lastFrame), no end marker",
                    cut.lastFrame)
            }
            return result(false, "no transfer on it in the capture", nil)
        case let .noATTError(handle, except):
            let hits = attErrors.filter { e in
                (handle == nil || e.handle == handle) && !except.contains { $0.caseInsensitiveCompare(e.error) }
            }
            if let e = hits.first {
                return result(
                    false,
                    "Error Response \(e.error) at frame \(e.frame) (\(e.summary))" + (hits.count > 1 ? "; \(hits.count - 1) more" : ""),
                    e.frame)
            }
            return result(true, "none in \(attErrors.count) Error Response\(attErrors.count == 1 ? "" : "s")", nil)
        case let .noDisconnection(reason):
            let ended = connections.filter {
                $0.endFrame != nil && (reason == nil || $0.disconnectReason?.caseInsensitiveCompare(reason!) == true)
            }
            if let c = ended.first {
                return result(
                    false, "connection #\(c.number) disconnected at frame \(c.endFrame!): \(c.disconnectReason ?? "?")", c.endFrame)
            }
            return result(true, "no such disconnection (\(connections.count) connection\(connections.count == 1 ? "" : "s"))", nil)
        case let .latency(request, handle, max):
            let matching = requests.filter { $0.name.caseInsensitiveCompare(request) && (handle == nil || $0.handle == handle) }
            guard !matching.isEmpty else { return result(false, "no \(request) in the capture", nil) }
            if let unanswered = matching.first(where: { $0.latency == nil }) {
                return result(false, "\(request) at frame \(unanswered.frame) never answered", unanswered.frame)
            }
            let worst = matching.max { $0.latency! < $1.latency! }!
            let text =
                "\(matching.count) request\(matching.count == 1 ? "" : "s"), slowest \(formatDuration(microseconds: worst.latency!)) at frame \(worst.frame) (answered at \(worst.responseFrame ?? 0))"
            return result(worst.latency! <= max, text, worst.frame)
        case let .linkQuality(minRSSI, maxRetx, allowLSTO):
            let samples = connections.flatMap { c in c.linkQuality.map { (c.number, $0) } }
            guard !samples.isEmpty else { return result(false, "no Bluetooth Quality Report in the capture", nil) }
            for (n, s) in samples {
                if let minRSSI, Int(s.quality.rssi) < minRSSI {
                    return result(false, "RSSI \(s.quality.rssi) dBm on connection #\(n) at frame \(s.frame)", s.frame)
                }
                if let maxRetx, Int(s.quality.retransmissionCount) > maxRetx {
                    return result(
                        false, "\(s.quality.retransmissionCount) retransmissions on connection #\(n) at frame \(s.frame)", s.frame)
                }
                if !allowLSTO && s.reportID == .approachingLSTO {
                    return result(false, "approaching supervision timeout on connection #\(n) at frame \(s.frame)", s.frame)
                }
            }
            let lowest = samples.min { $0.1.quality.rssi < $1.1.quality.rssi }!
            return result(
                true, "\(samples.count) reports, lowest RSSI \(lowest.1.quality.rssi) dBm at frame \(lowest.1.frame)", lowest.1.frame)
        }
    }
}

extension String {
    /// Case-insensitive equality (ASCII), without Foundation.
    func caseInsensitiveCompare(_ other: String) -> Bool { lowercased() == other.lowercased() }
}

/// JUnit XML for CI systems: one `<testsuite>` per capture, one `<testcase>` per expectation.
public enum JUnitReport {
    public static func xml(_ results: [ExpectationResult]) -> String {
        var files: [String] = []
        for r in results where !files.contains(r.file) { files.append(r.file) }
        let failures = results.filter { !$0.passed }.count
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"blescope check\" tests=\"\(results.count)\" failures=\"\(failures)\">\n"
        for f in files {
            let rs = results.filter { $0.file == f }
            out += "  <testsuite name=\"\(escape(f))\" tests=\"\(rs.count)\" failures=\"\(rs.filter { !$0.passed }.count)\" errors=\"0\">\n"
            for r in rs {
                out += "    <testcase classname=\"\(escape(f))\" name=\"\(escape(r.expectation.title))\""
                if r.passed {
                    out += "><system-out>\(escape(r.detail))</system-out></testcase>\n"
                } else {
                    out += "><failure message=\"\(escape(r.detail))\" type=\"expectation\">\(escape(r.detail))</failure></testcase>\n"
                }
            }
            out += "  </testsuite>\n"
        }
        return out + "</testsuites>\n"
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // XML 1.0 forbids most control characters.
                if c.value < 0x20 && c != "\n" && c != "\t" && c != "\r" { out += "?" } else { out.unicodeScalars.append(c) }
            }
        }
        return out
    }
}
