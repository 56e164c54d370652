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
                "-e", "btcommon.eir_ad.entry.type", "-e", "_ws.malformed", "-e", "bthci_evt.data_length",
                "-e", "btcommon.eir_ad.entry.length",
            ])
        else { return nil }
        var reports: [TsharkReport] = []
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 8, let frame = Int(f[0]) else { continue }
            let types = f[4].split(separator: "|").compactMap { UInt8($0.dropFirst(2), radix: 16) }
            let names = f[3].isEmpty ? [] : f[3].split(separator: "|").map(String.init)
            let addresses = f[1].split(separator: "|").map { $0.uppercased() }
            guard addresses.count > 1 else {
                reports.append(
                    TsharkReport(
                        frame: frame, address: f[1].uppercased(), rssi: Int(f[2]), names: names, adTypes: types,
                        malformed: !f[5].isEmpty))
                continue
            }
            reports += split(
                frame: frame, addresses: addresses, rssi: f[2].split(separator: "|").map { Int($0) }, names: names, types: types,
                dataLengths: f[6].split(separator: "|").compactMap { Int($0) },
                entryLengths: f[7].split(separator: "|").compactMap { Int($0) }, malformed: !f[5].isEmpty)
        }
        return reports
    }

    /// An event with several reports (Core Spec Vol 4, Part E, 7.7.65.2: Num_Reports, then each report's fields),
    /// where tshark lists each report's address, Data_Length and RSSI in report order and the AD structures of all of
    /// them in one list: each report takes the structures its Data_Length covers (a structure is its length octet and
    /// the `length` octets after it), and the names among them in order. HappyLeaf's Fire OS log, frame 72157: an
    /// advertisement with Flags and Apple data (11 octets), then its empty scan response, both from 48:48:6A:27:6A:9C.
    static func split(
        frame: Int, addresses: [String], rssi: [Int?], names: [String], types: [UInt8], dataLengths: [Int], entryLengths: [Int],
        malformed: Bool
    ) -> [TsharkReport] {
        #expect(dataLengths.count == addresses.count && rssi.count == addresses.count, "frame \(frame): \(addresses.count) reports")
        #expect(entryLengths.count == types.count, "frame \(frame): \(types.count) AD types, \(entryLengths.count) lengths")
        var reports: [TsharkReport] = []
        var entry = 0
        var nameIndex = 0
        for (k, address) in addresses.enumerated() {
            var report = TsharkReport(
                frame: frame, address: address, rssi: k < rssi.count ? rssi[k] : nil, names: [], adTypes: [],
                malformed: malformed && k == addresses.count - 1)
            var covered = 0
            while k < dataLengths.count, covered < dataLengths[k], entry < types.count, entry < entryLengths.count {
                report.adTypes.append(types[entry])
                if types[entry] == 0x08 || types[entry] == 0x09, nameIndex < names.count {
                    report.names.append(names[nameIndex])
                    nameIndex += 1
                }
                covered += 1 + entryLengths[entry]
                entry += 1
            }
            reports.append(report)
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
        #expect(tracker.advertisingEvents == Set(theirs.map(\.frame)).count)
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

    /// One report's AD structure types against tshark's; true when a structure runs past the data.
    static func checkADTypes(_ report: TsharkReport, _ data: [UInt8], frame: Int) -> Bool {
        let ad = AdvertisingData(bytes: data)
        var expected = report.adTypes
        let overrun = Self.overrun(data)
        if let (offset, hasType) = overrun {
            #expect(report.malformed, "frame \(frame): tshark read past the data without an exception")
            if hasType {
                #expect(expected.last == data[offset + 1], "frame \(frame)")
                expected.removeLast()
            }
            #expect(ad.problems.count == 1, "frame \(frame): \(ad.problems)")
            #expect(ad.problems.first?.contains("at offset \(offset)") == true, "frame \(frame): \(ad.problems)")
        } else {
            #expect(!report.malformed, "frame \(frame)")
            #expect(ad.problems.isEmpty, "frame \(frame): \(ad.problems)")
        }
        #expect(ad.structures.map(\.type.rawValue) == expected, "frame \(frame)")
        // Every structure re-encodes to the bytes it came from.
        #expect(AdvertisingData(ad.elements).bytes == Array(data.prefix(ad.bytes.count)), "frame \(frame)")
        return overrun != nil
    }

    /// Per report, the AD structure types in wire order equal tshark's `btcommon.eir_ad.entry.type`, except the
    /// structure that runs past the data (see the suite's comment).
    @Test(arguments: captures)
    func adTypesMatchTshark(_ path: String) throws {
        guard let theirs = Self.tsharkReports(path) else { return }
        let byFrame = Dictionary(grouping: theirs, by: \.frame)
        let capture = try CaptureFile.open(path: path)
        var checked = 0, overruns = 0
        while let record = capture.next() {
            guard let reports = byFrame[record.frame] else { continue }
            var reader = record.reader
            let packet = try HCIEventPacket(parsing: &reader)
            let datas: [[UInt8]]
            switch try packet.decodeParameters() {
            case let .leAdvertisingReport(e): datas = e.reports.map(\.data)
            case let .leExtendedAdvertisingReport(e): datas = e.reports.map(\.data)
            default: Issue.record("frame \(record.frame) is not an advertising report"); continue
            }
            #expect(datas.count == reports.count, "frame \(record.frame): \(datas.count) reports, tshark \(reports.count)")
            for (report, data) in zip(reports, datas) {
                overruns += Self.checkADTypes(report, data, frame: record.frame) ? 1 : 0
                checked += 1
            }
        }
        #expect(checked == theirs.count)
        print("\(path): \(checked) reports, \(overruns) with an AD structure past the data")
    }
}
