import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// Every Android snoop log among the real captures, checked against tshark: reports per address, the names each
/// address sent (`btcommon.eir_ad.entry.device_name`), RSSI min/max (`bthci_evt.rssi`), and per report the AD types
/// in order. Written for the two shared logs (412 legacy and 460 extended reports); the public corpus adds logs with
/// few or no reports (compared all the same: 0 against 0) and two kinds of difference explained by rule below:
/// - an AD structure whose length runs past the report's Data_Length: tshark lists its type, then stops with an
///   exception (`_ws.malformed`) and, in a legacy report, never reaches the RSSI after the data; blescope drops the
///   structure with a problem (an info finding) and reads the RSSI where Core Spec Vol 4, Part E, 7.7.65.2 puts it.
/// - RSSI 127, "not available" (7.7.65.2, 7.7.65.13): tshark shows it as a value, blescope leaves it out of min/max.
@Suite struct AdvertsDifferentialTests {
    static var captures: [String] {
        TestEnvironment.realCaptures.filter { $0.contains("android-btsnoop") }
    }

    /// RSSI 127 means "not available" in both report events.
    static let rssiNotAvailable = 127

    struct TsharkReport {
        var frame: Int
        var address: String
        /// nil when tshark shows none (it stopped at an AD structure that runs past the data before reaching it).
        var rssi: Int?
        var names: [String]
        var adTypes: [UInt8]
        /// tshark stopped on an exception (`_ws.malformed`).
        var malformed: Bool
    }

