import BLEAnalysis
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// `docs/diagnosis.md` lists every rule from the table itself (`DiagnosisRules.all`): a rule added or changed without
/// the page following fails here. `BLESCOPE_UPDATE_DOCS=1` rewrites the generated part.
@Suite(.serialized) struct DiagnosisDocsTests {
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

    static let pagesBegin = "<!-- explain:begin -->\n", pagesEnd = "<!-- explain:end -->"

    /// `diagnose --explain RULE` and the page's sections say the same: every rule has its meaning and advice written,
    /// under an anchor of its id (`#dc-01`, which the HTML report links to).
    @Test func everyRuleHasItsPage() throws {
        let text = try String(contentsOfFile: Self.page, encoding: .utf8)
        let start = try #require(text.range(of: Self.pagesBegin)), stop = try #require(text.range(of: Self.pagesEnd))
        let generated = DiagnosisReport.rulePages()
        if ProcessInfo.processInfo.environment["BLESCOPE_UPDATE_DOCS"] == "1" {
            let updated = String(text[..<start.upperBound]) + generated + String(text[stop.lowerBound...])
            try updated.write(toFile: Self.page, atomically: true, encoding: .utf8)
            return
        }
        #expect(
            String(text[start.upperBound..<stop.lowerBound]) == generated,
            "docs/diagnosis.md's rule pages are out of date: BLESCOPE_UPDATE_DOCS=1 swift test --filter DiagnosisDocsTests")
        for rule in DiagnosisRules.all {
            let explanation = DiagnosisRules.explanation(rule.id)
            #expect(explanation != nil, "\(rule.id) has no explanation (RuleExplanations.swift)")
            #expect(generated.contains("<a id=\"\(rule.id.lowercased())\"></a>\n\n### \(rule.id): \(rule.title)\n"))
            let page = try #require(DiagnosisReport.explain(rule.id))
            #expect(page.hasPrefix("\(rule.id) \(rule.severity.rawValue): \(rule.title)"))
            #expect(page.contains("What it means: ") && page.contains("What to do: ") && page.contains("Evidence it reads: "))
            #expect(page.split(separator: "\n").allSatisfy { $0.count <= DiagnosisReport.width }, "\(page)")
        }
        #expect(DiagnosisReport.explain("dc-01") == DiagnosisReport.explain("DC-01"))
        #expect(DiagnosisReport.explain("XX-99") == nil)
    }
}
