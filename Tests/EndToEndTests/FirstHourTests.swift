import BLETestSupport
import Foundation
import Testing

/// What a new user meets first: `--version`, the shell completions and the manual, `report` typed at a terminal, and
/// `--codec` given a folder of specs.
@Suite struct FirstHourTests {
    /// Runs blescope with a terminal as its standard output (and error), through python3's pty module.
    static func runOnTerminal(_ arguments: [String], directory: String) throws -> (output: String, status: Int32) {
        let binary = try #require(TestEnvironment.blescopeBinary)
        let script = """
            import os, pty, sys
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            out = b""
            while True:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    break
                if not data:
                    break
                out += data
            _, status = os.waitpid(pid, 0)
            sys.stdout.buffer.write(out)
            sys.exit(os.WEXITSTATUS(status))
            """
        let r = try #require(
            TestEnvironment.execute("/usr/bin/env", ["python3", "-c", script, binary] + arguments, directory: directory))
        return (r.stdout, r.status)
    }

    static func temporaryDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "blescope-first-hour-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func versionNamesTheCommitItWasBuiltFrom() throws {
        let flag = try Blescope.run(["--version"])
        let command = try Blescope.run(["version"])
        #expect(flag.status == 0 && command.status == 0)
        #expect(flag.stdout == command.stdout)
        let text = flag.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = text.split(separator: " ")
        #expect(parts.count == 4 && parts[0] == "blescope" && parts[2] == "(commit")
        #expect(parts[1].split(separator: ".").count == 3 && parts[1].split(separator: ".").allSatisfy { Int($0) != nil })
        let commit = String(parts[3].dropLast())  // ")"
        // In a git checkout it is HEAD's (12 hex digits, `-dirty` when files differ); elsewhere `unknown`.
        let head = TestEnvironment.execute("/usr/bin/env", ["git", "rev-parse", "--short=12", "HEAD"])
        if let head, head.status == 0 {
            #expect(commit.hasPrefix(head.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(commit)")
        } else {
            #expect(commit == "unknown")
        }
    }

    /// The user-facing commands (`blescope --help` lists them; the hidden developer one, `bench`, is left out).
    static let commands = [
        "info", "timeline", "gatt", "transfers", "ota", "throughput", "report", "adverts", "codecs", "convert", "check", "version",
    ]

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsKnowEveryCommand(_ shell: String) throws {
        let r = try Blescope.run(["--generate-completion-script", shell])
        #expect(r.status == 0 && r.stdout.count > 1000)
        for c in Self.commands { #expect(r.stdout.contains(c), "\(shell) completion lacks \(c)") }
        // Options new in this version are there too.
        #expect(r.stdout.contains("units") && r.stdout.contains("wide"))
        if shell == "bash", FileManager.default.isExecutableFile(atPath: "/bin/bash") {
            let check = TestEnvironment.execute("/bin/bash", ["-n", "-c", r.stdout])
            #expect(check?.status == 0, "bash -n: \(check?.stderr ?? "")")
        }
    }

    /// The manual is generated from the command definitions by swift-argument-parser's `generate-manual` (what
    /// scripts/install.sh installs). CI builds the tool (`.ci/run`, BLESCOPE_REQUIRE_MANUAL=1); elsewhere the test is
    /// skipped when the tool was not built (`swift build --product generate-manual`).
    @Test func theManualCoversEveryCommandAndOption() throws {
        let binary = try #require(TestEnvironment.blescopeBinary)
        let tool = (binary as NSString).deletingLastPathComponent + "/generate-manual"
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            if ProcessInfo.processInfo.environment["BLESCOPE_REQUIRE_MANUAL"] == "1" {
                Issue.record("no \(tool): swift build --product generate-manual")
            } else {
                print("FirstHourTests: manual not checked, no \(tool) (swift build --product generate-manual)")
            }
            return
        }
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try #require(TestEnvironment.execute(tool, [binary, "--output-directory", dir]))
        #expect(r.status == 0, "\(r.stderr)")
        let page = try String(contentsOfFile: dir + "/blescope.1", encoding: .utf8)
        #expect(page.contains(".Dt BLESCOPE 1") || page.contains(".TH BLESCOPE 1"))
        for c in Self.commands { #expect(page.contains(c), "the manual lacks \(c)") }
        for option in ["min-rate", "units", "wide", "codec", "jobs"] { #expect(page.contains(option), "the manual lacks --\(option)") }
    }

    /// At a terminal, `report FILE` writes FILE's name with .html beside it and says so; with several inputs it asks for -o.
    @Test func reportAtATerminalWritesBesideItsInput() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: TestEnvironment.sample("nordic-dfu.btsnoop"), toPath: dir + "/bench-run.btsnoop")
        let r = try Self.runOnTerminal(["report", "--quiet", "bench-run.btsnoop"], directory: dir)
        #expect(r.status == 0, "\(r.output)")
        let html = try #require(FileManager.default.contents(atPath: dir + "/bench-run.html"), "\(r.output)")
        #expect(String(decoding: html, as: UTF8.self).hasPrefix("<!DOCTYPE html>"))
        #expect(r.output.contains("wrote bench-run.html") && !r.output.contains("<html"))
        let md = try Self.runOnTerminal(["report", "--format", "md", "--quiet", "bench-run.btsnoop"], directory: dir)
        #expect(md.status == 0 && FileManager.default.fileExists(atPath: dir + "/bench-run.md"), "\(md.output)")
        let two = try Self.runOnTerminal(["report", "bench-run.btsnoop", "bench-run.btsnoop"], directory: dir)
        #expect(two.status == 2 && two.output.contains("give -o"), "\(two.output)")
        // Piped, it still writes to standard output.
        let piped = try Blescope.run(["report", "--quiet", dir + "/bench-run.btsnoop"])
        #expect(piped.status == 0 && piped.stdout.hasPrefix("<!DOCTYPE html>"))
    }

    /// The names of the specs under Samples/codecs, read from their files (`codec: NAME`), by file.
    static func specNames() throws -> [String: String] {
        var names: [String: String] = [:]
        let root = TestEnvironment.sample("codecs")
        let files = try #require(FileManager.default.enumerator(atPath: root)).compactMap { $0 as? String }
        for file in files where file.hasSuffix(".yaml") {
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("codec:") })
            names[file] = line.dropFirst("codec:".count).trimmingCharacters(in: .whitespaces)
        }
        return names
    }

    /// `--codec DIR` reads the specs below DIR too: the vendor OTA, whose spec is two levels down, is followed.
    @Test func codecFoldersAreReadRecursively() throws {
        let truth = try Blescope.truth("vendor-ota")
        let r = try Blescope.run(["ota", "--json", "--quiet", "--codec", "Samples/codecs", "Samples/vendor-ota.btsnoop"])
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1 && sessions.first?["result"] as? String == "success", "\(r.stdout.prefix(300))")
        let image = try #require(truth["image"] as? [String: Any])
        #expect(sessions.first?["image_sha256"] as? String == image["sha256"] as? String)
    }

    /// `--verbose` lists every spec loaded (each name as its file says), and a spec that decoded nothing is named.
    @Test func loadedAndUnusedSpecsAreSaid() throws {
        let names = try Self.specNames()
        #expect(names.count >= 6)
        let r = try Blescope.run(["ota", "--verbose", "--codec", "Samples/codecs", "Samples/headset-ota.pklg"])
        let listed = r.stderr.split(separator: "\n").filter { $0.hasPrefix("blescope: codec ") }
        #expect(Set(listed.compactMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) }) == Set(names.values))
        // The headset's spec decodes its traffic; every other spec matches nothing in it.
        let headset = try #require(names["headset.yaml"])
        let notes = GoldenTruthTests.unwrapped(r.stderr).split(separator: "\n")  // fitted to 100 columns like the rest
        let unused = try #require(notes.first { $0.contains("matched nothing in this capture") }, "\(r.stderr)")
        let said = Set(unused.split(separator: ":").last!.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(said == Set(names.values).subtracting([headset]), "\(unused)")
        // Nothing said with --quiet.
        let quiet = try Blescope.run(["ota", "--quiet", "--codec", "Samples/codecs", "Samples/headset-ota.pklg"])
        #expect(!quiet.stderr.contains("matched nothing"))
    }
}
