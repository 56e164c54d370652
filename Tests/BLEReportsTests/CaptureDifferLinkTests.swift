import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEReports

/// What `diff` says of who asked on the link: the ATT Exchange MTU (Core Spec Vol 3, Part F, 3.4.2: the client sends
/// its Client Rx MTU, the server answers with its Server Rx MTU; ATT_MTU is the smaller), from captures built of typed
/// packets.
@Suite struct CaptureDifferLinkTests {
    /// A central connecting to a peripheral that answers 247, and asking `clientMTU` (nil: the log starts after the
    /// request, only the response is in it).
    static func exchange(asking clientMTU: UInt16?) throws -> FileAnalysis {
        var b = CaptureBuilder().connect(handle: 0x40, role: .central)
        if let clientMTU { b = b.att(.exchangeMTURequest(clientRxMTU: clientMTU), handle: 0x40, .tx) }
        b = b.att(.exchangeMTUResponse(serverRxMTU: 247), handle: 0x40, .rx).disconnect(handle: 0x40)
        return Report.analyze(capture: try b.captureFile(), options: ReportOptions(backgroundTrackers: false))
    }

    /// An iPhone-like central asks 527, an Android-like one 517 (the values iOS 16+ and Android 14+ send); the same
    /// server answers 247, so ATT_MTU is 247 on both and only who asked what differs, with the request's frame (2).
    @Test func whoAskedTheMTUAndWhatEachAsked() throws {
        let iphone = try Self.exchange(asking: 527), android = try Self.exchange(asking: 517)
        let exchanges = iphone.evidence.compactMap { e -> [Int?]? in
            guard case .mtuExchange(.local, let client, let server, let effective, let requestFrame) = e.kind else { return nil }
            return [e.frame, client, server, effective, requestFrame]
        }
        #expect(exchanges == [[3, 527, 247, 247, 2]])
        let d = CaptureDiffer.compare(iphone, android)
        #expect(d.differences.map(\.kind) == ["mtu-exchange"], "\(d.differences.map(\.sentence))")
        let x = try #require(d.differences.first)
        #expect(x.a == "central asked 527, peripheral answered 247" && x.b == "central asked 517, peripheral answered 247")
        #expect(x.frameA == 2 && x.frameB == 2 && x.section == .link && x.impact == .minor)
        #expect(CaptureDiffer.compare(iphone, iphone).isEmpty)
    }

    /// A response whose request the capture missed: who must have asked is kept, the value is "not seen", and no
    /// ATT_MTU is claimed (frame 2 is the response).
    @Test func anExchangeWhoseRequestWasMissedSaysNotSeen() throws {
        let missed = try Self.exchange(asking: nil), seen = try Self.exchange(asking: 527)
        let d = CaptureDiffer.compare(seen, missed)
        let x = try #require(d.differences.first { $0.kind == "mtu-exchange" })
        #expect(x.b == "request not seen, peripheral answered 247" && x.frameB == 2)
        let e = try #require(missed.evidence.first { if case .mtuExchange = $0.kind { true } else { false } })
        #expect(e.kind == .mtuExchange(requester: .local, client: nil, server: 247, effective: nil, requestFrame: nil))
    }
}
