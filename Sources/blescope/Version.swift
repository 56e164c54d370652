import ArgumentParser

/// What `blescope --version` and `blescope version` print: the release and the commit it was built from.
enum BlescopeVersion {
    /// The release number; raise it when a release is tagged.
    static let number = "0.1.0"

    /// `blescope 0.1.0 (commit 1a2b3c4d5e6f)`: the commit comes from the BuildInfo plugin (Plugins/BuildInfo), which
    /// reads it from git when the binary is built (`unknown` outside a git checkout, `-dirty` with uncommitted changes).
    static var text: String { "blescope \(number) (commit \(buildCommit))" }
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the version and the commit blescope was built from (as --version).")

    func run() throws { print(BlescopeVersion.text) }
}
