import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLECapture

/// Records of an H4 datalink whose packet indicator is no HCI packet type (Core v5.4 Vol 4, Part A, 2: 0x01 command,
/// 0x02 ACL, 0x03 SCO, 0x04 event, 0x05 ISO) are kept as `.other` and reported once (`capture.non-hci-records`).
@Suite("Records that are not HCI in an H4 log are reported")
struct NonHCIRecordTests {
    /// Reset (command 0x0C03), then `indicators` records of one octet each after their indicator.
    static func btsnoopH4(indicators: [UInt8]) -> [UInt8] {
        var out = Array("btsnoop".utf8) + [0]
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.bigEndian) { out += $0 } }
        u32(1)
        u32(1002)
        for (i, indicator) in indicators.enumerated() {
            let data: [UInt8] = indicator == 0x01 ? [0x01, 0x03, 0x0C, 0x00] : [indicator, 0xAA]
            u32(UInt32(data.count))
            u32(UInt32(data.count))
            u32(0)
            u32(0)
            withUnsafeBytes(of: (0x00DC_DDB3_0F2F_8000 as Int64 + Int64(i)).bigEndian) { out += $0 }
            out += data
        }
        return out
    }

    @Test func btsnoopH4RecordsWithIndicator09AreCountedOnce() throws {
        let file = try CaptureFile.open(bytes: Self.btsnoopH4(indicators: [0x01, 0x09, 0x09, 0x04, 0x09]), name: "h4-09")
        let kinds = RecordFixtures.readAll(file).map(\.kind)
        #expect(kinds == [.command, .other, .other, .event, .other])
        let found = file.findings.filter { $0.kind.code.id == "capture.non-hci-records" }
        #expect(found.count == 1)
        #expect(found.first?.frame == 2)
        #expect(found.first?.severity == .warning)
        #expect(found.first?.kind.message.hasPrefix("3 records with an H4 packet indicator") == true)
        #expect(found.first?.kind.message.contains("(indicator 0x09)") == true)
    }

    @Test func hciOnlyLogHasNoSuchFinding() throws {
        let file = try CaptureFile.open(bytes: Self.btsnoopH4(indicators: [0x01, 0x01]), name: "h4-hci")
        _ = RecordFixtures.readAll(file)
        #expect(!file.findings.contains { $0.kind.code.id == "capture.non-hci-records" })
    }

    @Test func pcap201RecordsWithIndicator09AreCounted() throws {
        var out: [UInt8] = []
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        u32(0xA1B2_C3D4)
        u16(2)
        u16(4)
        u32(0)
        u32(0)
        u32(65535)
        u32(201)
        for (i, packet) in [[0, 0, 0, 0, 0x01, 0x03, 0x0C, 0x00], [0, 0, 0, 1, 0x09, 0x7E], [0, 0, 0, 0]].enumerated() {
            u32(1_631_223_485)
            u32(UInt32(i))
            u32(UInt32(packet.count))
            u32(UInt32(packet.count))
            out += packet.map { UInt8($0) }
        }
        let file = try CaptureFile.open(bytes: out, name: "h4phdr-09.pcap")
        #expect(RecordFixtures.readAll(file).map(\.kind) == [.command, .other, .other])
        let found = file.findings.filter { $0.kind.code.id == "capture.non-hci-records" }
        // The third record is too short to hold an indicator: cut, not another tool's record.
        #expect(found.map(\.frame) == [2])
        #expect(found.first?.kind.message.hasPrefix("1 record with an H4 packet indicator") == true)
    }

    /// The ESP32 BR/EDR sniffer's sample (corpus/README.md, "Added 2026-11-28 (2)"): a pcap, LINKTYPE 201, whose 114
    /// records all carry indicator 0x09 (tshark 4.0.17: `-Y "hci_h4.type == 0x09"` → 114 of 114, dissected as data).
    @Test func esp32ClassicSnifferSampleIsReportedNotHCI() throws {
        let name = "pcap-lt201-h4-type-09-named-pcapng_esp32-bredr-sniffer-air-not-hci.pcapng"
        guard let dir = TestEnvironment.corpusDirectory, FileManager.default.fileExists(atPath: dir + "/" + name) else {
            print("skipped: \(name) not in BLESCOPE_CORPUS (corpus/fetch.sh … 2026-11-28-2)")
            return
        }
        let file = try CaptureFile.open(path: dir + "/" + name)
        let records = RecordFixtures.readAll(file)
        #expect(records.count == 114)
        #expect(records.allSatisfy { $0.kind == .other })
        let found = file.findings.filter { $0.kind.code.id == "capture.non-hci-records" }
        #expect(found.count == 1)
        #expect(found.first?.frame == 1)
        #expect(found.first?.kind.message.hasPrefix("114 records with an H4 packet indicator") == true)
        #expect(found.first?.kind.message.contains("(indicator 0x09)") == true)
    }
}
