import BLEAnalysis
import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// The btsnoop parser sample in the corpus (tshark): LE Set Advertising Parameters at 49, then seven byte-identical
/// Command Complete records, status 0x01, with one time stamp (50–56); then thirteen identical LE Set Scan Parameters
/// at one instant (57–69). The logger wrote them again: one refusal, one command pending, and a finding for each run.
@Suite struct RepeatedRecordsTests {
    static let op = HCICommand.leSetAdvertisingParameters

    static func answeredSevenTimes(step: Int64) -> CaptureBuilder {
        var b = CaptureBuilder().command(HCIBuild.command(Self.op, parameters: [UInt8](repeating: 0, count: 15)))
        b.step = step
        for _ in 0..<7 { b = b.event(HCIBuild.commandComplete(Self.op, returnParameters: [0x01])) }
        return b
    }

    @Test func recordsWrittenTwiceAtOneInstantAreCountedOnce() throws {
        let r = try RuleTest.diagnose(Self.answeredSevenTimes(step: 0))
        #expect(r.of("HH-04").map(\.frame) == [2] && r.of("HH-04").map(\.occurrences) == [[2]])
        let (analyzer, _) = try AnalyzerRun.analyze(Self.answeredSevenTimes(step: 0))
        let repeated = analyzer.findings.filter { $0.kind.code == .hciRepeatedRecord }
        #expect(repeated.map(\.frame) == [3])
        #expect(
            repeated.first?.message
                == "6 records (frames 3–8) repeat frame 2 byte for byte at the same instant: written again by the logger, counted once and not analysed again"
        )
    }

    /// Near miss: the same answers 1 ms apart are seven records the controller sent: none is taken as repeated.
    @Test func nearMissTheSameAnswersAMillisecondApartAreEachAnalysed() throws {
        let (analyzer, _) = try AnalyzerRun.analyze(Self.answeredSevenTimes(step: 1000))
        #expect(!analyzer.findings.contains { $0.kind.code == .hciRepeatedRecord })
        let r = try RuleTest.diagnose(Self.answeredSevenTimes(step: 1000))
        #expect(r.of("HH-04").map(\.occurrences) == [Array(2...8)], "\(r.of("HH-04").map(\.occurrences))")
    }
}
