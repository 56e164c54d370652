import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReports

/// `blescope adverts FILE… [--json] [--sort rssi|count|name]`: the devices seen advertising.
///
/// Reads HCI LE Advertising Reports and LE Extended Advertising Reports. The table has one line per
/// device (address + type): ADDRESS, TYPE, NAME (names seen, ` / `-separated), RSSI min/avg/max (dBm),
/// COUNT (reports), ADVERTISES (iBeacon/Eddystone, services, manufacturer, appearance, TX power, URI).
/// `--json` prints one object `{"file", "events", "reports", "untrackedReports", "devices": [...],
/// "findings": [...]}`; the device fields are documented on `AdvertsReport` (BLEReports).
/// Exit code 2 when the file is not a readable capture.
struct Adverts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Devices seen advertising: address, names, RSSI, report count, what they advertise.")

    enum Sort: String, ExpressibleByArgument, CaseIterable { case rssi, count, name }

    @Argument(help: capturesHelp)
    var files: [String]

    @Flag(
        help:
            "One JSON object {\"devices\": [...]} (fields documented on AdvertsReport in BLEReports); with several captures one per line."
    )
    var json = false

    @Option(help: "Order: rssi (strongest first), count (most reports first), name.")
    var sort: Sort = .count

    @Flag(help: "No progress on stderr.")
    var quiet = false

    @OptionGroup var keys: KeyOptions

    @OptionGroup var display: DisplayOptions

    @OptionGroup var batch: BatchOptions

    func run() throws {
        let terminal = display.terminal()
        let inputs = captureInputs(files, jobs: batch.effectiveJobs)
        let identities = try keys.keyMaterial().identityKeys
        let order = AdvertsSort(rawValue: sort.rawValue) ?? .count
        let json = self.json
        try runOverCaptures(
            inputs, arguments: files, jobs: batch.effectiveJobs, quiet: quiet, label: "adverts", out: OutputStream(),
            jsonErrors: json, separator: { i, _ in json || i == 0 ? "" : "\n" },
            work: { capture, _, out, progress in
                // The report names its file itself ("file" in JSON).
                let report = AdvertsReport(
                    reading: capture, file: capture.path, resolver: identities.isEmpty ? nil : IdentityResolver(identities),
                    progress: { progress?.update(records: $0, bytes: $1) })
                out.write(json ? report.json(sort: order) : terminal.fit(report.text(terminal: terminal, sort: order)))
            })
    }
}
