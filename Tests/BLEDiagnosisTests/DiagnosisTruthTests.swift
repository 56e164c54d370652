import BLEAnalysis
import BLECapture
import BLECore
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// `diagnose` held to a truth made by tshark, not by blescope (`scripts/diagnosis_truth.py`, committed under
/// `Tests/Truth/diagnosis/` for every Sample and shared capture): every critical or error event of the truth is cited by
/// some finding (100 % recall on those classes), and every critical or error finding cites at least one frame the
/// truth holds an event at (no verdict without evidence an independent decoder sees).
@Suite struct DiagnosisTruthTests {
    struct TruthEvent {
        var frame: Int
        var kind: String
        var severity: String
        /// Why the truth holds the event benign (capability probing, procedure redone, clock jitter, no open link, …).
        var benign: String?
    }

    static let truthDirectory = TestEnvironment.repositoryRoot + "/Tests/Truth/diagnosis"
    /// The public corpus's truth (not committed, like the corpus): `scripts/diagnosis_truth.py --base-name` of each
    /// `$BLESCOPE_CORPUS` file into this folder, one `<name>.jsonl` each.
    static let corpusTruthDirectory = ProcessInfo.processInfo.environment["BLESCOPE_CORPUS_TRUTH"]

    /// Every capture with a truth that is on this machine: Samples always; shared captures when present; the corpus when
    /// `BLESCOPE_CORPUS` and `BLESCOPE_CORPUS_TRUTH` name it and its truth.
    static var captures: [String] {
        var out: [String] = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: truthDirectory)) ?? []
        for name in names.filter({ $0.hasSuffix(".jsonl") }).sorted() {
            let capture = String(name.dropLast(".jsonl".count))
            let sample = TestEnvironment.sample(capture)
            if FileManager.default.fileExists(atPath: sample) {
                out.append(sample)
            } else if let shared = TestEnvironment.sharedCaptures, FileManager.default.fileExists(atPath: shared + "/" + capture) {
                out.append(shared + "/" + capture)
            }
        }
        if let corpus = TestEnvironment.corpusDirectory, let truth = corpusTruthDirectory {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: truth)) ?? []
            for name in names.filter({ $0.hasSuffix(".jsonl") }).sorted() {
                let base = String(name.dropLast(".jsonl".count))
                // A capture blescope refuses by design (`CaptureReaderTests` holds it to its words) has no diagnosis.
                guard TestEnvironment.refusedByDesign[base] == nil else { continue }
                let capture = corpus + "/" + base
                if FileManager.default.fileExists(atPath: capture) { out.append(capture) }
            }
        }
        return out
    }

    static func truth(for path: String) throws -> [TruthEvent] {
        let name = String(path.split(separator: "/").last!)
        let inCorpus = TestEnvironment.corpusDirectory.map { path.hasPrefix($0 + "/") } ?? false
        let directory = inCorpus ? corpusTruthDirectory ?? truthDirectory : truthDirectory
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name + ".jsonl"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let events = try #require(object["events"] as? [[String: Any]])
        return events.compactMap { e in
            guard let frame = e["frame"] as? Int, let kind = e["class"] as? String, let severity = e["severity"] as? String else {
                return nil
            }
            return TruthEvent(frame: frame, kind: kind, severity: severity, benign: e["benign"] as? String)
        }
    }

    @Test func theTruthCoversEverySampleAndSharedCapture() {
        #expect(Self.captures.count >= TestEnvironment.sampleNames.count * 3)
    }

    @Test(arguments: captures)
    func everyCriticalOrErrorEventIsCitedAndEveryVerdictHasEvidence(_ path: String) throws {
        let truth = try Self.truth(for: path)
        let report = DiagnosisReport.analyze(try CaptureFile.open(path: path))
        let cited = Set(report.result.findings.flatMap(\.frames))
        let serious = truth.filter { $0.severity == "critical" || $0.severity == "error" }
        let missed = serious.filter { !cited.contains($0.frame) }
        #expect(missed.isEmpty, "\(path): not cited by any finding: \(missed.map { "\($0.kind)@\($0.frame)" })")
        // A timestamp stepping back is about the file's clock, not evidence of a failure at that frame.
        let truthFrames = Set(truth.filter { $0.kind != "timestamp-step-back" }.map(\.frame))
        // Capture-quality findings are about the file (a cut record, a missing key), which has no event in the truth.
        for d in report.result.atLeast(.error) where !d.rule.hasPrefix("CQ-") {
            #expect(
                !truthFrames.isDisjoint(with: d.frames),
                "\(path): \(d.rule) at frame \(d.frame) cites no frame the truth has an event at: \(d.frames)")
        }
    }

    /// The benign classes (issue 35, point 4) stay out of the alarms: no critical or error finding decides an event the
    /// truth holds benign — the host probing the controller (0x01, a vendor command refused), a collision's procedure
    /// redone and completed, a timestamp step back under 10 ms, a reset with no link open, this side's cancel.
    @Test(arguments: captures)
    func noBenignEventIsAnAlarm(_ path: String) throws {
        let benign = try Self.truth(for: path).filter { $0.benign != nil }
        let report = DiagnosisReport.analyze(try CaptureFile.open(path: path))
        for d in report.result.atLeast(.error) {
            let decided = Set(d.occurrences + [d.frame])
            let wrong = benign.filter { decided.contains($0.frame) }
            #expect(
                wrong.isEmpty,
                "\(path): \(d.rule) (\(d.severity)) decides what the truth holds benign: \(wrong.map { "\($0.kind)@\($0.frame) (\($0.benign!))" })"
            )
        }
    }

    /// BR/EDR (issue 35, point 2): every page timeout (folded per device), failed BR/EDR connection, failed pairing or
    /// authentication and missing link key the truth reads from tshark is cited by some finding, whatever its severity.
    @Test(arguments: captures)
    func everyBREDRFailureIsNamed(_ path: String) throws {
        let classes: Set = ["page-timeout", "bredr-connection-failed", "bredr-auth-failed", "link-key-missing"]
        let events = try Self.truth(for: path).filter { classes.contains($0.kind) && $0.benign == nil }
        guard !events.isEmpty else { return }
        let cited = Set(DiagnosisReport.analyze(try CaptureFile.open(path: path)).result.findings.flatMap(\.frames))
        let missed = events.filter { !cited.contains($0.frame) }
        #expect(missed.isEmpty, "\(path): BR/EDR failures no finding cites: \(missed.map { "\($0.kind)@\($0.frame)" })")
    }

    /// The truth script itself, where tshark and python3 are installed: its self-test (the classes no real capture shows,
    /// BR/EDR and the benign ones included, from spec-layout bytes) passes, and the committed truth of the issue 35
    /// Samples is what it prints now (same tshark version): the truth is not stale.
    @Test func theTruthScriptPassesItsSelfTestAndItsCommittedTruthIsCurrent() throws {
        guard TestEnvironment.tsharkPath != nil,
            let selftest = TestEnvironment.execute("/usr/bin/env", ["python3", "scripts/diagnosis_truth_selftest.py"])
        else {
            print("skipped: tshark or python3 not installed")
            return
        }
        #expect(selftest.status == 0 && selftest.stdout.hasSuffix("OK\n"), "\(selftest.stdout.suffix(800))")
        for name in ["diag-unacked-terminate.btsnoop", "diag-unanswered-before-timeout.btsnoop", "diag-ssp-missing-key.btsnoop"] {
            let committed = try String(contentsOfFile: Self.truthDirectory + "/" + name + ".jsonl", encoding: .utf8)
            let now = try #require(
                TestEnvironment.execute("/usr/bin/env", ["python3", "scripts/diagnosis_truth.py", "--base-name", "Samples/" + name]))
            let version = { (line: String) in
                line.components(separatedBy: "\"tshark\": \"").dropFirst().first?.prefix(while: { $0 != "\"" })
            }
            guard version(now.stdout) == version(committed) else { continue }
            #expect(now.stdout == committed, "\(name): the committed truth is stale; regenerate it (scripts/README.md)")
        }
    }
}
