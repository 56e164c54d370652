import ArgumentParser

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
        subcommands: [Info.self, Timeline.self, Gatt.self, Transfers.self, OTA.self, Throughput.self, Report.self, Adverts.self,
                      Codecs.self, Convert.self, Check.self, Bench.self]
    )
}

/// The documented exit codes (README, "Exit codes").
enum Exit {
    static let checkFailed = ExitCode(1)
    static let badInput = ExitCode(2)
}
