import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

/// The Log line says when the log starts from the host's HCI Reset (a Bluetooth power-on): every link of the log
/// began in it. newcap12's Domyos log (tshark: frame 1 "Sent Reset", 2 its Command Complete) and the fossibot Pixel
/// log; the Lenovo tablet's starts with Write Extended Inquiry Response, mid-session.
@Suite struct LogStartsAtResetTests {
    static func headline(_ b: CaptureBuilder) throws -> String {
        CaptureInfo(reading: try b.captureFile()).completeness.headline
    }

    @Test func aLogFromTheHostsResetSaysSo() throws {
        let b = CaptureBuilder().reset().connect(handle: 0x40).att(.readRequest(handle: 3), handle: 0x40, .tx).disconnect(handle: 0x40)
        let h = try Self.headline(b)
        #expect(h == "complete: the log shows every record whole, in time order, from the host's HCI Reset at frame 1", "\(h)")
    }

    @Test func nearMissDataBeforeTheResetOrAResetLateInTheLog() throws {
        // ACL of a link before the reset: the log began inside that link.
        let dataFirst = CaptureBuilder().att(.readRequest(handle: 3), handle: 0x40, .tx).reset()
        #expect(try !Self.headline(dataFirst).contains("from the host's HCI Reset"))
        // 25 records of harmless commands first: the reset is not where the log starts.
        var late = CaptureBuilder()
        for _ in 0..<25 { late = late.command(HCIBuild.command(.readLocalVersionInformation)) }
        #expect(try !Self.headline(late.reset()).contains("from the host's HCI Reset"))
    }
}
