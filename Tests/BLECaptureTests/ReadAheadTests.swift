import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLECapture

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading on a second thread (`ReadAhead` behind `ByteSource`): the same bytes at the same offsets, the same
/// records and findings, wherever the blocks end.
@Suite("Read-ahead")
struct ReadAheadTests {
    /// Block shapes from one byte (every window crosses a boundary; headroom 0 forces the growable buffer) to the
    /// standard one.
    static let shapes: [ReadAhead.Shape] = [
        .init(blockSize: 1, headroom: 0, blocks: 2),
        .init(blockSize: 7, headroom: 3, blocks: 2),
        .init(blockSize: 64, headroom: 16, blocks: 3),
        .init(blockSize: 4096, headroom: 100, blocks: 4),
        .standard,
    ]

    /// Deterministic bytes (SplitMix64), so a misplaced window shows as a wrong byte.
    static func pattern(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return UInt8(truncatingIfNeeded: z ^ (z >> 31))
        }
    }

    /// Opens `bytes` written to a temporary file as a read-ahead `ByteSource`.
    static func source(_ bytes: [UInt8], gzip: Bool, shape: ReadAhead.Shape, name: String) -> (ByteSource, String) {
        let path = writeTemporary(bytes, name: name)
        let fd = open(path, O_RDONLY)
        return (ByteSource(streaming: fd, gzip: gzip, readAhead: shape), path)
    }

    /// Walks the source asking for windows of random sizes (1 byte to 3 KiB, larger than most headrooms) and moving
    /// the cursor by random amounts; every window must hold the expected bytes at the expected offset.
    static func walk(_ source: ByteSource, expecting expected: [UInt8], seed: UInt64) {
        var random = pattern(count: 1 << 16, seed: seed).makeIterator()
        func next() -> Int { Int(random.next() ?? 1) }
        var offset = 0
        var steps = 0
        while offset < expected.count {
            let wanted = next() < 16 ? 1 + next() * 12 : 1 + next() % 40
            let remaining = expected.count - offset
            let ensured = source.ensure(wanted)
            let visible = min(wanted, source.available)
            let window = UnsafeRawBufferPointer(start: source.cursor, count: visible)
            guard ensured == (remaining >= wanted), visible == min(wanted, remaining), source.offset == Int64(offset),
                window.elementsEqual(expected[offset..<(offset + visible)])
            else {
                Issue.record("ensure(\(wanted)) at offset \(offset): \(ensured), \(visible) bytes at \(source.offset), or wrong bytes")
                return
            }
            let step = min(visible, next() % (wanted + 1))
            source.advance(step)
            offset += step
            steps += 1
            if steps % (1 << 14) == 0 { random = pattern(count: 1 << 16, seed: seed &+ UInt64(steps)).makeIterator() }
            if steps > 20 * expected.count {
                Issue.record("the walk is stuck at offset \(offset)")
                return
            }
        }
        #expect(!source.ensure(1))
        #expect(source.available == 0 && source.offset == Int64(expected.count))
        #expect(source.streamError == nil)
    }

    @Test(arguments: 0..<shapes.count)
    func windowsHoldTheFileBytesWhereverBlocksEnd(_ shapeIndex: Int) {
        let shape = Self.shapes[shapeIndex]
        let bytes = Self.pattern(count: 50_000, seed: UInt64(shapeIndex))
        let (plain, plainPath) = Self.source(bytes, gzip: false, shape: shape, name: "read-ahead-\(shapeIndex).bin")
        defer { try? FileManager.default.removeItem(atPath: plainPath) }
        Self.walk(plain, expecting: bytes, seed: 7)

        let (inflated, gzPath) = Self.source(
            zlibDeflate(bytes, gzip: true), gzip: true, shape: shape, name: "read-ahead-\(shapeIndex).bin.gz")
        defer { try? FileManager.default.removeItem(atPath: gzPath) }
        Self.walk(inflated, expecting: bytes, seed: 11)
        #expect(!inflated.isPassthrough)
        #expect(inflated.bytesConsumed == Int64(zlibDeflate(bytes, gzip: true).count))
    }

    /// Every Sample (three formats) and shared capture: the records and findings of read-ahead, at three shapes, equal
    /// those of reading inline; the whole file is consumed.
    @Test func realFilesReadTheSameRecords() throws {
        var files = TestEnvironment.sampleNames.flatMap { name in
            ["btsnoop", "pcap", "pklg"].map { TestEnvironment.sample("\(name).\($0)") }
        }
        files += realCaptures.map(capturePath)
        #expect(files.count >= 51)
        let shapes: [ReadAhead.Shape] = [
            .init(blockSize: 61, headroom: 17, blocks: 3), .init(blockSize: 4096, headroom: 0, blocks: 2), .standard,
        ]
        for path in files {
            let inline = try CaptureFile.open(path: path, classicPcapThroughLibpcap: false, readAhead: nil)
            let expected = RecordFixtures.readAll(inline)
            for shape in shapes {
                let file = try CaptureFile.open(
                    path: path, classicPcapThroughLibpcap: false, readAhead: shape, readAheadPlainFiles: true)
                let records = RecordFixtures.readAll(file)
                if records != expected {
                    let first = zip(records, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    Issue.record(
                        "\(path) with \(shape.blockSize)-byte blocks: \(records.count) records against \(expected.count), first difference at index \(first ?? min(records.count, expected.count))"
                    )
                }
                #expect(file.findings == inline.findings, "\(path) at \(shape.blockSize)")
                #expect(file.bytesConsumed == inline.bytesConsumed)
            }
        }
    }

    /// A gzip file cut in half: the same records, then the same two findings (cut record, gzip error), as inline.
    @Test func cutGzipEndsAsInline() throws {
        let sample = TestEnvironment.sample("nordic-dfu.btsnoop")
        let gz = zlibDeflate(Array(FileManager.default.contents(atPath: sample)!), gzip: true)
        let path = writeTemporary(Array(gz[..<(gz.count / 2)]), name: "read-ahead-cut.btsnoop.gz")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let inline = try CaptureFile.open(path: path, classicPcapThroughLibpcap: false, readAhead: nil)
        let expected = RecordFixtures.readAll(inline)
        #expect(inline.findings.map(\.kind.code.id) == ["capture.truncated-file", "capture.read-error"])
        for shape in [ReadAhead.Shape(blockSize: 333, headroom: 40, blocks: 2), .standard] {
            let file = try CaptureFile.open(path: path, classicPcapThroughLibpcap: false, readAhead: shape)
            #expect(RecordFixtures.readAll(file) == expected)
            #expect(file.findings == inline.findings)
        }
        #expect(expected.count > 10)
    }

    /// A pipe fed in small pieces (as from `btmon -w /dev/stdout`): the records of the file, read as plain data
    /// passed through the gzip reader.
    @Test func pipeFedInPiecesReadsTheSameRecords() throws {
        let sample = TestEnvironment.sample("bracelet.btsnoop")
        let bytes = Array(FileManager.default.contents(atPath: sample)!)
        let expected = RecordFixtures.readAll(try CaptureFile.open(path: sample, classicPcapThroughLibpcap: false, readAhead: nil))
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let writeEnd = ends[1]
        let writer = Thread {
            var at = 0
            while at < bytes.count {
                let n = min(997, bytes.count - at)
                let wrote = bytes[at..<(at + n)].withUnsafeBytes { write(writeEnd, $0.baseAddress!, n) }
                if wrote <= 0 { break }
                at += wrote
                usleep(200)
            }
            close(writeEnd)
        }
        writer.start()
        let file = try CaptureFile.open(
            path: "/dev/fd/\(ends[0])", classicPcapThroughLibpcap: false, readAhead: .init(blockSize: 4096, headroom: 64, blocks: 2))
        #expect(!file.compressed)
        #expect(RecordFixtures.readAll(file) == expected)
        #expect(file.findings.isEmpty, "\(file.findings)")
        close(ends[0])
    }

    /// A reader that goes away while the producer waits in `read(2)` on a pipe that stays open does not wait for it;
    /// the producer closes the descriptor itself once the read returns.
    @Test func droppedSourceLeavesAWaitingReadBehind() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        var info = stat()
        fstat(ends[0], &info)
        let pipeInode = info.st_ino
        let bytes = Self.pattern(count: 100, seed: 3)
        #expect(bytes.withUnsafeBytes { write(ends[1], $0.baseAddress!, 100) } == 100)
        do {
            let source = ByteSource(streaming: ends[0], gzip: false, readAhead: .init(blockSize: 64, headroom: 0, blocks: 4))
            #expect(source.ensure(50))
            #expect(UnsafeRawBufferPointer(start: source.cursor, count: 50).elementsEqual(bytes[..<50]))
        }
        // The producer is blocked reading (100 bytes are in; it asked for more). Closing the writer ends that read.
        close(ends[1])
        func stillOpen() -> Bool {
            var now = stat()
            return fstat(ends[0], &now) == 0 && now.st_ino == pipeInode
        }
        var waited = 0
        while stillOpen() && waited < 4_000 {
            usleep(1_000)
            waited += 1
        }
        #expect(!stillOpen(), "the read-ahead thread never closed its descriptor")
    }
}
