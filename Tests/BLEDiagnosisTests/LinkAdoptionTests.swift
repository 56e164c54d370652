import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

/// Issue 49, "a stale event makes a link": Windows BTVS logs a link's first ACL (the peripheral's Security Request)
/// 3 ms before the LE Connection Complete that opens it (the OpenSnek Razer logs, 125 before 126 and 26520 before 26521).
/// The link that ACL opened is adopted by the Connection Complete: one link, set up in the log, not a link from before
/// the log plus a second one (``LinkAdoption``). The near misses: traffic no Connection Complete follows is a link from
/// before the log, and a Connection Complete after the handle's Disconnection Complete opens a new link.
@Suite struct LinkAdoptionTests {
    static let handle: UInt16 = 0x0010

    enum Between: String, CaseIterable {
        /// The Connection Complete 3 ms after the first ACL (BTVS).
        case nothing
        /// A Disconnection Complete for the handle between the ACL and the Connection Complete.
        case disconnection
        /// The Connection Complete 2 s after the ACL: too late to be the same link's.
        case twoSeconds
        /// No Connection Complete at all.
        case noConnectionComplete
    }

    static func capture(_ between: Between) -> (CaptureBuilder, complete: Int?) {
        // Times from the first record (``CaptureBuilder/at(_:)``).
        var b = CaptureBuilder().smp(.securityRequest([.bonding]), handle: handle, .rx)
        switch between {
        case .nothing: b = b.at(0.003)
        case .disconnection: b = b.at(0.001).disconnect(handle: handle).at(0.003)
        case .twoSeconds: b = b.at(2)
        case .noConnectionComplete: return (b.at(4).att(.readRequest(handle: 0x03), handle: handle, .tx), nil)
        }
        let complete = b.nextFrame
        b = b.connect(handle: handle, peer: RuleTest.peer).at(3).att(.readRequest(handle: 0x03), handle: handle, .tx)
        return (b, complete)
    }

    @Test(arguments: Between.allCases)
    func aLinksFirstACLJustBeforeItsConnectionCompleteIsThatLink(_ between: Between) throws {
        let (b, complete) = Self.capture(between)
        let (analysis, scope) = LogScope.analyze(try b.captureFile(), options: AnalyzerOptions(timeline: false))
        let inferredFindings = analysis.findings.filter { $0.kind.code == .hciConnectionInferred }
        let startedBefore = scope.completeness.items.first { $0.code == .startedBeforeCapture }
        switch between {
        case .nothing:
            // One link, opened by the event at frame 2, its peer and parameters the event's, the Security Request its own.
            let c = try #require(analysis.connections.only)
            #expect(!c.inferred && c.startFrame == complete && c.peerAddress == RuleTest.peer.description)
            #expect(c.link.transport.isObserved && c.link.transport.value == .le && c.link.parameters.value != nil)
            #expect(c.link.mtu.initialSource == .inferred(.initialValue(connectionFrame: 2)))
            #expect(c.activity.lastReceived?.frame == 1 && c.activity.lastSent?.frame == 3)
            #expect(inferredFindings.isEmpty && startedBefore == nil)
        case .disconnection, .twoSeconds:
            // The first link was from before the log (it ended, or the Connection Complete replaced it); a second opens.
            #expect(analysis.connections.map(\.inferred) == [true, false])
            #expect(analysis.connections.last?.startFrame == complete)
            #expect(inferredFindings.map(\.frame) == [1] && startedBefore?.frame == 1)
        case .noConnectionComplete:
            let c = try #require(analysis.connections.only)
            #expect(c.inferred && c.startFrame == 1 && inferredFindings.map(\.frame) == [1] && startedBefore?.frame == 1)
        }
    }

    /// BTVS's notifications keep ACL length 15, L2CAP length 11, the opcode and the handle, and nothing of the value (the
    /// 40-minute OpenSnek log from frame 1: tshark `bthci_acl.chandle == 0x0010` from frame 1, 28,842 cut). The handle of a
    /// record the logger cut is as sure as a whole one's: it names its link, from before the log when no Connection Complete
    /// follows, adopted when one does. A damaged record (0xCC filler, its headers disagreeing) names none.
    @Test func aRecordTheLoggerCutNamesItsLink() throws {
        let cut: [UInt8] = [0x10, 0x20, 0x0F, 0x00, 0x0B, 0x00, 0x04, 0x00, 0x1B, 0x2B, 0x00]
        let alone = CaptureBuilder().record(.acl, .rx, cut).at(1).record(.acl, .rx, cut)
        let (analysis, scope) = LogScope.analyze(try alone.captureFile(), options: AnalyzerOptions(timeline: false))
        let c = try #require(analysis.connections.only)
        #expect(c.inferred && c.handle == Self.handle && c.startFrame == 1)
        #expect(scope.completeness.items.first { $0.code == .startedBeforeCapture }?.frame == 1)
        let adopted = CaptureBuilder().record(.acl, .rx, cut).at(0.003).connect(handle: Self.handle, peer: RuleTest.peer)
        let (adoptedAnalysis, adoptedScope) = LogScope.analyze(try adopted.captureFile(), options: AnalyzerOptions(timeline: false))
        #expect(adoptedAnalysis.connections.map(\.inferred) == [false] && adoptedAnalysis.connections.first?.startFrame == 2)
        #expect(!adoptedScope.completeness.items.contains { $0.code == .startedBeforeCapture })
        let filler = CaptureBuilder().record(.acl, .rx, [0xCC, 0x0C, 0xCC, 0xCC] + [UInt8](repeating: 0xCC, count: 12))
        let (fillerAnalysis, fillerScope) = LogScope.analyze(try filler.captureFile(), options: AnalyzerOptions(timeline: false))
        #expect(fillerAnalysis.connections.isEmpty && !fillerScope.completeness.items.contains { $0.code == .startedBeforeCapture })
    }
}

extension Array {
    fileprivate var only: Element? { count == 1 ? first : nil }
}
