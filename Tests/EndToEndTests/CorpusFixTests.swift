import BLECapture
import BLETestSupport
import Foundation
import Testing

/// Outputs fixed after the public corpus showed them wrong, checked on captures built byte by byte.
@Suite struct CorpusFixTests {
    static func temporaryFile(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "blescope-corpusfix-\(UUID().uuidString)-\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `convert` of a PPI pcap (link type 192, the crackle captures) keeps its link-layer records in a pcap of the
    /// same link type; it used to write link type 201 and skip every record.
    @Test func convertKeepsPPILinkLayerRecords() throws {
        // pcap header (µs, little-endian, link type 192), one record: PPI header (version 0, flags 0, length 8,
        // DLT 147) + an ADV_NONCONN_IND: access address 0x8E89BED6, header 02 06, AdvA, CRC (3 octets, not checked).
        var bytes: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 192, 0, 0, 0]
        let packet: [UInt8] = [0, 0, 8, 0, 147, 0, 0, 0] + [0xD6, 0xBE, 0x89, 0x8E, 0x02, 0x06, 1, 2, 3, 4, 5, 0xC6, 0, 0, 0]
        bytes += [1, 0, 0, 0, 0, 0, 0, 0, UInt8(packet.count), 0, 0, 0, UInt8(packet.count), 0, 0, 0] + packet
        let input = try Self.temporaryFile("in.pcap", bytes)
        let output = NSTemporaryDirectory() + "blescope-corpusfix-\(UUID().uuidString)-out.pcap"
        defer {
            try? FileManager.default.removeItem(atPath: input)
            try? FileManager.default.removeItem(atPath: output)
        }
        let r = try Blescope.run(["convert", input, output])
        #expect(r.status == 0, "\(r.stderr)")
        let written = try #require(ClassicPcapHeaders.read(output))
        #expect(written.linkType == 192)
        #expect(written.times == [.init(seconds: 1, fraction: 0)])
        let data = try #require(FileManager.default.contents(atPath: output))
        #expect(Array(data.suffix(packet.count)) == packet)
    }

    /// `adverts --json` findings carry `offset` (null here) like every other JSON output: the schema requires it.
    @Test func advertsFindingsHaveAnOffset() throws {
        // LE Advertising Report: one report, AdvA C0:11:22:33:44:55 (random), data 20 02 85 (length 32, 2 octets
        // follow), RSSI 0xA3 (-93 dBm).
        let event: [UInt8] = [0x3E, 0x0F, 0x02, 0x01, 0x00, 0x01, 0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x03, 0x20, 0x02, 0x85, 0xA3]
        let input = try Self.temporaryFile("adverts.btsnoop", CaptureBuilder().event(event).btsnoopBytes())
        defer { try? FileManager.default.removeItem(atPath: input) }
        let r = try Blescope.run(["adverts", "--json", input])
        let json = try #require(r.json as? [String: Any])
        let finding = try #require((json["findings"] as? [[String: Any]])?.first)
        #expect(finding["code"] as? String == "adverts.malformed-data")
        #expect(finding["frame"] as? Int == 1)
        #expect(finding.keys.contains("offset"))
        let device = try #require((json["devices"] as? [[String: Any]])?.first)
        #expect("\(device["rssi"] ?? "")".contains("-93"))
    }
}
