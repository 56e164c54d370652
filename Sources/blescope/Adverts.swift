import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReports

/// `blescope adverts FILE [--json] [--sort rssi|count|name]`: the devices seen advertising.
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

    @Argument(help: "Capture file.")
    var file: String

    @Flag(help: "One JSON object {\"devices\": [...]} (fields documented on AdvertsReport in BLEReports).")
    var json = false

    @Option(help: "Order: rssi (strongest first), count (most reports first), name.")
    var sort: Sort = .count

    @Flag(help: "No progress on stderr.")
    var quiet = false

    @OptionGroup var keys: KeyOptions

    func run() throws {
        let capture = try openCapture(file)
        let progress = quiet ? nil : ProgressReporter(label: capture.path, totalBytes: capture.fileSize)
        let identities = try keys.keyMaterial().identityKeys
        let report = AdvertsReport(
            reading: capture, file: file, resolver: identities.isEmpty ? nil : IdentityResolver(identities),
            progress: { progress?.update(records: $0, bytes: $1) })
        progress?.finish()
        let order = AdvertsSort(rawValue: sort.rawValue) ?? .count
        let out = OutputStream()
        out.write(json ? report.json(sort: order) : report.text(terminal: .standardOutput, sort: order))
        out.flush()
    }
}
