import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLEAnalysis

/// The throughput tracker moved to its own thread (``ThroughputBeside``) counts what it counts inline: the same streams,
/// whenever it moves and however its batches are cut.
@Suite("Throughput beside the decoder")
struct ThroughputBesideTests {
    /// Every Sample and shared capture with attribute values.
    static let files: [String] =
        TestEnvironment.sampleNames.map { TestEnvironment.sample("\($0).btsnoop") } + TestEnvironment.realCaptures

    /// Streams and dropped count of one pass; the tracker moves at record `moveAt` (nil: never).
    static func streams(
        _ path: String, moveAt: Int?, batchSize: Int = 8192, contextCapacity: Int = 256
    ) throws -> ([ThroughputStream], Int) {
        let capture = try CaptureFile.open(path: path)
        let pass = AnalysisPass(options: AnalyzerOptions(timeline: false), observing: Observing(throughput: ThroughputOptions()))
        var record = CaptureRecord.empty
        while capture.next(into: &record) {
            if record.frame == moveAt { pass.moveThroughputBeside(batchSize: batchSize, contextCapacity: contextCapacity) }
            pass.process(record)
        }
        let result = try #require(pass.finish().throughput)
        return (result.streams, result.streamsDropped)
    }

    @Test func sameStreamsWheneverItMovesAndHoweverBatchesAreCut() throws {
        var streamsSeen = 0
        var values = 0
        for path in Self.files {
            let (inline, dropped) = try Self.streams(path, moveAt: nil)
            streamsSeen += inline.count
            values += inline.reduce(0) { $0 + $1.packets }
            let records = try RecordFixtures.readAll(CaptureFile.open(path: path)).count
            // From the first record with the default batches; from the middle with one-sample batches; from the
            // second record with batches of 7 and one context each (a batch sent at every change of context).
            let variants: [(moveAt: Int, batch: Int, contexts: Int)] = [
                (1, 8192, 256), (max(1, records / 2), 1, 256), (min(2, records), 7, 1),
            ]
            for v in variants {
                let (beside, besideDropped) = try Self.streams(
                    path, moveAt: v.moveAt, batchSize: v.batch, contextCapacity: v.contexts)
                #expect(beside == inline, "\(path): moved at \(v.moveAt), batches of \(v.batch), \(v.contexts) contexts")
                #expect(besideDropped == dropped)
            }
        }
        // The files carry real traffic: this compares something (the Samples alone: 78 streams, 2,995 values; with the
        // shared captures 317 and 6,991).
        let floor = TestEnvironment.realCaptures.isEmpty ? (streams: 70, values: 2_500) : (streams: 300, values: 5_000)
        #expect(streamsSeen >= floor.streams && values >= floor.values, "\(streamsSeen) streams, \(values) values")
    }
}
