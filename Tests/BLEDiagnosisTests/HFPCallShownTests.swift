import BLEAnalysis
import BLEAnalysisTestSupport
import BLECore
import BLETestSupport
import Testing

@testable import BLEAnalysis
@testable import BLEDiagnosis

/// An HFP audio connection (codec connection and eSCO) is no call unless the HFP exchange shows one (RING, a call
/// indicator, ATA, dialling): BTstack's gateway logs in the corpus (+BCS then eSCO at 454/478 and 450/463, no RING, no
/// +CIEV call or callsetup, no ATA) were told "Calls' audio links" and "the call's audio is narrowband".
@Suite struct HFPCallShownTests {
    static func story(_ b: CaptureBuilder) throws -> [String] { try RuleTest.diagnose(b).story.sentences.map(\.text) }

    @Test func anAudioConnectionWithoutACallIsNotCalledOne() throws {
        let texts = try Self.story(ClassicAudioRuleTests.call([("\r\n+BCS: 2\r\n", false), ("AT+BCS=2\r", true)], eSCOAfter: [1]))
        let line = try #require(
            texts.first { $0.hasPrefix("Audio connection (no call in the HFP exchange): eSCO link up at frame") }, "\(texts)")
        #expect(!line.contains("Call"))
        #expect(!texts.contains { $0.hasPrefix("Calls' audio links") })
        let cvsd = BR11HFPCodecFallback.evaluate(
            try ClassicAudioRuleTests.evidence(ClassicAudioRuleTests.call([("\r\n+BCS: 1\r\n", false), ("AT+BCS=1\r", true)])))
        #expect(cvsd.first?.message.contains("selected CVSD at frame 38: the audio connection is narrowband.") == true)
    }

    /// Near miss: the gateway's RING (HFP 1.9, 4.13) before the same audio connection shows a call.
    @Test func nearMissARingShowsACall() throws {
        let lines = [("\r\nRING\r\n", false), ("\r\n+BCS: 2\r\n", false), ("AT+BCS=2\r", true)]
        let texts = try Self.story(ClassicAudioRuleTests.call(lines, eSCOAfter: [2]))
        #expect(texts.contains { $0.hasPrefix("Calls' audio links: eSCO link up at frame") }, "\(texts)")
        let cvsd = BR11HFPCodecFallback.evaluate(
            try ClassicAudioRuleTests.evidence(
                ClassicAudioRuleTests.call([("\r\nRING\r\n", false), ("\r\n+BCS: 1\r\n", false), ("AT+BCS=1\r", true)])))
        #expect(cvsd.first?.message.contains("the call's audio is narrowband.") == true, "\(cvsd.map(\.message))")
    }

    @Test func callIndicatorsShowACall() {
        var h = HFPSession(dlci: 2, thisSideIsGateway: true)
        #expect(!h.showsACall)
        h.indicatorChanges = [HFPIndicatorChange(frame: 40, name: "service", value: 1)]
        #expect(!h.showsACall)
        h.indicatorChanges.append(HFPIndicatorChange(frame: 41, name: "callsetup", value: 1))
        #expect(h.showsACall)
    }
}

/// The audio the host carried over HCI is on the first screen, counted on its eSCO link by its handle (the BTstack
/// gateway logs: 18,078 and 9,883 SCO packets, in `info` only before); the near miss, an empty SCO record naming handle
/// 0x0000 (BTstack's MSBC gateway log, 503–508: 3 bytes, length 0, tshark "Rcvd SCO" on 0x0000), is no audio of the link.
extension HFPCallShownTests {
    @Test func theAudioLineCountsTheLinksSCOPacketsNotEmptyRecords() throws {
        var b = ClassicAudioRuleTests.call([("\r\n+BCS: 2\r\n", false), ("AT+BCS=2\r", true)], eSCOAfter: [1])
        b = b.sco(handle: 0x0101, .tx).sco(handle: 0x0101, .tx).sco(handle: 0x0101, .rx).record(.sco, .rx, [0x00, 0x00, 0x00])
        let texts = try Self.story(b)
        let line = try #require(texts.first { $0.hasPrefix("Audio connection") }, "\(texts)")
        #expect(line.contains("2 SCO packets sent and 1 received"), "\(line)")
    }
}

