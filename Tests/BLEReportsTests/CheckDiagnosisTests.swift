import BLEAnalysis
import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLEReports

/// `check`'s expectations on the diagnosis (`no_findings`, `absent`, `present`) and the finding each failure names,
/// on Samples whose failure events come from tshark (`Tests/Truth/diagnosis/*.jsonl`, `scripts/diagnosis_truth.py`),
/// not from blescope.
@Suite struct CheckDiagnosisTests {
    struct TruthEvent {
        var kind: String
        var frame: Int
        var severity: String
        var reason: Int?
        /// A disconnection's connection handle, an ATT error's attribute handle.
        var handle: Int?
    }

    static func truth(_ capture: String) throws -> [TruthEvent] {
        let path = TestEnvironment.repositoryRoot + "/Tests/Truth/diagnosis/\(capture).jsonl"
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        return (object["events"] as? [[String: Any]] ?? []).compactMap { e in
            guard let kind = e["class"] as? String, let frame = e["frame"] as? Int, let severity = e["severity"] as? String else {
                return nil
            }
            return TruthEvent(
                kind: kind, frame: frame, severity: severity, reason: e["reason"] as? Int,
                handle: e["handle"] as? Int)
        }
    }

    static func facts(_ sample: String) throws -> CheckFacts {
        CheckFacts.gather(try CaptureFile.open(path: TestEnvironment.sample(sample)))
    }

    static func check(_ yaml: String, _ facts: CheckFacts, file: String = "capture") throws -> [ExpectationResult] {
        try BLEReports.Expectation.parse(yaml: yaml).map { facts.evaluate($0, file: file) }
    }

    /// diag-supervision-timeout: the sensor's radio goes silent and the link is lost by supervision timeout, which
    /// tshark shows as Disconnection Complete reason 0x08 — the truth's only critical event.
    @Test func aLostLinkFailsNoFindingsAndAbsentWithItsRuleAndFrame() throws {
        let serious = try Self.truth("diag-supervision-timeout.btsnoop").filter { $0.severity == "critical" || $0.severity == "error" }
        let lost = try #require(serious.first)
        #expect(serious.count == 1 && lost.kind == "disconnection" && lost.reason == 0x08)
        let facts = try Self.facts("diag-supervision-timeout.btsnoop")
        let results = try Self.check(
            "- no_findings: {min_severity: error}\n- absent: [CE-02, DC-01]\n- present: [DC-01]\n- absent: [CE-01, CE-02, SEC-03]\n", facts)
        #expect(results.map(\.passed) == [false, false, true, true])
        for r in results[0...1] {
            #expect(r.frame == lost.frame && r.finding?.rule == "DC-01" && r.finding?.severity == .critical)
            #expect(r.detail.hasPrefix("critical DC-01 at frame \(lost.frame): Link to "), "\(r.detail)")
            #expect(r.detail.contains("supervision timeout (0x08)"))
            // The finding is the subject: the line does not repeat it.
            #expect(r.explanation == r.detail)
        }
        #expect(results[2].detail.hasPrefix("DC-01 at frame \(lost.frame)"))
        // The truth holds no failed establishment or pairing: those rules stay quiet.
        #expect(!serious.contains { ["connection-failed", "establishment-failed", "pairing-failed"].contains($0.kind) })
        #expect(results[3].detail.hasPrefix("none fired ("))
    }

