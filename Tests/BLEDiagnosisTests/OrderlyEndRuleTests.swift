import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// DC-02 and DC-09 on a session the peer ended after its profiles were taken down in order (``PeerOrderlyEnd``):
/// the BLUFFS buds' 0x13 after this side's AVDTP Close and channel closes, the Sony headphones' after their own channel
/// closes, the BTstack central's after bonding. Info, and no flapping; the near misses keep the warning.
extension DiagnosisRuleTests {
    @Suite struct OrderlyEnd {
        static let link: UInt16 = 0x000B

        /// A BR/EDR link with an AVDTP channel (PSM 0x0019: ours 0x0040, the peer's 0x0041), from `start` s; the peer
        /// closes it at `start` + 5 s when `closed`; the peer ends the link with `reason` at `start` + 6 s.
        static func session(_ b: CaptureBuilder, start: Double, closed: Bool, reason: HCIStatus = .remoteUserTerminatedConnection)
            -> (CaptureBuilder, close: Int, end: Int)
        {
            var b = b.at(start).connectBREDR(handle: link, peer: RuleTest.peer)
                .openBREDRChannel(handle: link, psm: 0x0019, localCID: 0x0040, remoteCID: 0x0041, localMTU: 672, remoteMTU: 672)
                .at(start + 5)
            if closed {
                b = b.signal(.disconnectionRequest(destinationCID: 0x0040, sourceCID: 0x0041), identifier: 9, handle: link, .rx)
            }
            let close = b.nextFrame
            if closed {
                b = b.signal(.disconnectionResponse(destinationCID: 0x0040, sourceCID: 0x0041), identifier: 9, handle: link, .tx)
            }
            b = b.at(start + 6)
            let end = b.nextFrame
            return (b.disconnect(handle: link, reason: reason), close, end)
        }

        @Test(arguments: [HCIStatus.remoteUserTerminatedConnection, .remotePowerOff])
        func thePeerEndingALinkWhoseChannelsAllClosedIsInfo(_ reason: HCIStatus) throws {
            let (b, close, end) = Self.session(CaptureBuilder(), start: 1, closed: true, reason: reason)
            let d = try #require(try RuleTest.diagnose(b).of("DC-02").first)
            #expect(d.severity == .info && d.frame == end && d.supporting.map(\.frame).contains(close))
            #expect(
                d.message.hasSuffix(
                    "It follows the close of its last L2CAP channel, \(L2CAPPSM(0x0019)) (frame \(close)): the session's orderly end."))
        }

