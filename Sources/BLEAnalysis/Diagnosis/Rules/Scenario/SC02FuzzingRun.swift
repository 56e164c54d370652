import BLECore
import BLEProtocols

extension FindingCode {
    package static let fuzzingRun = FindingCode(
        "SC-02", layer: .link, severity: .info,
        title: "Fuzzing-like run of connection attempts",
        explain: .init(
            meaning:
                "Many short connections from one central to one device within minutes, most of them ending in a pairing that failed or never finished, PDUs the decoder found malformed, or a link abandoned without a terminate: the shape of a fuzzer or a test tool at work (SweynTooth), not of a user. The failures of those links are folded under it at info: none is a user's operation that failed.",
            advice:
                "If no test tool was meant to run, find which central made the attempts; if one was, look at how the device answered the last attempts (a device that stops answering or leaves without a terminate may have crashed)."
        ),
        fold: .never)
}

/// A fuzzing-like run: many short connection attempts by one central to one device, most of them malformed or aborted
/// (SweynTooth's Cypress PSoC 6 run: 52 CONNECT_INDs from one central in 188 s, 46 Pairing Requests).
public struct FuzzingRun: Hashable, Sendable {
    public var device: String
    public var central: String?
    /// The connections of the run, in order.
    public var connections: [Int]
    public var firstFrame: Int
    public var lastFrame: Int
    public var microseconds: Int64
    /// How the attempts went wrong (each attempt counted once per kind).
    public var pairingsStarted = 0
    public var pairingsFailed = 0
    public var pairingsUnfinished = 0
    public var encryptionRefused = 0
    public var malformed = 0
    public var abandoned = 0
    /// Attempts with at least one of those.
    public var abnormal = 0

    /// `fuzzing-like run: 52 attempts in 188 s`.
    public var headline: String { "fuzzing-like run: \(connections.count) attempts in \(duration(microseconds))" }

    /// `46 pairings started (14 failed, 18 never finished), 43 links abandoned without a terminate`.
    public var details: String {
        var parts: [String] = []
        if pairingsStarted > 0 {
            var p = "\(pairingsStarted) with a pairing started"
            let how = [
                pairingsFailed > 0 ? "\(pairingsFailed) failed" : nil,
                pairingsUnfinished > 0 ? "\(pairingsUnfinished) never finished" : nil,
            ].compactMap { $0 }
            if !how.isEmpty { p += " (\(how.joined(separator: ", ")))" }
            parts.append(p)
        }
        if encryptionRefused > 0 { parts.append("\(encryptionRefused) with encryption refused") }
        if malformed > 0 { parts.append("\(malformed) with malformed PDUs") }
        if abandoned > 0 { parts.append("\(abandoned) abandoned without a terminate") }
        return parts.joined(separator: ", ")
    }
}

/// SC-02: at least ``minimumAttempts`` LE connections from one central to one device, each starting within ``gap`` of
/// the one before, lasting ``maximumMedian`` or less (median), most of them (``abnormalShare``) abnormal: a pairing
/// that failed or never finished, encryption refused, a malformed PDU, a link abandoned without a terminate. Info; the
/// findings on those links become info too (``FuzzingFit``): a fuzzer's attempts are nobody's failed operation.
package struct SC02FuzzingRun: DiagnosisRule {
    package static let code = FindingCode.fuzzingRun
    package static let group = RuleGroup.scenario
    package static let evidence =
        "The LE connections per central and device: start, end and how each ended; per connection the Pairing Requests, Pairing Failed, keys distributed, encryption refused, the decoder's malformed-PDU findings"
    package static let anchor = "none"
    package static let minimumAttempts = 8
    package static let gap: Int64 = 60_000_000
    package static let maximumMedian: Int64 = 60_000_000
    package static let abnormalShare = 0.6

    package static func evaluate(_ e: Evidence) -> [Diagnosis] {
        (e.scenarios?.fuzzing ?? recognise(e)).map { run in
            let first = e.connection(run.connections.first)
            return Diagnosis(
                rule: code, severity: severity, frame: run.lastFrame,
                message:
                    "\(run.headline.capitalizedFirst) by \(run.central ?? "one central") to \(run.device), frames \(run.firstFrame)–\(run.lastFrame) (links #\(run.connections.first!)–#\(run.connections.last!)): \(run.abnormal) of them malformed or aborted: \(run.details). The pairing, security and request failures on those links are a fuzzer's or a test tool's, not a user's: told at info.",
                headline: run.headline + " to \(run.device)",
                supporting: [CitedFrame(run.firstFrame, "first attempt"), CitedFrame(run.lastFrame, "last attempt")],
                causes: ["a fuzzer or a test tool (SweynTooth, a conformance tester) connecting again and again"],
                device: first?.peerAddress, connection: first?.number)
        }
    }
}

extension SC02FuzzingRun {
    /// The largest run of the capture, if one is fuzzing-like.
    package static func recognise(_ e: Evidence) -> [FuzzingRun] {
        var byPair: [String: [Connection]] = [:]
        for c in e.connections where c.isLE && !c.inferred {
            byPair["\(c.centralAddress ?? "") \(e.deviceName(c))", default: []].append(c)
        }
        let candidates = byPair.values.flatMap { links in
            clusters(links.sorted { $0.startFrame < $1.startFrame }).filter { $0.count >= minimumAttempts }
        }
        // Most captures have none: the pass over every event and finding is paid only when one is a candidate.
        guard !candidates.isEmpty else { return [] }
        let facts = AttemptFacts(e)
        var best: FuzzingRun?
        for cluster in candidates.sorted(by: { $0[0].startFrame < $1[0].startFrame }) {
            guard let run = judge(cluster, facts, e), run.connections.count > best?.connections.count ?? 0 else { continue }
            best = run
        }
        return best.map { [$0] } ?? []
    }

