import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis
@testable import BLEReports

/// The tight forms of a long log's routine lines (issue 46; the blueprobe Echo Auto log: its header, 16 BR/EDR links of
/// three devices and their security took lines 1–26, the first finding came on line 43): where the digests did not make
/// room for the first finding, the BR/EDR links sentence names each device by its name alone, without its class and the
/// frames of who paged; the security line counts its routine lists without their frames; a device's digest drops its
/// routine AVRCP and SDP counts. What went wrong keeps its words and frames; the sentences are told after the findings.
/// From typed packets, with the near misses: one link and one stream, and a story that fits.
@Suite struct FirstScreenTightTests {
    typealias F = ClassicProfilesFlowTests
    static let plain = Terminal(colors: false)
    static let echo = BDAddress(0x4C_17_44_79_6B_59)
    static let speaker = BDAddress(0xF8_5C_7D_18_E2_FF)

    /// Two named devices that page this side in turn (`links` links, the car kit first), each link authenticated by the
    /// peer with the stored key (Link Key Request, Reply), encrypted, and ended by the peer (0x13); the last one lost
    /// (0x08) when `lost`. Frames: the two names 1–2, then seven records a link (Connection Request, Accept, Connection
    /// Complete, Link Key Request, Reply, Encryption Change, Disconnection Complete) from 3.
    static func carKit(links: Int, lost: Bool = false) -> CaptureBuilder {
        var b = CaptureBuilder()
            .declaredEvent(
                RemoteNameRequestComplete {
                    $0.address = echo; $0.remoteName = RemoteName("Echo Auto F47Q")
                }
            )
            .declaredEvent(
                RemoteNameRequestComplete {
                    $0.address = speaker; $0.remoteName = RemoteName("JBL Clip 3")
                })
        for i in 0..<links {
            let peer = i % 2 == 0 ? echo : speaker, handle = UInt16(0x0032 + i)
            b = b.at(microsecondsFromStart: Int64(i) * 20_000_000)
                .declaredEvent(
                    ConnectionRequest {
                        $0.address = peer; $0.classOfDevice = 0x24_0404; $0.linkType = 1
                    }
                )
                .declaredCommand(
                    AcceptConnectionRequest {
                        $0.address = peer; $0.role = 1
                    }
                )
                .connectBREDR(handle: handle, peer: peer)
                .declaredEvent(LinkKeyRequest { $0.address = peer })
                .declaredCommand(
                    LinkKeyRequestReply {
                        $0.address = peer; $0.key = Array(repeating: peer == echo ? 0x11 : 0x22, count: 16)
                    }
                )
                .encryptionChange(handle: handle)
            b = b.at(microsecondsFromStart: Int64(i) * 20_000_000 + 10_000_000)
                .disconnect(handle: handle, reason: lost && i == links - 1 ? .connectionTimeout : .remoteUserTerminatedConnection)
        }
        return b
    }

    @Test func manyLinksOfTwoDevicesGetTightLinksAndSecurityForms() throws {
        let story = try RuleTest.diagnose(Self.carKit(links: 8, lost: true)).story
        let links = try #require(story.sentences.first { $0.group == Story.linksGroup }, "\(story.sentences.map(\.text))")
        let tightLinks = try #require(story.tight.first { $0.group == Story.linksGroup })
        // Whole: the addresses, the class and the frames of who paged (tshark: Connection Request at 3, 10, 17, …).
        #expect(
            links.text.hasPrefix(
                "8 BR/EDR links with 2 devices, 8 opened by the peer (its Connection Request, 3, 10, 17, …): Echo Auto F47Q (4C:17:44:79:6B:59) ×4, Wearable Headset Device (class at 3)"
            ), "\(links.text)")
        // Tight: names alone, counts; each device's endings kept whole (the loss at the last link's end, 58).
        #expect(
            tightLinks.text
                == "8 BR/EDR links with 2 devices, 8 opened by the peer: Echo Auto F47Q ×4: 4 ended by the peer (0x13 Remote User Terminated Connection); JBL Clip 3 ×4: 3 ended by the peer (0x13), 1 lost by supervision timeout (0x08).",
            "\(tightLinks.text)")
        let security = try #require(story.sentences.first { $0.group == Story.securityGroup })
        let tightSecurity = try #require(story.tight.first { $0.group == Story.securityGroup })
        #expect(security.text.contains("stored link key given 8 times (7, 14, 21, …)"), "\(security.text)")
        #expect(
            tightSecurity.text
                == "Security: BR/EDR: the peer authenticated and encrypted (not asked by this host); stored link key given 8 times; 8 BR/EDR encryptions on, key size not in the log, E0.",
            "\(tightSecurity.text)")

        // Short of room: the caveat first (2 lines), then the tight form that saves the most lines (a line each: the
        // links' first), until the story fits; the sentences are told after the findings.
        let all = DiagnosisReport.storyLines(story, terminal: Self.plain, width: 100)
        let one = DiagnosisReport.storyParts(story, terminal: Self.plain, width: 100, room: all.count - 3)
        #expect(one.yielded.contains(links) && !one.yielded.contains(security) && one.shown.count == all.count - 3, "\(one.shown)")
        let parts = DiagnosisReport.storyParts(story, terminal: Self.plain, width: 100, room: 1)
        let shown = parts.shown.map { $0.drop { $0 == " " } }.joined(separator: " ")
        #expect(shown.contains("8 opened by the peer: Echo Auto F47Q ×4") && shown.contains("stored link key given 8 times;"), "\(shown)")
        #expect(parts.yielded.contains(links) && parts.yielded.contains(security))
    }

    /// Near miss: the story fits the room; nothing is tightened (today's output).
    @Test func aStoryThatFitsKeepsItsWholeSentences() throws {
        let story = try RuleTest.diagnose(Self.carKit(links: 8)).story
        let all = DiagnosisReport.storyLines(story, terminal: Self.plain, width: 100)
        let parts = DiagnosisReport.storyParts(story, terminal: Self.plain, width: 100, room: all.count)
        #expect(parts.shown == all && parts.yielded.isEmpty)
    }

    /// Near miss: one link, one stream (the flow's A2DP): no tight form at all, a line's worth is not saved by leaving
    /// out one address; its A2DP sentence stays told as today however short the room.
    @Test func oneLinkOneStreamHasNoTightForm() throws {
        let story = try RuleTest.diagnose(F.a2dp()).story
        #expect(story.tight.isEmpty, "\(story.tight.map(\.text))")
        let short = DiagnosisReport.storyLines(story, terminal: Self.plain, width: 100, room: 1).joined(separator: " ")
        #expect(short.contains("A2DP with") && short.contains("BR/EDR link"), "\(short)")
    }

    /// A device's digest without its routine counts: AVRCP only with a refusal, SDP only with an error; the call and the
    /// audio links kept (``AudioDigestTests``'s device: A2DP, HFP with its call, SDP).
    @Test func aDigestsTightFormDropsTheRoutineCounts() throws {
        let story = try RuleTest.diagnose(AudioDigestTests.hfpAndA2DP(rejected: true)).story
        let digest = try #require(story.digests.first)
        let tight = try #require(story.tight.first { $0.group == digest.group }, "\(story.tight.map(\.text))")
        #expect(digest.text.hasSuffix("; SDP: Handsfree Audio Gateway 1.8 (RFCOMM 3)."), "\(digest.text)")
        #expect(tight.text == String(digest.text.dropLast("; SDP: Handsfree Audio Gateway 1.8 (RFCOMM 3).".count)) + ".", "\(tight.text)")
    }
}
