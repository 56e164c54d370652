import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLECapture

/// The pcapng writer (`convert`, `convert --annotate`) over a pcapng input with several interfaces: each packet keeps
/// its interface's link type, its bytes and its flags, read back here and by tshark.
@Suite("pcapng writer")
struct PcapngWriterTests {
    /// The reader's two-interface file (Ethernet, then H4 with a direction pseudo-header; a second section's H4) copied
    /// record by record, as `convert` does.
    static func copied() throws -> (input: [UInt8], output: String) {
        let input = PcapngReaderTests.twoInterfaceFile().bytes
        let file = try CaptureFile.open(bytes: input, name: "two.pcapng")
        let output = NSTemporaryDirectory() + "blescope-writer-\(UUID().uuidString).pcapng"
        let writer = try PcapngFileWriter(path: output, input: file, sectionComment: nil)
        while let r = file.next() { try writer.write(r, comments: r.frame == 3 ? ["finding"] : []) }
        try writer.close()
        return (input, output)
    }

    @Test func eachPacketKeepsItsInterfaceLinkTypeBytesAndFlags() throws {
        let (input, output) = try Self.copied()
        defer { unlink(output) }
        let before = try CaptureFile.open(bytes: input, name: "two.pcapng")
        let after = try CaptureFile.open(path: output)
        var pairs: [(CaptureRecord, [UInt8], CaptureRecord, [UInt8])] = []
        while let a = before.next(), let b = after.next() { pairs.append((a, Array(a.bytes), b, Array(b.bytes))) }
        #expect(after.next() == nil)
        #expect(pairs.count == 4)
        // Ethernet stays Ethernet: before the fix every packet went under the first link type written.
        #expect(pairs.map(\.2.linkType) == [1, 201, 201, 187])
        #expect(pairs.map(\.2.kind) == [.other, .command, .event, .command])
        #expect(pairs.map(\.2.direction) == [.unknown, .tx, .rx, .tx])
        #expect(pairs.map(\.2.packetFlags) == [0, 2, 1, 0])
        // One output interface per input interface: Ethernet 0, H4 1, the second section's H4 (187) 2.
        #expect(pairs.map(\.2.controllerIndex) == [0, 1, 1, 2])
        for (a, bytesA, b, bytesB) in pairs {
            #expect(bytesA == bytesB, "frame \(a.frame): bytes differ")
            #expect(a.timestamp == b.timestamp && a.extraNanoseconds == b.extraNanoseconds, "frame \(a.frame): time differs")
        }
        #expect(after.findings.isEmpty, "\(after.findings)")
    }

    /// tshark gives each frame of the copy the protocols and direction flags it gives the input's.
    @Test func tsharkReadsTheCopyAsTheInput() throws {
        guard tsharkPath != nil else { return }
        let (input, output) = try Self.copied()
        defer { unlink(output) }
        let original = writeTemporary(input, name: "two.pcapng")
        defer { unlink(original) }
        let fields = ["-T", "fields", "-e", "frame.number", "-e", "frame.protocols", "-e", "frame.packet_flags_direction"]
        let theirs = try #require(TestEnvironment.tsharkFields(["-n", "-r", original] + fields))
        let ours = try #require(TestEnvironment.tsharkFields(["-n", "-r", output] + fields))
        #expect(theirs.count == 4)
        #expect(ours == theirs)
        #expect(theirs.first?[1].hasPrefix("eth") == true)
    }

    /// The same copy from owned records, as `convert --anonymize` and `--decrypt` write every record (rewritten, so with
    /// no stored form): the Ethernet packet keeps link type 1 and its bytes (the corpus Ubertooth capture's 6 DNS frames
    /// beside its PPI interface were written as USER0, 147, which tshark reads as user data); the near miss, the HCI
    /// packets laid out from their kind, go under 201 as before.
    @Test func ownedRecordsOfAnotherInterfaceKeepTheirLinkType() throws {
        let file = try CaptureFile.open(bytes: PcapngReaderTests.twoInterfaceFile().bytes, name: "two.pcapng")
        let output = NSTemporaryDirectory() + "blescope-writer-\(UUID().uuidString).pcapng"
        defer { unlink(output) }
        let writer = try PcapngFileWriter(path: output, input: file, sectionComment: nil)
        var originals: [[UInt8]] = []
        while let r = file.next() {
            originals.append(Array(r.bytes))
            try writer.write(OwnedRecord(r))
        }
        try writer.close()
        let after = try CaptureFile.open(path: output)
        var records: [(linkType: UInt32, kind: RecordKind, bytes: [UInt8])] = []
        while let b = after.next() { records.append((b.linkType, b.kind, Array(b.bytes))) }
        #expect(records.map(\.linkType) == [1, 201, 201, 201])
        #expect(records.map(\.kind) == [.other, .command, .event, .command])
        #expect(records.map(\.bytes) == originals)
    }
}
