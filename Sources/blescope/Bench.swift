import ArgumentParser
import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEReports

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Measures a pass over a capture: records/s and peak RSS. `scripts/bench.sh` drives it.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Benchmark a pass over a capture (records/s, peak memory).", shouldDisplay: false)

    enum Pass: String, ExpressibleByArgument, CaseIterable {
        /// Walk the records only.
        case read
        /// `blescope info`.
        case info
        /// Full decode (HCI, L2CAP, ATT, GATT, per-connection statistics), no per-record output.
        case decode
        /// The decode, sampling the bytes held for unfinished work every 16,384 records (`limit.held-bytes`).
        case held
        /// `timeline --format jsonl`, written to a discarded buffer.
        case timeline
    }

    @Argument(help: "Capture file (generate one with ../shared/tools/make_big_capture.py).")
    var file: String

    @Option(help: "What to run: \(Pass.allCases.map(\.rawValue).joined(separator: ", ")).")
    var pass: Pass = .info

    @Option(name: .customLong("repeat"), help: "Repetitions (the best is reported).")
    var repetitions: Int = 1

    @OptionGroup var keys: KeyOptions

    func run() throws {
        var best = Double.infinity
        var records = 0
        var extra = ""
        for _ in 0..<max(1, repetitions) {
            let capture: CaptureFile
            do { capture = try CaptureFile.open(path: file) } catch {
                writeStandardError("blescope: \(error)\n")
                throw Exit.badInput
            }
            let start = ProgressReporter.nowNanoseconds()
            switch pass {
            case .read:
                var n = 0
                var bytes = 0
                while let r = capture.next() { n += 1; bytes &+= r.bytes.count }
                records = n
                if bytes == -1 { print(bytes) }  // keep the loop observable
            case .info:
                let info = CaptureInfo(reading: capture)
                records = info.statistics.records
            case .decode:
                let analyzer = Analyzer.analyze(capture, options: AnalyzerOptions(timeline: false, keys: try keys.keyMaterial()))
                records = analyzer.counters.records
            case .held:
                let analyzer = Analyzer(options: AnalyzerOptions(timeline: false))
                var heldMax = 0
                while let record = capture.next() {
                    analyzer.process(record)
                    if record.frame & 0x3FFF == 0 { heldMax = max(heldMax, analyzer.heldBytes) }
                }
                analyzer.finish()
                records = analyzer.counters.records
                extra =
                    " held_max_mib=\(String(fractionDigits: 1, Double(heldMax) / 1_048_576)) held_sheds=\(analyzer.heldBytesSheds)"
                    + " held_dropped_mib=\(String(fractionDigits: 1, Double(analyzer.heldBytesDropped) / 1_048_576))"
            case .timeline:
                // Exactly what `timeline --format jsonl > /dev/null` does.
                var renderer = TimelineJSONRenderer()
                let sink = OutputStream(fd: open("/dev/null", O_WRONLY))
                let background = BackgroundTimelineJSON.pays ? BackgroundTimelineJSON(stream: sink) : nil
                let analyzer = Analyzer.analyze(
                    capture, options: AnalyzerOptions(timeline: true, codecs: CodecRegistry()),
                    configure: {
                        $0.onEvent = { e in if let background { background.write(e) } else { renderer.writeBuffered(e, to: sink) } }
                    })
                background?.finish()
                renderer.flush(to: sink)
                sink.flush()
                records = analyzer.counters.records
            }
            best = min(best, Double(ProgressReporter.nowNanoseconds() - start) / 1e9)
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let rate = Double(records) / best
        print(
            "pass=\(pass.rawValue) records=\(records) seconds=\(String(fractionDigits: 3, best)) "
                + "records_per_s=\(Int(rate)) peak_rss_mib=\(String(fractionDigits: 1, Double(usage.ru_maxrss) / 1024))" + extra)
    }
}
