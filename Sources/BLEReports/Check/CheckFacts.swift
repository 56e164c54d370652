import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols

/// Everything one pass over a capture gathers for the expectations, the diagnosis included.
public struct CheckFacts: Sendable {
    public struct ATTError: Hashable, Sendable {
        public var frame: Int; public var handle: UInt16?; public var error: String; public var summary: String
        public var connection: Int? = nil
    }
    public struct Request: Hashable, Sendable {
        public var frame: Int; public var name: String; public var handle: UInt16?; public var latency: Int64?;
        public var responseFrame: Int?
        public var connection: Int? = nil
    }
    public var otaSessions: [OTASession] = []
    public var transfers: [Transfer] = []
    public var connections: [Connection] = []
    public var attErrors: [ATTError] = []
    public var requests: [Request] = []
    /// The findings of `blescope diagnose` on the same capture, from the same pass.
    public var diagnosis = DiagnosisResult(findings: [], rulesEvaluated: 0)
    /// For `baseline` expectations: this capture and the golden ones analysed as `report` does (set by the caller).
    public var baselineAnalyses: BaselineAnalyses?

    /// One pass: the analyzer with the OTA and transfer trackers, ATT errors and requests taken from the timeline, the
    /// completeness verdict beside it; then the diagnosis rules on its evidence (what
    /// ``DiagnosisReport/analyze(_:options:progress:rules:)`` does, without a second pass; with the updates, as the
    /// report's diagnosis).
    public static func gather(_ capture: CaptureFile, options: AnalyzerOptions = AnalyzerOptions()) -> CheckFacts {
        var facts = CheckFacts()
        var options = options
        options.timeline = true
        var errors: [ATTError] = [], requests: [Request] = []
        let (analysis, log) = LogScope.analyze(
            capture, options: options,
            observing: Observing(transfers: TransferOptions(), otaStallThreshold: OTATracker().stallThreshold),
            onEvent: { e, _ in
                guard e.layer == .att else { return }
                if e.name == "Error Response" {
                    if errors.count < 100_000 {
                        errors.append(
                            ATTError(
                                frame: e.frame, handle: e.handle, error: e.status ?? "", summary: e.summary, connection: e.connectionNumber)
                        )
                    }
                } else if e.isRequest, requests.count < 1_000_000 {
                    requests.append(
                        Request(
                            frame: e.frame, name: e.name, handle: e.handle, latency: e.latency, responseFrame: e.responseFrame,
                            connection: e.connectionNumber))
                }
            })
        facts.otaSessions = analysis.otaSessions ?? []
        facts.transfers = analysis.transfers?.transfers ?? []
        facts.connections = analysis.connections
        facts.attErrors = errors
        facts.requests = requests
        var evidence = DiagnosisReport.evidence(analysis, capture: capture, completeness: log.completeness)
        // The pass followed the updates, as the report's does: a link that ends right after a successful one is the
        // device rebooting into its image, not a failure.
        evidence.otaSessions = analysis.otaSessions
        facts.diagnosis = DiagnosisEngine.diagnose(evidence)
        return facts
    }

    /// Judges `expectation` on these facts; `images` holds the bytes of each `image:` file named. A failure carries the
    /// diagnosis finding that best explains it (``relatedFinding(frame:connection:)``).
    public func evaluate(_ expectation: Expectation, file: String, images: [String: [UInt8]] = [:]) -> ExpectationResult {
        var r = verdict(expectation, images: images)
        r.file = file
        if !r.passed && !r.findingIsSubject {
            r.finding = relatedFinding(frame: r.frame, connection: r.connection, hint: r.hint)
        }
        return r
    }

    func verdict(_ expectation: Expectation, images: [String: [UInt8]]) -> ExpectationResult {
        switch expectation {
        case let .ota(protocolName, minRate, rateText, imagePath):
            return ota(expectation, protocolName, minRate, rateText, imagePath.flatMap { images[$0] })
        case let .transfer(uuid, handle):
            return transfer(expectation, uuid, handle)
        case let .noATTError(handle, except):
            return noATTError(expectation, handle, except)
        case let .noDisconnection(reason):
            return noDisconnection(expectation, reason)
        case let .latency(request, handle, max):
            return latency(expectation, request, handle, max)
        case let .linkQuality(minRSSI, maxRetx, allowLSTO):
            return linkQuality(expectation, minRSSI, maxRetx, allowLSTO)
        case let .noFindings(severity):
            return noFindings(expectation, severity)
        case let .absent(rules):
            return absent(expectation, rules)
        case let .present(rules):
            return present(expectation, rules)
        case let .baseline(path, failOn):
            return baseline(expectation, path, failOn)
        case let .security(s):
            return security(expectation, s)
        }
    }

