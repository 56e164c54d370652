import BLEAnalysis
import BLECapture
import BLECore
import BLESecurity
import BLETestSupport
import Foundation
import Testing

@testable import BLEReports

/// `OTARun` and `OTAGate` against the generator's truth for Samples/nordic-dfu.btsnoop: the 100,000-byte image is
/// rebuilt here from the generator's description (xorshift32(13,17,5), seed 0x0df01234, low 8 bits of each step),
/// not taken from blescope.
@Suite struct OTARunTests {
    static let sample = TestEnvironment.sample("nordic-dfu.btsnoop")

    /// The image Samples/generate wrote (nordic-dfu.truth.json: size 100000, first bytes 0f9dc9cc…).
    static let image: [UInt8] = {
        var x: UInt32 = 0x0DF0_1234
        return (0..<100_000).map { _ in
            x ^= x << 13
            x ^= x >> 17
            x ^= x << 5
            return UInt8(truncatingIfNeeded: x)
        }
    }()

    @Test func theGeneratorsImageIsWhatTheTruthFileSays() {
        #expect(SHA256.hexDigest(Self.image) == "6f7a88db235f5b1c68b0d825d3957fa85115adacf614b61176fc5ec95c258f00")
    }

    @Test func passesWithTheExpectedImageAndFailsOneByteOff() throws {
        let run = OTARun(analyzerOptions: AnalyzerOptions(timeline: false), gate: OTAGate(expectedImage: Self.image))
        let ok = run.check(try CaptureFile.open(path: Self.sample))
        #expect(ok.sessions.count == 1 && ok.sessions.first?.image == Self.image)
        #expect(ok.failures.isEmpty)

        var damaged = Self.image
        damaged[4096] ^= 0xFF
        let off = OTARun(analyzerOptions: AnalyzerOptions(timeline: false), gate: OTAGate(expectedImage: damaged))
            .check(try CaptureFile.open(path: Self.sample))
        #expect(off.failures.count == 1)
        #expect(off.failures.first?.text.contains("first difference at offset 4096") == true)
    }

    /// A rate bound the session cannot meet fails with the label given; a capture without an update fails only when
    /// a bound asks for one.
    @Test func rateBoundAndMissingSession() throws {
        let gate = OTAGate(minRateBitsPerSecond: 1e9, rateLabel: "--min-rate 125MB/s")
        #expect(gate.requireSession)
        let slow = OTARun(analyzerOptions: AnalyzerOptions(timeline: false), gate: gate).check(try CaptureFile.open(path: Self.sample))
        // Both rates in the run's unit (kbps), the bound as it was given after them.
        #expect(slow.failures.map(\.text).contains { $0.hasSuffix("is below 1,000,000 kbps (--min-rate 125MB/s)") })

        let bracelet = TestEnvironment.sample("bracelet.btsnoop")
        let none = OTARun(analyzerOptions: AnalyzerOptions(timeline: false), gate: gate).check(try CaptureFile.open(path: bracelet))
        #expect(none.sessions.isEmpty && none.failures.map(\.text) == ["no update found in the capture"])
        #expect(OTAGate().failures([]).isEmpty)
    }

    /// Over several captures: an unreadable one gives its `{"file","error"}` line in place, the image goes to the
    /// extract directory under the capture's stem, and the counts come back typed.
    @Test func batchWithAnUnreadableCaptureAndExtraction() throws {
        let directory = NSTemporaryDirectory() + "blescope-otarun-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let outputPath = directory + ".jsonl"
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let fd = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        try #require(fd >= 0)
        let missing = directory + "/no-such.btsnoop"
        let run = OTARun(
            analyzerOptions: AnalyzerOptions(timeline: false), gate: OTAGate(expectedImage: Self.image), json: true,
            extractDirectory: directory)
        let out = BLEReports.OutputStream(fd: fd)
        let outcome = run.run([missing, Self.sample], several: true, jobs: 2, out: out)
        out.flush()
        close(fd)
        #expect(outcome.unreadable == 1 && outcome.failing == 0)

        let lines = try String(contentsOfFile: outputPath, encoding: .utf8).split(separator: "\n")
        try #require(lines.count == 2)
        let error = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(error["file"] as? String == missing && error.keys.sorted() == ["error", "file"])
        let result = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(result["file"] as? String == Self.sample && (result["sessions"] as? [Any])?.count == 1)

        let extracted = try FileManager.default.contentsOfDirectory(atPath: directory)
        try #require(extracted.count == 1)
        #expect(extracted[0].hasPrefix("nordic-dfu-conn") && extracted[0].hasSuffix(".bin"))
        #expect(BinaryFile.read(directory + "/" + extracted[0]) == Self.image)
    }
}
