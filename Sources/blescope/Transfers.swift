import ArgumentParser
import BLEAnalysis
import BLECore
import BLEReports

struct Transfers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reassemble chunked messages (BTLE Transfer EOM framing, codec roles, MCUmgr SMP) and check they arrived whole.")

    @Argument(help: "Capture file.")
    var file: String

    @Flag(help: "JSON: {\"transfers\": [...]} (schema in the README).")
    var json = false

    @Option(help: "Write each reassembled message to this directory (conn<N>-handle<H>-<first frame>.bin).")
    var extract: String?

    @Option(help: "End-of-message marker: text (EOM) or hex (0x454f4d).")
    var terminator: String?

    @Option(help: "Only this characteristic UUID (repeatable; default: the Apple BTLE Transfer characteristic plus auto-detection).")
    var uuid: [String] = []

    @Option(help: "Only this attribute handle (repeatable).")
    var handle: [String] = []

    @Option(help: "Only values going this way: tx (sent by the capturing side) or rx.")
    var direction: String?

    @OptionGroup var analysis: AnalysisOptions

    func transferOptions() throws -> TransferOptions {
        var o = TransferOptions()
        if let terminator {
            guard let t = TransferOptions.terminator(parsing: terminator) else {
                throw ValidationError("--terminator '\(terminator)': give text or 0x-prefixed hex")
            }
            o.terminator = t
        }
        if !uuid.isEmpty {
            o.characteristics = []
            for u in uuid {
                guard let v = BluetoothUUID(u) else { throw ValidationError("--uuid '\(u)' is not a UUID") }
                o.characteristics.insert(v)
            }
            o.autoDetect = false
        }
        for h in handle {
            guard let v = parseInteger16(h) else { throw ValidationError("--handle '\(h)' is not an attribute handle") }
            o.handles.insert(v)
            o.autoDetect = false
        }
        if let direction {
            switch direction {
            case "tx": o.direction = .tx
            case "rx": o.direction = .rx
            default: throw ValidationError("--direction: tx or rx")
            }
        }
        return o
    }

    func validate() throws { _ = try transferOptions() }

    func run() throws {
        let capture = try openCapture(file)
        let options = try transferOptions()
        let progress = analysis.progress(for: capture)
        let result = CaptureAnalysis.analyze(
            capture, options: try analysis.analyzerOptions(timeline: false),
            observing: Observing(transfers: options),
            progress: { progress?.update(records: $0, bytes: $1) })
        progress?.finish()
        let (transfers, transferFindings) = result.transfers ?? ([], [])
        let findings = capture.findings + result.findings + transferFindings
        let out = OutputStream()
        out.write(
            json
                ? TransfersReport.json(transfers, findings: findings) + "\n"
                : TransfersReport.text(transfers, findings: findings, terminal: .standardOutput))
        out.flush()
        if let extract {
            BinaryFile.makeDirectory(extract)
            for t in transfers {
                let path = "\(extract)/conn\(t.connectionNumber)-handle\(hex(t.handle, width: 4))-\(t.firstFrame).bin"
                guard BinaryFile.write(path, t.data) else {
                    writeStandardError("blescope: cannot write \(path)\n")
                    throw Exit.badInput
                }
            }
            writeStandardError("blescope: wrote \(transfers.count) message(s) to \(extract)\n")
        }
    }
}