    // MARK: the expectations on the capture

    private func ota(
        _ e: Expectation, _ protocolName: String?, _ minRate: Double?, _ rateText: String?, _ image: [UInt8]?
    ) -> ExpectationResult {
        let sessions = otaSessions.filter { protocolName == nil || $0.protocolName.rawValue == protocolName }
        guard !sessions.isEmpty else {
            let others = "\(otaSessions.count) other session\(otaSessions.count == 1 ? "" : "s")"
            return ExpectationResult(
                expectation: e, file: "", passed: false, detail: "no \(protocolName ?? "firmware") update in the capture (\(others))",
                frame: nil
            ).hinted(.absence)
        }
        let gate = OTAGate(
            minRateBitsPerSecond: minRate, rateLabel: rateText.map { "min_rate \($0)" }, expectedImage: image, requireSession: true)
        if let f = gate.failures(sessions).first {
            var r = ExpectationResult(
                expectation: e, file: "", passed: false, detail: f.text + (f.frame.map { " (frame \($0))" } ?? ""), frame: f.frame,
                connection: f.connection)
            r.hint =
                switch f.reason {
                case .rate: .pace
                case .image: .image
                case .noSession: .absence
                case .result: .ending
                }
            return r
        }
        let s = sessions[0]
        let rate = s.throughputBitsPerSecond.map { formatBitRate($0) } ?? "-"
        return ExpectationResult(
            expectation: e, file: "", passed: true,
            detail:
                "\(s.protocolName.rawValue) on connection #\(s.connectionNumber): success, \(rate), frames \(s.startFrame)–\(s.endFrame)",
            frame: s.endFrame, connection: s.connectionNumber)
    }

    private func transfer(_ e: Expectation, _ uuid: BluetoothUUID?, _ handle: UInt16?) -> ExpectationResult {
        let matching = transfers.filter { t in (uuid == nil || t.characteristic == uuid) && (handle == nil || t.handle == handle) }
        if let done = matching.first(where: \.complete) {
            return ExpectationResult(
                expectation: e, file: "", passed: true,
                detail:
                    "\(formatCount(done.length)) bytes complete on connection #\(done.connectionNumber), frames \(done.firstFrame)–\(done.lastFrame)",
                frame: done.lastFrame, connection: done.connectionNumber)
        }
        if let cut = matching.first {
            return ExpectationResult(
                expectation: e, file: "", passed: false,
                detail: "transfer cut: \(formatCount(cut.length)) bytes, frames \(cut.firstFrame)–\(cut.lastFrame), no end marker",
                frame: cut.lastFrame, connection: cut.connectionNumber)
        }
        return ExpectationResult(expectation: e, file: "", passed: false, detail: "no transfer on it in the capture", frame: nil)
            .hinted(.absence)
    }

    private func noATTError(_ e: Expectation, _ handle: UInt16?, _ except: [String]) -> ExpectationResult {
        let hits = attErrors.filter { a in
            (handle == nil || a.handle == handle) && !except.contains { $0.caseInsensitiveCompare(a.error) }
        }
        if let a = hits.first {
            return ExpectationResult(
                expectation: e, file: "", passed: false,
                detail: "Error Response \(a.error) at frame \(a.frame) (\(a.summary))" + (hits.count > 1 ? "; \(hits.count - 1) more" : ""),
                frame: a.frame, connection: a.connection
            ).hinted(.refusal)
        }
        return ExpectationResult(
            expectation: e, file: "", passed: true, detail: "none in \(attErrors.count) Error Response\(plural(attErrors.count))",
            frame: nil)
    }

