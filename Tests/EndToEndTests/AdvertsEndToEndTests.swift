import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// Runs the `blescope adverts` binary on a btsnoop built from hand-laid reports, and on a real capture.
@Suite struct AdvertsEndToEndTests {
    static var binary: String? { TestEnvironment.blescopeBinary }

    static func run(_ arguments: [String]) -> (output: String, status: Int32)? {
        guard let binary else { return nil }
        var status: Int32 = -1
        guard let out = TestEnvironment.run(binary, arguments, exitCode: &status) else { return nil }
        return (out, status)
    }

    /// Two devices: a heart-rate tag (ADV_IND + SCAN_RSP, random address) and an iBeacon (public address).
    static func fixture() throws -> String {
        func report(_ type: UInt8, _ addressType: UInt8, _ address: [UInt8], _ ad: String, rssi: Int8) -> [UInt8] {
            let data = bytes(fromHex: ad)!
            // LE Advertising Report: subevent 02, 1 report, type, address type, address (LE), length, data, RSSI.
            return HCIBuild.leMeta(
                LESubevent(rawValue: 0x02),
                parameters: [0x01, type, addressType] + address + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)])
        }
        let tag: [UInt8] = [0x55, 0x44, 0x33, 0x22, 0x11, 0xC0]  // C0:11:22:33:44:55
        let beacon: [UInt8] = [0x13, 0x71, 0xDA, 0x7D, 0x1A, 0x00]  // 00:1A:7D:DA:71:13
        let events = [
            report(0, 1, tag, "02 01 06 03 03 0d 18 03 19 41 03", rssi: -60),
            report(4, 1, tag, "04 09 48 52 4d", rssi: -70),  // "HRM"
            report(3, 0, beacon, "1a ff 4c 00 02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 01 00 02 c5", rssi: -40),
        ]
        let records = events.enumerated().map { i, e in
            OwnedRecord(
                frame: i + 1, timestamp: Timestamp(microseconds: 1_700_000_000_000_000 + Int64(i) * 1000), direction: .rx,
                kind: .event, bytes: e)
        }
        let path = NSTemporaryDirectory() + "blescope-adverts-\(UUID().uuidString).btsnoop"  // tests run in parallel
        try Data(CaptureWriter.btsnoop(records)).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func jsonOutput() throws {
        let path = try Self.fixture()
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard let (out, status) = Self.run(["adverts", path, "--json", "--sort", "rssi", "--quiet"]) else { return }
        #expect(status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        #expect(object["reports"] as? Int == 3)
        let devices = try #require(object["devices"] as? [[String: Any]])
        #expect(devices.map { $0["address"] as? String } == ["00:1A:7D:DA:71:13", "C0:11:22:33:44:55"])  // strongest first
        let beacon = devices[0], tag = devices[1]
        #expect(beacon["addressType"] as? String == "public")
        let ibeacon = try #require((beacon["iBeacons"] as? [[String: Any]])?.first)
        #expect(ibeacon["uuid"] as? String == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        #expect(ibeacon["major"] as? Int == 1)
        #expect(ibeacon["minor"] as? Int == 2)
        #expect(ibeacon["measuredPower"] as? Int == -59)
        #expect((beacon["manufacturers"] as? [[String: Any]])?.first?["name"] as? String == "Apple, Inc.")
        #expect(tag["names"] as? [String] == ["HRM"])
        #expect(tag["count"] as? Int == 2)
        let rssi = try #require(tag["rssi"] as? [String: Any])
        #expect(rssi["min"] as? Int == -70)
        #expect(rssi["max"] as? Int == -60)
        #expect(rssi["avg"] as? Double == -65)
        #expect(tag["eventTypes"] as? [String: Int] == ["ADV_IND": 1, "SCAN_RSP": 1])
        #expect(tag["flags"] as? [String] == ["LE General Discoverable", "BR/EDR Not Supported"])
        #expect((tag["services"] as? [[String: Any]])?.first?["name"] as? String == "Heart Rate")
        #expect((tag["appearances"] as? [[String: Any]])?.first?["name"] as? String == "Heart rate belt")
        #expect(tag["firstFrame"] as? Int == 1)
        #expect(tag["lastFrame"] as? Int == 2)
    }

    @Test func textTable() throws {
        let path = try Self.fixture()
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Whole lines (--wide): the table's columns as they are; by default the last one goes on under the row.
        guard let (out, status) = Self.run(["adverts", path, "--quiet", "--wide"]) else { return }
        #expect(status == 0)
        let lines = out.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasSuffix(": 2 devices, 3 advertising reports in 3 events") == true)
        #expect(lines.contains("ADDRESS            TYPE    NAME  RSSI min/avg/max  COUNT  ADVERTISES"))
        #expect(
            lines.contains(
                "C0:11:22:33:44:55  random  HRM   -70/-65.0/-60         2  services 0x180D Heart Rate; appearance Heart rate belt"))
        #expect(
            lines.contains(
                "00:1A:7D:DA:71:13  public        -40/-40.0/-40         1  iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 1/2; Apple, Inc. (0x004c)"
            ))
    }

    @Test func unreadableInputExits2() throws {
        guard let (_, status) = Self.run(["adverts", "/nonexistent/capture.btsnoop"]) else { return }
        #expect(status == 2)
        guard let (_, badSort) = Self.run(["adverts", "/nonexistent/capture.btsnoop", "--sort", "loudness"]) else { return }
        #expect(badSort != 0)
    }

    /// On the real Android capture: one device per distinct (address) in tshark's reports.
    @Test func realCapture() throws {
        guard let path = TestEnvironment.realCaptures.first(where: { $0.contains("horizon74") }),
            let theirs = TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "bthci_evt.le_meta_subevent == 0x02", "-T", "fields",
                "-e", "bthci_evt.bd_addr",
            ]),
            let (out, status) = Self.run(["adverts", path, "--json", "--quiet"])
        else { return }
        #expect(status == 0)
        let addresses = Set(theirs.split(separator: "\n").map { $0.uppercased() })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        let devices = try #require(object["devices"] as? [[String: Any]])
        #expect(Set(devices.compactMap { $0["address"] as? String }) == addresses)
        #expect(devices.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == theirs.split(separator: "\n").count)
    }
}
