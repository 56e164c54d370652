import BLECore

/// The diagnosis of one capture: findings ranked (most severe first, then in frame order), repeats folded into one
/// line, each qualified by what the capture cannot show.
public struct DiagnosisResult: Hashable, Sendable {
    public var findings: [Diagnosis]
    /// How many rules ran.
    public var rulesEvaluated: Int
    /// What the capture shows, in a few sentences, before the findings.
    public var story: Story
    /// The platform the log was taken on, when the log says (``Evidence/platform``).
    public var platform: PlatformIdentity?
    /// This side as the log names it (HCI logs only): its host's name and its controller.
    public var thisSide: ThisSide?
    /// The names of the peers it describes (``Evidence/namedPeers(also:)``).
    public var names: [NamedPeer] = []

    public init(findings: [Diagnosis], rulesEvaluated: Int, story: Story = Story()) {
        self.findings = findings
        self.rulesEvaluated = rulesEvaluated
        self.story = story
    }

    public func count(_ severity: DiagnosisSeverity) -> Int { findings.filter { $0.severity == severity }.count }
    /// The most severe finding's severity (nil: nothing found).
    public var worst: DiagnosisSeverity? { findings.first?.severity }
    /// Findings at `severity` or above.
    public func atLeast(_ severity: DiagnosisSeverity) -> [Diagnosis] { findings.filter { $0.severity >= severity } }

    /// `2 critical, 1 error, 3 warnings` (empty: nothing above info). When every finding above info is a weakness
    /// (``FindingTraits/weakness``: a legacy pairing, a short key), the answer comes first: `nothing failed; 1
    /// weakness: 1 warning`.
    public var tally: String {
        var parts: [String] = []
        for s in DiagnosisSeverity.allCases.reversed() where s != .info {
            let n = count(s)
            if n > 0 { parts.append("\(n) \(s.rawValue)\(s == .info || n == 1 || s == .critical ? "" : "s")") }
        }
        let counted = parts.joined(separator: ", ")
        let raised = findings.filter { $0.severity > .info }
        guard !raised.isEmpty, raised.allSatisfy({ $0.code.has(.weakness) }) else { return counted }
        return "nothing failed; \(raised.count) weakness\(raised.count == 1 ? "" : "es"): " + counted
    }
}

/// Runs the rules over the evidence, qualifies each finding by what the capture cannot show, folds repeats and ranks.
public enum DiagnosisEngine {
    public static func diagnose(_ evidence: Evidence, rules: [any DiagnosisRule.Type] = DiagnosisRules.all) -> DiagnosisResult {
        var evidence = evidence
        if evidence.scenarios == nil { evidence.scenarios = Scenarios(evidence) }
        var found: [Diagnosis] = []
        for rule in rules { found += rule.evaluate(evidence) }
        let caveats = Caveats(evidence)
        let requesters = SnifferMissed.requesters(evidence, found)
        for i in found.indices {
            // A rule reports at its code's severity or below, never above (its evidence decides how far below).
            found[i].severity = min(found[i].severity, found[i].code.severity)
            found[i].confidence = caveats.confidence(of: found[i])
            Observability.qualify(&found[i], evidence)
            SnifferMissed.qualify(&found[i], evidence, requesters: requesters)
            FuzzingFit.qualify(&found[i], evidence)
        }
        let findings = rank(fold(found))
        var result = DiagnosisResult(findings: findings, rulesEvaluated: rules.count, story: Story(evidence, findings: findings))
        result.platform = evidence.platform
        result.thisSide = evidence.localSide
        result.names = evidence.namedPeers(also: findings.compactMap(\.device))
        return result
    }

    /// Findings with the same fold key become one, listing every occurrence's deciding frame (the first keeps its
    /// sentence and supporting frames; a later occurrence that tells its own cause adds it, and its frames, up to
    /// ``toldInstances``).
    static func fold(_ all: [Diagnosis]) -> [Diagnosis] {
        var out: [Diagnosis] = []
        var index: [String: Int] = [:]
        for d in all.sorted(by: { ($0.frame, $0.rule) < ($1.frame, $1.rule) }) {
            guard !d.foldKey.isEmpty else {
                out.append(d)
                continue
            }
            if let i = index[d.foldKey] {
                out[i].occurrences.append(d.frame)
                if let own = d.instance, out[i].count <= toldInstances {
                    out[i].message += " Then at frame \(d.frame): \(own)."
                    out[i].supporting = (out[i].supporting + d.supporting).sorted { $0.frame < $1.frame }
                }
                out[i].severity = max(out[i].severity, d.severity)
                if case .lowered = d.confidence, !out[i].confidence.isLowered { out[i].confidence = d.confidence }
            } else {
                index[d.foldKey] = out.count
                out.append(d)
            }
        }
        return out
    }

