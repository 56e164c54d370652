import BLEAnalysis
import BLECapture
import BLECore
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// The diagnosis Samples (made with bumble: `Samples/generate/diag*.py`) against their truth files' `diagnosis`
/// block, written by the generator from what it did: each expected finding is there (rule, severity, its frame cited),
/// and nothing the truth lists under `not_flagged` is (above `at_most`, when given).
@Suite struct DiagnosisSampleTests {
    static let names = TestEnvironment.sampleNames.filter { $0.hasPrefix("diag-") }
    /// Other Samples whose generator wrote a `diagnosis` block too (the LE Audio broadcast receiver).
    static let others = TestEnvironment.sampleNames.filter { !$0.hasPrefix("diag-") && hasDiagnosisBlock($0) }

    static var cases: [String] { (names + others).flatMap { n in ["btsnoop", "pcap", "pklg"].map { "\(n).\($0)" } } }

    static func hasDiagnosisBlock(_ name: String) -> Bool {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample(name + ".truth.json"))),
            let truth = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return false }
        return truth["diagnosis"] != nil
    }

    @Test func everyDiagnosisSampleIsHere() {
        #expect(Self.names.count == 13)
        #expect(
            Self.others == [
                "le-audio-broadcast-receiver", "sec-legacy-short-key", "sec-sc-debug-key", "sec-bredr-key-downgrade", "a2dp-stream",
                "hfp-call", "hfp-esco-fails",
            ])
    }

    @Test(arguments: cases)
    func findsWhatTheGeneratorDidAndNothingItMarkedBenign(_ file: String) throws {
        let name = String(file.split(separator: ".").first!)
        let data = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample(name + ".truth.json")))
        let truth = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let block = try #require(truth["diagnosis"] as? [String: Any])
        let found = DiagnosisReport.analyze(try CaptureFile.open(path: TestEnvironment.sample(file))).result.findings
        for expected in block["findings"] as? [[String: Any]] ?? [] {
            let rule = try #require(expected["rule"] as? String), frame = try #require(expected["frame"] as? Int)
            let severity = try #require(expected["severity"] as? String)
            let match = found.first { $0.rule == rule && $0.frames.contains(frame) }
            #expect(match != nil, "\(file): no \(rule) citing frame \(frame); found \(found.map { "\($0.rule)@\($0.frame)" })")
            if let match { #expect(match.severity.rawValue == severity, "\(file): \(rule) at \(frame) is \(match.severity.rawValue)") }
        }
        for benign in block["not_flagged"] as? [[String: Any]] ?? [] {
            let frames = Set(benign["frames"] as? [Int] ?? []), rules = Set(benign["rules"] as? [String] ?? [])
            let ceiling = (benign["at_most"] as? String).flatMap(DiagnosisSeverity.init(rawValue:))
            let wrong = found.filter { d in
                rules.contains(d.rule) && frames.contains(d.frame) && (ceiling.map { d.severity > $0 } ?? true)
            }
            #expect(wrong.isEmpty, "\(file): flagged what is benign (\(benign["what"] ?? "")): \(wrong.map { "\($0.rule)@\($0.frame)" })")
        }
    }
}