    private func noDisconnection(_ e: Expectation, _ reason: String?) -> ExpectationResult {
        let ended = connections.filter { c in
            guard c.endFrame != nil else { return false }
            guard let reason, let said = c.disconnectReason else { return reason == nil }
            // An air capture names the LL_TERMINATE_IND's code: `LL_TERMINATE_IND: Connection Timeout`.
            return said.caseInsensitiveCompare(reason) || said.lowercased().hasSuffix(": " + reason.lowercased())
        }
        if let c = ended.first, let end = c.endFrame {
            return ExpectationResult(
                expectation: e, file: "", passed: false,
                detail: "connection #\(c.number) disconnected at frame \(end): \(c.disconnectReason ?? "?")", frame: end,
                connection: c.number)
        }
        return ExpectationResult(
            expectation: e, file: "", passed: true,
            detail: "no such disconnection (\(connections.count) connection\(plural(connections.count)))",
            frame: nil)
    }

    private func latency(_ e: Expectation, _ request: String, _ handle: UInt16?, _ max: Int64) -> ExpectationResult {
        let matching = requests.filter { $0.name.caseInsensitiveCompare(request) && (handle == nil || $0.handle == handle) }
        guard !matching.isEmpty else {
            return ExpectationResult(expectation: e, file: "", passed: false, detail: "no \(request) in the capture", frame: nil)
                .hinted(.absence)
        }
        if let unanswered = matching.first(where: { $0.latency == nil }) {
            return ExpectationResult(
                expectation: e, file: "", passed: false, detail: "\(request) at frame \(unanswered.frame) never answered",
                frame: unanswered.frame, connection: unanswered.connection)
        }
        let worst = matching.max { ($0.latency ?? 0) < ($1.latency ?? 0) }!
        let slowest = worst.latency ?? 0
        let text =
            "\(matching.count) request\(plural(matching.count)), slowest \(formatDuration(microseconds: slowest)) at frame \(worst.frame) (answered at \(worst.responseFrame ?? 0))"
        var r = ExpectationResult(
            expectation: e, file: "", passed: slowest <= max, detail: text, frame: worst.frame, connection: worst.connection)
        r.hint = .pace
        return r
    }

    private func linkQuality(_ e: Expectation, _ minRSSI: Int?, _ maxRetx: Int?, _ allowLSTO: Bool) -> ExpectationResult {
        let samples = connections.flatMap { c in c.linkQuality.map { (c.number, $0) } }
        func fail(_ text: String, _ n: Int, _ frame: Int) -> ExpectationResult {
            var r = ExpectationResult(expectation: e, file: "", passed: false, detail: text, frame: frame, connection: n)
            r.hint = .radio
            return r
        }
        guard !samples.isEmpty else {
            return ExpectationResult(
                expectation: e, file: "", passed: false, detail: "no Bluetooth Quality Report in the capture", frame: nil
            )
            .hinted(.none)
        }
        for (n, s) in samples {
            // -127 dBm: nothing received to measure (LinkQualitySummary.unmeasuredRSSI), not a weak signal.
            if let minRSSI, Int(s.quality.rssi) > LinkQualitySummary.unmeasuredRSSI, Int(s.quality.rssi) < minRSSI {
                return fail("RSSI \(s.quality.rssi) dBm on connection #\(n) at frame \(s.frame)", n, s.frame)
            }
            if let maxRetx, Int(s.quality.retransmissionCount) > maxRetx {
                return fail("\(s.quality.retransmissionCount) retransmissions on connection #\(n) at frame \(s.frame)", n, s.frame)
            }
            if !allowLSTO && s.reportID == .approachingLSTO {
                return fail("approaching supervision timeout on connection #\(n) at frame \(s.frame)", n, s.frame)
            }
        }
        let measured = samples.filter { Int($0.1.quality.rssi) > LinkQualitySummary.unmeasuredRSSI }
        guard let lowest = measured.min(by: { $0.1.quality.rssi < $1.1.quality.rssi }) else {
            return ExpectationResult(
                expectation: e, file: "", passed: true,
                detail: "\(samples.count) reports, none measured a signal (RSSI -127 dBm: nothing received)", frame: samples.first?.1.frame,
                connection: samples.first?.0)
        }
        return ExpectationResult(
            expectation: e, file: "", passed: true,
            detail: "\(samples.count) reports, lowest RSSI \(lowest.1.quality.rssi) dBm at frame \(lowest.1.frame)", frame: lowest.1.frame,
            connection: lowest.0)
    }
}

func plural(_ n: Int) -> String { n == 1 ? "" : "s" }

extension String {
    /// Case-insensitive equality (ASCII), without Foundation.
    func caseInsensitiveCompare(_ other: String) -> Bool { lowercased() == other.lowercased() }
}
