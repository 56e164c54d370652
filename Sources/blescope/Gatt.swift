import ArgumentParser
import BLEAnalysis
import BLEReports

struct Gatt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "The GATT database of each connection, rebuilt from discovery, with how each handle was used.")

    @Argument(help: "Capture file.")
    var file: String

    @Flag(help: "JSON instead of text (schema in the README).")
    var json = false

    @OptionGroup var analysis: AnalysisOptions

    func run() throws {
        let capture = try openCapture(file)
        let progress = analysis.progress(for: capture)
        let result = CaptureAnalysis.analyze(
            capture, options: try analysis.analyzerOptions(timeline: false), observing: Observing(gattUsage: true),
            progress: { progress?.update(records: $0, bytes: $1) })
        progress?.finish()
        let report = GATTReport(connections: result.connections, usage: result.gattUsage ?? GATTUsage())
        let out = OutputStream()
        out.write(json ? report.json + "\n" : report.text(terminal: .standardOutput))
        out.flush()
    }
}
