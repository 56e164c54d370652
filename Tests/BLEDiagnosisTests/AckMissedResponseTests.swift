import BLEAnalysis
import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLEReports
import Testing

/// GATT-02 on an air capture where the link's acknowledgement bits show the sniffer missed a packet between a request
/// and the next one (Core Spec Vol 6, Part B, 4.5.9: a side's NESN moves on only when it received a new packet). When the
/// responder sent it, the answer may have gone there: "response not captured", at info (the Ubertooth shaver capture,
/// 22495 → 22498). When the sniffer heard every packet, or missed only the requester's, the warning stays.
@Suite struct AckMissedResponseTests {
    /// An ATT PDU in its L2CAP frame (channel 4), the payload of one data PDU.
    static func att(_ pdu: [UInt8]) -> [UInt8] { [UInt8(pdu.count), 0, 0x04, 0x00] + pdu }
    static let read1 = att([0x0A, 0x03, 0x00]), read2 = att([0x0A, 0x05, 0x00]), answer = att([0x0B, 0x42])

    /// Events 0–2 of a link: empty PDUs in event 0; the central's Read Request for 0x0003 at frame 4 in event 1; the
    /// peripheral's packet of event 1 as `event1` says; the central's next Read Request (0x0005) and its answer in event 2.
    static func link(event1: (NordicBuilder) -> NordicBuilder) -> NordicBuilder {
        var b = NordicBuilder()
        b.connect()
        b.data(.continuation, [], central: true, sn: false, nesn: false, event: 0)
        b.data(.continuation, [], central: false, sn: false, nesn: true, event: 0)
        b.data(.start, read1, central: true, sn: true, nesn: true, event: 1)
        b = event1(b)
        return b
    }

    @Test func aResponderPacketTheAcknowledgementsShowIsAResponseNotCaptured() throws {
        // The peripheral's answer in event 1 (SN 1, NESN 0) is not in the capture; the central's NESN at frame 5 is 0.
        let b = Self.link { b in
            var b = b
            b.data(.start, Self.read2, central: true, sn: false, nesn: false, event: 2)
            b.data(.start, Self.answer, central: false, sn: false, nesn: true, event: 2)
            return b
        }
        let d = try #require(try RuleTest.diagnose(air: b).of("GATT-02").first)
        #expect(d.severity == .info && d.frame == 5)
        #expect(
            d.message.hasPrefix(
                "Response not captured: the sniffer missed 1 packet the peripheral sent (the central's NESN acknowledged it) of link #1 between frames 4 and 5 (the first between frames 4 and 5), where the answer may have gone. What it shows: A new ATT request"
            ))
    }

    @Test func withEveryPacketHeardTheOverlapStaysAWarning() throws {
        // The same link with the peripheral's packet of event 1 heard: an empty PDU that acknowledges the request.
        let b = Self.link { b in
            var b = b
            b.data(.continuation, [], central: false, sn: true, nesn: false, event: 1)
            b.data(.start, Self.read2, central: true, sn: false, nesn: false, event: 2)
            b.data(.start, Self.answer, central: false, sn: false, nesn: true, event: 2)
            return b
        }
        let d = try #require(try RuleTest.diagnose(air: b).of("GATT-02").first)
        #expect(d.severity == .warning && d.frame == 6 && d.message.hasPrefix("A new ATT request"))
    }

    @Test func aRequesterPacketMissedHidesNoAnswer() throws {
        // The peripheral's empty PDU at 5 acknowledges the request; the central's next packet (SN 0) went unheard, and the
        // peripheral's NESN at 6 shows it received it. The answer could not have gone there: the warning stays.
        let b = Self.link { b in
            var b = b
            b.data(.continuation, [], central: false, sn: true, nesn: false, event: 1)
            b.data(.continuation, [], central: false, sn: false, nesn: true, event: 1)
            b.data(.start, Self.read2, central: true, sn: true, nesn: true, event: 2)
            b.data(.start, Self.answer, central: false, sn: true, nesn: false, event: 2)
            return b
        }
        let d = try #require(try RuleTest.diagnose(air: b).of("GATT-02").first)
        #expect(d.severity == .warning && d.frame == 7)
    }

    /// The Log line of an air capture says what of a link the sniffer did not hear (newcap20's ADI capture: "complete"
    /// beside 82 missed events, 70 unheard packets, 31 bad CRCs): the records are whole, the link is not. The near miss,
    /// every packet heard, stays "complete".
    @Test(arguments: [true, false])
    func theLogLineSaysWhatOfTheLinkTheSnifferMissed(_ missed: Bool) throws {
        let b = Self.link { b in
            var b = b
            if !missed { b.data(.continuation, [], central: false, sn: true, nesn: false, event: 1) }
            b.data(.start, Self.read2, central: true, sn: !missed, nesn: false, event: 2)
            b.data(.start, Self.answer, central: false, sn: false, nesn: !missed, event: 2)
            return b
        }
        let completeness = try #require(DiagnosisReport.analyze(try RuleTest.airCapture(b.records)).completeness)
        let item = completeness.items.first { $0.code == .llSnifferMissed }
        #expect((item != nil) == missed)
        #expect(completeness.verdict == (missed ? "complete with notes" : "complete"))
        if let item {
            #expect(item.frame == 5 && item.brief == "the sniffer missed part of 1 air link")
            #expect(
                item.message
                    == "connection 0x0001: the sniffer missed 1 packet the other side acknowledged and the file does not hold (first after frame 4): what the link carried there is not in the capture"
            )
        }
    }
}
