import ArgumentParser
import BLECore
import BLEReports

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct Blescope: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blescope",
        abstract: "Analyze Bluetooth Low Energy captures (btsnoop, pcap/pcapng, PacketLogger, btsnooz).",
        discussion: """
            Exit codes: 0 success (findings may have been reported); 1 a check failed \
            (`ota` with a failed update, --min-rate or --image; `diff --fail-on` crossed; `codecs check` with an invalid spec); \
            2 bad usage or an input that is not a readable capture. \
            `blescope FILE…` is `blescope diagnose FILE…`.
            """,
        version: BlescopeVersion.text,
        subcommands: [
            Info.self, Timeline.self, Gatt.self, Transfers.self, OTA.self, Throughput.self, Report.self, Adverts.self,
            Diagnose.self, Codecs.self, Convert.self, Check.self, ISO.self, Export.self, Diff.self, Version.self, Bench.self,
        ]
    )

    /// ArgumentParser ends usage errors with EX_USAGE (64); blescope documents 2 for bad usage (README, "Exit
    /// codes"), so those are reported the same way and end with 2. Help and everything else are unchanged.
    static func main() {
        let arguments = withDefaultCommand(Array(CommandLine.arguments.dropFirst()))
        if let message = unknownCommand(arguments) {
            writeStandardError(message)
            Self.exit(withError: Exit.badInput)
        }
        do {
            var command = try parseAsRoot(arguments)
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

extension Blescope {
    /// `blescope capture.log` is `blescope diagnose capture.log`: a first-time user's first try names a file, and the
    /// answer they came for is the diagnosis (corpus batch (7): "unknown command", exit 2, on every capture). Only when
    /// the first word is no command and is a file or reads as a path (a `/` or a `.`, which no command name has: a
    /// missing file is then said to be missing), so a mistyped command is still named as one.
    static func withDefaultCommand(_ arguments: [String]) -> [String] {
        guard let first = arguments.first, !first.hasPrefix("-"), first != "help",
            !configuration.subcommands.contains(where: { $0._commandName == first }),
            access(first, F_OK) == 0 || first.contains("/") || first.contains(".")
        else { return arguments }
        return ["diagnose"] + arguments
    }

    /// `blescope foo x`: "unknown command 'foo'" and the commands with what each does, where ArgumentParser would
    /// say "2 unexpected arguments" (the root takes no argument, so a first word that is no option and no command is
    /// a mistyped command). Nil when the first word is a command, `help` or an option.
    static func unknownCommand(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-"), first != "help" else { return nil }
        var rows: [(name: String, abstract: String)] = []
        for command in configuration.subcommands {
            let name: String = command._commandName
            let abstract: String = command.configuration.abstract
            rows.append((name, abstract))
        }
        if rows.contains(where: { $0.name == first }) { return nil }
        let width = rows.reduce(0) { max($0, $1.name.count) }
        var lines = ["blescope: unknown command '\(first)'", "commands:"]
        for row in rows { lines.append("  " + row.name.padding(to: width + 2) + row.abstract) }
        lines.append("(blescope COMMAND --help for one command's options)")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The documented exit codes (README, "Exit codes").
enum Exit {
    static let checkFailed = ExitCode(1)
    static let badInput = ExitCode(2)
}
