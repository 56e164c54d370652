import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// Issue 49: "the host closed a link that began before the log, and the story drops it". The iPhone AirTag log
/// (corpus, btsnoop datalink 1001): Disconnect for handle 0x0059 (668) and its Disconnection Complete 0x16 (670), no
/// other record of 0x0059 (tshark), beside 0x005e's traffic from frame 1. The story counted 1 link from before the log;
/// it counts both, and tells the end of the one it holds only the end of.
@Suite struct LinksBeforeTheLogTests {
    static func story(_ b: CaptureBuilder) throws -> [String] {
        DiagnosisReport.analyze(try b.captureFile()).result.story.sentences.map(\.text)
    }

    @Test func aLinkFromBeforeTheLogClosedByThisSideIsCountedWithItsEnd() throws {
        let b = CaptureBuilder().notify(handle: 0x0025, [1], connection: 0x005E)
            .disconnectCommand(handle: 0x0059, reason: .remoteUserTerminatedConnection)
            .disconnect(handle: 0x0059, reason: .connectionTerminatedByLocalHost)
        let told = try Self.story(b)
        #expect(
            told.contains(
                "2 links started before the log: how they were set up is not in it; handle 0x0059 was closed by this side at frame 4 (0x16), nothing else of it in the log."
            ), "\(told)")
    }

    /// A second Disconnection Complete for the handle, nothing opened on it between, is told beside the end, not
    /// dropped nor taken for another link (newcap14's iPhone BTServer log: 0x000b ended 0x13 at 27, again with reason
    /// 0x00 at 28, tshark `bthci_evt.code == 0x05`). The near miss: a Connection Complete between the two ends makes the
    /// second one the new link's own end.
    @Test func aHandleEndedTwiceIsToldOnceWithItsRepeat() throws {
        let twice = CaptureBuilder().disconnect(handle: 0x000B, reason: .remoteUserTerminatedConnection)
            .disconnect(handle: 0x000B, reason: .success)
        #expect(
            try Self.story(twice).contains(
                "1 link started before the log: how it was set up is not in it; handle 0x000b was ended (Remote User Terminated Connection) at frame 1 (0x13) and again at 2 (0x00), nothing else of it in the log."
            ))
        let reopened = CaptureBuilder().disconnect(handle: 0x000B, reason: .remoteUserTerminatedConnection)
            .connectBREDR(handle: 0x000B).disconnect(handle: 0x000B, reason: .remoteUserTerminatedConnection)
        let told = try Self.story(reopened)
        #expect(
            told.contains {
                $0.hasSuffix(
                    "handle 0x000b was ended (Remote User Terminated Connection) at frame 1 (0x13), nothing else of it in the log.")
            }, "\(told)")
    }

    /// The near misses: the same end after an HCI Reset is the controller's from before the reset (no link is counted,
    /// ``StaleAfterReset``, ``CaptureCompleteness/staleACL``); a link with traffic alone keeps its sentence.
    @Test func afterAResetOrWithTrafficAloneNoEndIsAdded() throws {
        let afterReset = CaptureBuilder(step: 1_200_000).reset().disconnect(handle: 0x0059, reason: .connectionTerminatedByLocalHost)
        #expect(!(try Self.story(afterReset)).contains { $0.contains("started before the log") })
        let trafficOnly = CaptureBuilder().notify(handle: 0x0025, [1], connection: 0x005E)
        #expect(try Self.story(trafficOnly).contains("1 link started before the log: how it was set up is not in it."))
    }

    /// The real log, when the corpus is there (BLESCOPE_CORPUS).
    @Test func theAirTagLogTellsTheLinkThePhoneDropped() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let path =
            dir + "/btsnoop-dl1001-hci-unencap_roko-iphone-airtag-play-sound-accept-list-stored-ltk-enc-v2-cid-003a.log"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let told = DiagnosisReport.analyze(try CaptureFile.open(path: path)).result.story.sentences.map(\.text)
        #expect(
            told.contains(
                "2 links started before the log: how they were set up is not in it; handle 0x0059 was closed by this side at frame 670 (0x16), nothing else of it in the log."
            ), "\(told)")
    }
}
