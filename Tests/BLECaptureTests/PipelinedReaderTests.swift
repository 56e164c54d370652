import Foundation
import Testing
import BLECore
@testable import BLECapture
import BLETestSupport

/// Reading ahead on a second thread (``PipelinedReader``) hands out exactly the records, offsets, findings and
/// consumed bytes of reading inline, whatever the batch shape, and a reader dropped half-way stops its thread.
@Suite("Read-ahead on a second thread")
struct PipelinedReaderTests {
    struct Read: Equatable {
        var records: [OwnedRecord] = []
        var offsets: [Int64] = []
        var included: [Int] = []
        var findings: [String] = []
        var bytesConsumed: Int64 = 0
    }

    static func read(_ path: String, shape: PipelinedReader.Shape?) throws -> Read {
        let file = try CaptureFile.open(path: path, classicPcapThroughLibpcap: false, readAhead: shape != nil,
                                        shape: shape ?? .init())
        var r = Read()
        while let record = file.next() {
            r.records.append(OwnedRecord(record))
            r.offsets.append(record.fileOffset)
            r.included.append(record.includedLength)
        }
        r.findings = file.findings.map { "\($0)" }
        r.bytesConsumed = file.bytesConsumed
        return r
    }

    static let files: [String] = {
        let samples = (try? FileManager.default.contentsOfDirectory(atPath: TestEnvironment.samplesDirectory)) ?? []
        let shared = TestEnvironment.realCaptures
        return samples.filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".pcap") || $0.hasSuffix(".pklg") }.sorted()
            .map(TestEnvironment.sample) + shared
    }()

    @Test(arguments: files)
    func sameRecordsAsInline(_ path: String) throws {
        let inline = try Self.read(path, shape: nil)
        // One record per batch, batches smaller than most records (each record gets its own arena), and the default.
        for shape in [PipelinedReader.Shape(batches: 2, recordsPerBatch: 1, arenaBytes: 1),
                      PipelinedReader.Shape(batches: 2, recordsPerBatch: 7, arenaBytes: 100),
                      PipelinedReader.Shape()] {
            let ahead = try Self.read(path, shape: shape)
            #expect(ahead == inline, "\(path) \(shape)")
        }
    }

    @Test func droppedHalfWayStopsItsThread() throws {
        guard let path = Self.files.first else { return }
        for _ in 0..<50 {
            let file = try CaptureFile.open(path: path, classicPcapThroughLibpcap: false, readAhead: true,
                                            shape: .init(batches: 2, recordsPerBatch: 3, arenaBytes: 64))
            _ = file.next()
            _ = file.next()
        }  // each deinit waits for its reader thread: a hang here is the failure
    }
}
