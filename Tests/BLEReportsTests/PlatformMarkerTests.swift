import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

/// Issue 48, from the first runs on captures nobody tuned to: PacketLogger logs whose notes name Apple's stack without
/// the "Product:"/"Bluetooth Host:" notes (macOS IOBluetooth, PacketLogger's own iOS note) are Apple's, seen; a log
/// with notes that name nothing no longer reads "no notes"; a gap the log explains with PacketLogger's "System Sleep"
/// is the host asleep, not "a paused or rotated log?".
@Suite struct PlatformMarkerTests {
    /// frame 29 of `pklg-macos-le_hciparse-broadcom-2.5h-sleep-wake-bg-connect-create-cancel-x64.pklg`.
    static let ioBluetooth = "[IOBluetoothHCIUserClient][registerDaemon] -- Registering bluetoothd daemon with PID 112\n"

    @Test func macOSIOBluetoothNoteNamesMacOSSeen() throws {
        let p = try #require(PlatformTests.platform(try PlatformTests.packetLogger(notes: ["OFF->ON+\n", Self.ioBluetooth])))
        #expect(p.platform == .apple && p.detail == "macOS" && p.name == "macOS" && p.seen == .apple)
        #expect(p.provenance == .seen(frame: 2, what: "PacketLogger note \"[IOBluetoothHCIUserClient][registerDaemo\""))
    }

    @Test func packetLoggersLostIOSDeviceNoteNamesIOS() throws {
        // frame 905 of pklg-ios-le_peripage-iphone-ext-connect-accept-list-print-writecmd-capture-lost.pklg.
        let p = try #require(PlatformTests.platform(try PlatformTests.packetLogger(notes: ["iOS Device connection has been lost"])))
        #expect(p.platform == .apple && p.detail == "iOS" && p.provenance.frame == 1)
    }

    @Test func nearMissNotesThatNameNoPlatformAreSaidToBeNotesAndStayInferred() throws {
        let p = try #require(PlatformTests.platform(try PlatformTests.packetLogger(notes: ["OFF->ON+\n", "Q"])))
        #expect(p.provenance == .inferred(what: "PacketLogger format, no note names the platform") && p.seen == nil)
    }

    /// A PacketLogger log: an HCI Reset, the power notes `before` the pause, 50 min without a record, the `after`
    /// notes, another reset (frames: reset 1-2, notes 3…, reset after).
    static func pause(before: [String], after: [String]) throws -> DiagnosisReport {
        var b = CaptureBuilder().reset()
        for text in before { b = b.record(.text, .unknown, Array(text.utf8)) }
        b = b.at(microsecondsFromStart: 3_000_000_000)
        for text in after { b = b.record(.text, .unknown, Array(text.utf8)) }
        b = b.reset()
        let file = try CaptureFile.open(bytes: CaptureWriter.packetLogger(b.records, bigEndian: false), name: "mac.pklg")
        return DiagnosisReport.analyze(file)
    }

    @Test func aGapAfterSystemSleepIsTheHostAsleepSeen() throws {
        // PacketLogger repeats its notes ("System Sleep" twice, frames 635-636 of the hciparse log): the first one is cited.
        let report = try Self.pause(
            before: ["System Sleep", "System Sleep", "ON->SLEEP\n"], after: ["System Power On", "System PowerOn", "SLEEP->ON\n"])
        let gap = try #require(report.completeness?.items.first { $0.code == .timeGap })
        #expect(gap.frame == 9 && gap.severity == .info)
        #expect(gap.message.hasSuffix("the host slept (seen: PacketLogger's \"System Sleep\" at frame 3, \"System Power On\" at frame 6)"))
        let cq04 = try #require(report.result.findings.first { $0.rule == "CQ-04" })
        #expect(cq04.severity == .info && cq04.causes == ["the host asleep (PacketLogger's \"System Sleep\" note at frame 3, seen)"])
        #expect(!cq04.message.contains("unreliable"))
    }

    @Test func nearMissAGapWithoutASleepNoteIsStillAQuestion() throws {
        let report = try Self.pause(before: ["ON->ON bluetoothd+"], after: [])
        let gap = try #require(report.completeness?.items.first { $0.code == .timeGap })
        #expect(gap.message.hasSuffix("a paused or rotated log?"))
        #expect(report.result.findings.first { $0.rule == "CQ-04" }?.message.hasSuffix("Timing near it is unreliable.") == true)
    }
}
