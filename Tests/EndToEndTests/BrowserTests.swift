import BLETestSupport
import Foundation
import Testing

/// The HTML report in a real browser: `scripts/browser_test.py` drives Debian's Chromium through chromium-driver and
/// selenium (installed by `scripts/install-deps.sh`) over the report of the shared 14-connection Android log, or of a
/// Sample without the shared captures. It checks the links chart's bars against the JSON report, clicks the first error
/// and sees its sequence chart and the timeline at its frame, filters by ATT handle and by text (counts from
/// `timeline --format jsonl` and tshark), opens `#frame=N`, and finds no console error and no request leaving the page.
/// Without a browser it skips with a line saying so; CI sets `BLESCOPE_REQUIRE_BROWSER=1`, where that is a failure.
@Suite struct BrowserTests {
    static let required = ProcessInfo.processInfo.environment["BLESCOPE_REQUIRE_BROWSER"] == "1"

    static var capture: String {
        let shared = TestEnvironment.sharedCaptures.map { $0 + "/android-btsnoop_pixel8-pongbot-14conn-prepwrite-indicate.log.last" }
        if let shared, FileManager.default.fileExists(atPath: shared) { return shared }
        return TestEnvironment.sample("diag-supervision-timeout.btsnoop")
    }

    @Test func theReportWorksInChromium() throws {
        let binary = try #require(TestEnvironment.blescopeBinary)
        let shots = NSTemporaryDirectory() + "blescope-browser-\(getpid())"
        let started = Date()
        guard
            let run = TestEnvironment.execute(
                "/usr/bin/env",
                ["python3", "scripts/browser_test.py", "--blescope", binary, "--capture", Self.capture, "--screenshots", shots],
                // This process's environment: python3 may be a pyenv shim that needs HOME and PYENV_*.
                environment: ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1"]) { _, new in new })
        else {
            Issue.record("python3 could not be started")
            return
        }
        if run.status == 3 {
            let why = run.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            if Self.required {
                Issue.record("BLESCOPE_REQUIRE_BROWSER=1 but \(why) (scripts/install-deps.sh installs them)")
            } else {
                print("BrowserTests: skipped: \(why)")
            }
            return
        }
        let failures = run.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL") }
        #expect(run.status == 0 && failures.isEmpty, "\(failures.joined(separator: "\n"))\n\(run.stderr.suffix(2000))")
        // Each check printed its line: the lanes, the click, the filters, #frame=N, the console and the network.
        #expect(run.stdout.split(separator: "\n").filter { $0.hasPrefix("ok: ") }.count >= 12, "\(run.stdout)")
        // About 7 s alone; printed rather than asserted, since the suite's other tests share the cores.
        print("BrowserTests: \(String(format: "%.1f", Date().timeIntervalSince(started))) s; screenshots in \(shots)")
    }
}
