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

    /// The Realtek hands-free log (corpus batch 13, tshark): frame 1 "Sent Read BD ADDR", then Read Local Supported
    /// Commands, Read Buffer Size, Read Local Version: the host's own set-up, with no HCI Reset.
    @Test func aLogFromTheHostsSetUpWithoutAResetSaysSo() throws {
        let b = CaptureBuilder().command(HCIBuild.command(.readBDADDR)).connect(handle: 0x40)
            .att(.readRequest(handle: 3), handle: 0x40, .tx).disconnect(handle: 0x40)
        let h = try Self.headline(b)
        #expect(
            h
                == "complete: the log shows every record whole, in time order, from the host's set-up at frame 1 (Read BD_ADDR; no HCI Reset)",
            "\(h)")
    }

    @Test func nearMissASetUpReadWithALinkFromBeforeTheLogOrAnotherFirstCommand() throws {
        // ACL on a handle no Connection Complete opened: a link from before the log, so not its start.
        let before = CaptureBuilder().command(HCIBuild.command(.readBDADDR)).att(.readRequest(handle: 3), handle: 0x40, .tx)
        #expect(try !Self.headline(before).contains("from the host's set-up"))
        // The Lenovo tablet's first command, Write Extended Inquiry Response: mid-session.
        let eir = CaptureBuilder().command(HCIBuild.command(HCICommand(ogf: 0x03, ocf: 0x0052))).connect(handle: 0x40)
        #expect(try !Self.headline(eir).contains("from the host's"))
    }

    /// The Redmi LE Audio log (tshark: frame 1 "Sent Reset", one link open at the end): a note does not hide the start.
    @Test func aLogWithNotesStillSaysItStartsAtTheReset() throws {
        let h = try Self.headline(CaptureBuilder().reset().connect(handle: 0x40).att(.readRequest(handle: 3), handle: 0x40, .tx))
        #expect(h.hasPrefix("complete with notes: 1 connection still open when the capture ends"), "\(h)")
        #expect(h.hasSuffix("; from the host's HCI Reset at frame 1"), "\(h)")
        // Near miss: a warning gives the verdict; the start is not appended to it.
        let cut = try Self.headline(
            CaptureBuilder().reset().connect(handle: 0x40).record(.acl, .tx, [0x40, 0x00, 0x09, 0x00, 0x05], originalLength: 13))
        #expect(!cut.contains("from the host's"), "\(cut)")
    }
}
