import BLEAnalysisTestSupport
import BLECapture
import BLECore
import Foundation
import Testing

@testable import BLEAnalysis

/// The trackers give the same results whether they run inline or on the background worker, whatever
/// the batch size (tiny batches cross many batch boundaries, including connection ends between them).
@Suite struct BackgroundObserversTests {
    struct Results: Equatable {
        var streams: [ThroughputStream]
        var transfers: [Transfer]
        var sessions: [OTASession]
        var usage: [Int: [UInt16: HandleUsage]]
        var valuesSeen: Int
        var digest: UInt64 = 0
    }

    /// Folds every event (frame, connection, kind, handle, value bytes) and connection end, in order, into one hash.
    struct Digest: AttributeValueObserver {
        var values = 0
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        mutating func mix(_ v: UInt64) { hash = (hash ^ v) &* 0x0000_0100_0000_01B3 }
        mutating func observe(_ event: AttributeValueEvent, value: RawSpan) {
            values += 1
            mix(UInt64(event.frame)); mix(UInt64(event.connectionNumber)); mix(UInt64(event.kind.rawValue)); mix(UInt64(event.handle))
            mix(UInt64(value.byteCount))
            for i in value.byteOffsets { mix(UInt64(value.unsafeLoad(fromByteOffset: i, as: UInt8.self))) }
        }
        mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {
            mix(0xE0D); mix(UInt64(connectionNumber)); mix(UInt64(frame))
        }
        mutating func finish(frame: Int, timestamp: Timestamp) { mix(0xF1); mix(UInt64(frame)) }
    }

    static func trackers() -> [any AttributeValueObserver] {
        [ThroughputTracker(), ChunkedTransferTracker(), OTATracker(), GATTUsageTracker(), Digest()]
    }

    static func results(_ observers: [any AttributeValueObserver]) -> Results {
        var r = Results(streams: [], transfers: [], sessions: [], usage: [:], valuesSeen: 0)
        for o in observers {
            switch o {
            case let t as ThroughputTracker: r.streams = t.streams
            case let t as ChunkedTransferTracker: r.transfers = t.transfers
            case let t as OTATracker: r.sessions = t.sessions
            case let t as GATTUsageTracker: r.usage = t.byConnection
            case let t as Digest:
                r.valuesSeen = t.values
                r.digest = t.hash
            default: break
            }
        }
        return r
    }

    static func run(_ path: String, background: (batch: Int, inFlight: Int)?) throws -> Results {
        let capture = try CaptureFile.open(path: path)
        let analyzer = Analyzer.analyze(
            capture, options: AnalyzerOptions(timeline: false),
            configure: { a in
                if let b = background {
                    a.observers = [BackgroundObservers(trackers(), batchSize: b.batch, maxBatchesInFlight: b.inFlight)]
                } else {
                    a.observers = trackers()
                }
            })
        let observers = (analyzer.observers.first as? BackgroundObservers)?.observers ?? analyzer.observers
        return results(observers)
    }

    @Test(arguments: ["nordic-dfu", "eom-transfer", "headset-ota", "mcumgr-upload"], [(1, 1), (7, 1), (64, 3), (2048, 3)])
    func sameResultsAsInline(sample: String, background: (Int, Int)) throws {
        let path = samplesDirectory.appendingPathComponent("\(sample).btsnoop").path
        let inline = try Self.run(path, background: nil)
        let worker = try Self.run(path, background: background)
        #expect(inline.valuesSeen > 50, "the sample should carry values")
        #expect(worker == inline)
    }

    /// The Secure DFU sample through the worker still finds its one session with the image the generator sent.
    @Test func dfuThroughWorker() throws {
        let path = samplesDirectory.appendingPathComponent("nordic-dfu.btsnoop").path
        let r = try Self.run(path, background: (5, 2))
        #expect(r.sessions.count == 1)
        #expect(r.sessions.first?.image.count == 100_000)
    }
}
