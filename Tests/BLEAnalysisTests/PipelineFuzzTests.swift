import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// Mutated captures through every reader and the whole pipeline (readers → analyzer with timeline and
/// codecs → transfer, OTA, throughput and GATT trackers → JSON renderers): no crash, no hang, findings
/// instead. A short run in CI; `BLESCOPE_FUZZ_ITERATIONS=100000 swift test -c release --filter PipelineFuzz`
/// for a long one. Every failure prints the seed and iteration that reproduce it.
@Suite struct PipelineFuzzTests {
    static let seeds: [String] = {
        var files = ["eom-transfer.btsnoop", "bracelet.pcap", "nordic-dfu.pklg", "headset-ota.btsnoop"].map { TestEnvironment.sample($0) }
        files += TestEnvironment.realCaptures.filter { path in
            (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int).map { $0 < 200_000 } ?? false
        }
        return files
    }()

    static let iterations = Int(ProcessInfo.processInfo.environment["BLESCOPE_FUZZ_ITERATIONS"] ?? "") ?? 150

    static let codecs: CodecRegistry = {
        let r = CodecRegistry()
        _ = try? r.load(directory: TestEnvironment.samplesDirectory + "/codecs")
        return r
    }()

    /// One input through everything; returns the number of records read.
    static func runPipeline(_ bytes: [UInt8]) -> Int {
        guard let capture = try? CaptureFile.open(bytes: bytes, name: "fuzz") else { return 0 }
        var renderer = TimelineJSONRenderer()
        var out: [UInt8] = []
        let analyzer = Analyzer.analyze(capture, options: AnalyzerOptions(timeline: true, codecs: codecs), configure: {
            $0.observers = [ChunkedTransferTracker(), OTATracker(), ThroughputTracker(), GATTUsageTracker()]
            $0.onEvent = { e in
                renderer.append(e, to: &out)
                if out.count > 1 << 20 { out.removeAll(keepingCapacity: true) }
            }
        })
        for o in analyzer.observers {
            if let t = o as? ChunkedTransferTracker { _ = TransfersReport.json(t.transfers, findings: t.findings) }
            if let t = o as? OTATracker { _ = OTAReport.json(t.sessions) }
        }
        return analyzer.counters.records
    }

    @Test(arguments: seeds)
    func mutatedCapturesNeverCrashOrHang(_ path: String) throws {
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let seed = UInt64(truncatingIfNeeded: path.hashValue == 0 ? 1 : abs(path.utf8.reduce(5381) { ($0 &* 33) &+ Int($1) }))
        var m = Mutator(seed: seed)
        let other = Array(try Data(contentsOf: URL(fileURLWithPath: Self.seeds[0])))
        let start = Date()
        for i in 0..<Self.iterations {
            let input = m.mutate(original, other: other)
            let t0 = Date()
            _ = Self.runPipeline(input)
            let took = Date().timeIntervalSince(t0)
            #expect(took < 5, "seed \(seed) iteration \(i) of \(path) took \(took) s")
        }
        let rate = Double(Self.iterations) / Date().timeIntervalSince(start)
        print("fuzz \(path.split(separator: "/").last!): \(Self.iterations) inputs, \(Int(rate)) inputs/s, seed \(seed)")
    }
}
