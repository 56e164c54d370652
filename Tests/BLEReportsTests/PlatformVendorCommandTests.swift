import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// Issue 48: an iPhone's log exported as btsnoop (datalink 1001, the corpus's AirTag log) has no PacketLogger note to
/// name its platform, but its host sends Apple's vendor command 0xFCE9 (133 of them from frame 4, tshark "Command
/// Opcode: Unknown (0xfce9)"), which tshark finds in 9 of the 186 real captures, all Apple hosts' (iOS and macOS), and in
/// no other platform's (``PlatformBehaviour/hostVendorCommand``).
@Suite struct PlatformVendorCommandTests {
    static func platform(_ b: CaptureBuilder) throws -> PlatformIdentity? {
        DiagnosisReport.analyze(try b.captureFile(name: "phone.log")).result.platform
    }

    @Test func applesVendorCommandNamesItsHost() throws {
        let b = CaptureBuilder().reset().vendorCommand(HCICommand(0xFCE9), [0x4D] + [UInt8](repeating: 0, count: 59))
        let p = try #require(try Self.platform(b))
        #expect(p.platform == .apple && p.seen == .apple && p.detail == "iOS or macOS" && p.provenance.frame == 3)
        #expect(p.summary == "iOS or macOS (seen: vendor command 0xfce9, sent only by its host at frame 3)")
    }

    /// The near miss: another vendor command of the same controller's range (Broadcom's 0xFC4E, Download Minidriver,
    /// which any host may send) names no platform.
    @Test func anotherVendorCommandNamesNone() throws {
        #expect(try Self.platform(CaptureBuilder().reset().vendorCommand(HCICommand(0xFC4E))) == nil)
    }

    @Test func theAirTagLogIsAnApplesHost() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let path =
            dir + "/btsnoop-dl1001-hci-unencap_roko-iphone-airtag-play-sound-accept-list-stored-ltk-enc-v2-cid-003a.log"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let p = try #require(DiagnosisReport.analyze(try CaptureFile.open(path: path)).result.platform)
        #expect(p.platform == .apple && p.provenance.frame == 4)
    }
}