    /// How many occurrences of a folded finding its message tells, each with its own cause (the first included).
    static let toldInstances = 3

    /// Most severe first; within a severity, in the order they happened.
    static func rank(_ all: [Diagnosis]) -> [Diagnosis] {
        all.sorted { a, b in a.severity != b.severity ? a.severity > b.severity : (a.frame, a.rule) < (b.frame, b.rule) }
    }
}

/// What the capture cannot show, as it touches one finding: a break in the timeline near its frames, payloads cut by
/// the capturer, a connection that started before the capture, facts only assumed.
struct Caveats {
    /// Frames where the timeline breaks (gap, backwards, drops), with what.
    var breaks: [(frame: Int, text: String)] = []
    var payloadsCut = false
    var eventsDropped = 0
    var startedBefore: Set<Int> = []

    init(_ e: Evidence) {
        for item in e.completeness?.items ?? [] {
            switch item.code {
            case .timeBackwards where item.severity < .warning, .drops where item.severity < .warning:
                break  // clock jitter under 10 ms, or two interfaces' clocks: timing holds; an nRF counter's skips: a note
            case .timeGap, .timeBackwards, .drops:
                if let f = item.frame { breaks.append((f, item.message)) }
            case .aclPayloadCut:
                payloadsCut = true
            default:
                break
            }
        }
        eventsDropped = e.eventsDropped
        startedBefore = Set(e.connections.filter(\.inferred).map(\.number))
    }

    func confidence(of d: Diagnosis) -> DiagnosisConfidence {
        guard !d.code.has(.describesCapture) else { return .high }
        if eventsDropped > 0 { return .lowered(reason: "the capture had more evidence than kept (\(eventsDropped) events dropped)") }
        let low = d.frames.first ?? d.frame
        if let b = breaks.first(where: { $0.frame <= d.frame && $0.frame >= low }) {
            return .lowered(reason: "the timeline breaks at frame \(b.frame) (\(b.text))")
        }
        if payloadsCut && d.code.has(.readsPayloads) {
            return .lowered(reason: "the capturer cut the payloads: values and sizes are not all seen")
        }
        if let n = d.connection, startedBefore.contains(n), d.code.has(.restsOnSetup) {
            return .lowered(reason: "the connection started before the capture: its setup is not in this file")
        }
        if let assumed = d.facts.first(where: { $0.source == .assumed }) {
            return .lowered(reason: "it rests on an assumed \(assumed.name) (\(assumed.value)): the capture does not show it")
        }
        return .high
    }
}

/// Whether an air capture could have shown an absence a finding claims (a request never answered, nothing notified, no
/// data): not when the link was encrypted and the sniffer had no key, nor when the sniffer stopped following the link
/// (no end of it in the capture). Then the finding becomes info and says so (issue 35 point 5).
package enum Observability {
    static func qualify(_ d: inout Diagnosis, _ e: Evidence) {
        guard d.code.has(.claimsAbsence), d.severity > .info, let c = e.connection(d.connection), let why = blind(c, e) else { return }
        d.severity = .info
        d.message = "The capture cannot show whether this happened: \(why). What it shows: \(d.message)"
        d.headline = "cannot tell (air capture): " + d.headline
    }

    /// Why an air capture cannot show an absence on link `c`, if it cannot: encrypted without a key, or no longer followed.
    package static func blind(_ c: Connection, _ e: Evidence) -> String? {
        guard e.isAirCapture else { return nil }
        if let enc = c.linkEncryption, enc.key == nil, let from = enc.firstUndecryptedFrame ?? Optional(enc.encryptedFrom) {
            return "link #\(c.number) is encrypted from frame \(from) and the sniffer had no key: what it carried cannot be read"
        }
        if c.lifecycle.ending == nil, let last = [c.activity.lastReceived?.frame, c.activity.lastSent?.frame].compactMap({ $0 }).max(),
            last < e.lastFrame
        {
            return
                "the sniffer's last packet of link #\(c.number) is at frame \(last) and the capture holds no end of the link: it stopped following it"
        }
        return nil
    }
}
