import Testing

/// The exit codes the README documents: 2 for bad usage (ArgumentParser's own would be 64), 0 for help.
@Suite struct ExitCodeTests {
    @Test(arguments: [
        ["convert", "Samples/nordic-dfu.btsnoop", "out.unknown"], ["info"], ["timeline", "--bogus", "x"],
        ["ota", "--ltk", "not-a-key", "Samples/nordic-dfu.btsnoop"], ["nosuchcommand"],
    ])
    func badUsageExitsWith2(_ arguments: [String]) throws {
        let r = try Blescope.run(arguments)
        #expect(r.status == 2, "\(arguments): \(r.stderr)")
        #expect(r.stderr.contains("Error:") || r.stderr.contains("blescope:"))
    }

    @Test func helpExitsWith0() throws {
        let r = try Blescope.run(["--help"])
        #expect(r.status == 0 && r.stdout.contains("USAGE: blescope <subcommand>"))
    }
}