    static func tsharkReports(_ path: String) -> [TsharkReport]? {
        guard
            let out = TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "bthci_evt.le_meta_subevent == 0x02 || bthci_evt.le_meta_subevent == 0x0d",
                "-T", "fields", "-E", "separator=/t", "-E", "aggregator=|", "-E", "occurrence=a",
                "-e", "frame.number", "-e", "bthci_evt.bd_addr", "-e", "bthci_evt.rssi", "-e", "btcommon.eir_ad.entry.device_name",
                "-e", "btcommon.eir_ad.entry.type", "-e", "_ws.malformed",
            ])
        else { return nil }
        var reports: [TsharkReport] = []
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 6, let frame = Int(f[0]) else { continue }
            // These captures have one report per event (tshark's bthci_evt.le_num_reports is 1 throughout).
            let types = f[4].split(separator: "|").compactMap { UInt8($0.dropFirst(2), radix: 16) }
            reports.append(
                TsharkReport(
                    frame: frame, address: f[1].uppercased(), rssi: Int(f[2]),
                    names: f[3].isEmpty ? [] : f[3].split(separator: "|").map(String.init), adTypes: types,
                    malformed: !f[5].isEmpty))
        }
        return reports
    }

    /// The offset of the AD structure whose length runs past `data`, found from the length octets alone, and
    /// whether its type octet is present; nil when every structure fits (a zero length ends the data).
    static func overrun(_ data: [UInt8]) -> (offset: Int, hasType: Bool)? {
        var i = 0
        while i < data.count {
            let length = Int(data[i])
            if length == 0 { return nil }
            if i + 1 + length > data.count { return (i, i + 1 < data.count) }
            i += 1 + length
        }
        return nil
    }

    /// The shared captures the test was written for have well over 100 reports each.
    static func writtenFor(_ path: String) -> Bool {
        TestEnvironment.sharedCaptures.map { path.hasPrefix($0) } ?? false
    }

    @Test(arguments: captures)
    func devicesMatchTshark(_ path: String) throws {
        guard let theirs = Self.tsharkReports(path) else { return }  // no tshark here
        if Self.writtenFor(path) { #expect(theirs.count > 100) }
        let tracker = AdvertisingTracker.track(try CaptureFile.open(path: path))
        #expect(tracker.reportCount == theirs.count)
        #expect(tracker.advertisingEvents == theirs.count)
        // The only findings: AD data that runs past its end, on reports where tshark stopped on it too.
        let malformedFrames = Set(theirs.filter(\.malformed).map(\.frame))
        for f in tracker.findings {
            guard f.kind.code.id == "adverts.malformed-data", let frame = f.frame, malformedFrames.contains(frame) else {
                Issue.record("unexpected finding \(f)")
                continue
            }
        }

        // tshark shows no RSSI where it stopped before it (legacy reports): the last octet of the event is the RSSI
        // of its one report (Core Spec Vol 4, Part E, 7.7.65.2), read from the record's bytes.
        var rssiByFrame: [Int: Int] = [:]
        let missing = Set(theirs.filter { $0.rssi == nil }.map(\.frame))
        if !missing.isEmpty {
            let capture = try CaptureFile.open(path: path)
            while let record = capture.next() {
                guard missing.contains(record.frame) else { continue }
                var reader = record.reader
                let bytes = reader.readRemaining()
                #expect(bytes[2] == 0x02, "frame \(record.frame): only a legacy report has its RSSI after the data")
                rssiByFrame[record.frame] = Int(Int8(bitPattern: bytes[bytes.count - 1]))
            }
        }

        // Reports per address, names per address, RSSI range per address (127 = not available, left out).
        var counts: [String: Int] = [:], names: [String: Set<String>] = [:], rssi: [String: (Int, Int)] = [:]
        for r in theirs {
            counts[r.address, default: 0] += 1
            names[r.address, default: []].formUnion(r.names)
            let value = try #require(r.rssi ?? rssiByFrame[r.frame], "frame \(r.frame)")
            guard value != Self.rssiNotAvailable else { continue }
            let (lo, hi) = rssi[r.address] ?? (value, value)
            rssi[r.address] = (min(lo, value), max(hi, value))
        }
        var ourCounts: [String: Int] = [:], ourNames: [String: Set<String>] = [:]
        for d in tracker.devices {
            ourCounts[d.address.description, default: 0] += d.reports
            ourNames[d.address.description, default: []].formUnion(d.names)
            let expected = rssi[d.address.description]
            #expect(d.rssiMin.map(Int.init) == expected?.0, "\(d.address)")
            #expect(d.rssiMax.map(Int.init) == expected?.1, "\(d.address)")
        }
        #expect(ourCounts == counts)
        #expect(ourNames == names)
        print(
            "\(path): \(tracker.devices.count) devices, \(tracker.reportCount) reports, \(names.values.filter { !$0.isEmpty }.count) named, \(malformedFrames.count) with AD data past its end"
        )
    }

    /// Per report, the AD structure types in wire order equal tshark's `btcommon.eir_ad.entry.type`, except the
    /// structure that runs past the data (see the suite's comment).
    @Test(arguments: captures)
    func adTypesMatchTshark(_ path: String) throws {
        guard let theirs = Self.tsharkReports(path) else { return }
        let byFrame = Dictionary(theirs.map { ($0.frame, $0) }, uniquingKeysWith: { a, _ in a })
        let capture = try CaptureFile.open(path: path)
        var checked = 0, overruns = 0
        while let record = capture.next() {
            guard let report = byFrame[record.frame] else { continue }
            var reader = record.reader
            let packet = try HCIEventPacket(parsing: &reader)
            let data: [UInt8]
            switch try packet.decodeParameters() {
            case let .leAdvertisingReport(e): data = e.reports.first?.data ?? []
            case let .leExtendedAdvertisingReport(e): data = e.reports.first?.data ?? []
            default: Issue.record("frame \(record.frame) is not an advertising report"); continue
            }
            let ad = AdvertisingData(bytes: data)
            var expected = report.adTypes
            if let (offset, hasType) = Self.overrun(data) {
                overruns += 1
                #expect(report.malformed, "frame \(record.frame): tshark read past the data without an exception")
                if hasType {
                    #expect(expected.last == data[offset + 1], "frame \(record.frame)")
                    expected.removeLast()
                }
                #expect(ad.problems.count == 1, "frame \(record.frame): \(ad.problems)")
                #expect(ad.problems.first?.contains("at offset \(offset)") == true, "frame \(record.frame): \(ad.problems)")
            } else {
                #expect(!report.malformed, "frame \(record.frame)")
                #expect(ad.problems.isEmpty, "frame \(record.frame): \(ad.problems)")
            }
            #expect(ad.structures.map(\.type.rawValue) == expected, "frame \(record.frame)")
            // Every structure re-encodes to the bytes it came from.
            #expect(AdvertisingData(ad.elements).bytes == Array(data.prefix(ad.bytes.count)), "frame \(record.frame)")
            checked += 1
        }
        #expect(checked == theirs.count)
        print("\(path): \(checked) reports, \(overruns) with an AD structure past the data")
    }
}
