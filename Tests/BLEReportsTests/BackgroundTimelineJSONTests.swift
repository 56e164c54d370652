import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLEReports

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// JSON Lines rendered on a second thread (``BackgroundTimelineJSON``) are byte for byte those rendered inline,
/// for every Sample and shared capture, at any batch size.
@Suite("Timeline JSON Lines on a second thread")
struct BackgroundTimelineJSONTests {
    static let files: [String] = sampleFiles + TestEnvironment.realCaptures

    /// The bytes `body` writes to an ``OutputStream``, read back from a temporary file.
    static func written(_ body: (BLEReports.OutputStream) -> Void) throws -> [UInt8] {
        let file = try #require(tmpfile())
        defer { fclose(file) }
        let out = BLEReports.OutputStream(fd: fileno(file))
        body(out)
        out.flush()
        var bytes: [UInt8] = []
        rewind(file)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while case let n = fread(&chunk, 1, chunk.count, file), n > 0 { bytes += chunk[0..<n] }
        return bytes
    }

    static func timeline(_ path: String, batchSize: Int?) throws -> [UInt8] {
        try written { out in
            guard let capture = try? CaptureFile.open(path: path) else { return }
            var inline = TimelineJSONRenderer()
            let background = batchSize.map { BackgroundTimelineJSON(stream: out, batchSize: $0, maxBatchesInFlight: 2) }
            _ = Analyzer.analyze(
                capture, options: AnalyzerOptions(timeline: true, codecs: CodecRegistry()),
                configure: {
                    $0.onEvent = { e in if let background { background.write(e) } else { inline.write(e, to: out) } }
                })
            background?.finish()
        }
    }

    @Test(arguments: files)
    func sameBytesAsInline(_ path: String) throws {
        let inline = try Self.timeline(path, batchSize: nil)
        for size in [1, 3, 1024] {
            #expect(try Self.timeline(path, batchSize: size) == inline, "\(path) batch \(size)")
        }
    }
}