    /// mcumgr-confirm: the generator resets the device (frame 230 of its truth, `reset_frame`) after the image test, and
    /// the link is lost by supervision timeout (tshark: 0x08 at frame 233). A reboot the update asked for is no error:
    /// nothing at error or above, but the finding is there, at info.
    @Test func aRebootTheUpdateAskedForIsNoError() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample("mcumgr-confirm.truth.json")))
        let generator = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let reset = try #require(generator["reset_frame"] as? Int)
        let lost = try #require(try Self.truth("mcumgr-confirm.btsnoop").first { $0.kind == "disconnection" && $0.reason == 0x08 })
        #expect(reset < lost.frame)
        let facts = try Self.facts("mcumgr-confirm.btsnoop")
        let results = try Self.check(
            "- no_findings: {min_severity: error}\n- present: [DC-01]\n- no_findings: {min_severity: info}\n", facts)
        #expect(results.map(\.passed) == [true, true, false])
        #expect(results[1].detail == "DC-01 at frame \(lost.frame)")
        #expect(results[2].detail.hasPrefix("info DC-01 at frame \(lost.frame): "))
    }

    /// nordic-dfu: a clean update; the truth has no critical or error event, and nothing at error or above is found.
    @Test func aCleanUpdatePassesNoFindings() throws {
        #expect(try Self.truth("nordic-dfu.btsnoop").allSatisfy { $0.severity != "critical" && $0.severity != "error" })
        let facts = try Self.facts("nordic-dfu.btsnoop")
        let results = try Self.check("- no_findings: {min_severity: error}\n- absent: [DC-01, CE-01, CE-02, SEC-01, SEC-03]\n", facts)
        #expect(results.allSatisfy { $0.passed }, "\(results.map(\.detail))")
        #expect(results[0].detail.hasSuffix("(\(DiagnosisRules.all.count) rules)"), "\(results[0].detail)")
    }

    /// The Nordic DFU Sample cut in the middle of the image (frame 600 of 77–1260) and ended by a Disconnection Complete
    /// 0x08 two seconds later (frame 601): the update fails, cut by that disconnection, and its line names the lost link.
    @Test func aFailedUpdateNamesTheFindingThatExplainsIt() throws {
        let capture = try CaptureFile.open(path: TestEnvironment.sample("nordic-dfu.btsnoop"))
        var records: [OwnedRecord] = []
        while let r = capture.next(), r.frame <= 600 { records.append(OwnedRecord(r)) }
        // The connection handle tshark reports for the Sample's one disconnection.
        let handle = try #require(try Self.truth("nordic-dfu.btsnoop").first { $0.kind == "disconnection" }?.handle)
        let last = try #require(records.last)
        records.append(
            OwnedRecord(
                frame: 601, timestamp: Timestamp(microseconds: last.timestamp.microseconds + 2_000_000), direction: .rx, kind: .event,
                bytes: HCIBuild.disconnectionComplete(handle: UInt16(handle), reason: .connectionTimeout)))
        let cut = try CaptureFile.open(bytes: CaptureWriter.btsnoop(records), name: "cut.btsnoop")
        let facts = CheckFacts.gather(cut)
        let r = try #require(try Self.check("- ota: {protocol: nordic-secure-dfu}\n", facts).first)
        #expect(!r.passed)
        #expect(r.detail.contains(": incomplete: cut by disconnection (Connection Timeout)"), "\(r.detail)")
        #expect(r.finding?.rule == "DC-01" && r.finding?.frame == 601)
        #expect(r.explanation.hasPrefix(r.detail + " — DC-01 at frame 601: link to "), "\(r.explanation)")
        #expect(r.explanation.hasSuffix("lost by supervision timeout (0x08)"))
        // JUnit: the failure's message carries the rule and the frame; its text the finding in full.
        let xml = JUnitReport.xml([r])
        #expect(xml.contains("<failure message=\"\(JUnitReport.escape(r.explanation))\""))
        #expect(xml.contains("critical DC-01 at frame 601: Link to "))
        #expect(xml.contains("likely: "))
    }

    @Test func junitOfDiagnosisFailuresCarriesRuleAndFrame() throws {
        let lost = try #require(try Self.truth("diag-supervision-timeout.btsnoop").first { $0.reason == 0x08 }?.frame)
        let facts = try Self.facts("diag-supervision-timeout.btsnoop")
        let results = try Self.check("- no_findings:\n- present: [GATT-03]\n", facts, file: "diag-supervision-timeout.btsnoop")
        let xml = JUnitReport.xml(results, unreadable: [.init(file: "notes.txt", message: "notes.txt: not a capture")])
        #expect(xml.contains("<testsuites name=\"blescope check\" tests=\"3\" failures=\"2\" errors=\"1\">"))
        #expect(
            xml.contains("name=\"the diagnosis finds nothing at error or above\"><failure message=\"critical DC-01 at frame \(lost): "))
        #expect(xml.contains("evidence: ") && xml.contains("#\(lost) decides"))
        // A rule that did not fire: the message says which, and what the diagnosis found instead (the worst first).
        #expect(xml.contains("<failure message=\"GATT-03 did not fire (found: DC-01 at frame \(lost)"))
        #expect(xml.contains("<error message=\"notes.txt: not a capture\" type=\"unreadable\">"))
    }

    /// The findings a diagnosis Sample's generator says it must produce (`Samples/diag-*.truth.json`, `diagnosis`).
    static func generatorFindings(_ sample: String) throws -> [(rule: String, severity: String, frame: Int)] {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample(sample + ".truth.json")))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let findings = try #require((object["diagnosis"] as? [String: Any])?["findings"] as? [[String: Any]])
        return findings.compactMap { f in
            guard let rule = f["rule"] as? String, let severity = f["severity"] as? String, let frame = f["frame"] as? Int else {
                return nil
            }
            return (rule, severity, frame)
        }
    }

    /// The bumble Samples whose failure is critical: `absent` of its rule fails at the generator's frame, `present`
    /// passes, and `no_findings` at critical names the same finding.
    @Test(arguments: ["diag-supervision-timeout", "diag-pairing-failed", "diag-bond-lost", "diag-connect-timeout"])
    func theGeneratorsCriticalFailureFailsAbsentAndPassesPresent(_ sample: String) throws {
        let critical = try #require(try Self.generatorFindings(sample).first { $0.severity == "critical" })
        let facts = try Self.facts(sample + ".btsnoop")
        let results = try Self.check(
            "- absent: [\(critical.rule)]\n- present: [\(critical.rule)]\n- no_findings: {min_severity: critical}\n", facts)
        #expect(results.map(\.passed) == [false, true, false])
        for r in [results[0], results[2]] {
            #expect(r.finding?.rule == critical.rule && r.frame == critical.frame, "\(r.detail)")
            #expect(r.detail.hasPrefix("critical \(critical.rule) at frame \(critical.frame): "))
        }
        #expect(results[1].detail == "\(critical.rule) at frame \(critical.frame)")
    }

    /// diag-supervision-timeout: the 0x08 disconnection and the approaching-LSTO quality report (frame 236 in the
    /// generator's `bqr.report`) fail their expectations, each explained by the generator's finding at its frame.
    @Test func failuresOfOtherKindsAreExplainedByTheGeneratorsFindings() throws {
        let findings = try Self.generatorFindings("diag-supervision-timeout")
        let lost = try #require(findings.first { $0.rule == "DC-01" })
        let warned = try #require(findings.first { $0.rule == "HH-05" })
        let facts = try Self.facts("diag-supervision-timeout.btsnoop")
        let results = try Self.check("- no_disconnection: {reason: 0x08}\n- link_quality: {}\n", facts)
        #expect(results.map(\.passed) == [false, false])
        #expect(results[0].frame == lost.frame && results[0].finding?.rule == "DC-01" && results[0].finding?.frame == lost.frame)
        #expect(results[0].explanation.hasPrefix(results[0].detail + " — DC-01 at frame \(lost.frame): "))
        // The quality report is the deciding frame; what explains it is the controller's warning there, not the loss
        // one frame later (a weak radio is explained by what came before it).
        #expect(results[1].frame == warned.frame && results[1].finding?.rule == "HH-05" && results[1].finding?.frame == warned.frame)
    }

    // MARK: which finding explains a failure (the policy, on findings made here)

    static func finding(_ rule: String, _ severity: DiagnosisSeverity, _ frame: Int, connection: Int?) -> Diagnosis {
        Diagnosis(
            rule: DiagnosisRules.rule(rule)!.code, severity: severity, frame: frame, message: "\(rule) message.", connection: connection)
    }

    static func facts(_ findings: [Diagnosis]) -> CheckFacts {
        var f = CheckFacts()
        // Ranked as the engine ranks them: most severe first, then in frame order.
        let ranked = findings.sorted { a, b in a.severity != b.severity ? a.severity > b.severity : a.frame < b.frame }
        f.diagnosis = DiagnosisResult(findings: ranked, rulesEvaluated: DiagnosisRules.all.count)
        return f
    }

    @Test func theMostSevereOnTheSameConnectionExplainsAnEnd() {
        let f = Self.facts([
            Self.finding("GATT-08", .error, 899, connection: 1), Self.finding("DC-01", .critical, 905, connection: 1),
            Self.finding("CE-02", .critical, 890, connection: 2), Self.finding("TP-04", .info, 300, connection: 1),
        ])
        #expect(f.relatedFinding(frame: 900, connection: 1, hint: .ending)?.rule == "DC-01")
    }

    @Test func aSlowUpdateIsExplainedByThroughputNotByItsEnd() {
        let f = Self.facts([
            Self.finding("TP-04", .info, 89, connection: 1), Self.finding("DC-03", .warning, 1263, connection: 1),
            Self.finding("TP-03", .warning, 1300, connection: 1),
        ])
        // TP-03 comes after the deciding frame: a slow pace is explained by what came before it.
        #expect(f.relatedFinding(frame: 1245, connection: 1, hint: .pace)?.rule == "TP-04")
        let later = Self.facts([
            Self.finding("TP-03", .warning, 1300, connection: 1), Self.finding("DC-01", .critical, 1301, connection: 1),
        ])
        #expect(later.relatedFinding(frame: 1245, connection: 1, hint: .pace) == nil)
    }

    @Test func somethingMissingIsExplainedByEstablishmentOrTheCapture() {
        let f = Self.facts([Self.finding("DC-01", .critical, 900, connection: 1), Self.finding("CE-02", .critical, 50, connection: 2)])
        #expect(f.relatedFinding(frame: nil, connection: nil, hint: .absence)?.rule == "CE-02")
        let none = Self.facts([Self.finding("DC-01", .critical, 900, connection: 1)])
        #expect(none.relatedFinding(frame: nil, connection: nil, hint: .absence) == nil)
        #expect(none.relatedFinding(frame: nil, connection: nil, hint: .none) == nil)
    }

    @Test func offItsConnectionOnlyAnErrorJustBeforeExplainsAnEnd() {
        let f = Self.facts([
            Self.finding("DC-01", .critical, 100, connection: 1), Self.finding("HH-02", .critical, 498, connection: nil),
            Self.finding("HH-04", .warning, 499, connection: nil), Self.finding("CQ-01", .info, 499, connection: 2),
        ])
        #expect(f.relatedFinding(frame: 500, connection: 2, hint: .ending)?.rule == "HH-02")
        // A slow request is never explained by an error elsewhere.
        #expect(f.relatedFinding(frame: 500, connection: 2, hint: .pace) == nil)
    }
}
