import BLETestSupport
import Foundation
import Testing

/// `blescope export --tables` (the flat fleet tables) and the five fleet questions of docs/fleets.md, asked with
/// `scripts/spark_fleet.py` on DuckDB and on Spark in local mode over every Sample, real capture and cut copies of the
/// Samples: every table file valid against its schema, figures checked against tshark, both engines equal.
///
/// The engines are skipped with a message where Java, pyspark or duckdb is missing; `BLESCOPE_REQUIRE_SPARK=1` (set by
/// `.ci/run`) makes their absence a failure. About 60–90 s on this 2-core machine, nearly all of it Spark's start.
@Suite(.serialized) struct FleetTablesTests {
    static let tables = [
        "captures", "connections", "findings", "streams", "ota_sessions", "iso_streams", "quality_reports", "audio_streams", "sco_links",
        "security",
    ]

    static func missingEngine() -> String? {
        if TestEnvironment.execute("/usr/bin/env", ["java", "-version"])?.status != 0 {
            return "java is missing (apt-get install openjdk-17-jre-headless)"
        }
        for module in ["pyspark", "duckdb"]
        where TestEnvironment.execute("/usr/bin/env", ["python3", "-c", "import \(module)"])?.status != 0 {
            return "\(module) is missing (pip install \(module))"
        }
        return nil
    }

