import BLEAnalysis
import BLEAnalysisTestSupport
import BLEReports
import BLETestSupport
import Testing

/// AnalyzerTests' damaged ACL record, here because it also reads `info`'s completeness verdict (BLEReports' `CaptureInfo`).
@Suite struct DamagedACLRecordTests {
    /// A record whose ACL header states more than the record holds, with no capturer's cut (the corpus Thewbi home-made
    /// host: 0xCC filler read as handle 0x0CCC, length 52,428, 20 bytes), is said with its offset and makes no link;
    /// a whole one on an unknown handle still infers one (AnalyzerTests.trafficWithoutConnectionCompleteInfersAConnection).
    @Test func aDamagedACLRecordMakesNoLink() throws {
        let filler = [UInt8](repeating: 0xCC, count: 20)
        let b = CaptureBuilder().record(.acl, .rx, filler)
        let (analyzer, _) = try AnalyzerRun.analyze(b)
        #expect(analyzer.connections.isEmpty)
        #expect(!CaptureInfo(reading: try b.captureFile()).completeness.items.contains { $0.code == .startedBeforeCapture })
        let found = analyzer.findings.filter { $0.kind.code.id == "invalid-size" }
        #expect(found.count == 1 && found.first?.frame == 1 && found.first?.message == "invalid size: expected 52428 bytes, got 16")
    }
}
