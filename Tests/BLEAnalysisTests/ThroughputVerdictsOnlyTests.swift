import BLECapture
import BLECore
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// The tracker counting for the verdicts only (``ThroughputOptions/verdictsOnly``, what `info` and `diagnose` run):
/// the figures the rules read are those of the full count, and the charts nobody prints stay empty.
@Suite struct ThroughputVerdictsOnlyTests {
    static let verdictsOnly = ThroughputOptions(verdictsOnly: true)

    @Test func theFiguresTheRulesReadAreCountedByHand() throws {
        // 300 × 100 bytes every 10 ms: t = 0 … 2.99 s, one link period, no idle gap.
        let events = ThroughputTrackerTests.uniform(count: 300, size: 100, every: 10_000)
        let s = try #require(ThroughputTrackerTests.run(events, options: Self.verdictsOnly).streams.first)
        #expect(s.packets == 300)
        #expect(s.valueBytes == 30_000)
        #expect(s.firstFrame == 1 && s.lastFrame == 300)
        #expect(s.durationMicroseconds == 2_990_000)
        #expect(s.minValueSize == 100 && s.maxValueSize == 100 && s.valuesAtMaxSize == 300)
        #expect(s.periods.count == 1)
        #expect(s.periods[0].packets == 300 && s.periods[0].idleMicroseconds == 0)
        // The charts: not counted.
        #expect(s.windows == nil)
        #expect(s.series.isEmpty)
        #expect(s.gapHistogram.allSatisfy { $0 == 0 })
        #expect(s.peakBitsPerSecond == 0)
    }

    @Test func idleGapsStillCountForTheVerdict() throws {
        // Near miss: the gap histogram is left out, the idle gaps (what the verdict and TP rules weigh) are not. 10 ×
        // 100 bytes 9 ms apart, then one at 5 s: one idle gap from frame 10 (81 ms) to frame 11.
        var events = ThroughputTrackerTests.uniform(count: 10, size: 100, every: 9_000)
        events.append(contentsOf: ThroughputTrackerTests.uniform(count: 1, size: 100, every: 0, start: 5_000_000, frame0: 11))
        let s = try #require(ThroughputTrackerTests.run(events, options: Self.verdictsOnly).streams.first)
        #expect(s.idleGapCount == 1)
        #expect(s.idleMicroseconds == 5_000_000 - 81_000)
        #expect(s.periods[0].idleMicroseconds == 5_000_000 - 81_000)
        #expect(s.longestIdleGaps.first?.afterFrame == 10 && s.longestIdleGaps.first?.resumeFrame == 11)
    }

    /// Every Sample: the same streams, periods and verdicts as the full count.
    @Test(arguments: ["bracelet.btsnoop", "buttonless-dfu.btsnoop", "coc-stream.btsnoop", "cypress-bootloader.btsnoop"])
    func theVerdictsAreTheFullCounts(sample: String) throws {
        func streams(_ options: ThroughputOptions) throws -> [ThroughputStream] {
            let capture = try CaptureFile.open(path: TestEnvironment.sample(sample))
            return CaptureAnalysis.analyze(capture, observing: Observing(throughput: options)).throughput?.streams ?? []
        }
        let full = try streams(ThroughputOptions())
        let verdicts = try streams(Self.verdictsOnly)
        #expect(!full.isEmpty)
        #expect(full.map(\.key) == verdicts.map(\.key))
        for (f, v) in zip(full, verdicts) {
            #expect(f.packets == v.packets && f.valueBytes == v.valueBytes && f.attBytes == v.attBytes)
            #expect(f.firstFrame == v.firstFrame && f.lastFrame == v.lastFrame && f.lastTime == v.lastTime)
            #expect(f.maxValueSize == v.maxValueSize && f.valuesAtMaxSize == v.valuesAtMaxSize)
            #expect(f.idleMicroseconds == v.idleMicroseconds && f.idleGapCount == v.idleGapCount)
            #expect(f.periods == v.periods)
            #expect(f.verdict == v.verdict)
        }
    }
}