    /// The inputs: Samples (btsnoop), real captures, and cut copies of the Samples (updates that end early, logs
    /// marked incomplete), written into `directory`.
    static func inputs(in directory: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: TestEnvironment.samplesDirectory)
        let samples = names.filter { $0.hasSuffix(".btsnoop") }.sorted().map(TestEnvironment.sample)
        var cut: [String] = []
        for path in samples {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            for percent in [45, 70] {
                let out = directory + "/\((path as NSString).lastPathComponent)-cut\(percent).btsnoop"
                try data.prefix(data.count * percent / 100).write(to: URL(fileURLWithPath: out))
                cut.append(out)
            }
        }
        return samples + TestEnvironment.realCaptures + cut
    }

    /// A cut copy this suite wrote (`NAME.btsnoop-cut45.btsnoop`), told by its whole suffix: the corpus has captures whose
    /// own names hold "-cut" (a btsnooz log cut by its extractor, an air capture whose pairing the central cut), which
    /// are no cut copies (counted as such, the air capture, not being btsnoop, "ended inside a record": 85 of 88).
    static func isCutCopy(_ path: String) -> Bool {
        path.range(of: #"\.btsnoop-cut[0-9]+\.btsnoop$"#, options: .regularExpression) != nil
    }

    /// Whether a btsnoop file ends inside a record: its 16-byte header, then records of a 24-byte header and the included
    /// length (its second field, big-endian) each.
    static func endsInsideARecord(_ path: String) throws -> Bool {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var offset = 16
        while offset + 24 <= data.count {
            let included = data[offset + 4..<offset + 8].reduce(0) { $0 << 8 | Int($1) }
            offset += 24 + included
        }
        return offset != data.count
    }

    static func rows(_ directory: String, _ table: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: directory + "/" + table + ".jsonl", encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test func everyTableIsValidAndHoldsWhatTsharkShows() throws {
        let binary = try #require(TestEnvironment.blescopeBinary)
        let directory = NSTemporaryDirectory() + "blescope-tables-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = try Self.inputs(in: directory)
        let out = directory + "/tables"
        let run = try #require(
            TestEnvironment.execute(binary, ["export", "--quiet", "--tables", out, "--codec", TestEnvironment.sample("codecs")] + files))
        #expect(run.status == 0, "export: \(run.stderr.suffix(2000))")
        // One captures row per input, in input order.
        let captures = try Self.rows(out, "captures")
        #expect(captures.map { $0["capture_id"] as? String } == files.map { Optional($0) })
        if SchemaValidationTests.checkAvailable() {
            for table in Self.tables {
                let v = try SchemaValidationTests.validate("tables/" + table, [out + "/" + table + ".jsonl"])
                #expect(v.status == 0, "\(table): \(v.stdout.prefix(2000))")
            }
        }
        // The bracelet Sample: one connection, ended by the central's Disconnect and the peer's 0x13 at frame 111
        // (tshark: bthci_evt.code == 0x05 at 111, reason 0x13); its one OTA-free write stream has 3 packets.
        let connections = try Self.rows(out, "connections")
        let bracelet = connections.filter { $0["capture_id"] as? String == TestEnvironment.sample("bracelet.btsnoop") }
        #expect(bracelet.count == 1)
        #expect(bracelet.first?["end_frame"] as? Int == 111)
        #expect(bracelet.first?["end_reason_code"] as? Int == 0x13)
        // The nordic-dfu Sample's update: the image tshark's Write Commands carry, 100,000 bytes, success.
        let ota = try Self.rows(out, "ota_sessions")
        let dfu = ota.filter { $0["capture_id"] as? String == TestEnvironment.sample("nordic-dfu.btsnoop") }
        #expect(dfu.map { $0["result"] as? String } == ["success"])
        #expect(dfu.first?["image_size"] as? Int == 100_000)
        #expect(dfu.first?["image_sha256"] as? String == "6f7a88db235f5b1c68b0d825d3957fa85115adacf614b61176fc5ec95c258f00")
        // The pongbot log (shared captures): tshark's Disconnection Completes with reason 0x08 are frames 1558, 5697,
        // 5853, 6257, 6459, 7283.
        if let pongbot = TestEnvironment.realCaptures.first(where: { $0.hasSuffix("pixel8-pongbot-14conn-prepwrite-indicate.log.last") }) {
            let lost = connections.filter { $0["capture_id"] as? String == pongbot && $0["end_reason_code"] as? Int == 8 }
            #expect(lost.compactMap { $0["end_frame"] as? Int }.sorted() == [1558, 5697, 5853, 6257, 6459, 7283])
            #expect(lost.allSatisfy { $0["ended_by"] as? String == "link" })
            // Its controller, from Read Local Version Information at frame 10 (tshark: manufacturer 0x000f).
            let row = captures.first { $0["capture_id"] as? String == pongbot }
            #expect(row?["controller_manufacturer_id"] as? Int == 0x000F)
        }
        // A cut copy of an update that ends early is not a success.
        let cut = ota.filter { ($0["capture_id"] as? String ?? "").hasSuffix("nordic-dfu.btsnoop-cut45.btsnoop") }
        #expect(!cut.isEmpty && cut.allSatisfy { $0["result"] as? String != "success" })
    }

    @Test func duckDBAndSparkGiveTheSameAnswersToTheFiveQuestions() throws {
        if let missing = Self.missingEngine() {
            if ProcessInfo.processInfo.environment["BLESCOPE_REQUIRE_SPARK"] == "1" {
                Issue.record("FleetTablesTests: \(missing), and BLESCOPE_REQUIRE_SPARK=1")
            } else {
                print("FleetTablesTests: engines skipped, \(missing)")
            }
            return
        }
        let binary = try #require(TestEnvironment.blescopeBinary)
        let directory = NSTemporaryDirectory() + "blescope-fleet-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = try Self.inputs(in: directory)
        let list = directory + "/files.txt"
        try files.joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
        let codecs = TestEnvironment.sample("codecs")
        let out = directory + "/tables"
        _ = TestEnvironment.execute(binary, ["export", "--quiet", "--tables", out, "--codec", codecs] + files)
        let script = TestEnvironment.repositoryRoot + "/scripts/spark_fleet.py"
        let duck = try #require(TestEnvironment.execute("/usr/bin/env", ["python3", script, "--duckdb", out]))
        #expect(duck.status == 0, "duckdb: \(duck.stderr.suffix(2000))")
        let start = Date()
        let spark = try #require(
            TestEnvironment.execute(
                "/usr/bin/env",
                ["python3", script, "--blescope", binary, "--codec", codecs, "--files", list, "--partitions", "4"]))
        let sparkSeconds = Date().timeIntervalSince(start)
        #expect(spark.status == 0, "spark: \(spark.stderr.suffix(2000))")
        let duckAnswers = try #require(try JSONSerialization.jsonObject(with: Data(duck.stdout.utf8)) as? [String: [[String: Any]]])
        let sparkAnswers = try #require(try JSONSerialization.jsonObject(with: Data(spark.stdout.utf8)) as? [String: [[String: Any]]])
        #expect(duckAnswers.count == 5)
        for (question, rows) in duckAnswers {
            #expect(!rows.isEmpty, "\(question): no rows (nothing tested)")
            let other = sparkAnswers[question] ?? []
            #expect(NSArray(array: rows).isEqual(to: other), "\(question): DuckDB \(rows) ≠ Spark \(other)")
        }
        // What the Samples' truth says: every full update succeeded; the cut copies add sessions that did not.
        let ota = duckAnswers["ota_by_protocol_and_image"] ?? []
        let protocols = Set(ota.compactMap { $0["protocol"] as? String })
        #expect(protocols.isSuperset(of: ["mcumgr-smp", "nordic-legacy-dfu", "nordic-secure-dfu", "silabs-ota", "vendor"]))
        #expect(ota.contains { ($0["success_rate"] as? Double ?? 1) < 1 })
        // The cut copies are incomplete logs: the fifth question names them. A copy cut exactly between two records is a
        // whole log (two of the 86 today: diag-pairing-failed and le-audio-unicast at 45 %), and the real captures may add
        // none (the sniffer clock wraps of issue 49 are no disorder).
        let incomplete = duckAnswers["incomplete_captures"] ?? []
        let cuts = files.filter(Self.isCutCopy)
        let cutInside = try cuts.filter { try Self.endsInsideARecord($0) }.count
        #expect(cuts.count == 2 * files.filter { $0.hasPrefix(TestEnvironment.samplesDirectory) }.count)
        #expect(cutInside >= cuts.count - 2)
        #expect(incomplete.reduce(0) { $0 + ($1["captures"] as? Int ?? 0) } >= cutInside)
        print(
            String(format: "FleetTablesTests: %d captures, Spark (local[2], 4 partitions) %.1f s, DuckDB agrees", files.count, sparkSeconds)
        )
    }
}
