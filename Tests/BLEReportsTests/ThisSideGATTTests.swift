import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

@testable import BLEReports

/// Issue 49, point 6: a peripheral-side log, where the peer discovers this side's database (the BTstack LE pairing log's
/// 18 ATT PDUs): `gatt`, its JSON and `diff` show this side's database like a peer's, marked as this side's.
@Suite struct ThisSideGATTTests {
    /// CaptureDifferTests' discovery with the roles turned round: this side the peripheral and GATT server, the peer's
    /// requests received, this side's responses sent.
    static func peripheralSide(_ characteristics: [CaptureDifferTests.Char]) -> CaptureBuilder {
        let central = CaptureDifferTests.capture(interval: 24, characteristics: characteristics)
        var b = CaptureBuilder()
            .event(HCIBuild.leConnectionComplete(handle: 0x40, role: .peripheral, peer: CaptureDifferTests.peer))
        for r in central.records.dropFirst() where r.kind == .acl {
            b = b.record(.acl, r.direction == .tx ? .rx : .tx, r.bytes)
        }
        return b
    }

    static func gatt(_ b: CaptureBuilder) throws -> GATTReport {
        let (result, _) = LogScope.analyze(
            try b.captureFile(), options: AnalyzerOptions(timeline: false, evidence: false), observing: Observing(gattUsage: true))
        return GATTReport(connections: result.connections, usage: result.gattUsage ?? GATTUsage())
    }

    @Test func thisSidesDatabaseIsShownAndMarked() throws {
        let report = try Self.gatt(Self.peripheralSide(CaptureDifferTests.firmwareN))
        let text = report.text(terminal: Terminal(colors: false, width: 200))
        #expect(!text.contains("No GATT database"))
        #expect(text.contains("database: the peer's: none (this side was the GATT server)"))
        #expect(text.contains("this side's own database, as the peer discovered and used it:"))
        #expect(text.contains("0x180D") || text.contains("Heart Rate"))
        let json = try #require(JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
        let connection = try #require((json["connections"] as? [[String: Any]])?.first)
        #expect((connection["services"] as? [Any])?.isEmpty == true)
        let thisSide = try #require(connection["this_side"] as? [String: Any])
        let services = try #require(thisSide["services"] as? [[String: Any]])
        // The full 128-bit form, as the peer's services (GATTWithoutDiscoveryTests).
        #expect(services.map { $0["uuid"] as? String } == ["0000180D-0000-1000-8000-00805F9B34FB"])
        let characteristics = try #require(services.first?["characteristics"] as? [[String: Any]])
        #expect(characteristics.compactMap { $0["value_handle"] as? Int } == [0x0012, 0x0015])
    }

    /// The near miss: this side as client shows the peer's database, and no `this_side`.
    @Test func aCentralSideLogShowsThePeersOnly() throws {
        let report = try Self.gatt(CaptureDifferTests.capture(interval: 24, characteristics: CaptureDifferTests.firmwareN))
        let text = report.text(terminal: Terminal(colors: false, width: 200))
        #expect(!text.contains("this side's own database") && text.contains("database: discovery"))
        let json = try #require(JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
        let connection = try #require((json["connections"] as? [[String: Any]])?.first)
        #expect(connection["this_side"] == nil && (connection["services"] as? [Any])?.count == 1)
    }

    @Test func diffComparesThisSidesDatabase() throws {
        let a = try CaptureDifferTests.analysed(Self.peripheralSide(CaptureDifferTests.firmwareN))
        let b = try CaptureDifferTests.analysed(Self.peripheralSide(CaptureDifferTests.firmwareN1))
        let d = CaptureDiffer.compare(a, b)
        let gatt = d.differences.filter { $0.section == .gatt }
        #expect(gatt.map(\.kind).sorted() == ["characteristic-added", "properties-changed"])
        let added = try #require(gatt.first { $0.kind == "characteristic-added" })
        #expect(added.subject == "this side's characteristic 0x2A38 Body Sensor Location in service 0x180D")
        #expect(CaptureDiffer.compare(a, a).differences.filter { $0.section == .gatt }.isEmpty)
    }
}
