import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// How a connection ends, fed one input at a time (Core Spec Vol 4, Part E, 7.1.6 and 7.7.5; Vol 6, Part B, 5.1.3).
@Suite struct ConnectionLifecycleTests {
    static func time(_ us: Int64) -> Timestamp { Timestamp(microseconds: us) }

    /// This side's Disconnect (reason 0x13 asked of the peer), then the controller's Disconnection Complete with
    /// 0x16 "terminated by local host": this side ended it, at the request's frame.
    @Test func aDisconnectThisSideAskedFor() throws {
        var l = ConnectionLifecycle()
        #expect(l.feed(.disconnectRequested(reason: .remoteUserTerminatedConnection, frame: 10)) == nil)
        #expect(l.pendingRequest?.frame == 10 && l.ending == nil)
        let out = l.feed(.disconnected(status: .success, reason: .connectionTerminatedByLocalHost, frame: 12, timestamp: Self.time(5)))
        guard case .closed(let e)? = out else {
            Issue.record("not closed: \(String(describing: out))")
            return
        }
        #expect(e.endedBy == .local && e.requestFrame == 10 && e.frame == 12 && e.code?.rawValue == 0x16)
        #expect(e.reason == HCIStatus.connectionTerminatedByLocalHost.description && l.ending == e && l.pendingRequest == nil)
    }

    /// This side's Disconnect, then a supervision timeout (the zengge LED log: Disconnect at 446, 0x08 at 527, 1.13 s
    /// later under an 8 s timeout): the link was lost before the termination could finish, so the link ended it, the
    /// request still cited. A 0x22 after the request (the peer never acknowledged LL_TERMINATE_IND) stays this side's.
    @Test(arguments: [(UInt8(0x08), ConnectionLifecycle.EndedBy.link), (0x22, .local), (0x16, .local)])
    func aSupervisionTimeoutAfterThisSideAskedIsALoss(_ code: UInt8, _ by: ConnectionLifecycle.EndedBy) {
        var l = ConnectionLifecycle()
        _ = l.feed(.disconnectRequested(reason: .remoteUserTerminatedConnection, frame: 446))
        _ = l.feed(.disconnected(status: .success, reason: HCIStatus(code), frame: 527, timestamp: Self.time(1)))
        #expect(l.ending?.endedBy == by && l.ending?.requestFrame == 446)
    }

    /// Without a request in the capture, the reason says who: the peer (0x13–0x15), the link (0x08, 0x3D, 0x3E), this
    /// side (0x16), nobody the capture can name (0x05 authentication failure).
    @Test(arguments: [
        (UInt8(0x13), ConnectionLifecycle.EndedBy.peer), (0x15, .peer), (0x08, .link), (0x3D, .link), (0x3E, .link),
        (0x22, .link), (0x16, .local), (0x05, .unknown),
    ])
    func theReasonSaysWhoEndedIt(_ code: UInt8, _ by: ConnectionLifecycle.EndedBy) {
        var l = ConnectionLifecycle()
        _ = l.feed(.disconnected(status: .success, reason: HCIStatus(code), frame: 3, timestamp: Self.time(1)))
        #expect(l.ending?.endedBy == by && l.ending?.requestFrame == nil)
    }

    /// A Disconnection Complete with an error status (0x0C command disallowed): the link stays up, the request is
    /// spent; the peer's later 0x13 is the peer's.
    @Test func aFailedDisconnectionLeavesTheLinkUp() {
        var l = ConnectionLifecycle()
        _ = l.feed(.disconnectRequested(reason: .remoteUserTerminatedConnection, frame: 4))
        #expect(
            l.feed(.disconnected(status: HCIStatus(0x0C), reason: .remoteUserTerminatedConnection, frame: 5, timestamp: Self.time(1)))
                == .disconnectFailed(HCIStatus(0x0C)))
        #expect(l.ending == nil && l.pendingRequest == nil)
        _ = l.feed(.disconnected(status: .success, reason: .remoteUserTerminatedConnection, frame: 9, timestamp: Self.time(2)))
        #expect(l.ending?.endedBy == .peer && l.ending?.frame == 9)
        // Ended: nothing changes it any more.
        #expect(l.feed(.replaced(why: "x", frame: 11, timestamp: Self.time(3))) == nil && l.ending?.frame == 9)
    }

    /// LL_TERMINATE_IND on an air capture: its sender ended it, unless its code is a link loss; a reused access
    /// address ends the old link without saying who.
    @Test func airCapturesEndByTheTerminateOrAReusedAddress() {
        var peer = ConnectionLifecycle()
        _ = peer.feed(.terminated(code: 0x13, byCentral: false, frame: 7, timestamp: Self.time(1)))
        #expect(peer.ending?.endedBy == .peer && peer.ending?.reason == "LL_TERMINATE_IND: Remote User Terminated Connection")
        var mic = ConnectionLifecycle()
        _ = mic.feed(.terminated(code: 0x3D, byCentral: true, frame: 7, timestamp: Self.time(1)))
        #expect(mic.ending?.endedBy == .link)
        var unknown = ConnectionLifecycle()
        _ = unknown.feed(.terminated(code: 0x13, byCentral: nil, frame: 7, timestamp: Self.time(1)))
        #expect(unknown.ending?.endedBy == .unknown)
        var reused = ConnectionLifecycle()
        _ = reused.feed(.replaced(why: "access address reused by a new CONNECT_IND", frame: 8, timestamp: Self.time(2)))
        #expect(reused.ending?.endedBy == .unknown && reused.ending?.code == nil)
    }

    /// Through the analyzer: the HCI Disconnect a host sent reaches its connection, whose Disconnection Complete then
    /// ends it locally; a connection whose handle a new Connection Complete takes ends there, unknown by whom.
    @Test func theAnalyzerFeedsEachConnectionItsEnd() throws {
        var b = CaptureBuilder().connect(handle: 0x40, peer: BDAddress(0xC0_11_22_33_44_55))
        let request = b.nextFrame
        b = b.disconnectCommand(handle: 0x40)
        let complete = b.nextFrame
        b = b.disconnect(handle: 0x40, reason: .connectionTerminatedByLocalHost)
        b = b.connect(handle: 0x41, peer: BDAddress(0xC0_11_22_33_44_66))
        let replacedAt = b.nextFrame
        b = b.connect(handle: 0x41, peer: BDAddress(0xC0_11_22_33_44_66))
        let (analyzer, _) = try AnalyzerRun.analyze(b)
        let first = try #require(analyzer.connections.first?.lifecycle.ending)
        #expect(first.endedBy == .local && first.requestFrame == request && first.frame == complete)
        let second = try #require(analyzer.connections[1].lifecycle.ending)
        #expect(
            second.endedBy == .unknown && second.frame == replacedAt && second.reason == "replaced by a new connection on the same handle")
        #expect(analyzer.connections[2].lifecycle.ending == nil)
    }
}
