import BLETestSupport
import Foundation
import Testing

/// Every command that reads captures takes files, directories and quoted globs alike: a folder's notes and scripts are
/// skipped with one line each on stderr (and are an error only when named), captures come out in input order, and a
/// capture read among several gives what it gives alone.
@Suite struct CommandsAlikeTests {
    /// A folder as a user keeps one: two captures (one in a subfolder), a README, a JSON note and a script.
    final class Folder {
        let path = NSTemporaryDirectory() + "blescope-inputs-\(UUID().uuidString)"
        let captures: [String]
        let notCaptures: [String]

        init() throws {
            let fm = FileManager.default
            try fm.createDirectory(atPath: path + "/sub", withIntermediateDirectories: true)
            captures = [path + "/a-nordic-dfu.btsnoop", path + "/sub/b-headset-ota.pklg"]
            try fm.copyItem(atPath: TestEnvironment.sample("nordic-dfu.btsnoop"), toPath: captures[0])
            try fm.copyItem(atPath: TestEnvironment.sample("headset-ota.pklg"), toPath: captures[1])
            notCaptures = [path + "/README.md", path + "/notes.json", path + "/sub/plot.py"]
            let texts = ["# Bench logs\n", "{\"firmware\": \"1.2.3\"}\n", "import matplotlib\n"]
            for (file, text) in zip(notCaptures, texts) { _ = fm.createFile(atPath: file, contents: Data(text.utf8)) }
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Each command with what it needs besides its captures.
    static let commands: [[String]] = [
        ["info"], ["timeline", "--codec", "Samples/codecs"], ["gatt"], ["transfers", "--codec", "Samples/codecs"],
        ["ota", "--codec", "Samples/codecs"], ["throughput"], ["adverts"], ["check", "--expect", "Samples/expect/nordic-dfu-ok.yaml"],
        ["report", "--format", "md"], ["iso"],
    ]

    /// `check` fails the headset capture (no Nordic update in it): 1, with both captures checked.
    static func expectedStatus(_ command: [String]) -> Int32 { command[0] == "check" ? 1 : 0 }

    @Test(arguments: commands)
    func aDirectoryIsReadWithItsNotesSkipped(_ command: [String]) throws {
        let folder = try Folder()
        let r = try Blescope.run(command + ["--quiet", folder.path])
        #expect(r.status == Self.expectedStatus(command), "\(command): \(r.stderr)")
        // One line on stderr per file that is not a capture, naming it; nothing else about them.
        let skipped = r.stderr.split(separator: "\n").filter { $0.hasPrefix("blescope: skipped ") }
        #expect(skipped.count == folder.notCaptures.count, "\(command): \(r.stderr)")
        for file in folder.notCaptures { #expect(skipped.contains { $0.contains(file + ": not a capture") }, "\(command): \(file)") }
        #expect(!r.stdout.contains("README.md") && !r.stdout.contains("Cannot read"), "\(command)")
        // Both captures, in path order.
        let first = try #require(r.stdout.range(of: "a-nordic-dfu.btsnoop"), "\(command): \(r.stdout.prefix(300))")
        let second = try #require(r.stdout.range(of: "b-headset-ota.pklg"), "\(command)")
        #expect(first.lowerBound < second.lowerBound, "\(command)")
    }

    @Test(arguments: commands)
    func aQuotedGlobIsExpanded(_ command: [String]) throws {
        let folder = try Folder()
        let r = try Blescope.run(command + ["--quiet", folder.path + "/*.btsnoop"])
        #expect([0, 1].contains(r.status), "\(command): \(r.stderr)")
        #expect(r.stdout.contains("a-nordic-dfu.btsnoop") && !r.stdout.contains("b-headset-ota.pklg"), "\(command)")
        #expect(!r.stderr.contains("skipped"), "\(command): \(r.stderr)")
        let none = try Blescope.run(command + ["--quiet", folder.path + "/*.nothing"])
        #expect(none.status == 2 && none.stderr.contains("pattern matched nothing"), "\(command): \(none.stderr)")
    }

    @Test(arguments: commands)
    func aFileNamedThatIsNotACaptureIsAnError(_ command: [String]) throws {
        let folder = try Folder()
        let r = try Blescope.run(command + ["--quiet", folder.notCaptures[0]])
        #expect(r.status == 2, "\(command): \(r.status) \(r.stderr)")
        #expect(r.stderr.contains("README.md: not a capture"), "\(command): \(r.stderr)")
    }

    /// Several captures read in parallel give, line for line, what each gives alone (JSON: one object per capture, its
    /// `file` first, in input order).
    @Test(arguments: ["gatt", "transfers", "ota", "throughput", "adverts", "iso"])
    func aCaptureAmongSeveralGivesWhatItGivesAlone(_ command: String) throws {
        let folder = try Folder()
        let codecs = command == "adverts" ? [] : ["--codec", "Samples/codecs"]
        let batch = try Blescope.run([command, "--json", "--quiet", "--jobs", "2"] + codecs + [folder.path])
        #expect(batch.status == 0, "\(command): \(batch.stderr)")
        let lines = batch.jsonLines
        #expect(lines.count == folder.captures.count, "\(command): \(batch.stdout.prefix(300))")
        for (line, capture) in zip(lines, folder.captures) {
            #expect(line["file"] as? String == capture, "\(command)")
            let alone = try #require(try Blescope.run([command, "--json", "--quiet"] + codecs + [capture]).json as? [String: Any])
            var tagged = line
            if command != "adverts" { tagged["file"] = nil }  // adverts names its file in both forms
            #expect(NSDictionary(dictionary: tagged).isEqual(to: alone), "\(command) \(capture)")
        }
    }

    @Test func throughputCSVOverSeveralCapturesHasAFileColumn() throws {
        let folder = try Folder()
        let r = try Blescope.run(["throughput", "--csv", "--quiet", folder.path])
        let rows = r.stdout.split(separator: "\n")
        let alone = try Blescope.run(["throughput", "--csv", "--quiet", folder.captures[0]]).stdout.split(separator: "\n")
        #expect(rows.first == "file," + (alone.first ?? ""))
        // The first capture's rows, each after its quoted path.
        for (row, single) in zip(rows.dropFirst(), alone.dropFirst()) { #expect(row == "\"\(folder.captures[0])\"," + single) }
    }
}
