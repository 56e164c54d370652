import BLEAnalysis
import BLECapture
import BLECore

extension OTAReport {
    /// Follows the firmware updates of one capture, each told across its connections (``OTAUpdateStory``).
    public static func sessions(
        _ capture: CaptureFile, options: AnalyzerOptions, stallThreshold: Int64 = 200_000,
        progress: ((Int, Int64) -> Void)? = nil
    ) -> [OTASession] {
        CaptureAnalysis.analyze(capture, options: options, observing: Observing(otaStallThreshold: stallThreshold), progress: progress)
            .otaSessions ?? []
    }
}
