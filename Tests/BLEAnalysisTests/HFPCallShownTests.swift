import BLEAnalysis
import BLECore
import BLETestSupport
import Testing

@testable import BLEAnalysis

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
