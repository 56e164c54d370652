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
        let analyzer = Analyzer.analyze(capture, options: try analysis.analyzerOptions(timeline: false),
                                        progress: { progress?.update(records: $0, bytes: $1) },
                                        configure: { $0.observers = [GATTUsageTracker()] })
        progress?.finish()
        let usage = analyzer.observers.first as? GATTUsageTracker ?? GATTUsageTracker()
        let report = GATTReport(connections: analyzer.connections, usage: usage)
        let out = OutputStream()
        out.write(json ? report.json + "\n" : report.text(terminal: .standardOutput))
        out.flush()
    }
}
