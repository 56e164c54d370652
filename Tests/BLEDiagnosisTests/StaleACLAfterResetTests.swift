import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

/// Issue 49, scope 5: ACL on a handle no open link holds, after this side's HCI Reset, makes no link. The reset ended
/// every link of the controller (Core Spec Vol 4, Part E, 7.3.2) and a link after it begins with its Connection
/// Complete, so the packets are counted as stale (said once, in the capture's edges), and HH-06 says where they came on
/// a handle whose link had ended (host and controller disagree), with no link "from before the log" (CQ-01) made of them.
@Suite struct StaleACLAfterResetTests {
    static func analyze(_ b: CaptureBuilder) throws -> (DiagnosisResult, CaptureCompleteness, [Connection]) {
        let report = DiagnosisReport.analyze(try b.captureFile())
        let (analysis, scope) = LogScope.analyze(try b.captureFile(), options: AnalyzerOptions(timeline: false))
        return (report.result, scope.completeness, analysis.connections)
    }

    @Test func aclAfterTheResetOnAHandleNoLinkHoldsMakesNoLink() throws {
        var b = CaptureBuilder().connect(handle: 0x0040, peer: RuleTest.peer)
        let reset = b.nextFrame
        b = b.reset()
        let first = b.nextFrame
        b = b.notify(handle: 0x0025, [1], connection: 0x0040).notify(handle: 0x0025, [2], connection: 0x0040)
            .notify(handle: 0x0025, [3], connection: 0x0050)
        let (diagnosis, completeness, connections) = try Self.analyze(b)
        #expect(connections.map(\.handle) == [0x0040] && connections[0].lifecycle.ending?.frame == reset)
        #expect(completeness.staleACL.map(\.handle) == [0x0040, 0x0050] && completeness.staleACL.map(\.packets) == [2, 1])
        #expect(completeness.staleACL.map(\.closedFrame) == [reset, nil])
        let item = try #require(completeness.items.first { $0.code == .staleAfterReset })
        #expect(item.severity == .info && item.frame == first && item.count == 3)
        #expect(
            item.message
                == "3 ACL packets on 0x0040, 0x0050 (from frame \(first)) came after the HCI Reset at frame \(reset) with no Connection Complete for their handles since: the reset ended every link, so no link is counted and nothing is claimed of one"
        )
        #expect(!completeness.items.contains { $0.code == .startedBeforeCapture })
        #expect(diagnosis.of("CQ-01").isEmpty)
        // The handle whose link the reset ended: host and controller disagree (HH-06), once; the handle never held, not.
        let hh06 = diagnosis.of("HH-06")
        #expect(hh06.map(\.frame) == [first] && hh06.first?.supporting.map(\.frame) == [reset])
        #expect(
            hh06.first?.message.hasPrefix("Data came on handle 0x0040 at frame \(first), after its connection ended at frame \(reset)")
                == true)
    }

    /// ACL on a handle whose link ended by its Disconnection Complete after the reset names that end, not the reset (the
    /// nexxtender .cfa: bring-up reset at 1, 0x0004 closed at 6098, ACL on it at 10932).
    @Test func aclAfterItsLinkEndedNamesTheEndNotTheReset() throws {
        var b = CaptureBuilder().reset().connect(handle: 0x0040, peer: RuleTest.peer)
        let closed = b.nextFrame
        b = b.disconnect(handle: 0x0040)
        let first = b.nextFrame
        b = b.notify(handle: 0x0025, [1], connection: 0x0040)
        let (_, completeness, connections) = try Self.analyze(b)
        #expect(connections.count == 1 && completeness.staleACL.map(\.closedFrame) == [closed])
        let item = try #require(completeness.items.first { $0.code == .staleAfterReset })
        #expect(
            item.message
                == "1 ACL packet on 0x0040 (from frame \(first)) came after its link ended at frame \(closed) (Disconnection Complete), with no Connection Complete for the handle since: no link is counted and nothing is claimed of one"
        )
    }

    /// The near misses: ACL on a handle never opened, with no reset in the log, is a link from before the log (an
    /// acl-only Android log); after the reset, a Connection Complete for the handle opens a link its ACL belongs to, and
    /// so does ACL logged just ahead of it (``LinkAdoption``: no stale count, no HH-06).
    @Test func withoutAResetOrWithAConnectionCompleteTheACLIsALinks() throws {
        let before = CaptureBuilder().notify(handle: 0x0025, [1], connection: 0x0050)
        let (diagnosis, completeness, connections) = try Self.analyze(before)
        #expect(connections.count == 1 && connections[0].inferred && diagnosis.of("CQ-01").count == 1)
        #expect(completeness.staleACL.isEmpty && !completeness.items.contains { $0.code == .staleAfterReset })

        let reopened = CaptureBuilder().connect(handle: 0x0040, peer: RuleTest.peer).reset()
            .connect(handle: 0x0040, peer: RuleTest.otherPeer).notify(handle: 0x0025, [1], connection: 0x0040)
        let (again, edges, links) = try Self.analyze(reopened)
        #expect(links.count == 2 && links.allSatisfy { !$0.inferred } && edges.staleACL.isEmpty && again.of("HH-06").isEmpty)

        let early = CaptureBuilder().reset().at(1.0).notify(handle: 0x0025, [1], connection: 0x0040).at(1.003)
            .connect(handle: 0x0040, peer: RuleTest.peer)
        let (earlyDiagnosis, earlyEdges, _) = try Self.analyze(early)
        #expect(earlyEdges.staleACL.isEmpty && !earlyEdges.items.contains { $0.code == .staleAfterReset })
        #expect(earlyDiagnosis.of("HH-06").isEmpty)
    }
}

/// Issue 49, scope 5: after this side's HCI Reset, ACL logged just ahead of its handle's Connection Complete is that
/// link's first traffic (``LinkAdoption``), not stale: the notification 3 ms before the Connection Complete is the
/// link's. Near miss: with no Connection Complete after it, the same ACL is stale and no link's.
@Suite struct EarlyACLAfterResetTests {
    @Test func aclJustBeforeItsConnectionCompleteIsTheLinks() throws {
        let early = CaptureBuilder().reset().at(1.0).notify(handle: 0x0025, [1], connection: 0x0040).at(1.003)
            .connect(handle: 0x0040, peer: RuleTest.peer)
        let (_, edges, links) = try StaleACLAfterResetTests.analyze(early)
        #expect(links.count == 1 && links[0].attPDUs == 1 && links[0].aclPackets.rx == 1)
        #expect(edges.staleACL.isEmpty)
    }

    @Test func aclWithNoConnectionCompleteAfterItIsStale() throws {
        let alone = CaptureBuilder().reset().at(1.0).notify(handle: 0x0025, [1], connection: 0x0040)
        let (_, edges, links) = try StaleACLAfterResetTests.analyze(alone)
        #expect(links.isEmpty && edges.staleACL.map(\.packets) == [1])
    }
}
