import ArgumentParser
import BLEReports

@main
struct Blescope: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blescope",
        abstract: "Analyze Bluetooth Low Energy captures (btsnoop, pcap/pcapng, PacketLogger, btsnooz).",
        discussion: """
            Exit codes: 0 success (findings may have been reported); 1 a check failed \
            (`ota` with a failed update, --min-rate or --image; `codecs check` with an invalid spec); \
            2 bad usage or an input that is not a readable capture.
            """,
        version: BlescopeVersion.text,
        subcommands: [
            Info.self, Timeline.self, Gatt.self, Transfers.self, OTA.self, Throughput.self, Report.self, Adverts.self,
            Diagnose.self, Codecs.self, Convert.self, Check.self, ISO.self, Export.self, Version.self, Bench.self,
        ]
    )

    /// ArgumentParser ends usage errors with EX_USAGE (64); blescope documents 2 for bad usage (README, "Exit
    /// codes"), so those are reported the same way and end with 2. Help and everything else are unchanged.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                writeStandardError(fullMessage(for: error) + "\n")
                Self.exit(withError: Exit.badInput)
            }
            Self.exit(withError: error)
        }
    }
}

/// The documented exit codes (README, "Exit codes").
enum Exit {
    static let checkFailed = ExitCode(1)
    static let badInput = ExitCode(2)
}
