import BLEAnalysis
import BLECore

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
///   - no_findings: {min_severity: error}                      # the diagnosis finds nothing that bad
///   - absent: [DC-01, CE-02]                                  # none of these diagnosis rules fires
///   - present: [DC-01]                                        # each of these fires
///   - baseline: golden.btsnoop                                # no diff threshold crossed against a golden run
///   - security: {min_key_size: 16, no_debug_keys: true}        # how every link is secured (SecurityExpectation)
/// ```
///
/// Read with ``parse(yaml:path:)``, one decodable type per kind (``ExpectationKinds``).
public enum Expectation: Hashable, Sendable {
    case ota(protocolName: String?, minRateBitsPerSecond: Double?, rateText: String?, imagePath: String?)
    case transfer(uuid: BluetoothUUID?, handle: UInt16?)
    case noATTError(handle: UInt16?, except: [String])
    case noDisconnection(reason: String?)
    case latency(request: String, handle: UInt16?, maxMicroseconds: Int64)
    case linkQuality(minRSSI: Int?, maxRetransmissionsPerReport: Int?, allowApproachingLSTO: Bool)
    /// No diagnosis finding (``DiagnosisEngine``) at this severity or above.
    case noFindings(minSeverity: DiagnosisSeverity)
    /// None of these rules (ids of ``DiagnosisRules/all``) fires.
    case absent(rules: [String])
    /// Each of these rules fires.
    case present(rules: [String])
    /// No `diff` threshold (``DiffGate``) crossed against the golden capture at `path`.
    case baseline(path: String, failOn: String)
    /// Every link secured as asked (key size, pairing methods, no debug keys, no legacy pairing).
    case security(SecurityExpectation)

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
        case let .noFindings(severity):
            return "the diagnosis finds nothing " + (severity == .critical ? "critical" : "at \(severity.rawValue) or above")
        case let .absent(rules):
            return "no " + rules.joined(separator: ", ") + " finding"
        case let .present(rules):
            return rules.joined(separator: ", ") + " found"
        case let .baseline(path, failOn):
            return "no regression against \(path) (" + failOn.split(separator: ",").joined(separator: ", ") + ")"
        case let .security(s):
            return s.title
        }
    }
}

extension Expectation {
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
    /// The connection it happened on, when one decides.
    public var connection: Int?
    /// On a failure, the diagnosis finding that explains it: the finding the expectation is about (`no_findings`,
    /// `absent`), else the most relevant one (``CheckFacts/relatedFinding(frame:connection:)``).
    public var finding: Diagnosis?
    /// True when the diagnosis is what the expectation is about (``finding``, if any, is already told in ``detail``).
    public var findingIsSubject = false
    /// Which findings may explain this kind of failure (``CheckFacts/relatedFinding(frame:connection:hint:)``).
    var hint = ExplanationHint.ending

    public init(
        expectation: Expectation, file: String, passed: Bool, detail: String, frame: Int?, connection: Int? = nil,
        finding: Diagnosis? = nil, findingIsSubject: Bool = false
    ) {
        self.expectation = expectation
        self.file = file
        self.passed = passed
        self.detail = detail
        self.frame = frame
        self.connection = connection
        self.finding = finding
        self.findingIsSubject = findingIsSubject
    }

    /// The same, with another hint.
    func hinted(_ hint: ExplanationHint) -> ExpectationResult {
        var r = self
        r.hint = hint
        return r
    }

    /// The result line's reason: the detail, and on a failure the finding that explains it
    /// (`… aborted (frame 900) — DC-01 at frame 905: link to C1:… lost by supervision timeout (0x08)`).
    public var explanation: String {
        guard !passed, !findingIsSubject, let d = finding else { return detail }
        return detail + " — " + d.rule + " at frame \(d.frame): " + d.headline
    }

    /// `PASS  ota … succeeds: …`, with the file's name first when several captures are checked.
    public func line(showingFile: Bool) -> String {
        (passed ? "PASS" : "FAIL") + "  " + (showingFile ? file + ": " : "") + expectation.title + ": " + explanation
    }
}

/// Which diagnosis findings may explain a kind of failure: the rule groups that explain it best (looked at first), and
/// whether a finding after the deciding frame may (what ended a session explains its end, not its pace).
public struct ExplanationHint: Hashable, Sendable {
    public var groups: [RuleGroup]
    public var later: Bool
    /// Whether an error just before the frame may explain it even off its connection (a controller failure, a lost
    /// link that took the session's device with it).
    public var nearby: Bool
    /// The least severity a finding of those groups needs (info for a slow pace: TP-04, throughput paced by the app,
    /// is info and is what explains it).
    public var minimum: DiagnosisSeverity

    public init(groups: [RuleGroup], later: Bool, nearby: Bool = false, minimum: DiagnosisSeverity = .warning) {
        self.groups = groups
        self.later = later
        self.nearby = nearby
        self.minimum = minimum
    }

    /// Something ended: an update aborted, a transfer cut, a request never answered, a disconnection.
    public static let ending = ExplanationHint(groups: [.disconnection, .gatt, .security, .captureQuality], later: true, nearby: true)
    /// Something is missing from the capture: why it may never have happened.
    public static let absence = ExplanationHint(groups: [.establishment, .security, .captureQuality], later: true)
    /// Too slow: the throughput and link-parameter findings up to that point.
    public static let pace = ExplanationHint(groups: [.throughput, .linkParameters, .gatt], later: false, minimum: .info)
    /// A refused request: security and GATT findings up to that point.
    public static let refusal = ExplanationHint(groups: [.security, .gatt], later: false)
    /// A weak radio: link parameters and the controller's warnings up to that point.
    public static let radio = ExplanationHint(groups: [.linkParameters, .controller, .disconnection], later: false)
    /// The image differs: what the capturer cut.
    public static let image = ExplanationHint(groups: [.captureQuality], later: true)
    /// Nothing in the diagnosis speaks to it.
    public static let none = ExplanationHint(groups: [], later: false)
}
