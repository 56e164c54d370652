import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

/// Issue 49: an HCI Reset ends every link open on its controller, of every transport (Core Spec Vol 4, Part E, 7.3.2:
/// "the Controller … shall … terminate all connections"): SCO/eSCO links and CISes as well as ACL ones, each ended by
/// the reset at the reset's frame. Before, only ACL links ended there, and an eSCO link whose ACL the log never showed
/// (or a CIS) stayed "still up when the log ends".
@Suite struct ResetEndsEveryLinkTests {
    /// An eSCO link on 0x0101 (Synchronous Connection Complete, no ACL for it in the log) and a CIS on 0x0060 (LE CIS
    /// Established, subevent 0x19: status, CIS handle, 25 octets of timing), then `tail`.
    static func links(_ tail: (CaptureBuilder) -> CaptureBuilder) -> CaptureBuilder {
        let cis = HCIBuild.leMeta(LESubevent(0x19), parameters: [0x00, 0x60, 0x00] + [UInt8](repeating: 1, count: 25))
        let b = CaptureBuilder()
            .declaredEvent(
                SynchronousConnectionComplete {
                    $0.handle = 0x0101; $0.address = BDAddress(0x00_1A_7D_DA_71_13); $0.linkType = 2; $0.airMode = .transparent
                }
            )
            .event(cis)
            .sco(handle: 0x0101, .rx, bytes: 24)
        return tail(b)
    }

    static func analyze(_ b: CaptureBuilder) throws -> (CaptureAnalysis, DiagnosisResult) {
        let (analysis, _) = LogScope.analyze(try b.captureFile(), options: AnalyzerOptions(timeline: false))
        return (analysis, DiagnosisReport.analyze(try b.captureFile()).result)
    }

    @Test func aResetEndsTheSynchronousLinksAndTheCISesOpenAtIt() throws {
        let (analysis, diagnosis) = try Self.analyze(Self.links { $0.reset() })
        let sco = try #require(analysis.classic.synchronousLinks.first)
        #expect(sco.endFrame == 4 && sco.endedByReset && sco.endReason == nil)
        let cis = try #require(analysis.iso.streams.first)
        #expect(cis.endFrame == 4 && cis.endedByReset && cis.endReason == nil)
        let line = try #require(diagnosis.story.sentences.map(\.text).first { $0.hasPrefix("Audio connection") })
        #expect(line.contains("eSCO link up at frame 1 (transparent), ended by the HCI Reset at 4"), "\(line)")
        #expect(ISOReport(iso: analysis.iso).text(terminal: Terminal(colors: false)).contains("ended: by this side's HCI Reset (frame 4)"))
    }

    /// The near miss: each link removed by its own Disconnection Complete before the reset ends there, by its reason, not
    /// by the reset.
    @Test func aLinkRemovedBeforeTheResetEndsByItsOwnDisconnection() throws {
        let b = Self.links {
            $0.disconnect(handle: 0x0101, reason: .connectionTerminatedByLocalHost)
                .disconnect(handle: 0x0060, reason: .remoteUserTerminatedConnection).reset()
        }
        let (analysis, diagnosis) = try Self.analyze(b)
        let sco = try #require(analysis.classic.synchronousLinks.first)
        #expect(sco.endFrame == 4 && !sco.endedByReset && sco.endReason == .connectionTerminatedByLocalHost)
        let cis = try #require(analysis.iso.streams.first)
        #expect(cis.endFrame == 5 && !cis.endedByReset && cis.endReason == .remoteUserTerminatedConnection)
        #expect(diagnosis.story.sentences.map(\.text).contains { $0.contains("removed at 4") })
    }
}
