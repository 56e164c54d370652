import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// Issue 49, point 5: the log's edges on HCI. A Disconnection Complete for a handle nothing else in the log names (the
/// BTstack LE pairing log: 3.5 ms after its HCI Reset, frame 23) ends a link from before the log: counted as such, with
/// nothing claimed of a link that never was; a link that began before the log and carried traffic is counted with its
/// end; a Disconnection Complete for an open link is still that link's end.
@Suite struct HCIEdgesTests {
    static func analyze(_ b: CaptureBuilder) throws -> (DiagnosisResult, CaptureCompleteness, [Connection]) {
        let report = DiagnosisReport.analyze(try b.captureFile())
        let (analysis, scope) = LogScope.analyze(try b.captureFile(), options: AnalyzerOptions(timeline: false))
        return (report.result, scope.completeness, analysis.connections)
    }

    @Test func aDisconnectionAfterTheResetForAHandleNeverOpenedIsStale() throws {
        let b = CaptureBuilder(step: 3_500)
            .command(HCIBuild.command(.reset))
            .disconnect(handle: 0x004A, reason: .remoteUserTerminatedConnection)
            .event(HCIBuild.commandComplete(.reset))
        let (diagnosis, completeness, connections) = try Self.analyze(b)
        #expect(connections.isEmpty)
        #expect(diagnosis.findings.filter { $0.rule.hasPrefix("DC-") }.isEmpty)
        #expect(!completeness.items.contains { $0.code == .linkBeforeLogEnded })
        let item = try #require(completeness.items.first { $0.code == .staleAfterReset })
        #expect(item.severity == .info && item.frame == 2 && item.count == 1)
        #expect(
            item.message
                == "1 event for 0x004a came 3.5 ms after the HCI Reset at frame 1 (Disconnection Complete 2), for no link the log holds: the controller's from before the reset, which ended that link; no link is counted and nothing is claimed of it"
        )
    }

    /// The near miss: without a reset just before it (none, or one more than a second earlier) the same event ends a
    /// link from before the log.
    @Test func aDisconnectionForAHandleNeverOpenedLongAfterTheResetIsALinkFromBeforeTheLog() throws {
        let b = CaptureBuilder(step: 1_200_000)
            .command(HCIBuild.command(.reset))
            .disconnect(handle: 0x004A, reason: .remoteUserTerminatedConnection)
        let (diagnosis, completeness, connections) = try Self.analyze(b)
        #expect(connections.isEmpty && diagnosis.findings.filter { $0.rule.hasPrefix("DC-") }.isEmpty)
        #expect(!completeness.items.contains { $0.code == .staleAfterReset })
        let item = try #require(completeness.items.first { $0.code == .linkBeforeLogEnded })
        #expect(
            item.message
                == "1 link from before the log ended: a Disconnection Complete for handle 0x004a (Remote User Terminated Connection, frame 2, 1 s after the HCI Reset at frame 1) names no link the log holds anything else of; nothing else is known of it"
        )
    }

    /// This side's HCI Reset ends the links open at it, there and by this side; the events the controller queued before
    /// it, logged within a second after it for handles no link holds, make no link and no finding. Thewbi's BTstack log
    /// on a BT400 (corpus): Max Slots Change 45, Link Supervision Timeout Changed 46 and a Disconnection Complete 0x13 at
    /// 49 for handle 0x000b, 1–6 ms after the Reset at 43 (whose Command Complete never came; 47 answers No Operation),
    /// were a link from before the log "first seen at frame 46" (CQ-01) that "ended the connection" (DC-02).
    @Test func aResetEndsItsLinksAndTheEventsAfterItForThemAreStale() throws {
        let b = CaptureBuilder(step: 1_000)
            .connect(handle: 0x0040, peer: RuleTest.peer)
            .command(HCIBuild.command(.reset))
            .event(HCIBuild.event(HCIEventCode(0x1B), parameters: [0x0B, 0x00, 0x05]))
            .event(HCIBuild.event(HCIEventCode(0x38), parameters: [0x0B, 0x00, 0x40, 0x1F]))
            .disconnect(handle: 0x000B, reason: .remoteUserTerminatedConnection)
            .disconnect(handle: 0x0040, reason: .remoteUserTerminatedConnection)
        let (diagnosis, completeness, connections) = try Self.analyze(b)
        #expect(connections.map(\.handle) == [0x0040])
        let ending = try #require(connections.first?.lifecycle.ending)
        #expect(
            ending.frame == 2 && ending.endedBy == .local && ending.code == nil
                && ending.text == "HCI Reset at frame 2 (this side ended it)")
        #expect(diagnosis.findings.filter { $0.rule.hasPrefix("DC-") || $0.rule.hasPrefix("CQ-01") }.isEmpty)
        #expect(!completeness.items.contains { $0.code == .linkBeforeLogEnded || $0.code == .startedBeforeCapture })
        let item = try #require(completeness.items.first { $0.code == .staleAfterReset })
        #expect(item.frame == 3 && item.count == 4)
        #expect(
            item.message
                == "4 events for 0x000b, 0x0040 came 1.0 ms after the HCI Reset at frame 2 (Max Slots Change 3, Link Supervision Timeout Changed 4, Disconnection Complete 5, …), for no link the log holds: the controller's from before the reset, which ended those links; no link is counted and nothing is claimed of them"
        )
    }

    /// The near misses: the same events with no reset before them are a link from before the log and its end by the
    /// peer; a link opened after the reset, within the second, ends by its own Disconnection Complete.
    @Test func withoutAResetTheSameEventsAreALinkFromBeforeTheLog() throws {
        let b = CaptureBuilder(step: 1_000)
            .event(HCIBuild.event(HCIEventCode(0x1B), parameters: [0x0B, 0x00, 0x05]))
            .event(HCIBuild.event(HCIEventCode(0x38), parameters: [0x0B, 0x00, 0x40, 0x1F]))
            .disconnect(handle: 0x000B, reason: .remoteUserTerminatedConnection)
        let (diagnosis, completeness, connections) = try Self.analyze(b)
        #expect(connections.count == 1 && connections[0].inferred && connections[0].startFrame == 2)
        #expect(connections[0].lifecycle.ending?.frame == 3 && connections[0].lifecycle.ending?.endedBy == .peer)
        #expect(diagnosis.of("DC-02").map(\.frame) == [3])
        #expect(!completeness.items.contains { $0.code == .staleAfterReset })
        let reopened = CaptureBuilder(step: 1_000)
            .command(HCIBuild.command(.reset)).event(HCIBuild.commandComplete(.reset))
            .connect(handle: 0x0040, peer: RuleTest.peer)
            .disconnect(handle: 0x0040, reason: .remoteUserTerminatedConnection)
        let (again, edges, links) = try Self.analyze(reopened)
        #expect(links.count == 1 && links[0].lifecycle.ending?.frame == 4 && links[0].lifecycle.ending?.endedBy == .peer)
        #expect(again.of("CE-04").map(\.frame) == [4])  // the peer ended it 1 ms after it opened
        #expect(!edges.items.contains { $0.code == .staleAfterReset })
    }

    /// The near miss: the same event for a link the log opened is that link's end, and the peer's (DC-02).
    @Test func aDisconnectionForAnOpenLinkIsStillItsEnd() throws {
        let b = CaptureBuilder().command(HCIBuild.command(.reset)).event(HCIBuild.commandComplete(.reset))
            .connect(handle: 0x004A, peer: RuleTest.peer).at(5)
            .disconnect(handle: 0x004A, reason: .remoteUserTerminatedConnection)
        let (diagnosis, completeness, connections) = try Self.analyze(b)
        #expect(connections.count == 1 && connections[0].lifecycle.ending?.frame == 4 && connections[0].lifecycle.ending?.endedBy == .peer)
        #expect(diagnosis.of("DC-02").map(\.frame) == [4])
        #expect(!completeness.items.contains { $0.code == .linkBeforeLogEnded })
    }

    /// A link that began before the log (traffic on a handle no Connection Complete opened) is counted, and so is its end
    /// by this side's Disconnect.
    @Test func aLinkFromBeforeTheLogWithTrafficIsCountedWithItsEnd() throws {
        let b = CaptureBuilder()
            .notify(handle: 0x0025, [1, 2], connection: 0x0041)
            .disconnectCommand(handle: 0x0041)
            .disconnect(handle: 0x0041, reason: .connectionTerminatedByLocalHost)
        let (diagnosis, completeness, connections) = try Self.analyze(b)
        #expect(connections.count == 1 && connections[0].inferred && connections[0].lifecycle.ending?.endedBy == .local)
        #expect(connections[0].lifecycle.ending?.frame == b.records.count)
        #expect(!completeness.items.contains { $0.code == .linkBeforeLogEnded })
        #expect(completeness.items.contains { $0.code == .startedBeforeCapture && $0.frame == 1 })
        #expect(diagnosis.story.sentences.map(\.text).joined().contains("1 closed by this side (0x16)"))
    }

    /// The near miss of a CIS: its Disconnection Complete ends a channel the log set up on its own handle (LE CIS
    /// Established, subevent 0x19: status, CIS handle, then 25 octets of timing), not a link from before the log. The LE
    /// Audio unicast Sample's CIS 0x0002, closed at frame 1062, was taken for one.
    @Test func aCISTheLogEstablishedEndsNoLinkFromBeforeIt() throws {
        let established = HCIBuild.leMeta(LESubevent(0x19), parameters: [0x00, 0x60, 0x00] + [UInt8](repeating: 1, count: 25))
        let b = CaptureBuilder().command(HCIBuild.command(.reset)).event(HCIBuild.commandComplete(.reset))
            .connect(handle: 0x0040, peer: RuleTest.peer)
            .event(established)
            .disconnect(handle: 0x0060, reason: .connectionTerminatedByLocalHost)
        let (_, completeness, _) = try Self.analyze(b)
        #expect(!completeness.items.contains { $0.code == .linkBeforeLogEnded })
        #expect(!completeness.items.contains { $0.code == .staleAfterReset })
        // Without its CIS Established, the same Disconnection Complete is the controller's from before the reset.
        let unseen = CaptureBuilder().command(HCIBuild.command(.reset)).event(HCIBuild.commandComplete(.reset))
            .connect(handle: 0x0040, peer: RuleTest.peer)
            .disconnect(handle: 0x0060, reason: .connectionTerminatedByLocalHost)
        #expect(try Self.analyze(unseen).1.items.contains { $0.code == .staleAfterReset && $0.frame == 4 })
    }

    /// A Connection Complete between the HCI Reset and its Command Complete is one the controller queued before it
    /// reset (BTstack's Audio Gateway log: a BR/EDR Connection Complete 1.5 ms after the Reset, frames 33–34; tshark shows
    /// the Reset's Command Complete at 38 and on handle 0x0047 only a Max Slots Change, 36): the reset ended it, so no link is counted,
    /// nothing is claimed of it, and the capture's edges say so. An LE one the same.
    @Test func aConnectionCompleteBeforeTheResetCompletedIsNoLink() throws {
        let b = CaptureBuilder(step: 1_500)
            .command(HCIBuild.command(.reset))
            .connect(handle: 0x0047, peer: RuleTest.peer)
            .event(HCIBuild.connectionComplete(handle: 0x0048, peer: BDAddress(0x00_1A_7D_DA_71_02)))
            .event(HCIBuild.commandComplete(.reset))
        let (diagnosis, completeness, connections) = try Self.analyze(b)
        #expect(connections.isEmpty)
        #expect(diagnosis.findings.filter { $0.rule.hasPrefix("DC-") || $0.rule.hasPrefix("CE-") }.isEmpty)
        #expect(!completeness.items.contains { $0.code == .openAtEnd })
        let item = try #require(completeness.items.first { $0.code == .staleAfterReset })
        #expect(item.severity == .info && item.frame == 2 && item.count == 2)
        #expect(
            item.message
                == "a Connection Complete for handle 0x0047 at frame 2 (+1 more) came before the HCI Reset at frame 1 completed: a connection from before the reset, which ended it; no link is counted"
        )
    }

    /// The near misses: the same events once the reset completed open links; so does one after a reset whose completion
    /// the log lacks, once more than a second went by (``StaleAfterReset/window``).
    @Test func aConnectionCompleteAfterTheResetCompletedIsALink() throws {
        let completed = CaptureBuilder(step: 1_500)
            .command(HCIBuild.command(.reset)).event(HCIBuild.commandComplete(.reset))
            .connect(handle: 0x0047, peer: RuleTest.peer)
            .event(HCIBuild.connectionComplete(handle: 0x0048, peer: BDAddress(0x00_1A_7D_DA_71_02)))
        let (_, completeness, connections) = try Self.analyze(completed)
        #expect(connections.map(\.handle) == [0x0047, 0x0048] && connections.map(\.startFrame) == [3, 4])
        #expect(!completeness.items.contains { $0.code == .staleAfterReset })
        #expect(completeness.items.first { $0.code == .openAtEnd }?.count == 2)
        let uncompleted = CaptureBuilder(step: 1_200_000)
            .command(HCIBuild.command(.reset))
            .connect(handle: 0x0047, peer: RuleTest.peer)
        let (_, late, lateConnections) = try Self.analyze(uncompleted)
        #expect(lateConnections.count == 1 && !late.items.contains { $0.code == .staleAfterReset })
    }
}

