import BLECapture
import BLETestSupport
import Foundation
import Testing

/// `blescope info|timeline` over many files: parallel output identical to sequential, per-file
/// failures reported without stopping, exit 2 at the end, JSON Lines tagged with the file.
struct BatchTests {
    static var binary: String? { TestEnvironment.blescopeBinary }

    static func run(_ arguments: [String]) throws -> (stdout: String, status: Int32) {
        let binary = try #require(binary, "the blescope binary was not built")
        let r = try #require(TestEnvironment.execute(binary, arguments))
        return (r.stdout, r.status)
    }

    /// A directory of Samples in every format (one gzip-compressed, some in a subdirectory) and one junk file.
    static func makeDirectory() throws -> (dir: String, captures: [String]) {
        let dir = NSTemporaryDirectory() + "blescope-batch-\(UInt32.random(in: 0...UInt32.max))"
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: true)
        var captures: [String] = []
        for name in ["bracelet.btsnoop", "eom-transfer.pcap", "headset-ota.pklg", "nordic-dfu.btsnoop"] {
            let target = dir + (name.hasSuffix(".pcap") ? "/sub/" : "/") + name
            try fm.copyItem(atPath: TestEnvironment.sample(name), toPath: target)
            captures.append(target)
        }
        let gz = dir + "/sub/bracelet.pklg.gz"
        let bytes = try #require(fm.contents(atPath: TestEnvironment.sample("bracelet.pklg")))
        _ = fm.createFile(atPath: gz, contents: Data(zlibDeflate(Array(bytes), gzip: true)))
        captures.append(gz)
        _ = fm.createFile(atPath: dir + "/sub/notes.txt", contents: Data("not a capture\n".utf8))
        _ = fm.createFile(atPath: dir + "/.hidden", contents: Data("skipped\n".utf8))
        return (dir, captures.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test(.enabled(if: binary != nil)) func infoDirectoryParallelEqualsSequential() throws {
        let (dir, captures) = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let parallel = try Self.run(["info", dir, "--json", "--jobs", "4"])
        let sequential = try Self.run(["info", dir, "--json", "--jobs", "1"])
        #expect(parallel.stdout == sequential.stdout)
        // sub/notes.txt is not a capture: skipped, with one line on stderr, and no error.
        #expect(parallel.status == 0 && sequential.status == 0)
        let lines = parallel.stdout.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == captures.count)
        let files = lines.compactMap { $0?["file"] as? String }
        #expect(files == captures)
        #expect(lines.allSatisfy { $0?["error"] == nil })
        // Each object equals the single-file run's.
        for capture in captures {
            let single = try Self.run(["info", capture, "--json"])
            #expect(single.status == 0)
            #expect(parallel.stdout.contains(single.stdout), "\(capture)")
        }
    }

    @Test(.enabled(if: binary != nil)) func timelineDirectoryParallelEqualsSequential() throws {
        let (dir, captures) = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let codecs = TestEnvironment.samplesDirectory + "/codecs"
        let parallel = try Self.run(["timeline", dir, "--format", "jsonl", "--codec", codecs, "--jobs", "3", "--quiet"])
        let sequential = try Self.run(["timeline", dir, "--format", "jsonl", "--codec", codecs, "--jobs", "1", "--quiet"])
        #expect(parallel.status == 0)  // sub/notes.txt is skipped
        #expect(parallel.stdout == sequential.stdout)
        // Concatenating the single-file outputs, each line tagged with its file, gives the same lines.
        var expected: [[String: Any]] = []
        for capture in captures {
            let single = try Self.run(["timeline", capture, "--format", "jsonl", "--codec", codecs, "--quiet"])
            for line in single.stdout.split(separator: "\n") {
                var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                object["file"] = capture
                expected.append(object)
            }
        }
        let got = try parallel.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(got.count == expected.count)
        for (g, e) in zip(got, expected) {
            #expect(NSDictionary(dictionary: g).isEqual(to: e))
        }
        // Every line starts with the file key.
        #expect(parallel.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("{\"file\":") })
    }

    @Test(.enabled(if: binary != nil)) func globsAndMissingPatterns() throws {
        let (dir, _) = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ok = try Self.run(["info", dir + "/*.btsnoop", "--json"])
        #expect(ok.status == 0)
        #expect(ok.stdout.split(separator: "\n").count == 2)
        let missing = try Self.run(["info", dir + "/*.btsnoop", dir + "/nothing-*", "--json"])
        #expect(missing.status == 2)
        #expect(missing.stdout == ok.stdout)
    }
}