    /// Connections split where the next one starts more than ``gap`` after the one before.
    package static func clusters(_ links: [Connection]) -> [[Connection]] {
        var out: [[Connection]] = []
        for c in links {
            if let last = out.last?.last, c.startTime.microseconds(since: last.startTime) <= gap {
                out[out.count - 1].append(c)
            } else {
                out.append([c])
            }
        }
        return out
    }

    package static func judge(_ cluster: [Connection], _ facts: AttemptFacts, _ e: Evidence) -> FuzzingRun? {
        let lengths = cluster.map { c in (c.endTime ?? e.lastTime ?? c.startTime).microseconds(since: c.startTime) }.sorted()
        guard lengths[lengths.count / 2] <= maximumMedian, let first = cluster.first, let last = cluster.last else { return nil }
        // An HCI log is the central's (this side connects) or the device under test's (the peer connects to it).
        let thisSideConnected = !e.isAirCapture && first.role != .peripheral
        var run = FuzzingRun(
            device: e.isAirCapture || thisSideConnected ? e.deviceName(first) : "this side",
            central: e.isAirCapture ? first.centralAddress : thisSideConnected ? "this side" : e.deviceName(first),
            connections: cluster.map(\.number), firstFrame: first.startFrame,
            lastFrame: last.endFrame ?? last.startFrame, microseconds: last.startTime.microseconds(since: first.startTime))
        for c in cluster {
            let f = facts.of[c.number] ?? AttemptFacts.Attempt()
            let abandoned = c.lifecycle.ending.map { $0.code == nil && $0.inferredFrom == nil && $0.endedBy == .unknown } ?? false
            run.pairingsStarted += f.pairingStarted ? 1 : 0
            run.pairingsFailed += f.pairingFailed ? 1 : 0
            run.pairingsUnfinished += f.pairingStarted && !f.pairingFailed && !f.keys ? 1 : 0
            run.encryptionRefused += f.encryptionRefused ? 1 : 0
            run.malformed += f.malformed ? 1 : 0
            run.abandoned += abandoned ? 1 : 0
            let aborted = f.pairingFailed || (f.pairingStarted && !f.keys) || f.encryptionRefused
            run.abnormal += aborted || f.malformed || abandoned ? 1 : 0
        }
        guard Double(run.abnormal) >= abnormalShare * Double(cluster.count) else { return nil }
        return run
    }
}

/// Per connection, what its attempt showed: a pairing started, failed or finished, encryption refused, malformed PDUs.
package struct AttemptFacts {
    package struct Attempt {
        var pairingStarted = false
        var pairingFailed = false
        var keys = false
        var encryptionRefused = false
        var malformed = false
    }
    package var of: [Int: Attempt] = [:]

    /// The decoder's codes for PDUs that break their format (a fuzzer's mark).
    package static let malformedCodes: Set<FindingCode> = [
        .llMalformed, .llControlMalformed, .llReservedLLID, .decodeMalformed, .l2capFrameTooLong, .l2capUnexpectedContinuation,
        .attEmpty, .attPDUExceedsMTU,
    ]

    package init(_ e: Evidence) {
        for ev in e.events {
            guard let n = ev.connection else { continue }
            switch ev.kind {
            case .pairingRequest: of[n, default: .init()].pairingStarted = true
            case .pairingFailed: of[n, default: .init()].pairingFailed = true
            case .keysDistributed: of[n, default: .init()].keys = true
            case .encryptionChange(_, let status, _) where status != .success: of[n, default: .init()].encryptionRefused = true
            case .encryptionChange(_, _, let enabled) where enabled: of[n, default: .init()].keys = true
            case .linkLayerRejected: of[n, default: .init()].encryptionRefused = true
            default: break
            }
        }
        // Decoder findings carry a frame, not a connection: the connection whose frames hold it.
        let spans = e.connections.filter(\.isLE).map { ($0.number, $0.startFrame, $0.endFrame ?? e.lastFrame) }
        for f in e.findings where Self.malformedCodes.contains(f.kind.code) {
            guard let frame = f.frame, let span = spans.last(where: { $0.1 <= frame && frame <= $0.2 }) else { continue }
            of[span.0, default: .init()].malformed = true
        }
    }
}

/// The findings on a fuzzing-like run's links, fitted to it: a pairing failed, a bond lost, a request refused there is
/// a fuzzer's attempt, told at info with the run named (the peer leaving or a link's loss, which may be the device
/// crashing under the fuzzer, stays at most a warning).
package enum FuzzingFit {
    package static func qualify(_ d: inout Diagnosis, _ e: Evidence) {
        guard let run = e.scenarios?.fuzzing.first, d.code != FindingCode.fuzzingRun, let n = d.connection,
            run.connections.contains(n), d.severity > .info
        else { return }
        // The peer leaving or the link lost may be the device crashing under the fuzzer: at most a warning. The rest (a
        // pairing failed, a bond lost, a request refused, the central closing its own attempt) is the fuzzer's doing.
        let group = DiagnosisRules.rule(d.rule)?.group
        // DC-03, this side ended the link: its rule is BLEDiagnosis', which this module does not import.
        let mayBeACrash = group == .disconnection && d.rule != "DC-03"
        d.severity = mayBeACrash ? min(d.severity, .warning) : .info
        d.headline = "during the \(run.headline) (SC-02): " + d.headline
        d.causes.insert("an attempt of the \(run.headline) (SC-02): a fuzzer's or a test tool's, not a user's", at: 0)
    }
}
