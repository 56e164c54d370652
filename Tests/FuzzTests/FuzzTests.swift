import BLEAnalysis
import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

/// Seeded mutation fuzzing of every reader and of the whole pipeline, for a bounded time per target.
///
/// - `BLESCOPE_FUZZ_SECONDS` (default 2): time per target (CI keeps the default; local runs give minutes).
/// - `BLESCOPE_FUZZ_SEED`: replays a run (the seed is printed); the i-th input of a target depends only
///   on the seed, so a crash reproduces with the same seed.
/// - `BLESCOPE_FUZZ_SAVE=DIR`: writes each input to `DIR/<target>.current` before running it, so the
///   input that crashed the process is on disk.
/// Every input must finish within ``FuzzTests/hangLimit``; crashes end the test process.
/// Inputs that once found a crash or a hang live in `Tests/FuzzTests/Corpus/<target>/` and run first.
/// `scripts/fuzz.sh` runs the same targets under libFuzzer with AddressSanitizer.
struct FuzzTests {
    static let environment = ProcessInfo.processInfo.environment
    static let seconds = environment["BLESCOPE_FUZZ_SECONDS"].flatMap(Double.init) ?? 2
    static let seed: UInt64 = environment["BLESCOPE_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
    static let saveDirectory = environment["BLESCOPE_FUZZ_SAVE"]
    /// The hang detector: one input may take at most this long (debug build).
    static let hangLimit = 2.0
    static let corpusDirectory = FuzzTargets.repositoryRoot + "/Tests/FuzzTests/Corpus"

    /// Whole capture files used as seeds: the Samples and, when present, the shared real captures
    /// (each cut to its first 48 KiB so an execution stays in the millisecond range).
    static let seedCaptures: [[UInt8]] = {
        var paths: [String] = []
        let samples = (try? FileManager.default.contentsOfDirectory(atPath: TestEnvironment.samplesDirectory)) ?? []
        for name in samples.sorted() where [".btsnoop", ".pcap", ".pklg"].contains(where: name.hasSuffix) {
            paths.append(TestEnvironment.sample(name))
        }
        paths += TestEnvironment.realCaptures
        var seeds: [[UInt8]] = []
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            seeds.append(Array(data.prefix(48 << 10)))
        }
        // Small typed captures: every fragment size, pairing, credit-based channels.
        var b = CaptureBuilder().connect(handle: 0x40)
        for size in [1, 5, 27] { b = b.notify(handle: 0x2A, [UInt8](repeating: 0xA5, count: 60), connection: 0x40, fragmentSize: size) }
        seeds.append(b.disconnect(handle: 0x40).btsnoopBytes())
        seeds.append(CaptureWriter.pcap(b.records))
        seeds.append(CaptureWriter.packetLogger(b.records, bigEndian: false))
        return seeds
    }()

    static func seeds(for target: FuzzTarget) -> [[UInt8]] {
        seedCaptures.compactMap { target.seed(fromCapture: $0) }
    }

