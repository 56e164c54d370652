import BLEAnalysis
import BLECapture
import BLECore

/// What the log cannot show, said first by every command that reads a capture: the completeness verdict
/// (``CaptureCompleteness``: a cut or corrupt file, payloads the capturer cut, drops, gaps, resets, connections set up
/// before the capture started) of the same pass, with the capture reader's findings. A cut file is never complete.
public struct LogScope: Hashable, Sendable {
    public var completeness: CaptureCompleteness
    /// The first record's time (nil for an empty capture): where `diagnose`'s links over time start.
    public var firstTime: Timestamp?
    /// The frame that gives ``firstTime`` when only the logger's notes come before it (a PacketLogger file opens with
    /// one, stamped earlier: the iPhone radar log's is 14.45 s before its HCI Reset at frame 2); nil when frame 1 does.
    public var originAfterNotes: Int?

    public init(_ completeness: CaptureCompleteness, firstTime: Timestamp? = nil, originAfterNotes: Int? = nil) {
        self.completeness = completeness
        self.firstTime = firstTime
        self.originAfterNotes = originAfterNotes
    }

    /// Items shown by ``textLines(terminal:)`` before `+N more`.
    static let shownItems = 3

    /// One pass of ``CaptureAnalysis/analyze(_:options:observing:progress:onRecord:onEvent:)`` with a
    /// ``CompletenessTracker`` beside it (a few byte reads per record).
    @_optimize(speed)
    public static func analyze(
        _ capture: CaptureFile, options: AnalyzerOptions, observing: Observing = .nothing,
        progress: ((Int, Int64) -> Void)? = nil, onEvent: ((__owned TimelineEvent, AnalysisPass) -> Void)? = nil
    ) -> (CaptureAnalysis, LogScope) {
        var scope = ScopeTracker()
        let analysis = CaptureAnalysis.analyze(
            capture, options: options, observing: observing, progress: progress, onRecord: { scope.add($0) }, onEvent: onEvent)
        var completeness = scope.tracker.result(format: capture.format.name, readerFindings: capture.findings)
        completeness.add(analysisFindings: analysis.findings)
        return (analysis, LogScope(completeness, firstTime: scope.firstTime, originAfterNotes: scope.originAfterNotes))
    }

    /// ``analyze(_:options:observing:progress:onEvent:)``'s per-record work. A method, not the closure's body: a closure
    /// does not take its function's `@_optimize(speed)`, and BLEReports is compiled for size (docs/performance.md#size).
    private struct ScopeTracker {
        var tracker = CompletenessTracker()
        var firstTime: Timestamp?
        var firstIsNote = false
        var originAfterNotes: Int?

        @_optimize(speed)
        mutating func add(_ record: CaptureRecord) {
            tracker.add(record)
            // Notes are not records in time (CaptureStatistics.firstTimestamp): the first other record starts it.
            if firstTime == nil || firstIsNote && record.kind != .text {
                if firstIsNote { originAfterNotes = record.frame }
                firstTime = record.timestamp
                firstIsNote = record.kind == .text
            }
        }
    }

    /// Nothing when the log shows every record whole; else `Log: incomplete` and its items, the worst first, each
    /// with its frame: the first lines of a text output.
    public func textLines(terminal: Terminal) -> [String] {
        let items = completeness.items.enumerated().sorted { ($0.element.severity, -$0.offset) > ($1.element.severity, -$1.offset) }
            .map(\.element)
        guard !items.isEmpty else { return [] }
        var lines = [terminal.paint("Log:", .bold) + " " + completeness.verdict]
        for item in items.prefix(Self.shownItems) {
            let mark = item.severity >= .warning ? terminal.paint("!", .yellow) : "-"
            // The frame, unless the message already names it.
            let frame = item.frame.flatMap { item.message.contains("\($0)") ? nil : " (frame \($0))" } ?? ""
            lines.append("  \(mark) " + item.message + frame)
        }
        if items.count > Self.shownItems { lines.append("  + \(items.count - Self.shownItems) more: blescope info") }
        return lines.map { terminal.fit($0) }
    }

    /// ``textLines(terminal:)`` as text ending in a blank line, or nothing.
    public func text(terminal: Terminal) -> String {
        let lines = textLines(terminal: terminal)
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n\n"
    }
}
