import BLEAnalysis
import BLECapture
import BLECore

/// `blescope ota` over one or more captures: each capture's firmware updates followed (``OTAReport/sessions``),
/// rendered, their images written out, and the gate (``OTAGate``) applied.
///
/// The command parses options into one of these and calls ``run(_:jobs:out:progress:)``; the work per capture is
/// ``check(_:progress:)``.
public struct OTARun: Sendable {
    public var analyzerOptions: AnalyzerOptions
    /// Gaps longer than this are stalls (µs, ``OTATracker/stallThreshold``).
    public var stallThreshold: Int64
    public var gate: OTAGate
    /// `{"sessions": [...]}` per capture (``OTAReport/json(_:file:)``) instead of text.
    public var json: Bool
    /// Write each reconstructed image to this directory (``imageFileName(_:capture:several:)``).
    public var extractDirectory: String?
    public var terminal: Terminal
    /// A progress line on standard error while a capture is read (when it is a terminal).
    public var showProgress: Bool

    public init(
        analyzerOptions: AnalyzerOptions, stallThreshold: Int64 = 200_000, gate: OTAGate = OTAGate(), json: Bool = false,
        extractDirectory: String? = nil, terminal: Terminal = Terminal(colors: false), showProgress: Bool = false
    ) {
        self.analyzerOptions = analyzerOptions
        self.stallThreshold = stallThreshold
        self.gate = gate
        self.json = json
        self.extractDirectory = extractDirectory
        self.terminal = terminal
        self.showProgress = showProgress
    }

    /// One capture's updates and what the gate says of them (empty `failures`: it passes).
    public struct CaptureResult: Sendable {
        public var sessions: [OTASession]
        public var failures: [OTAGate.Failure]
        /// What the capture cannot show (said before the sessions).
        public var log: LogScope
    }

    /// How a run over several captures went: captures that could not be read (or whose images could not be written),
    /// and captures that failed the gate.
    public struct Outcome: Sendable {
        public var unreadable: Int
        public var failing: Int
    }

    /// Follows the updates of one capture and applies the gate.
    public func check(_ capture: CaptureFile, progress: ((Int, Int64) -> Void)? = nil) -> CaptureResult {
        let (analysis, log) = LogScope.analyze(
            capture, options: analyzerOptions, observing: Observing(otaStallThreshold: stallThreshold), progress: progress)
        let sessions = analysis.otaSessions ?? []
        return CaptureResult(sessions: sessions, failures: gate.failures(sessions), log: log)
    }

    /// Every capture in `paths` (in parallel with `jobs` workers), output in input order on `out`; failures of the gate
    /// and unwritable images on standard error, each after its capture's output. `several` (the input named several
    /// captures: ``CaptureInputs/isBatch``) tags each capture's output and image files with its path.
    public func run(_ paths: [String], several: Bool, jobs: Int, out: OutputStream, progress: FilesProgress? = nil) -> Outcome {
        if let extractDirectory { BinaryFile.makeDirectory(extractDirectory) }
        let failing = Locked(0)
        let unreadable = BatchRunner.forEachCapture(
            paths, jobs: several ? jobs : 1, out: out, progress: progress, jsonErrors: json && several
        ) { i, path, capture, out in
            let reporter = showProgress ? ProgressReporter(label: path, totalBytes: capture.fileSize) : nil
            let result = check(capture, progress: { reporter?.update(records: $0, bytes: $1) })
            reporter?.finish()
            write(result, of: path, index: i, several: several, to: out)
            var messages: [String] = []
            if let extractDirectory {
                for s in result.sessions where !s.image.isEmpty {
                    let file = extractDirectory + "/" + OTARun.imageFileName(s, capture: path, several: several)
                    if !BinaryFile.write(file, s.image) { messages.append("blescope: cannot write \(file)\n") }
                }
            }
            let wrote = messages.isEmpty
            if !result.failures.isEmpty { failing.withLock { $0 += 1 } }
            for f in result.failures { messages.append("blescope: check failed: \(several ? path + ": " : "")\(f.text)\n") }
            return .init(ok: wrote, message: messages.isEmpty ? nil : messages.joined())
        }
        return Outcome(unreadable: unreadable, failing: failing.withLock { $0 })
    }

    /// One capture's part of the output: its JSON line, or its text (headed by the path over several captures) with
    /// the image comparison of each session when an image is expected.
    func write(_ result: CaptureResult, of path: String, index: Int, several: Bool, to out: OutputStream) {
        if json {
            out.write(OTAReport.json(result.sessions, file: several ? path : nil, log: result.log) + "\n")
            return
        }
        if several {
            out.write(
                (index > 0 ? "\n" : "") + terminal.paint("== " + terminal.shorten(path, to: max(20, (terminal.width ?? 0) - 3)), .bold)
                    + "\n")
        }
        out.write(result.log.text(terminal: terminal))
        out.write(terminal.fit(OTAReport.text(result.sessions, terminal: terminal)))
        if let expected = gate.expectedImage {
            for s in result.sessions {
                let line =
                    "image check, session on connection #\(s.connectionNumber) (\(s.protocolName.rawValue)): \(s.compare(expected: expected))"
                out.write(terminal.fit(line) + "\n")
            }
        }
    }

    /// `conn3-nordic-secure-dfu-120.bin`; over several captures prefixed with the capture's stem (`dir/name.btsnoop` →
    /// `name-`) so their images are told apart.
    public static func imageFileName(_ s: OTASession, capture path: String, several: Bool) -> String {
        var prefix = ""
        if several {
            let name = path.split(separator: "/").last.map(String.init) ?? path
            prefix = (name.split(separator: ".").first.map(String.init) ?? name) + "-"
        }
        return "\(prefix)conn\(s.connectionNumber)-\(s.protocolName.rawValue)-\(s.startFrame).bin"
    }
}