    static func targetSeed(_ target: FuzzTarget) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in target.rawValue.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
        return seed ^ h
    }

    @Test(arguments: FuzzTarget.allCases)
    func fuzz(_ target: FuzzTarget) throws {
        let seeds = Self.seeds(for: target)
        try #require(!seeds.isEmpty, "no seeds for \(target)")
        var rng = FuzzRandom(seed: Self.targetSeed(target))
        // Said before the run too: a crash ends the process before the closing line, and the seed replays it.
        print("fuzz \(target.rawValue): seed=\(Self.seed) (replay: BLESCOPE_FUZZ_SEED=\(Self.seed))")
        let mutator = FuzzMutator(maxSize: 64 << 10)
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int(Self.seconds * 1000))
        var executions = 0
        var slowest: Duration = .zero
        // The seeds themselves first, then mutations until the time is up.
        while clock.now < deadline || executions < seeds.count {
            let input: [UInt8]
            if executions < seeds.count {
                input = seeds[executions]
            } else {
                let base = seeds[rng.below(seeds.count)]
                input = mutator.mutate(base, other: seeds[rng.below(seeds.count)], using: &rng)
            }
            if let dir = Self.saveDirectory {
                _ = FileManager.default.createFile(atPath: dir + "/\(target.rawValue).current", contents: Data(input))
            }
            let start = clock.now
            FuzzTargets.run(target, input)
            let took = clock.now - start
            slowest = max(slowest, took)
            if took > .milliseconds(Int(Self.hangLimit * 1000)) {
                let path = NSTemporaryDirectory() + "blescope-fuzz-\(target.rawValue)-slow-\(executions).bin"
                _ = FileManager.default.createFile(atPath: path, contents: Data(input))
                Issue.record("\(target): input \(executions) took \(took) (> \(Self.hangLimit) s), saved to \(path)")
            }
            executions += 1
        }
        let rate = Double(executions) / Self.seconds
        print("fuzz \(target.rawValue): seed=\(Self.seed) executions=\(executions) rate=\(Int(rate))/s slowest=\(slowest)")
    }

    /// Every input that once crashed, hung or ballooned runs again.
    @Test func regressionCorpus() throws {
        let clock = ContinuousClock()
        var ran = 0
        for target in FuzzTarget.allCases {
            let dir = Self.corpusDirectory + "/" + target.rawValue
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { continue }
            for name in names.sorted() {
                let data = try #require(FileManager.default.contents(atPath: dir + "/" + name))
                let start = clock.now
                FuzzTargets.run(target, Array(data))
                let took = clock.now - start
                #expect(took < .milliseconds(Int(Self.hangLimit * 1000)), "\(target.rawValue)/\(name) took \(took)")
                ran += 1
            }
        }
        print("fuzz corpus: \(ran) inputs")
    }

    /// The mutator's operations all run and change something (a fuzzer that never mutates finds nothing).
    @Test(arguments: FuzzMutator.Operation.allCases)
    func mutatorChangesInput(_ op: FuzzMutator.Operation) {
        var rng = FuzzRandom(seed: 42)
        let input = Array(0..<200).map { UInt8($0) }
        var changed = 0
        for _ in 0..<50 {
            var bytes = input
            FuzzMutator().apply(op, to: &bytes, other: [9, 9, 9, 9], using: &rng)
            if bytes != input { changed += 1 }
        }
        #expect(changed >= 25, "\(op) changed the input \(changed) times out of 50")
    }

    /// The btsnooz wrapper produces what the reader takes: the Sample's records come back.
    @Test func btsnoozWrapperRoundTrips() throws {
        let bytes = try #require(FileManager.default.contents(atPath: TestEnvironment.sample("bracelet.btsnoop")))
        let body = try #require(FuzzTargets.btsnoozBody(fromBTSnoop: Array(bytes)))
        let capture = try CaptureFile.open(bytes: FuzzTargets.bugReport(blobBody: body), name: "bugreport.txt")
        #expect(capture.format == .btsnooz)
        var n = 0
        while capture.next() != nil { n += 1 }
        let original = try CaptureFile.open(bytes: Array(bytes), name: "bracelet.btsnoop")
        var m = 0
        while original.next() != nil { m += 1 }
        #expect(n == m)
    }
}

/// `BLESCOPE_FUZZ_SEEDS_OUT=DIR` writes each target's seeds to DIR/<target>/ (libFuzzer's starting corpus, `scripts/fuzz.sh`).
struct SeedExport {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["BLESCOPE_FUZZ_SEEDS_OUT"] != nil))
    func exportSeeds() throws {
        let root = ProcessInfo.processInfo.environment["BLESCOPE_FUZZ_SEEDS_OUT"] ?? ""
        for target in FuzzTarget.allCases {
            let dir = root + "/" + target.rawValue
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for (i, seed) in FuzzTests.seeds(for: target).enumerated() {
                _ = FileManager.default.createFile(atPath: dir + "/seed-\(i)", contents: Data(seed))
            }
        }
    }
}

/// The worst-case capture for memory (see ``WorstCaseCapture``).
struct WorstCaseTests {
    /// `BLESCOPE_WORST_CASE=N:PATH` writes an N-record worst-case btsnoop file (used by `scripts/fuzz.sh worst-case`).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["BLESCOPE_WORST_CASE"] != nil))
    func writeWorstCaseCapture() throws {
        let spec = ProcessInfo.processInfo.environment["BLESCOPE_WORST_CASE"] ?? ""
        let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
        let n = try #require(parts.first.flatMap { Int($0) }), path = try #require(parts.last)
        let writer = try CaptureFileWriter(path: path, format: .btsnoop(datalink: BTSnoop.datalinkH4))
        for i in 0..<n { try writer.write(WorstCaseCapture.record(i)) }
        try writer.close()
    }

    /// Open reassemblies, tracked connections, pending requests, commands and credit channels stay
    /// bounded, each with a finding when its bound is hit.
    @Test func analyzerStateIsBounded() throws {
        var records: [OwnedRecord] = []
        let n = 60_000
        for i in 0..<n { records.append(WorstCaseCapture.record(i)) }
        let capture = try CaptureFile.open(bytes: CaptureWriter.btsnoop(records), name: "worst.btsnoop")
        let analyzer = Analyzer.analyze(
            capture, options: AnalyzerOptions(timeline: true, maxConnections: 512),
            configure: { $0.maxRetainedConnections = 2000 })
        #expect(analyzer.counters.records == n)
        #expect(analyzer.connections.count == 2000)
        let codes = Set(analyzer.findings.map(\.kind.code.id))
        for code in ["limit.connections", "limit.connections-total", "limit.pending-commands", "limit.credit-channels"] {
            #expect(codes.contains(code), "no \(code) finding")
        }
        #expect(analyzer.findings.count < 20_000)
    }
}
