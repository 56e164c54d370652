import BLEAnalysis

/// The expectations on the diagnosis (`no_findings`, `absent`, `present`), and the finding that explains any failure.
extension CheckFacts {
    func noFindings(_ e: Expectation, _ minimum: DiagnosisSeverity) -> ExpectationResult {
        let hits = diagnosis.atLeast(minimum)  // ranked: the worst first
        let level = minimum.rawValue + (minimum == .critical ? "" : " or above")
        guard let worst = hits.first else {
            let below = DiagnosisSeverity.allCases.reversed().filter { $0 < minimum }.compactMap { s -> String? in
                let n = diagnosis.count(s)
                return n == 0 ? nil : "\(n) \(s.rawValue)\(s == .info ? "" : plural(n))"
            }
            return ExpectationResult(
                expectation: e, file: "", passed: true,
                detail: (below.isEmpty ? "no finding" : below.joined(separator: ", ") + " below it")
                    + " (\(diagnosis.rulesEvaluated) rules)",
                frame: nil)
        }
        let more = hits.count > 1 ? "; \(hits.count - 1) more at \(level): " + others(hits.dropFirst()) : ""
        return ExpectationResult(
            expectation: e, file: "", passed: false, detail: Self.describe(worst) + more, frame: worst.frame, connection: worst.connection,
            finding: worst, findingIsSubject: true)
    }

    func absent(_ e: Expectation, _ rules: [String]) -> ExpectationResult {
        let hits = diagnosis.findings.filter { rules.contains($0.rule) }
        guard let worst = hits.first else {
            return ExpectationResult(
                expectation: e, file: "", passed: true,
                detail:
                    "none fired (\(diagnosis.findings.count) finding\(plural(diagnosis.findings.count)) from \(diagnosis.rulesEvaluated) rules)",
                frame: nil)
        }
        let more = hits.count > 1 ? "; also " + others(hits.dropFirst()) : ""
        return ExpectationResult(
            expectation: e, file: "", passed: false, detail: Self.describe(worst) + more, frame: worst.frame, connection: worst.connection,
            finding: worst, findingIsSubject: true)
    }

    func present(_ e: Expectation, _ rules: [String]) -> ExpectationResult {
        let missing = rules.filter { id in !diagnosis.findings.contains { $0.rule == id } }
        guard missing.isEmpty else {
            let found = diagnosis.findings.isEmpty ? "nothing found" : "found: " + others(diagnosis.findings[...])
            return ExpectationResult(
                expectation: e, file: "", passed: false, detail: missing.joined(separator: ", ") + " did not fire (\(found))", frame: nil,
                findingIsSubject: true)
        }
        let firsts = rules.compactMap { id in diagnosis.findings.first { $0.rule == id } }
        return ExpectationResult(
            expectation: e, file: "", passed: true, detail: firsts.map { "\($0.rule) at frame \($0.frame)" }.joined(separator: ", "),
            frame: firsts.first?.frame, connection: firsts.first?.connection, finding: firsts.first, findingIsSubject: true)
    }

    /// `critical DC-01 at frame 233: Link to … lost: supervision timeout (0x08) at frame 233; …` (and, folded, how many
    /// times and where).
    static func describe(_ d: Diagnosis) -> String {
        var message = d.message
        if message.hasSuffix(".") { message.removeLast() }
        var text = "\(d.severity.rawValue) \(d.rule) at frame \(d.frame): \(message)"
        if d.count > 1 {
            text +=
                " (\(d.count)× in all, frames " + d.occurrences.prefix(6).map(String.init).joined(separator: ", ")
                + (d.count > 6 ? ", …)" : ")")
        }
        return text
    }

    /// `CE-02 at frame 20, GATT-08 at frame 57, …` (at most five).
    func others(_ findings: ArraySlice<Diagnosis>) -> String {
        findings.prefix(5).map { "\($0.rule) at frame \($0.frame)" }.joined(separator: ", ") + (findings.count > 5 ? ", …" : "")
    }

    /// The diagnosis finding that best explains a failure decided at `frame` on `connection`, or nil (a failure with no
    /// finding that speaks to it says only what failed):
    /// 1. of the findings in the hint's groups at the hint's least severity or above, on the same connection or on
    ///    none, the most severe (ties: the nearest to the frame);
    /// 2. of the warnings and worse on the same connection, the most severe (ties: the nearest);
    /// 3. when the hint allows (``ExplanationHint/nearby``), of the errors and worse at or before the frame, the
    ///    nearest (ties: the most severe).
    /// Unless the hint allows later findings (what ended a session explains its end), only findings at or before the
    /// frame count.
    public func relatedFinding(frame: Int?, connection: Int?, hint: ExplanationHint = .ending) -> Diagnosis? {
        func distance(_ d: Diagnosis) -> Int {
            guard let frame else { return 0 }
            return d.occurrences.map { abs($0 - frame) }.min() ?? Int.max
        }
        func inTime(_ d: Diagnosis) -> Bool {
            guard let frame, !hint.later else { return true }
            return d.occurrences.contains { $0 <= frame }
        }
        func mostSevere(_ findings: [Diagnosis]) -> Diagnosis? {
            findings.min { a, b in a.severity != b.severity ? a.severity > b.severity : distance(a) < distance(b) }
        }
        let sameConnection = { (d: Diagnosis) in connection != nil && d.connection == connection }
        let preferred = diagnosis.findings.filter { d in
            guard let group = DiagnosisRules.rule(d.rule)?.group, hint.groups.contains(group), inTime(d) else { return false }
            guard connection == nil || d.connection == nil || sameConnection(d) else { return false }
            return d.severity >= hint.minimum
        }
        if let best = mostSevere(preferred) { return best }
        let onConnection = diagnosis.findings.filter { $0.severity >= .warning && sameConnection($0) && inTime($0) }
        if let best = mostSevere(onConnection) { return best }
        guard let frame, hint.nearby else { return nil }
        func gap(_ d: Diagnosis) -> Int { d.occurrences.filter { $0 <= frame }.map { frame - $0 }.min() ?? Int.max }
        let before = diagnosis.findings.filter { d in d.severity >= .error && d.occurrences.contains { $0 <= frame } }
        return before.min { a, b in gap(a) != gap(b) ? gap(a) < gap(b) : a.severity > b.severity }
    }
}