/// Each call told on the HFP line, from its indicators and commands: the Realtek headset log (tshark: AT+BLDN 243, +CIEV
/// callsetup 2 at 246, 3 at 533, call 1 at 707 (15.727 s), AT+CHUP 4671, call 0 at 4714 (45.725 s)) was "mSBC selected"
/// with no call at all. Here this side is the gateway (the flow's SLC, indicators service, call, callsetup).
extension HFPCallShownTests {
    static func lines(_ b: CaptureBuilder, _ lines: [(String, Bool)]) -> (CaptureBuilder, [Int]) {
        var b = b
        var frames: [Int] = []
        for (line, fromPeer) in lines {
            frames.append(b.nextFrame)
            b = ClassicProfilesFlowTests.at(b, line, rx: fromPeer)
        }
        return (b, frames)
    }

    static func hfpLine(_ b: CaptureBuilder) throws -> String {
        let texts = try Self.story(b)
        return try #require(texts.first { $0.hasPrefix("HFP with") }, "\(texts)")
    }

    @Test func anOutgoingCallIsToldFromRedialToHangUp() throws {
        let start = ClassicAudioRuleTests.call([]).at(10)
        var (b, f) = Self.lines(
            start, [("AT+BLDN\r", true), ("\r\nOK\r\n", false), ("\r\n+CIEV: 3,2\r\n", false), ("\r\n+CIEV: 3,3\r\n", false)])
        b = b.at(12)
        let (up, g) = Self.lines(b, [("\r\n+CIEV: 2,1\r\n", false), ("\r\n+CIEV: 3,0\r\n", false)])
        let (end, h) = Self.lines(up.at(42), [("AT+CHUP\r", true), ("\r\nOK\r\n", false), ("\r\n+CIEV: 2,0\r\n", false)])
        let line = try Self.hfpLine(end)
        #expect(
            line.contains(
                "1 outgoing call, redial (AT+BLDN) at \(f[0]): alerting at \(f[3]), up at \(g[0]) for 30.0 s, hung up by the peer (AT+CHUP, \(h[0]))"
            ), "\(line)")
    }

    /// Near misses: an incoming call the hands-free unit refused before it was up, and one still up when the log ends.
    @Test func anIncomingCallRefusedAndOneStillUp() throws {
        let start = ClassicAudioRuleTests.call([]).at(10)
        let (refused, f) = Self.lines(
            start, [("\r\nRING\r\n", false), ("\r\n+CIEV: 3,1\r\n", false), ("AT+CHUP\r", true), ("\r\n+CIEV: 3,0\r\n", false)])
        #expect(try Self.hfpLine(refused).contains("1 incoming call, ring at \(f[0]): refused by the peer (AT+CHUP, \(f[2]))"))
        let (up, g) = Self.lines(start, [("\r\n+CIEV: 3,1\r\n", false), ("ATA\r", true), ("\r\n+CIEV: 2,1\r\n", false)])
        #expect(
            try Self.hfpLine(up).contains(
                "1 incoming call at \(g[0]): answered by the peer (ATA, \(g[1])), up at \(g[2]), still up when the log ends"))
        // Up with no ATA from the hands-free: answered on the gateway (the blueprobe moto g04s: +CIEV 2,1 at 1499,
        // +CIEV 1,1 at 1529, no ATA in tshark's RFCOMM frames).
        let (handset, h) = Self.lines(start, [("\r\n+CIEV: 3,1\r\n", false), ("\r\n+CIEV: 2,1\r\n", false)])
        #expect(
            try Self.hfpLine(handset).contains(
                "1 incoming call at \(h[0]): answered on this side, the audio gateway (no ATA), up at \(h[1]), still up when the log ends"))
    }
}

/// Audio one way only over HCI is said: the Realtek headset log's eSCO carried 4,434 packets from the controller and
/// none from this side (tshark: 4,434 "Rcvd SCO", 0 "Sent SCO" on 0x0008). The near miss, one packet sent, is not.
extension HFPCallShownTests {
    @Test(arguments: [0, 1]) func audioOneWayOnlyOverHCIIsSaid(_ sent: Int) throws {
        var b = ClassicAudioRuleTests.call([("\r\nRING\r\n", false), ("\r\n+BCS: 2\r\n", false), ("AT+BCS=2\r", true)], eSCOAfter: [2])
        for _ in 0..<50 { b = b.sco(handle: 0x0102, .rx) }
        for _ in 0..<sent { b = b.sco(handle: 0x0102, .tx) }
        let line = try #require(try Self.story(b).first { $0.hasPrefix("Calls' audio links") })
        let said = line.contains(
            "\(sent) SCO packets sent and 50 received (none sent: this side's audio did not cross HCI; another path, or none)")
        #expect(said == (sent == 0), "\(line)")
        #expect(line.contains("\(sent) SCO packets sent and 50 received"))
    }
}

