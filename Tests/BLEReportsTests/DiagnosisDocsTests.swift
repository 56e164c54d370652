import BLEAnalysis
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// `docs/diagnosis.md` lists every rule from the table itself (`DiagnosisRules.all`): a rule added or changed without
/// the page following fails here. `BLESCOPE_UPDATE_DOCS=1` rewrites the generated part.
@Suite struct DiagnosisDocsTests {
    static let page = TestEnvironment.repositoryRoot + "/docs/diagnosis.md"
    static let begin = "<!-- rules:begin -->\n", end = "<!-- rules:end -->"

    @Test func theRulePageListsEveryRuleFromTheTable() throws {
        let text = try String(contentsOfFile: Self.page, encoding: .utf8)
        let start = try #require(text.range(of: Self.begin)), stop = try #require(text.range(of: Self.end))
        let generated = DiagnosisReport.ruleList(markdown: true)
        if ProcessInfo.processInfo.environment["BLESCOPE_UPDATE_DOCS"] == "1" {
            let updated = String(text[..<start.upperBound]) + generated + String(text[stop.lowerBound...])
            try updated.write(toFile: Self.page, atomically: true, encoding: .utf8)
            return
        }
        #expect(
            String(text[start.upperBound..<stop.lowerBound]) == generated,
            "docs/diagnosis.md is out of date: BLESCOPE_UPDATE_DOCS=1 swift test --filter DiagnosisDocsTests")
        #expect(generated.split(separator: "\n").count == DiagnosisRules.all.count + 2)
        for rule in DiagnosisRules.all { #expect(generated.contains("| \(rule.id) | \(rule.severity.rawValue) |")) }
    }
}
