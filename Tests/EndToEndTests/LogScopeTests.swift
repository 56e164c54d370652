import BLETestSupport
import Foundation
import Testing

/// Every command that reads a capture says first what the log cannot show (issue 27 point 5): a capture cut by
/// `head -c` is never "complete", in the text (its first lines; the timeline's last, as a stream cannot know before
/// its end) and in the JSON (`completeness`, schemas/info.schema.json#/$defs/completeness).
@Suite struct LogScopeTests {
    /// `Samples/nordic-dfu.btsnoop` cut after 5,000 bytes, and the record the cut falls in, found here by walking the
    /// btsnoop record headers (16-byte file header; each record a 24-byte header whose included length is at +4,
    /// big-endian), not by blescope.
    static func cutCapture() throws -> (path: String, record: Int, offset: Int) {
        let whole = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample("nordic-dfu.btsnoop")))
        let cut = whole.prefix(5000)
        var offset = 16, record = 1
        while true {
            let included = cut.subdata(in: (offset + 4)..<(offset + 8)).reduce(0) { $0 << 8 | Int($1) }
            if offset + 24 + included > cut.count { break }
            offset += 24 + included
            record += 1
        }
        let path = NSTemporaryDirectory() + "blescope-cut-\(UUID().uuidString).btsnoop"
        try cut.write(to: URL(fileURLWithPath: path))
        return (path, record, offset)
    }

    @Test(arguments: ["ota", "throughput", "transfers", "gatt", "iso"])
    func textOpensWithTheCut(_ command: String) throws {
        let (path, record, offset) = try Self.cutCapture()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try Blescope.run([command, "--quiet", path])
        let lines = GoldenTruthTests.unwrapped(r.stdout).split(separator: "\n").map(String.init)
        #expect(lines.first == "Log: incomplete", "\(command): \(r.stdout)")
        #expect(lines.count > 1 && lines[1].hasPrefix("  ! the file is cut: file ends inside record \(record): header at offset \(offset)"))
        #expect(lines.count > 1 && lines[1].hasSuffix("nothing after it is in the log"))
    }

    @Test func timelineEndsWithTheCut() throws {
        let (path, record, _) = try Self.cutCapture()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try Blescope.run(["timeline", "--quiet", path])
        let lines = GoldenTruthTests.unwrapped(r.stdout).split(separator: "\n").map(String.init)
        let log = try #require(lines.lastIndex(of: "Log: incomplete"))
        #expect(lines[log + 1].contains("the file is cut: file ends inside record \(record)"))
    }

    @Test(arguments: ["ota", "throughput", "transfers", "gatt", "iso"])
    func jsonSaysTheCut(_ command: String) throws {
        let (path, record, _) = try Self.cutCapture()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try Blescope.run([command, "--json", "--quiet", path])
        let object = try #require(r.json as? [String: Any], "\(command): \(r.stdout)")
        let completeness = try #require(object["completeness"] as? [String: Any])
        #expect(completeness["verdict"] as? String == "incomplete")
        let items = try #require(completeness["items"] as? [[String: Any]])
        let cut = try #require(items.first { $0["code"] as? String == "file-cut" })
        #expect(cut["frame"] as? Int == record && cut["severity"] as? String == "warning")
    }

    /// A whole capture from its first record to its last disconnection: nothing to say, no `Log` line.
    @Test(arguments: ["ota", "throughput", "transfers", "gatt", "timeline", "iso"])
    func aWholeCaptureSaysNothing(_ command: String) throws {
        let r = try Blescope.run([command, "--quiet", TestEnvironment.sample("nordic-dfu.btsnoop")])
        #expect(r.status == 0 && !r.stdout.contains("Log:"))
        let json = try Blescope.run([
            command == "timeline" ? "ota" : command, "--json", "--quiet", TestEnvironment.sample("nordic-dfu.btsnoop"),
        ])
        let completeness = (json.json as? [String: Any])?["completeness"] as? [String: Any]
        #expect(completeness?["verdict"] as? String == "complete" && (completeness?["items"] as? [Any])?.isEmpty == true)
    }
}
