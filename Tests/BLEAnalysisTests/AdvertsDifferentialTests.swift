import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// The real captures that carry HCI advertising reports (the two Android snoop logs: 412 legacy and
/// 460 extended reports), checked against tshark: reports per address, the names each address sent
/// (`btcommon.eir_ad.entry.device_name`), RSSI min/max (`bthci_evt.rssi`), and per report the AD types in order.
@Suite struct AdvertsDifferentialTests {
    static var captures: [String] {
        TestEnvironment.realCaptures.filter { $0.contains("android-btsnoop") }
    }

    struct TsharkReport {
        var frame: Int
        var address: String
        var rssi: Int
        var names: [String]
        var adTypes: [UInt8]
    }

    static func tsharkReports(_ path: String) -> [TsharkReport]? {
        guard
            let out = TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "bthci_evt.le_meta_subevent == 0x02 || bthci_evt.le_meta_subevent == 0x0d",
                "-T", "fields", "-E", "separator=/t", "-E", "aggregator=|", "-E", "occurrence=a",
                "-e", "frame.number", "-e", "bthci_evt.bd_addr", "-e", "bthci_evt.rssi", "-e", "btcommon.eir_ad.entry.device_name",
                "-e", "btcommon.eir_ad.entry.type",
            ])
        else { return nil }
        var reports: [TsharkReport] = []
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 5, let frame = Int(f[0]) else { continue }
            // These captures have one report per event (tshark's bthci_evt.le_num_reports is 1 throughout).
            let types = f[4].split(separator: "|").compactMap { UInt8($0.dropFirst(2), radix: 16) }
            reports.append(
                TsharkReport(
                    frame: frame, address: f[1].uppercased(), rssi: Int(f[2]) ?? 127,
                    names: f[3].isEmpty ? [] : f[3].split(separator: "|").map(String.init), adTypes: types))
        }
        return reports
    }

    @Test(arguments: captures)
    func devicesMatchTshark(_ path: String) throws {
        guard let theirs = Self.tsharkReports(path) else { return }  // no tshark here
        #expect(theirs.count > 100)
        let tracker = AdvertisingTracker.track(try CaptureFile.open(path: path))
        #expect(tracker.reportCount == theirs.count)
        #expect(tracker.advertisingEvents == theirs.count)
        #expect(tracker.findings.isEmpty, "\(tracker.findings)")

        // Reports per address, names per address, RSSI range per address.
        var counts: [String: Int] = [:], names: [String: Set<String>] = [:], rssi: [String: (Int, Int)] = [:]
        for r in theirs {
            counts[r.address, default: 0] += 1
            names[r.address, default: []].formUnion(r.names)
            let (lo, hi) = rssi[r.address] ?? (r.rssi, r.rssi)
            rssi[r.address] = (min(lo, r.rssi), max(hi, r.rssi))
        }
        var ourCounts: [String: Int] = [:], ourNames: [String: Set<String>] = [:]
        for d in tracker.devices {
            ourCounts[d.address.description, default: 0] += d.reports
            ourNames[d.address.description, default: []].formUnion(d.names)
            let expected = try #require(rssi[d.address.description])
            #expect(d.rssiMin.map(Int.init) == expected.0, "\(d.address)")
            #expect(d.rssiMax.map(Int.init) == expected.1, "\(d.address)")
        }
        #expect(ourCounts == counts)
        #expect(ourNames == names)
        print(
            "\(path): \(tracker.devices.count) devices, \(tracker.reportCount) reports, \(names.values.filter { !$0.isEmpty }.count) named")
    }

    /// Per report, the AD structure types in wire order equal tshark's `btcommon.eir_ad.entry.type`.
    @Test(arguments: captures)
    func adTypesMatchTshark(_ path: String) throws {
        guard let theirs = Self.tsharkReports(path) else { return }
        let byFrame = Dictionary(theirs.map { ($0.frame, $0.adTypes) }, uniquingKeysWith: { a, _ in a })
        let capture = try CaptureFile.open(path: path)
        var checked = 0
        while let record = capture.next() {
            guard let expected = byFrame[record.frame] else { continue }
            var reader = record.reader
            let packet = try HCIEventPacket(parsing: &reader)
            let data: [UInt8]
            switch try packet.decodeParameters() {
            case let .leAdvertisingReport(e): data = e.reports.first?.data ?? []
            case let .leExtendedAdvertisingReport(e): data = e.reports.first?.data ?? []
            default: Issue.record("frame \(record.frame) is not an advertising report"); continue
            }
            let ad = AdvertisingData(bytes: data)
            #expect(ad.structures.map(\.type.rawValue) == expected, "frame \(record.frame)")
            #expect(ad.problems.isEmpty, "frame \(record.frame): \(ad.problems)")
            // Every structure re-encodes to the bytes it came from.
            #expect(AdvertisingData(ad.elements).bytes == Array(data.prefix(ad.bytes.count)), "frame \(record.frame)")
            checked += 1
        }
        #expect(checked == theirs.count)
    }
}
