import BLETestSupport
import Foundation
import Testing

/// Each diagnosis rule's precision on real captures (issue 48, scope 4): `scripts/diagnosis_precision.py` runs
/// `diagnose --json` on the public corpus, the Samples and the shared captures and holds every firing to the tshark-only
/// truth (`scripts/diagnosis_truth.py`). docs/diagnosis.md carries the table it printed; this test measures again and
/// fails when a rule is now less precise than the table says, or fires on the corpus without a row. It needs the
/// corpus and its truth (`BLESCOPE_CORPUS`, `BLESCOPE_CORPUS_TRUTH`: see Tests/Truth/diagnosis/README.md) and is skipped
/// without them, so CI does not pay for it (a few minutes on 143 captures).
@Suite struct DiagnosisPrecisionTests {
    struct Row: Equatable {
        var rule: String
        var trueCount: Int
        var falseCount: Int
        var precision: Double?
    }

    /// The rows of a table printed by `diagnosis_precision.py --markdown`.
    static func rows(_ markdown: some StringProtocol) -> [String: Row] {
        var rows: [String: Row] = [:]
        for line in markdown.split(separator: "\n") where line.hasPrefix("| ") && !line.hasPrefix("| rule") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 7, let t = Int(cells[3]), let f = Int(cells[4]) else { continue }
            let digits = cells[6].filter { $0.isNumber || $0 == "." }
            rows[cells[0]] = Row(rule: cells[0], trueCount: t, falseCount: f, precision: Double(digits))
        }
        return rows
    }

    @Test func noRuleIsLessPreciseThanTheDocsSay() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let corpus = TestEnvironment.corpusDirectory, let truth = environment["BLESCOPE_CORPUS_TRUTH"] else {
            print("skip: BLESCOPE_CORPUS and BLESCOPE_CORPUS_TRUTH name no corpus and truth")
            return
        }
        let binary = try #require(TestEnvironment.blescopeBinary)
        let docs = try String(contentsOfFile: TestEnvironment.repositoryRoot + "/docs/diagnosis.md", encoding: .utf8)
        let begin = try #require(docs.range(of: "<!-- precision:begin -->"))
        let end = try #require(docs.range(of: "<!-- precision:end -->"))
        let documented = Self.rows(docs[begin.upperBound..<end.lowerBound])
        #expect(!documented.isEmpty)
        var arguments = ["scripts/diagnosis_precision.py", binary, "--markdown", "--truth", "Tests/Truth/diagnosis", "--truth", truth]
        arguments += ["--truth-cache", truth]
        arguments += [TestEnvironment.samplesDirectory, corpus] + [TestEnvironment.sharedCaptures].compactMap { $0 }
        let run = try #require(TestEnvironment.execute("/usr/bin/env", ["python3"] + arguments))
        #expect(run.status == 0, "\(run.stderr)")
        let measured = Self.rows(run.stdout)
        for (rule, now) in measured.sorted(by: { $0.key < $1.key }) {
            let row = documented[rule]
            #expect(row != nil, "\(rule) fires on the corpus but docs/diagnosis.md has no row for it:\n\(run.stdout)")
            guard let was = row?.precision, let precision = now.precision else { continue }
            #expect(precision >= was, "\(rule): \(precision) % now, \(was) % in docs/diagnosis.md:\n\(run.stdout)")
        }
    }
}
