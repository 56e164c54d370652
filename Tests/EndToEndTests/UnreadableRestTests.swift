import BLECapture
import BLETestSupport
import Foundation
import Testing

/// A file the reader cannot read past a point (a record whose kept length exceeds its original length): the verdict
/// says what it covers. Nothing found in the records read is no answer for the rest, and a file of which not one record
/// could be read cannot tell anything (the mis-framed btsnoop of the corpus: 252 kB, record 1 unreadable at byte 16).
@Suite struct UnreadableRestTests {
    /// A btsnoop of `records`, then a record header keeping 5 bytes of 4 (big-endian, as btsnoop is) and its 5 bytes.
    static func file(_ records: [OwnedRecord]) throws -> String {
        let corrupt: [UInt8] = [0, 0, 0, 4, 0, 0, 0, 5] + [UInt8](repeating: 0, count: 16) + [1, 3, 0x0C, 0, 0]
        let path = NSTemporaryDirectory() + "blescope-unreadable-\(UUID().uuidString).btsnoop"
        try Data(CaptureWriter.btsnoop(records) + corrupt).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func nothingFoundCoversOnlyTheRecordsRead() throws {
        let records = CaptureBuilder().connect(handle: 0x40).notify(handle: 0x2A, [1, 2], connection: 0x40).records
        let path = try Self.file(records)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let out = try Blescope.run(["diagnose", path]).stdout
        let first = try #require(out.split(separator: "\n").first)
        #expect(first.hasPrefix("Diagnosis: nothing wrong found in the \(records.count) records read ("))
        #expect(first.hasSuffix("rules); the rest of the file could not be read (Log)"))
        #expect(out.contains("record \(records.count + 1) at offset"))
    }

    @Test func notOneRecordReadCannotTell() throws {
        let path = try Self.file([])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let out = try Blescope.run(["diagnose", path]).stdout
        #expect(out.hasPrefix("Diagnosis: cannot tell: not one record of the file could be read (Log)"))
        #expect(out.contains("No link can be told: not one record of the file could be read."))
        #expect(!out.contains("nothing wrong found") && !out.contains("was made or attempted"))
        // `info` states the same verdict (it said "nothing wrong found (88 rules)" over the corpus's btsnooz file).
        let info = try Blescope.run(["info", path]).stdout
        #expect(info.contains("\nDiagnosis:          cannot tell: not one record of the file could be read (Log) ("), "\(info)")
    }

    @Test func infoSaysWhatTheVerdictCovers() throws {
        let records = CaptureBuilder().connect(handle: 0x40).notify(handle: 0x2A, [1, 2], connection: 0x40).records
        let path = try Self.file(records)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let info = try Blescope.run(["info", path]).stdout
        #expect(info.contains("\nDiagnosis:          nothing wrong found in the \(records.count) records read ("), "\(info)")
    }

    /// The near miss: a whole file keeps "nothing wrong found" with no qualifier.
    @Test func aWholeFileKeepsItsPlainVerdict() throws {
        let records = CaptureBuilder().connect(handle: 0x40).notify(handle: 0x2A, [1, 2], connection: 0x40).records
        let path = NSTemporaryDirectory() + "blescope-whole-\(UUID().uuidString).btsnoop"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(CaptureWriter.btsnoop(records)).write(to: URL(fileURLWithPath: path))
        let out = try Blescope.run(["diagnose", path]).stdout
        #expect(out.hasPrefix("Diagnosis: nothing wrong found ("))
    }
}