        /// An SDP channel the peer opened and left open holds no session: the end after the AVDTP channel closed is
        /// still orderly (the blueprobe midlog's buds: SDP 1704 open, the phone's closes 2987–3027, 0x13 at 3051).
        @Test func anIdleSDPChannelLeftOpenDoesNotHoldTheSession() throws {
            var b = CaptureBuilder().at(1).connectBREDR(handle: Self.link, peer: RuleTest.peer)
                .openBREDRChannel(
                    handle: Self.link, psm: 0x0001, localCID: 0x0050, remoteCID: 0x0051, localMTU: 672, remoteMTU: 672, identifier: 20
                )
                .openBREDRChannel(handle: Self.link, psm: 0x0019, localCID: 0x0040, remoteCID: 0x0041, localMTU: 672, remoteMTU: 672)
                .at(6).signal(.disconnectionRequest(destinationCID: 0x0040, sourceCID: 0x0041), identifier: 9, handle: Self.link, .rx)
            let closed = b.nextFrame
            b = b.signal(.disconnectionResponse(destinationCID: 0x0040, sourceCID: 0x0041), identifier: 9, handle: Self.link, .tx).at(7)
            let d = try #require(
                try RuleTest.diagnose(b.disconnect(handle: Self.link, reason: .remoteUserTerminatedConnection)).of("DC-02").first)
            #expect(d.severity == .info && d.supporting.map(\.frame).contains(closed))
        }

        /// newcap19's Nelko P21 printer (SPP): the phone closes its RFCOMM channel (DISC on DLCI 2, UA) and the
        /// multiplexer (DISC on DLCI 0), and the printer ends the link 150 ms later, before any L2CAP Disconnection
        /// Request: the session's orderly end, info. The near miss: only the data channel closed, the multiplexer still
        /// up, stays a warning.
        @Test(arguments: [true, false])
        func thePeerEndingALinkAfterThisSideClosedTheRFCOMMMultiplexerIsInfo(_ muxClosed: Bool) throws {
            func rfcomm(_ b: CaptureBuilder, _ dlci: UInt8, _ type: RFCOMMFrameType, rx: Bool = false) -> CaptureBuilder {
                b.l2cap(
                    cid: rx ? 0x0040 : 0x0041, payload: RFCOMMFrame(dlci: dlci, type: type, pollFinal: true).bytes, handle: Self.link,
                    rx ? .rx : .tx)
            }
            var b = CaptureBuilder().at(1).connectBREDR(handle: Self.link, peer: RuleTest.peer)
                .openBREDRChannel(handle: Self.link, psm: 0x0003, localCID: 0x0040, remoteCID: 0x0041, localMTU: 1013, remoteMTU: 1013)
            b = rfcomm(rfcomm(b, 0, .sabm), 0, .ua, rx: true)
            b = rfcomm(rfcomm(b, 2, .sabm), 2, .ua, rx: true).at(5)
            b = rfcomm(rfcomm(b, 2, .disc), 2, .ua, rx: true)
            let close = b.nextFrame
            if muxClosed { b = rfcomm(b, 0, .disc) }
            b = b.at(5.15)
            let end = b.nextFrame
            let d = try #require(
                try RuleTest.diagnose(b.disconnect(handle: Self.link, reason: .remoteUserTerminatedConnection)).of("DC-02").first)
            #expect(d.frame == end && d.severity == (muxClosed ? .info : .warning))
            #expect(
                d.message.hasSuffix(
                    "It follows the close of its RFCOMM multiplexer (DISC on DLCI 0) (frame \(close)): the session's orderly end.")
                    == muxClosed)
        }

        /// The near miss: the same end with the AVDTP channel still open (the profile in use) stays a warning.
        @Test func thePeerEndingALinkWithAChannelOpenIsStillAWarning() throws {
            let (b, _, end) = Self.session(CaptureBuilder(), start: 1, closed: false)
            let d = try #require(try RuleTest.diagnose(b).of("DC-02").first)
            #expect(d.severity == .warning && d.frame == end && !d.message.contains("orderly"))
        }

        /// Three sessions in 2 minutes, each ended by the peer after its channels closed: no flapping. The near miss:
        /// the same three with a channel open each time flap.
        @Test(arguments: [true, false])
        func orderlySessionsAreNoFlapping(_ closed: Bool) throws {
            var b = CaptureBuilder()
            for i in 0..<3 { b = Self.session(b, start: Double(i) * 40, closed: closed).0 }
            let r = try RuleTest.diagnose(b)
            #expect(r.of("DC-09").count == (closed ? 0 : 1))
            #expect(r.of("DC-02").allSatisfy { $0.severity == (closed ? .info : .warning) } && !r.of("DC-02").isEmpty)
        }

        /// LE: the peer ends the link after bonding, nothing sent after the last key (the BTstack LE log's 191 after 190):
        /// info, the bonding's end. A write after the keys, 5 s before the end: no longer the bonding's end, but nothing was
        /// outstanding, so still info, as a routine close (RoutineCloseRuleTests holds the warnings).
        @Test(arguments: [false, true])
        func thePeerEndingAnLELinkAfterBondingIsInfo(_ writeAfter: Bool) throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer).at(1)
                .smp(.pairingRequest(.bonding()), handle: 0x40, .tx).smp(.pairingResponse(.bonding()), handle: 0x40, .rx)
                .encryptionChange(handle: 0x40).smp(.encryptionInformation(longTermKey: Array(0..<16)), handle: 0x40, .rx)
            let key = b.nextFrame - 1
            b = b.smp(.centralIdentification(ediv: 1, rand: 2), handle: 0x40, .rx)
            if writeAfter { b = b.at(3).att(.writeCommand(handle: 0x30, value: [1]), handle: 0x40, .tx) }
            b = b.at(8)
            let end = b.nextFrame
            b = b.disconnect(handle: 0x40, reason: .remoteUserTerminatedConnection)
            let d = try #require(try RuleTest.diagnose(b).of("DC-02").first)
            #expect(d.frame == end && d.severity == .info)
            #expect(d.message.contains("It follows the bonding's last key (frame \(key))") != writeAfter)
            #expect(d.message.hasSuffix("a routine close.") == writeAfter)
        }
    }
}
