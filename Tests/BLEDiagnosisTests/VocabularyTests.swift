import BLEAnalysis
import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLEDiagnosis

/// The one vocabulary of findings: every code declared once, registered once, with what the engine reads of it.
@Suite struct VocabularyTests {
    /// Every `static let … = FindingCode(` in the sources (not in comments), with its id: the declarations, read from the
    /// files.
    static let declared: [(symbol: String, id: String, file: String)] = {
        let root = TestEnvironment.repositoryRoot + "/Sources"
        let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        let pattern = try! NSRegularExpression(pattern: #"(?m)^\s*(?:public |package )?static let (\w+) = FindingCode\(\s*"([^"]+)""#)
        return files.sorted().flatMap { path -> [(String, String, String)] in
            guard let text = try? String(contentsOfFile: root + "/" + path, encoding: .utf8) else { return [] }
            let ns = text as NSString
            return pattern.matches(in: text, range: NSRange(location: 0, length: ns.length)).map {
                (ns.substring(with: $0.range(at: 1)), ns.substring(with: $0.range(at: 2)), path)
            }
        }
    }()

    @Test func everyDeclaredCodeIsRegisteredOnceAndIdsAreUnique() {
        let registered = FindingVocabulary.all.map(\.id)
        #expect(Set(registered).count == registered.count, "an id registered twice")
        #expect(Self.declared.count == registered.count, "declared \(Self.declared.count), registered \(registered.count)")
        for d in Self.declared { #expect(registered.contains(d.id), "\(d.symbol) (\(d.id), \(d.file)) is declared but not registered") }
        // The decoder and analysis codes, and one per rule: nothing else is registered.
        #expect(FindingVocabulary.decoder.count >= 92)
        #expect(FindingVocabulary.all.count == FindingVocabulary.decoder.count + DiagnosisRules.all.count)
    }

    @Test func noFindingIsMadeFromAStringCode() throws {
        let root = TestEnvironment.repositoryRoot + "/Sources"
        let files = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for path in files {
            let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
            #expect(!text.contains("kind.code == \""), "\(path) matches a finding by its string")
            #expect(!text.contains("rule.hasPrefix(\""), "\(path) matches rules by their ids")
        }
    }

    @Test func everyCodeSaysWhatItIs() {
        for c in FindingVocabulary.all {
            #expect(!c.title.isEmpty && !c.explanation.meaning.isEmpty, "\(c.id)")
        }
        for rule in DiagnosisRules.all { #expect(!rule.code.explanation.advice.isEmpty, "\(rule.code.id) says what to do") }
        #expect(FindingVocabulary.code("l2cap.frame-too-long") === FindingCode.l2capFrameTooLong)
        #expect(FindingVocabulary.code("DC-01")?.layer == .link)
    }

    /// The traits the engine reads, which were lists of ids beside it: the same rules carry them.
    @Test func theEnginesListsAreTheCodesTraits() {
        func ids(_ t: FindingTraits) -> Set<String> {
            var out = Set<String>()
            for rule in DiagnosisRules.all where rule.code.has(t) { out.insert(rule.code.id) }
            return out
        }
        func group(_ groups: Set<RuleGroup>) -> Set<String> {
            var out = Set<String>()
            for rule in DiagnosisRules.all where groups.contains(rule.group) { out.insert(rule.code.id) }
            return out
        }
        #expect(ids(.restsOnSetup) == ["CE-04", "SEC-04", "SEC-05", "GATT-03", "GATT-05", "GATT-06", "GATT-07", "LP-02", "DC-01"])
        #expect(ids(.claimsAbsence) == ["GATT-01", "GATT-03", "GATT-05", "DC-08", "SEC-04", "TP-01", "TP-05", "LA-04", "BR-07"])
        #expect(ids(.describesCapture) == group([.captureQuality]))
        #expect(ids(.readsPayloads) == group([.gatt, .throughput]))
    }

    @Test func aFindingCannotClaimMoreThanItsCode() {
        // hci.connection-inferred is declared info: a finding of it says info (a debug build also asserts).
        #expect(FindingCode.hciConnectionInferred.severity == .info)
        let f = Finding(.info, FindingKind(.hciConnectionInferred, message: "m"))
        #expect(f.severity == .info && f.kind.code.id == "hci.connection-inferred")
    }
}