/// Issue 49, scope 5: after this side's HCI Reset a link begins with its Connection Complete, so an event stating a
/// link's facts for a handle none opened is stale however late it comes: a Mode Change 5 s after the reset makes no
/// link (before, past the 1 s window, it inferred a BR/EDR link up "before the log"). Near miss: after a Connection
/// Complete for the handle, the same Mode Change is that link's.
@Suite struct LateStaleEventsTests {
    static func modeChange(_ handle: UInt16) -> ModeChange {
        var m = ModeChange()
        m.handle = handle
        m.mode = 2
        m.interval = 800
        return m
    }

    @Test func aModeChangeLongAfterTheResetForAHandleNoneOpenedIsStale() throws {
        let b = CaptureBuilder().command(HCIBuild.command(.reset)).event(HCIBuild.commandComplete(.reset)).at(5)
            .declaredEvent(Self.modeChange(0x000B))
        let (_, completeness, connections) = try HCIEdgesTests.analyze(b)
        #expect(connections.isEmpty)
        let item = try #require(completeness.items.first { $0.code == .staleAfterReset })
        #expect(item.frame == 3 && item.count == 1)
        #expect(
            item.message.hasSuffix(
                "after the HCI Reset at frame 1 (Mode Change 3), for no link the log holds: no Connection Complete opened that handle since the reset, which ended every link; no link is counted and nothing is claimed of it"
            ), "\(item.message)")
        #expect(!completeness.items.contains { $0.code == .startedBeforeCapture })
    }

    @Test func aModeChangeForALinkOpenedAfterTheResetIsThatLinks() throws {
        let b = CaptureBuilder().command(HCIBuild.command(.reset)).event(HCIBuild.commandComplete(.reset))
            .connect(handle: 0x000B, peer: RuleTest.peer).at(5).declaredEvent(Self.modeChange(0x000B))
        let (_, completeness, connections) = try HCIEdgesTests.analyze(b)
        #expect(connections.count == 1 && !connections[0].inferred && connections[0].startFrame == 3)
        #expect(!completeness.items.contains { $0.code == .staleAfterReset })
    }

    /// Without a reset in the log the same Mode Change is a link from before the log (inferred, counted).
    @Test func withoutAResetTheModeChangeIsALinkFromBeforeTheLog() throws {
        let b = CaptureBuilder().declaredEvent(Self.modeChange(0x000B))
        let (_, completeness, connections) = try HCIEdgesTests.analyze(b)
        #expect(connections.count == 1 && connections[0].inferred)
        #expect(!completeness.items.contains { $0.code == .staleAfterReset })
    }
}
