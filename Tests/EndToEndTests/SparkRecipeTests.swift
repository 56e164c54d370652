import BLETestSupport
import Foundation
import Testing

/// `scripts/spark_fleet.py` on Spark in local mode over every Sample, real capture and cut copies of the Samples:
/// Spark SQL's OTA success rate and median rate per protocol must equal DuckDB's over the same JSON Lines.
/// Skipped, with a message, where Java, pyspark or duckdb is missing (CI does not install them) or BLESCOPE_SPARK=0;
/// about 40–60 s on this 2-core machine, nearly all of it Spark's start.
@Suite struct SparkRecipeTests {
    static func available() -> String? {
        if ProcessInfo.processInfo.environment["BLESCOPE_SPARK"] == "0" { return "BLESCOPE_SPARK=0" }
        if TestEnvironment.execute("/usr/bin/env", ["java", "-version"])?.status != 0 {
            return "java is missing (apt-get install openjdk-17-jre-headless)"
        }
        if TestEnvironment.execute("/usr/bin/env", ["python3", "-c", "import pyspark"])?.status != 0 {
            return "pyspark is missing (pip install pyspark)"
        }
        if TestEnvironment.execute("/usr/bin/env", ["python3", "-c", "import duckdb"])?.status != 0 {
            return "duckdb is missing (pip install duckdb)"
        }
        return nil
    }

    @Test func sparkAndDuckDBAgreeOnOTASuccessAndMedianRate() throws {
        if let missing = Self.available() {
            print("SparkRecipeTests: skipped, \(missing)")
            return
        }
        let binary = try #require(TestEnvironment.blescopeBinary)
        let directory = NSTemporaryDirectory() + "blescope-spark-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let names = try FileManager.default.contentsOfDirectory(atPath: TestEnvironment.samplesDirectory)
        let samples = names.filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") || $0.hasSuffix(".pklg") }.sorted()
            .map(TestEnvironment.sample)
        // Cut copies: updates that end early, so that rates differ and success rates are not all 1.
        var cut: [String] = []
        for path in samples where path.hasSuffix(".btsnoop") {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            for percent in [45, 70, 90] {
                let out = directory + "/\((path as NSString).lastPathComponent)-cut\(percent).btsnoop"
                try data.prefix(data.count * percent / 100).write(to: URL(fileURLWithPath: out))
                cut.append(out)
            }
        }
        let files = samples + TestEnvironment.realCaptures + cut
        let list = directory + "/files.txt"
        try files.joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
        let script = TestEnvironment.repositoryRoot + "/scripts/spark_fleet.py"
        let jsonl = directory + "/fleet.jsonl"
        let start = Date()
        let spark = try #require(
            TestEnvironment.execute(
                "/usr/bin/env",
                [
                    "python3", script, "--blescope", binary, "--codec",
                    TestEnvironment.sample("codecs"), "--files", list,
                    "--partitions", "4", "--jsonl", jsonl,
                ]))
        let sparkSeconds = Date().timeIntervalSince(start)
        #expect(spark.status == 0, "spark: \(spark.stderr.suffix(2000))")
        let duck = try #require(TestEnvironment.execute("/usr/bin/env", ["python3", script, "--duckdb", jsonl]))
        #expect(duck.status == 0, "duckdb: \(duck.stderr.suffix(2000))")
        let sparkRows = try #require(try JSONSerialization.jsonObject(with: Data(spark.stdout.utf8)) as? [[String: Any]])
        let duckRows = try #require(try JSONSerialization.jsonObject(with: Data(duck.stdout.utf8)) as? [[String: Any]])
        #expect(NSArray(array: sparkRows).isEqual(to: duckRows), "Spark \(spark.stdout) ≠ DuckDB \(duck.stdout)")
        // One line per capture, and what the Samples' truth says: every full update succeeded, in each of 3 formats.
        let lines = try String(contentsOfFile: jsonl, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == files.count)
        let byProtocol = Dictionary(uniqueKeysWithValues: sparkRows.map { ($0["protocol"] as? String ?? "?", $0) })
        #expect(Set(byProtocol.keys).isSuperset(of: ["mcumgr-smp", "nordic-legacy-dfu", "nordic-secure-dfu", "silabs-ota", "vendor"]))
        for (name, row) in byProtocol {
            #expect((row["successful"] as? Int ?? 0) >= 3, "\(name): \(row)")
            #expect((row["sessions"] as? Int ?? 0) > 3, "\(name): the cut copies add sessions that did not finish")
        }
        print(
            String(format: "SparkRecipeTests: %d captures, Spark (local[2], 4 partitions) %.1f s, DuckDB agrees", files.count, sparkSeconds)
        )
    }
}
