import BLEAnalysis
import BLECapture
import BLECore

extension OTAReport {
    /// Follows the firmware updates of one capture, each told across its connections (``OTAUpdateStory``).
    public static func sessions(_ capture: CaptureFile, options: AnalyzerOptions, stallThreshold: Int64 = 200_000,
                                progress: ((Int, Int64) -> Void)? = nil) -> [OTASession] {
        let analyzer = Analyzer.analyze(capture, options: options, progress: progress,
                                        configure: { $0.observers = [OTATracker(stallThreshold: stallThreshold)] })
        return OTAUpdateStory.link((analyzer.observers.first as? OTATracker)?.sessions ?? [], connections: analyzer.connections)
    }
}
