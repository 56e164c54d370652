import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// A device's BR/EDR audio folded into one sentence where the story would push the first finding off the first screen
/// (issue 46; the blueprobe Echo Auto log: 35 profile lines of three devices, its first finding on line 64). Each device
/// with its digest; the sentences themselves after the findings; an anomaly keeps its own line. From typed packets,
/// with the near misses: a story that fits, and a device whose digest saves no line.
@Suite struct AudioDigestTests {
    typealias F = ClassicProfilesFlowTests
    static let plain = Terminal(colors: false)

    /// The flow's hands-free exchange (SDP 8–11, RFCOMM 12–23, the service level connection up at 37, +BCS mSBC at 39)
    /// and, on the same link, A2DP: this side discovers the headset's sink (49), configures SBC (50), opens, starts (60)
    /// and sends three media packets a second apart (62–64: two silences over 200 ms, the stalls a digest keeps); its
    /// second Start is rejected (66) when `rejected`.
    static func hfpAndA2DP(rejected: Bool) -> CaptureBuilder {
        var b = F.capture()  // 1–41
        // 42–47
        b = b.openBREDRChannel(handle: F.h, psm: 0x0019, localCID: 0x0042, remoteCID: 0x0052, localMTU: 672, remoteMTU: 672, identifier: 5)
        b = F.avdtp(b, AVDTPMessage(label: 1, messageType: .command, signal: .discover), rx: false)  // 48
        let sinks = AVDTPParameters.endpoints([AVDTPEndpoint(seid: 1, isSink: true)])
        b = F.avdtp(b, AVDTPMessage(label: 1, messageType: .accept, signal: .discover, parameters: sinks), rx: true)  // 49
        let config = [AVDTPCapability(category: 1, value: []), AVDTPCapability(category: 7, value: F.sbc.capabilityBytes)]
        b = F.avdtp(
            b,
            AVDTPMessage(label: 3, messageType: .command, signal: .setConfiguration, parameters: .setConfiguration(acp: 1, int: 2, config)),
            rx: false)  // 50
        b = F.avdtp(b, AVDTPMessage(label: 3, messageType: .accept, signal: .setConfiguration), rx: true)  // 51
        b = F.avdtp(b, AVDTPMessage(label: 4, messageType: .command, signal: .open, parameters: .seid(1)), rx: false)  // 52
        b = F.avdtp(b, AVDTPMessage(label: 4, messageType: .accept, signal: .open), rx: true)  // 53
        // 54–59
        b = b.openBREDRChannel(handle: F.h, psm: 0x0019, localCID: 0x0043, remoteCID: 0x0053, localMTU: 672, remoteMTU: 895, identifier: 7)
        b = F.avdtp(b, AVDTPMessage(label: 5, messageType: .command, signal: .start, parameters: .seids([1])), rx: false)  // 60
        b = F.avdtp(b, AVDTPMessage(label: 5, messageType: .accept, signal: .start), rx: true)  // 61
        for i in 0..<3 {
            let rtp = RTPHeader(sequence: UInt16(i + 1), timestamp: UInt32(i) * 640).bytes
            b = b.at(microsecondsFromStart: 1_000_000 + Int64(i) * 1_000_000).l2cap(
                cid: 0x0053, payload: rtp + [0x05] + Array(repeating: 0x9C, count: 100), handle: F.h, .tx)  // 62–64
        }
        if rejected {
            b = F.avdtp(b, AVDTPMessage(label: 6, messageType: .command, signal: .start, parameters: .seids([1])), rx: false)  // 65
            let reject = AVDTPParameters.reject(first: 1 << 2, error: AVDTPError(rawValue: 0x31))
            b = F.avdtp(b, AVDTPMessage(label: 6, messageType: .reject, signal: .start, parameters: reject), rx: true)  // 66
        }
        return b
    }

