import ArgumentParser
import BLEAnalysis
import BLEReports

struct ISO: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iso",
        abstract: "LE Audio: each CIS and BIS with its parameters and life, the health of its ISO data (SDUs lost, gaps, "
            + "flagged, jitter, bitrate), the ASE states and control-point operations (ASCS), BASS.",
        discussion: """
            Lost SDUs are those never delivered (gaps in the packet sequence numbers) plus those delivered flagged \
            lost; expected SDUs come from the sequence numbers. A verdict line per stream direction says how many of \
            how many were lost, in how many bursts, and where the longest gap was.
            """)

    @Argument(help: "Capture file.")
    var file: String

    @Flag(help: "JSON instead of text (schema: schemas/iso.schema.json).")
    var json = false

    @OptionGroup var analysis: AnalysisOptions

    func run() throws {
        let capture = try openCapture(file)
        let progress = analysis.progress(for: capture)
        let result = CaptureAnalysis.analyze(
            capture, options: try analysis.analyzerOptions(timeline: false), observing: Observing(leAudio: true),
            progress: { progress?.update(records: $0, bytes: $1) })
        progress?.finish()
        let report = ISOReport(iso: result.iso, profiles: result.leAudio)
        let out = OutputStream()
        out.write(json ? report.json() + "\n" : report.text(terminal: .standardOutput))
        out.flush()
    }
}
