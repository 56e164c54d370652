import BLEAnalysis
import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLEReports

/// Issue 46: SCO records with no data are no audio of any link. BTstack's mSBC gateway log holds 6 of them among its
/// 9,883 SCO packets (503-508: tshark "Rcvd SCO Data", "Connection Handle: 0x000", "Data Total Length: 0"; the eSCO
/// link is on 0x0042), which `info` counted as SCO received. They are counted apart, and said.
@Suite struct EmptySCORecordTests {
    /// An empty SCO record: handle 0x0000, flags 0, Data_Total_Length 0 (Core Spec Vol 4, Part E, 5.4.3).
    static let empty: [UInt8] = [0x00, 0x00, 0x00]

    static func info(_ b: CaptureBuilder) throws -> CaptureInfo { CaptureInfo(reading: try b.captureFile(name: "sco.btsnoop")) }

    @Test func emptySCORecordsAreCountedApartNotAsReceived() throws {
        var b = CaptureBuilder().sco(handle: 0x0042, .tx, bytes: 24).sco(handle: 0x0042, .tx, bytes: 24).sco(handle: 0x0042, .rx, bytes: 24)
        for _ in 0..<6 { b = b.record(.sco, .rx, Self.empty) }
        let info = try Self.info(b)
        let s = info.statistics
        #expect((s.scoTx, s.scoRx, s.scoEmpty, s.scoEmptyFirstFrame) == (2, 1, 6, 4))
        #expect(s.records == 9)
        #expect(info.byTypeText == "SCO tx 2, SCO rx 1, SCO empty 6 (no data, from frame 4: no link's audio)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(info.json.utf8)) as? [String: Any])
        let byType = try #require(json["by_type"] as? [String: Int])
        #expect((byType["sco_tx"], byType["sco_rx"], byType["sco_empty"]) == (2, 1, 6))
    }

    /// Near miss: a record on handle 0x0000 that carries data is SCO received (0x0000 is a valid handle: Vol 4, Part E,
    /// 5.4.3 reserves only 0x0F00-0x0FFF), and no empty count is said.
    @Test func aRecordWithDataOnHandleZeroIsStillReceived() throws {
        let info = try Self.info(CaptureBuilder().sco(handle: 0x0000, .rx, bytes: 1).sco(handle: 0x0042, .rx, bytes: 24))
        #expect((info.statistics.scoRx, info.statistics.scoEmpty) == (2, 0))
        #expect(info.byTypeText == "SCO rx 2")
    }

    /// The real log (corpus, BLESCOPE_CORPUS): tshark counts 9,883 SCO records with data (4,945 sent, 4,938 received)
    /// and 6 with Data Total Length 0, the first at frame 503.
    @Test func theGatewayLogsEmptyRecordsAreCountedAsTsharkCountsThem() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let path = dir + "/pklg-btstack-be_hfp-ag-stale-sco-acl-disconnects-after-reset-11s-page-bcs2-msbc-esco-10k-sco.pklg"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let s = CaptureInfo(reading: try CaptureFile.open(path: path), decode: false).statistics
        #expect((s.scoTx, s.scoRx, s.scoEmpty, s.scoEmptyFirstFrame) == (4_945, 4_938, 6, 503))
    }
}
