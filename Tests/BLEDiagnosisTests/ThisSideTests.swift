import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// This side on the Platform line: the name its host gave the controller and the controller's maker and version. The
/// Domyos treadmill log (tshark): Read Local Version Information answered at 8 (Qualcomm 0x001d, HCI 4.1), Change Local
/// Name 'Telefono Mi' at 60; the Fire OS tablet: MediaTek HCI 4.0 at 20, 'Amazon Fire' at 69, no platform named.
@Suite struct ThisSideTests {
    static let writeLocalName = HCICommand(ogf: 0x03, ocf: 0x0013)
    static let readLocalName = HCICommand(ogf: 0x03, ocf: 0x0014)

    /// The 248-octet name field: UTF-8, then NULs.
    static func nameField(_ name: String) -> [UInt8] {
        let bytes = Array(name.utf8)
        return bytes + [UInt8](repeating: 0, count: 248 - bytes.count)
    }

    static func platformLine(_ b: CaptureBuilder) throws -> String {
        let text = DiagnosisReport.analyze(try b.captureFile()).text(terminal: Terminal(colors: false), width: 400)
        return try #require(text.split(separator: "\n").first { $0.hasPrefix("Platform: ") }.map(String.init))
    }

    @Test func theNameTheHostGaveAndTheControllerWithTheirFrames() throws {
        // 1: Write Local Name; 2, 3: Read Local Version (Broadcom 0x000F, HCI 0x08: 4.2).
        let b = CaptureBuilder().command(HCIBuild.command(Self.writeLocalName, parameters: Self.nameField("Telefono Mi")))
            .localVersion(manufacturer: ControllerManufacturer(0x000F), hciVersion: 0x08)
        #expect(
            try Self.platformLine(b)
                == "Platform: not named by the log; this side 'Telefono Mi' (frame 1), Broadcom Corporation controller, HCI 4.2 (frame 3)")
        let side = try #require(DiagnosisReport.analyze(try b.captureFile()).result.thisSide)
        #expect(side.name?.name == "Telefono Mi" && side.controllerMaker == "Broadcom Corporation" && side.hciVersion == "4.2")
    }

    @Test func readLocalNameAnsweredNamesThisSideAndARefusedOneDoesNot() throws {
        let read = CaptureBuilder().command(HCIBuild.command(Self.readLocalName))
            .event(HCIBuild.commandComplete(Self.readLocalName, returnParameters: [0x00] + Self.nameField("hu")))
        #expect(try Self.platformLine(read) == "Platform: not named by the log; this side 'hu' (frame 2)")
        // Near miss: the controller refused the read (0x01): no name, and nothing else to say, so no line.
        let refused = CaptureBuilder().command(HCIBuild.command(Self.readLocalName))
            .event(HCIBuild.commandComplete(Self.readLocalName, returnParameters: [0x01] + Self.nameField("hu")))
        #expect(DiagnosisReport.analyze(try refused.captureFile()).result.thisSide == nil)
    }

    /// The report's summary says who logged as `diagnose` does: its platform item is the same line, at the name's frame
    /// when no platform is named (it had only the platform, so a log naming this side alone had no item).
    @Test func theReportsPlatformItemCarriesThisSide() throws {
        let b = CaptureBuilder().command(HCIBuild.command(Self.writeLocalName, parameters: Self.nameField("Telefono Mi")))
            .localVersion(manufacturer: ControllerManufacturer(0x000F), hciVersion: 0x08)
        let line = try Self.platformLine(b).dropFirst("Platform: ".count)
        let file = Report.analyze(capture: try b.captureFile())
        let item = try #require(file.summary.first { $0.topic == "platform" })
        #expect(item.text == String(line) && item.frame == 1)
        // Near miss: no name, no controller, no platform: no item.
        let plain = Report.analyze(capture: try CaptureBuilder().connect(handle: 0x40).captureFile())
        #expect(!plain.summary.contains { $0.topic == "platform" })
    }
}
