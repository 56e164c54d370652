import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

@testable import BLECapture

/// BlueZ hcidump's own format (`hcidump -w`): 12-byte little-endian record headers (length, `in`, pad, seconds,
/// microseconds) before each H4 packet, no file header. Read like its pcap twin: Wireshark's "Bluetooth HCI dump".
@Suite struct HCIDumpReaderTests {
    /// One hcidump record around an H4 packet (`indicator` and `packet`), `received` from the controller.
    static func record(_ indicator: UInt8, _ packet: [UInt8], received: Bool, seconds: UInt32, micros: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        withUnsafeBytes(of: UInt16(packet.count + 1).littleEndian) { out += $0 }
        out += [received ? 1 : 0, 0]
        withUnsafeBytes(of: seconds.littleEndian) { out += $0 }
        withUnsafeBytes(of: micros.littleEndian) { out += $0 }
        return out + [indicator] + packet
    }

    /// Reset (sent), its Command Complete (received) and an LE Connection Complete (received), one second apart.
    static let dump: [UInt8] =
        record(0x01, HCIBuild.command(.reset), received: false, seconds: 1_144_502_786, micros: 162_157)
        + record(0x04, HCIBuild.commandComplete(.reset), received: true, seconds: 1_144_502_787, micros: 168_116)
        + record(
            0x04, HCIBuild.leConnectionComplete(handle: 0x40, peer: BDAddress(0xC0_11_22_33_44_55)), received: true,
            seconds: 1_144_502_788, micros: 954_656)

    @Test func recordsComeWithTheirKindDirectionAndTime() throws {
        let file = try CaptureFile.open(bytes: Self.dump, name: "three.cap")
        #expect(file.format == .hcidump && file.datalinkName == "H4 (hcidump)")
        let records = RecordFixtures.readAll(file)
        #expect(records.map(\.kind) == [.command, .event, .event])
        #expect(records.map(\.direction) == [.tx, .rx, .rx])
        #expect(records.map(\.timestamp.microseconds) == [1_144_502_786_162_157, 1_144_502_787_168_116, 1_144_502_788_954_656])
        #expect(records[0].bytes == HCIBuild.command(.reset))
        #expect(file.findings.isEmpty)
    }

    /// The file cut inside its last record: the first two are read, the cut is a finding at its frame and offset.
    @Test func aCutLastRecordIsSaidWhereItIs() throws {
        let file = try CaptureFile.open(bytes: Array(Self.dump.dropLast(5)), name: "cut.cap")
        #expect(RecordFixtures.readAll(file).count == 2)
        let cut = try #require(file.findings.first { $0.kind.code.id == "capture.truncated-file" })
        let thirdOffset = Int64(Self.dump.count - (12 + 1 + HCIBuild.leConnectionComplete(handle: 0x40, peer: BDAddress(0)).count))
        #expect(cut.frame == 3 && cut.offset == thirdOffset)
    }

    /// Near misses: records whose H4 length fields disagree with the record length, or with a pad byte set, are no
    /// hcidump file.
    @Test func recordsThatDisagreeWithTheirPacketsAreNoHCIDump() {
        var wrongLength = Self.dump
        wrongLength[0] &+= 1  // the first record one byte longer than its command
        var padSet = Self.dump
        padSet[3] = 7
        for bytes in [wrongLength, padSet] {
            #expect(throws: CaptureOpenError.self) { try CaptureFile.open(bytes: bytes, name: "not.cap") }
        }
    }

    /// The corpus's hcidump file and its pcap twin (`editcap -F pcap` makes one from the other, byte for byte) give the
    /// same records: kinds, directions, times and bytes (tshark reads both as 113 packets).
    @Test func theCorpusHCIDumpReadsLikeItsPcapTwin() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let dump = dir + "/hcidump-native_thewbi-bluez-2006-nec616-legacy-pin-same-packets-as-pcap.cap"
        let pcap = dir + "/pcap-lt201-h4phdr_thewbi-bluez-2006-nec616-legacy-pin-auth-failure-05-then-combination-key-sdp-headset-none.pcap"
        guard FileManager.default.fileExists(atPath: dump) else { return }
        let a = RecordFixtures.readAll(try CaptureFile.open(path: dump))
        let b = RecordFixtures.readAll(try CaptureFile.open(path: pcap))
        #expect(a.count == 113 && a.count == b.count)
        #expect(a.map(\.kind) == b.map(\.kind) && a.map(\.direction) == b.map(\.direction))
        #expect(a.map(\.timestamp) == b.map(\.timestamp) && a.map(\.bytes) == b.map(\.bytes))
    }
}
