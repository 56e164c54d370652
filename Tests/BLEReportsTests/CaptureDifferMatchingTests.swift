import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

@testable import BLEReports

/// How `diff` pairs connections whose peer addresses differ (a resolvable private address without its IRK): by the
/// peer's name (a read of Device Name 0x2A00, Core Spec Vol 3, Part C, 12.1; else the Local Name its address
/// advertised), then by GATT; each pair says how.
@Suite struct CaptureDifferMatchingTests {
    static let thermoA = BDAddress(0x5A_11_22_33_44_01), thermoB = BDAddress(0x6B_11_22_33_44_02)
    static let scale = BDAddress(0x4C_00_00_00_00_03)

    /// A connection to `peer` on `handle` whose central reads Device Name by its UUID (Read By Type 0x2A00, as iOS
    /// does) and gets `name` at handle 0x0003.
    static func named(_ b: CaptureBuilder, handle: UInt16, peer: BDAddress, name: String) -> CaptureBuilder {
        b.connect(handle: handle, peer: peer, role: .central)
            .att(
                .readByTypeRequest(
                    ATTTypeRequest(range: ATTHandleRange(start: 0x0001, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2A00))),
                handle: handle, .tx
            )
            .att(.readByTypeResponse([ATTHandleValue(handle: 0x0003, value: Array(name.utf8))]), handle: handle, .rx)
            .disconnect(handle: handle)
    }

    static func analysed(_ b: CaptureBuilder) throws -> FileAnalysis {
        Report.analyze(capture: try b.captureFile(), options: ReportOptions(backgroundTrackers: false))
    }

    /// A's thermometer is B's second connection (its first is a scale): in order they would pair wrongly; by the
    /// Device Name read (frame 3 of A, 7 of B: connection, request, response) they pair right.
    @Test func peersPairByTheirDeviceName() throws {
        let a = try Self.analysed(Self.named(CaptureBuilder(), handle: 0x40, peer: Self.thermoA, name: "Thermo-7"))
        let built = Self.named(
            Self.named(CaptureBuilder(), handle: 0x41, peer: Self.scale, name: "Scale"), handle: 0x42, peer: Self.thermoB, name: "Thermo-7")
        let b = try Self.analysed(built)
        #expect(a.usage.deviceNames[1] == GATTUsage.DeviceName(name: "Thermo-7", frame: 3))
        #expect(b.usage.deviceNames[1]?.name == "Scale" && b.usage.deviceNames[2] == GATTUsage.DeviceName(name: "Thermo-7", frame: 7))
        let d = CaptureDiffer.compare(a, b)
        #expect(
            d.pairs == [
                ConnectionPair(a: 1, b: 2, peer: "5A:11:22:33:44:01 ↔ 6B:11:22:33:44:02", matchedBy: "name", name: "Thermo-7")
            ])
        #expect(d.pairs.first?.matchedByText == "name 'Thermo-7'")
        #expect(d.differences.filter { $0.section == .connections }.map(\.kind).sorted() == ["connection-only-in-b", "peer"])
    }

    /// Names from advertising: the thermometer advertises "Thermo-7" from a different private address in each capture
    /// (written to files: the names come from a pass of each file's adverts), B's scale first.
    @Test func peersPairByTheNameTheyAdvertised() throws {
        func advert(_ address: BDAddress, _ name: String) -> [UInt8] {
            HCIBuild.event(
                .leAdvertisingReport(
                    LEAdvertisingReport(reports: [
                        .init(
                            eventType: 0, addressType: .random, address: address,
                            data: AdvertisingData([.localName(name, complete: true)]).bytes, rssi: -60)
                    ])))
        }
        let a = CaptureBuilder().event(advert(Self.thermoA, "Thermo-7")).connect(handle: 0x40, peer: Self.thermoA, role: .central)
        let b = CaptureBuilder().event(advert(Self.scale, "Scale")).event(advert(Self.thermoB, "Thermo-7"))
            .connect(handle: 0x41, peer: Self.scale, role: .central).disconnect(handle: 0x41)
            .connect(handle: 0x42, peer: Self.thermoB, role: .central)
        let directory = NSTemporaryDirectory() + "blescope-diff-names-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (pathA, pathB) = (directory + "/a.btsnoop", directory + "/b.btsnoop")
        try Data(a.btsnoopBytes()).write(to: URL(fileURLWithPath: pathA))
        try Data(b.btsnoopBytes()).write(to: URL(fileURLWithPath: pathB))
        #expect(DiffNames.advertisedNames(path: pathB) == ["4C:00:00:00:00:03": "Scale", "6B:11:22:33:44:02": "Thermo-7"])
        let options = ReportOptions(backgroundTrackers: false)
        let d = CaptureDiffer.compare(Report.analyze(path: pathA, options: options), Report.analyze(path: pathB, options: options))
        #expect(d.pairs.map { "\($0.a)↔\($0.b) \($0.matchedByText)" } == ["1↔2 name 'Thermo-7'"])
    }
}
