import BLEAnalysis
import BLETestSupport

/// The analyzer over a built capture, with the timeline events it emitted (AnalyzerTests and the tests beside it).
package enum AnalyzerRun {
    package static func analyze(
        _ b: CaptureBuilder, options: AnalyzerOptions = AnalyzerOptions(),
        observers: [any AttributeValueObserver] = []
    ) throws -> (Analyzer, [TimelineEvent]) {
        var events: [TimelineEvent] = []
        let analyzer = Analyzer.analyze(
            try b.captureFile(), options: options,
            configure: {
                $0.onEvent = { events.append($0) }
                $0.observers = observers
            })
        return (analyzer, events)
    }

    package static func att(_ events: [TimelineEvent]) -> [TimelineEvent] { events.filter { $0.layer == .att } }
}
