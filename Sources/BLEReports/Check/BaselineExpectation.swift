import BLEAnalysis
import BLECore

/// `baseline: golden.btsnoop` or `baseline: {capture: golden.btsnoop, fail_on: "rate-drop=10%,new-error"}`: the
/// capture checked against a golden run with `blescope diff`'s gate (``DiffGate``); it holds when no threshold is
/// crossed. Without `fail_on`, every threshold: ``BaselineKind/defaultFailOn``.
struct BaselineKind: ExpectationKind {
    static let kind = "baseline"
    static let shape = "a capture (golden.btsnoop) or {capture, fail_on}"
    static let bare: Expectation? = nil
    static let defaultFailOn = "rate-drop=10%,new-error,gatt-changed,mtu-lower"
    var expectation: Expectation

    enum CodingKeys: String, CodingKey, CaseIterable { case capture, failOn = "fail_on" }

    init(from decoder: any Decoder) throws {
        if let path = try? decoder.singleValueContainer().decode(String.self) {
            guard !path.isEmpty else { throw decoder.problem("expected the golden capture's path") }
            expectation = .baseline(path: path, failOn: Self.defaultFailOn)
            return
        }
        try decoder.rejectUnknownKeys(CodingKeys.self, kind: Self.kind)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let path = try c.decode(String.self, forKey: .capture)
        let failOn = try c.decodeIfPresent(String.self, forKey: .failOn) ?? Self.defaultFailOn
        do { _ = try DiffGate(parsing: failOn) } catch {
            throw ExpectationProblem(path: c.codingPath + [CodingKeys.failOn], message: error.description)
        }
        expectation = .baseline(path: path, failOn: failOn)
    }
}

/// The analyses a `baseline` expectation compares, as `report` makes them: the capture checked and each golden capture
/// by the path the expectations file gives.
public struct BaselineAnalyses: Sendable {
    public var current: FileAnalysis
    public var baselines: [String: FileAnalysis]

    public init(current: FileAnalysis, baselines: [String: FileAnalysis]) {
        self.current = current
        self.baselines = baselines
    }
}

extension Expectation {
    /// The golden captures the expectations name (as written).
    public static func baselinePaths(_ expectations: [Expectation]) -> [String] {
        var out: [String] = []
        for case let .baseline(path, _) in expectations where !out.contains(path) { out.append(path) }
        return out
    }
}

extension CheckFacts {
    /// Holds when `diff golden capture --fail-on failOn` crosses no threshold; a failure names every breach with its
    /// frames in the golden capture (A) and in this one (B), the first breach's frame deciding.
    func baseline(_ e: Expectation, _ path: String, _ failOn: String) -> ExpectationResult {
        guard let analyses = baselineAnalyses, let golden = analyses.baselines[path], golden.error == nil else {
            let why = baselineAnalyses?.baselines[path]?.error.map { ": \($0)" } ?? ""
            return ExpectationResult(expectation: e, file: "", passed: false, detail: "\(path) was not analysed\(why)", frame: nil)
                .hinted(.none)
        }
        guard let gate = try? DiffGate(parsing: failOn) else {
            return ExpectationResult(expectation: e, file: "", passed: false, detail: "--fail-on \(failOn) is not a gate", frame: nil)
                .hinted(.none)
        }
        let diff = CaptureDiffer.compare(golden, analyses.current)
        let breaches = gate.breaches(diff)
        guard let first = breaches.first else {
            return ExpectationResult(
                expectation: e, file: "", passed: true, detail: DiffWriter.headline(diff) + ", no threshold crossed", frame: nil)
        }
        let detail = breaches.map(\.line).joined(separator: "; ")
        return ExpectationResult(
            expectation: e, file: "", passed: false, detail: detail, frame: first.difference.frameB,
            connection: first.difference.connectionB
        ).hinted(.none)
    }
}
