import BLETestSupport
import Foundation
import Testing

/// `diagnose --json` of a shared capture, read as the story and the findings (nil, with a line saying so, when the
/// capture is not on this machine).
struct DiagnoseOutput {
    struct Sentence {
        var topic: String
        var text: String
        var frames: [Int]
    }
    struct Finding {
        var rule: String
        var severity: String
        var frames: [Int]
        var occurrences: [Int]
        var message: String
        var serious: Bool { severity == "error" || severity == "critical" }
        var atLeastWarning: Bool { severity != "info" }
    }
    var story: [Sentence]
    var findings: [Finding]
    var text: String

    static func of(_ capture: String) throws -> DiagnoseOutput? {
        guard let dir = TestEnvironment.sharedCaptures, FileManager.default.fileExists(atPath: dir + "/" + capture) else {
            print("skip: ../shared/captures/\(capture) is not on this machine")
            return nil
        }
        let path = dir + "/" + capture
        let json = try #require(try Blescope.run(["diagnose", "--json", path]).jsonLines.first)
        let story = try #require(json["story"] as? [[String: Any]]).map {
            Sentence(topic: $0["topic"] as? String ?? "", text: $0["text"] as? String ?? "", frames: $0["frames"] as? [Int] ?? [])
        }
        let findings = try #require(json["findings"] as? [[String: Any]]).map {
            Finding(
                rule: $0["rule"] as? String ?? "", severity: $0["severity"] as? String ?? "", frames: $0["frames"] as? [Int] ?? [],
                occurrences: $0["occurrences"] as? [Int] ?? [], message: $0["message"] as? String ?? "")
        }
        let text = try Blescope.run(["diagnose", path]).stdout
        return DiagnoseOutput(story: story, findings: findings, text: text)
    }

    /// The sentence of `topic` that contains every one of `parts`.
    func sentence(_ topic: String, containing parts: [String]) -> Sentence? {
        story.first { s in s.topic == topic && parts.allSatisfy { s.text.contains($0) } }
    }

    /// The findings of `rule`.
    func findings(_ rule: String) -> [Finding] { findings.filter { $0.rule == rule } }

    /// Every deciding frame of the findings at warning or above.
    var alarmingFrames: Set<Int> { Set(findings.filter(\.atLeastWarning).flatMap(\.occurrences)) }
}

/// The story on top of `diagnose` (``Story``), held to what tshark shows on the pongbot log: 14 LE links to 4
/// peripherals and how each ended, 35 cancelled attempts, 229 BR/EDR pages that all timed out.
@Suite struct StoryTests {
    static let pongbot = "android-btsnoop_pixel8-pongbot-14conn-prepwrite-indicate.log.last"

    /// tshark -r F -Y 'bthci_evt.le_meta_subevent==0x0a && bthci_evt.status==0' -T fields -e frame.number -e bthci_evt.bd_addr
    static let leConnected = [261, 439, 563, 1085, 5753, 5823, 5917, 6044, 6088, 6273, 6485, 6531, 7300, 7396]
    /// tshark -r F -Y 'bthci_evt.code==0x05' -T fields -e frame.number -e bthci_evt.reason: 0x08, 0x3e, 0x16.
    static let supervisionTimeouts = [1558, 5697, 5853, 6257, 6459, 7283]
    static let failedToEstablish = [5772, 5842, 6071, 6504, 7317]
    static let closedAtPowerOff = [8007, 8009, 8015]

    @Test func pongbotLinksPerPeerAndHowEachEnded() throws {
        guard let out = try DiagnoseOutput.of(Self.pongbot) else { return }
        let links = try #require(
            out.sentence(
                "links",
                containing: [
                    "14 LE links to 4 peripherals", "C5:34:18:42:4C:43 ×6", "5C:B2:60:06:49:73 ×5", "74:B8:39:DF:CE:4A ×2",
                    "14:32:38:31:47:34 ×1", "6 lost by supervision timeout (0x08)", "5 failed to be established (0x3E)",
                    "3 closed by this side (power off)",
                ]), "\(out.story.map(\.text))")
        let cited = Set(links.frames)
        #expect(cited.isSuperset(of: Self.leConnected + Self.supervisionTimeouts + Self.failedToEstablish + Self.closedAtPowerOff))
        // tshark: 35 LE Create Connection Cancel (0x200e), 35 LE Enhanced Connection Complete with status 0x02.
        let attempts = try #require(out.sentence("links", containing: ["35 LE connection attempts", "35 cancelled by this side"]))
        #expect(attempts.frames.count == 35 && attempts.frames.contains(204) && attempts.frames.contains(7962))
    }

    /// tshark -r F -Y 'bthci_evt.code==0x03' -T fields -e frame.number -e bthci_evt.status -e bthci_evt.bd_addr: 229
    /// Connection Complete, all 0x04; d8:80:3c:e8:72:69 199 (367 … 7876), 30:95:e3:b8:69:8c 30 (399 … 7337).
    @Test func pongbotPagesOnBREDRAreTold() throws {
        guard let out = try DiagnoseOutput.of(Self.pongbot) else { return }
        let classic = try #require(
            out.sentence(
                "classic",
                containing: [
                    "229 BR/EDR connection attempts to 2 devices failed, all Page Timeout (0x04)", "D8:80:3C:E8:72:69 ×199",
                    "30:95:E3:B8:69:8C ×30",
                ]), "\(out.story.map(\.text))")
        #expect(classic.frames.count == 229 && classic.frames.first == 367 && classic.frames.last == 7876)
    }

    /// BR-01: one folded finding per paged device, with tshark's count, first and last frame, and the Create Connection
    /// that paged it first (tshark -r F -Y 'bthci_cmd.opcode==0x0405' -T fields -e frame.number -e bthci_cmd.bd_addr:
    /// 199 to d8:80:3c:e8:72:69 from 197, 30 to 30:95:e3:b8:69:8c from 368).
    @Test func pongbotPageTimeoutsAreOneFindingPerDevice() throws {
        guard let out = try DiagnoseOutput.of(Self.pongbot) else { return }
        let pages = out.findings("BR-01")
        #expect(pages.count == 2)
        for (device, count, first, last, create) in [("D8:80:3C:E8:72:69", 199, 367, 7876, 197), ("30:95:E3:B8:69:8C", 30, 399, 7337, 368)]
        {
            let f = try #require(pages.first { $0.message.contains(device) })
            #expect(f.occurrences.count == count && f.occurrences.first == first && f.occurrences.last == last)
            #expect(f.severity == "warning" && f.frames.contains(create))
            #expect(f.message.contains("\(count) times, frames \(first)–\(last)") && f.message.contains("Create Connection \(count) times"))
        }
    }

    /// The first 25 lines at 100 columns hold the story and the most important finding's first line; no line is wider.
    @Test func pongbotFirstScreen() throws {
        guard let out = try DiagnoseOutput.of(Self.pongbot) else { return }
        let lines = out.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.allSatisfy { $0.count <= 100 })
        let screen = lines.prefix(25)
        #expect(screen.contains("Story:"))
        let first = try #require(out.findings.first)
        #expect(screen.contains { $0.hasPrefix(first.severity.uppercased()) && $0.contains(first.rule) })
        let storyEnd = try #require(screen.firstIndex(of: "Story:")) + 1
        let told = screen[storyEnd...].prefix { $0.hasPrefix("  ") }.joined(separator: " ")
        for s in out.story { #expect(told.contains(String(s.text.prefix(30))), "\(s.text)") }
    }
}
