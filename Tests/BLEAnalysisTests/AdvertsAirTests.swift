import BLEAnalysis
import BLECapture
import BLETestSupport
import Foundation
import Testing

/// Advertising PDUs from air captures go through the same AD decoder as HCI reports: reports per
/// advertiser equal tshark's count of good-CRC ADV_IND/ADV_DIRECT_IND/ADV_NONCONN_IND/SCAN_RSP/ADV_SCAN_IND.
@Suite struct AdvertsAirTests {
    static var nrfCaptures: [String] { TestEnvironment.realCaptures.filter { $0.contains("nrfsniffer") } }

    @Test(.enabled(if: TestEnvironment.tsharkPath != nil), arguments: nrfCaptures)
    func reportsPerAdvertiserMatchTshark(_ path: String) throws {
        // Malformed packets (SweynTooth frame 352: a length that runs past the record) are findings, not reports.
        let filter =
            "btle.advertising_header && nordic_ble.crcok==1 && !_ws.malformed && ("
            + [0, 1, 2, 4, 6].map { "btle.advertising_header.pdu_type==\($0)" }.joined(separator: " || ") + ")"
        let out = try #require(TestEnvironment.tshark(["-n", "-r", path, "-Y", filter, "-T", "fields", "-e", "btle.advertising_address"]))
        var theirs: [String: Int] = [:]
        for line in out.split(separator: "\n") { theirs[line.uppercased(), default: 0] += 1 }
        let tracker = AdvertisingTracker.track(try CaptureFile.open(path: path))
        var ours: [String: Int] = [:]
        for d in tracker.devices { ours[d.address.description, default: 0] += d.reports }
        #expect(ours == theirs)
        #expect(tracker.reportCount == theirs.values.reduce(0, +))
    }
}
