import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// The Set-up line of the story: the busiest LE link's parameters and their updates, its MTU exchange and its
/// subscriptions, each with its frame. The fossibot Pixel log (tshark): LE Enhanced Connection Complete at 301 with a
/// 18.75 ms interval and a 5 s timeout, LE Connection Update Complete to 50 ms at 403, a Write Request of 01 00 to the
/// CCCD 0x0039 at 405, Exchange MTU Request 517 at 409 answered 517 at 410.
extension DiagnosisRuleTests {
    @Suite struct LinkSetupStory {
        typealias GATT = DiagnosisRuleTests.GATT

        /// Connected at 30 ms (24 × 1.25 ms), 4 s; discovered; updated to 50 ms (40 units), latency 4, 5 s (500 × 10 ms);
        /// MTU asked 517, answered 247; the CCCD of 0x0012 (0x0013) written 01 00, answered by `cccdAnswer`.
        static func setUp(mtu: Bool = true, cccdAnswer: ATTPDU = .writeResponse)
            -> (b: CaptureBuilder, update: Int, mtuResponse: Int, cccd: Int)
        {
            var b = GATT.discovered(GATT.connected())
            let update = b.nextFrame
            b = b.connectionUpdateComplete(handle: 0x40, interval: 40, latency: 4, timeout: 500)
            var mtuResponse = -1
            if mtu {
                b = b.att(.exchangeMTURequest(clientRxMTU: 517), handle: 0x40, .tx)
                mtuResponse = b.nextFrame
                b = b.att(.exchangeMTUResponse(serverRxMTU: 247), handle: 0x40, .rx)
            }
            let cccd = b.nextFrame
            b = b.att(.writeRequest(handle: 0x0013, value: [0x01, 0x00]), handle: 0x40, .tx).att(cccdAnswer, handle: 0x40, .rx)
            return (b, update, mtuResponse, cccd)
        }

        static func setupLine(_ r: DiagnosisResult) -> StorySentence? {
            r.story.sentences.first { $0.text.hasPrefix("Set-up of link #") }
        }

        @Test func theParametersTheMTUAndTheSubscriptionWithTheirFrames() throws {
            let (b, update, mtuResponse, cccd) = Self.setUp()
            let line = try #require(Self.setupLine(try RuleTest.diagnose(b)))
            #expect(
                line.text
                    == "Set-up of link #1 with \(RuleTest.peerText): interval 30 ms, timeout 4 s, then 50 ms, latency 4, timeout 5 s (\(update)); "
                    + "ATT_MTU 247 (this side asked 517, the peer 247; \(mtuResponse)); notifications on for 0x0012 (\(cccd)).")
            #expect(line.frames == [update, mtuResponse, cccd])
        }

        /// The fossibot Pixel: an accept-list create (247) cancelled (284, 0x02 at 287), re-issued (295), the link up at
        /// 301, 19 ms later (tshark: 7.238676 → 7.257769 s). The cancelled create is not the one the link answered.
        @Test func theCreateTheLinkAnsweredAndHowLongItTook() throws {
            var b = CaptureBuilder(step: 1_000).createConnection(to: nil).at(microsecondsFromStart: 5_000_000)
                .createConnectionCancel().connectionFailed(.unknownConnectionIdentifier)
            let create = b.nextFrame
            b = b.createConnection(to: nil).at(microsecondsFromStart: 5_022_000).connect(handle: 0x40, peer: RuleTest.peer)
                .att(.writeRequest(handle: 0x0013, value: [0x01, 0x00]), handle: 0x40, .tx).att(.writeResponse, handle: 0x40, .rx)
            let line = try #require(Self.setupLine(try RuleTest.diagnose(b)))
            // The cancel at 5.000 s, its answer 5.001, the 0x02 5.002, the re-issued create 5.003; the link at 5.022 s: 19 ms.
            #expect(line.text.contains(": up 19 ms after this side's LE Create Connection (\(create)); interval 30 ms"), "\(line.text)")
        }

        /// The first finding's first line stays on the first screen: with no room left, the set-up sentence is the one
        /// the text leaves out (the JSON keeps it); with room, it is told.
        @Test func theSetUpSentenceYieldsWhenTheFirstScreenIsShort() throws {
            let story = try RuleTest.diagnose(Self.setUp().b).story
            let plain = Terminal(colors: false)
            let all = DiagnosisReport.storyLines(story, terminal: plain, width: 100)
            let short = DiagnosisReport.storyLines(story, terminal: plain, width: 100, room: all.count - 1)
            #expect(all.contains { $0.hasPrefix("  Set-up of link #1") })
            #expect(!short.contains { $0.contains("Set-up of link") } && short.count < all.count)
            #expect(DiagnosisReport.storyLines(story, terminal: plain, width: 100, room: all.count) == all)
        }

        @Test func nearMissNoExchangeIsTheDefaultAndARefusedSubscriptionIsToldAsRefused() throws {
            let refusal = ATTPDU.errorResponse(
                ATTErrorResponse(requestOpcode: .writeRequest, handle: 0x0013, error: .insufficientAuthentication))
            let (b, _, _, cccd) = Self.setUp(mtu: false, cccdAnswer: refusal)
            let line = try #require(Self.setupLine(try RuleTest.diagnose(b)))
            #expect(line.text.contains("; no MTU exchange: ATT_MTU 23; refused for 0x0012 (\(cccd))."), "\(line.text)")
            #expect(!line.text.contains("notifications on"))
        }

        @Test func nearMissALinkThatBeganBeforeTheLogHasNoSetUpLine() throws {
            // ATT on a handle no Connection Complete opened: the link's parameters and MTU are not in the log.
            let b = CaptureBuilder()
                .att(.writeRequest(handle: 0x0013, value: [0x01, 0x00]), handle: 0x40, .tx).att(.writeResponse, handle: 0x40, .rx)
            let r = try RuleTest.diagnose(b)
            #expect(Self.setupLine(r) == nil, "\(r.story.sentences.map(\.text))")
        }
    }
}