/// The first refused AT command is named on the HFP line, as text a terminal shows: the Realtek headset's AT+BIND=2
/// answered ERROR at 230 (tshark), where the line said "1 AT command refused". The near miss, the command answered OK,
/// has no refusal; a corrupt command's bytes show as `?`.
extension HFPCallShownTests {
    @Test(arguments: [false, true]) func theFirstRefusedCommandIsNamed(_ refused: Bool) throws {
        let (b, f) = Self.lines(
            ClassicAudioRuleTests.call([]), [("AT+BIND=2\r", true), (refused ? "\r\nERROR\r\n" : "\r\nOK\r\n", false)])
        let line = try Self.hfpLine(b)
        // The call's gateway announces no HF indicators: the refusal's cause follows (BREDRFirstScreenTests).
        #expect(line.contains("1 AT command refused (AT+BIND=2 answered ERROR at \(f[1]): the AG's +BRSF: ") == refused, "\(line)")
        #expect(line.contains("refused") == refused)
    }

    @Test func aCorruptCommandShowsItsBytesAsQuestionMarks() {
        #expect(Story.printable("AT+BRSF=\u{01}\u{FFFD}") == "AT+BRSF=??")
        #expect(Story.printable(String(repeating: "A", count: 45)) == String(repeating: "A", count: 40) + "…")
    }
}

/// The controller's packet status on received SCO packets is counted: the Realtek headset log's 15 'no data received'
/// and 5 'possibly invalid' of 4,434 (tshark bthci_sco.packet_status 2 and 1). The near miss, all correctly received,
/// adds nothing.
extension HFPCallShownTests {
    @Test(arguments: [false, true]) func flaggedSCOPacketsAreCounted(_ flagged: Bool) throws {
        var b = ClassicAudioRuleTests.call([("\r\nRING\r\n", false), ("\r\n+BCS: 2\r\n", false), ("AT+BCS=2\r", true)], eSCOAfter: [2])
        for i in 0..<10 { b = b.sco(handle: 0x0102, .rx, status: flagged ? [0, 2, 2, 1, 0][i % 5] : 0).sco(handle: 0x0102, .tx) }
        let line = try #require(try Self.story(b).first { $0.hasPrefix("Calls' audio links") })
        let said = line.contains("10 SCO packets sent and 10 received, the controller marking 4 received as no data, 2 as possibly invalid")
        #expect(said == flagged, "\(line)")
        #expect(line.contains("the controller marking") == flagged)
    }
    /// The Headset Profile (SDP names Headset, not Hands-Free: the UE BOOM 2's channel 11, frame 36) has no service level
    /// connection, and commands with no final result are counted: the speaker's AT+XAPL (101) and ten AT+IPHONEACCEV
    /// got none (tshark), where the story said "HFP … service level connection not completed". The near miss: each
    /// command answered OK counts none; so does a command answered after the next one was sent.
    @Test(arguments: [false, true]) func headsetCommandsWithoutAnAnswerAreCounted(_ answered: Bool) throws {
        var t = HFPTracker(dlci: 22)
        t.markHeadsetProfile()
        var frame = 100
        for command in ["AT+XAPL=0000-0000-0100,10\r", "AT+IPHONEACCEV=1,1,9\r", "AT+IPHONEACCEV=1,1,8\r"] {
            frame += 1
            _ = t.feed(Array(command.utf8), fromPeer: true, frame: frame, timestamp: Timestamp(microseconds: Int64(frame)))
            if answered {
                frame += 1
                _ = t.feed(Array("\r\nOK\r\n".utf8), fromPeer: false, frame: frame, timestamp: Timestamp(microseconds: Int64(frame)))
            }
        }
        let s = t.finish(closedAt: 200)
        #expect(s.headsetProfile && s.slcFailure == nil)
        #expect(s.unanswered.map(\.frame) == (answered ? [] : [101, 102, 103]))
        #expect(s.unanswered.last?.why == (answered ? nil : "no final result in the log"))
        // Pipelined (the Sony headphones: AT+XAPL 4744, AT+VGS 4745, OK 4746, +XAPL and OK 4763): both answered.
        var p = HFPTracker(dlci: 6)
        for (line, peer, f) in [
            ("AT+XAPL=054C-0D58-0207,10\r", true, 1), ("AT+VGS=9\r", true, 2), ("\r\nOK\r\n", false, 3), ("\r\nOK\r\n", false, 4),
        ] {
            _ = p.feed(Array(line.utf8), fromPeer: peer, frame: f, timestamp: Timestamp(microseconds: Int64(f)))
        }
        #expect(p.finish(closedAt: 5).unanswered.isEmpty)
    }
}