    @Test func aDevicesProfilesFoldIntoOneDigestAndTheRejectionKeepsItsLine() throws {
        let story = try RuleTest.diagnose(Self.hfpAndA2DP(rejected: true)).story
        let digest = try #require(story.digests.first, "\(story.sentences.map(\.text))")
        #expect(story.digests.count == 1)
        #expect(
            digest.text.hasPrefix(
                "\(digest.group!): A2DP SBC 44.1 kHz (set at frame 50), streamed 2.0 s (3 media packets), this side the source, 2 stalls over 200 ms (the first at 63); HFP, this side the audio gateway: service level connection up at 37"
            ), "\(digest.text)")
        // The call the flow's +CIEV: 2,1 (38) puts up, and the codec of +BCS: 2 (39).
        #expect(digest.text.contains(", 1 call at 38: up at 38, still up when the log ends, mSBC selected;"), "\(digest.text)")
        #expect(digest.text.hasSuffix("; SDP: Handsfree Audio Gateway 1.8 (RFCOMM 3)."), "\(digest.text)")
        // The A2DP, HFP and SDP sentences are the device's; the rejection (66) is not folded.
        let grouped = story.sentences.filter { $0.group == digest.group }.map(\.text)
        #expect(
            grouped.count == 3 && grouped.allSatisfy { $0.hasPrefix("A2DP with") || $0.hasPrefix("HFP with") || $0.hasPrefix("SDP with") })
        let rejection = try #require(story.sentences.first { $0.text.hasPrefix("AVDTP with") })
        #expect(rejection.group == nil && rejection.frames == [66])
        // Short of room: the digest in the device's place, the rejection kept; the sentences wait after the findings.
        let all = DiagnosisReport.storyLines(story, terminal: Self.plain, width: 100)
        let short = DiagnosisReport.storyLines(story, terminal: Self.plain, width: 100, room: all.count - 1).joined(separator: " ")
        #expect(short.contains(": A2DP SBC 44.1 kHz (set at frame 50)") && short.contains("AVDTP with"), "\(short)")
        #expect(!short.contains("HFP with") && !short.contains("SDP with"), "\(short)")
        // The JSON's story keeps every sentence whole.
        #expect(story.sentences.contains { $0.text.hasPrefix("HFP with") } && !story.sentences.contains(digest))
    }

    /// Near miss: the story fits, nothing folds (the output is today's).
    @Test func aStoryThatFitsKeepsEverySentence() throws {
        let story = try RuleTest.diagnose(Self.hfpAndA2DP(rejected: false)).story
        let all = DiagnosisReport.storyLines(story, terminal: Self.plain, width: 100)
        #expect(DiagnosisReport.storyLines(story, terminal: Self.plain, width: 100, room: all.count) == all)
        #expect(all.joined(separator: " ").contains("HFP with") && !story.digests.isEmpty)
    }

    /// Near miss: one device, one stream (the flow's A2DP alone: one sentence and its rejection); short of room its
    /// digest would save no line, so the stream stays told as today.
    @Test func oneDeviceOneStreamStaysAsItIs() throws {
        let story = try RuleTest.diagnose(F.a2dp()).story
        let all = DiagnosisReport.storyLines(story, terminal: Self.plain, width: 100)
        let short = DiagnosisReport.storyLines(story, terminal: Self.plain, width: 100, room: 1)
        #expect(short == all, "\(short)")
        #expect(all.joined(separator: " ").contains("A2DP with"))
    }

    /// The calls' audio links of a device fold into its digest: one eSCO link up at 13705, asked by this side at 13698,
    /// removed at 13857 (the blueprobe Echo Auto log's Clip 3 call); one removed within a second says how long it lived
    /// (the blueprobe midlog's ring eSCO, 6299 → 6307, 33 ms).
    @Test func anAudioLinkIsToldWithWhoAskedAndItsEnd() throws {
        var l = SynchronousLink(number: 1, linkType: SynchronousLinkType.esco, handle: 0x0E00, controller: 0, status: .success)
        (l.request, l.requestFrame, l.startFrame, l.endFrame) = ("Setup Synchronous Connection", 13698, 13705, 13857)
        (l.startTime, l.endTime) = (Timestamp(microseconds: 0), Timestamp(microseconds: 16_600_000))
        #expect(Story.syncDigest([l])?.text == "eSCO up at 13705 (asked by this side at 13698), removed at 13857")
        var ring = l
        (ring.startFrame, ring.endFrame, ring.endTime) = (6299, 6307, Timestamp(microseconds: 33_000))
        var again = l
        (again.startFrame, again.endFrame) = (6326, 6528)
        #expect(Story.syncDigest([ring, again])?.text == "2 eSCO links (up at 6299, removed at 6307 after 33 ms, 6326)")
    }
}
