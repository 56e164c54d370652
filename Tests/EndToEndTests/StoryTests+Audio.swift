import BLETestSupport
import Foundation
import Testing

/// Four headset logs' audio stories written from tshark alone (`Tests/EndToEndTests/Stories/*.story.md`, each point
/// re-read with `tshark -V` before blescope decoded any BR/EDR profile), held point by point to `diagnose --json`:
/// SDP's records, the hands-free connection and its codecs, the A2DP stream with its codec, media and suspends, AVRCP.
/// Corpus captures (BLESCOPE_CORPUS).
@Suite struct AudioStoryTests {
    @Test func codestudyLHDCHandsFreeAndAVRCP() throws {
        guard let out = try DiagnoseOutput.of("android-btsnoop-cfa_codestudy-bredr-a2dp-lhdc-hfp-avrcp-3.4k-media.cfa", corpus: true)
        else { return }
        // P1: one BR/EDR link, 0x0002, opened at 172, open at the end.
        #expect(out.sentence("classic", containing: ["1 BR/EDR link", "1 still open when the log ends"]) != nil)
        // P2: Handsfree 1.7 on RFCOMM 10 (228), A2DP 1.3 on AVDTP (350: the headset is an Audio Sink), AVRCP 1.6 on AVCTP (557).
        let sdp = try #require(
            out.sentence(
                "classic",
                containing: [
                    "SDP with", "Handsfree 1.7 (RFCOMM 10)", "Audio Sink 1.3 (AVDTP)", "A/V Remote Control 1.6 (AVCTP)",
                ]))
        #expect(Set(sdp.frames).isSuperset(of: [228, 350, 557]))
        // P3, P4: the hands-free DLC on channel 10; SLC up at CHLD's OK (303); CVSD and mSBC offered, none selected; BTRH
        // and CSRSF refused (397, 466).
        let hfp = try #require(
            out.sentence(
                "classic",
                containing: [
                    "HFP with", "RFCOMM channel 10", "this side the audio gateway", "service level connection up at frame 303",
                    "CVSD/mSBC offered, no codec selected", "2 AT commands refused (the first AT+BTRH? answered ERROR at 397)",
                ]))
        #expect(hfp.frames.contains(303) && hfp.frames.contains(279))
        // P5, P6: LHDC (Savitech 0x4C33) configured at 482; 3388 media packets; two suspends, no stall.
        let a2dp = try #require(
            out.sentence("classic", containing: ["A2DP with", "LHDC v3", "set at frame 482", "3388 media packets", "2 suspends"]))
        #expect(!a2dp.text.contains("stall") && a2dp.frames.contains(482) && a2dp.frames.contains(608))
        #expect(out.findings("BR-07").isEmpty && out.findings("BR-08").isEmpty)
        // P7: AVRCP notifications (PLAYBACK_POS_CHANGED, PLAYBACK_STATUS_CHANGED), nothing refused.
        let avrcp = try #require(out.sentence("classic", containing: ["AVRCP with", "PLAYBACK_POS_CHANGED", "PLAYBACK_STATUS_CHANGED"]))
        #expect(!avrcp.text.contains("refused"))
        #expect(out.findings("BR-10").isEmpty && out.findings("BR-11").isEmpty && out.findings("BR-12").isEmpty)
    }

    @Test func oppoFreshAACOpenedNotStartedAndAnRFCOMMLoop() throws {
        guard let out = try DiagnoseOutput.of("android-btsnoop_oppo-enco-classic-hfp-a2dp-fresh.log", corpus: true) else { return }
        // P2: SLC up at 399 (CHLD's OK; no BIND); AT+VDSF and AT+VDRI refused (497, 504).
        let hfp = try #require(
            out.sentence(
                "classic",
                containing: [
                    "HFP with", "RFCOMM channel 3", "service level connection up at frame 399",
                    "2 AT commands refused (the first AT+VDSF=7 answered +CME ERROR: 0 at 497)",
                ]))
        #expect(hfp.frames.contains(399))
        #expect(out.findings("BR-10").isEmpty)
        // P3: AAC (MPEG-2 LC, 44.1 kHz, 2 ch) configured at 482, opened, never started.
        let a2dp = try #require(
            out.sentence("classic", containing: ["A2DP with", "AAC MPEG-2 LC 44.1 kHz 2 ch", "set at frame 482", "never started"]))
        #expect(a2dp.frames.contains(482))
        // P5: AVRCP notifications registered: PLAYBACK_STATUS_CHANGED and VOLUME_CHANGED.
        #expect(out.sentence("classic", containing: ["AVRCP with", "PLAYBACK_STATUS_CHANGED", "VOLUME_CHANGED"]) != nil)
        // P6: the six cancelled LE attempts stay CE-01's.
        #expect(out.findings("CE-01").first?.occurrences.count == 6)
    }

    @Test func lg750SBCStreamWithASuspend() throws {
        guard let out = try DiagnoseOutput.of("android-btsnoop-named-cap_lg750-a2dp-classic-no-att.cap", corpus: true) else { return }
        // P1: two BR/EDR links, both closed by this side (0x16), each device's told apart (story18).
        #expect(
            out.sentence(
                "classic",
                containing: [
                    "2 BR/EDR links with 2 devices", "LG HBS750 (00:18:6B:72:DB:66) ×1: 1 closed by this side (0x16)",
                    "Pebble ECCE (00:18:33:E0:EC:CE) ×1: 1 closed by this side (0x16)",
                ]) != nil)
        // P2: SLC up at 520; the gateway does not negotiate codecs (no AT+BAC); XAPL, IPHONEACCEV, BTRH refused.
        let hfp = try #require(
            out.sentence("classic", containing: ["HFP with", "service level connection up at frame 520", "3 AT commands refused"]))
        #expect(!hfp.text.contains("offered"))
        // P3, P4: SBC 44.1 kHz joint stereo bitpool 2–53 at 625; 4972 packets; one suspend; no stall. The rate is over
        // the time the stream ran (tshark: media 672–1141, 8.852–11.975 s, then 1165–8155 after the Start at 1162,
        // 14.043–60.602 s: 49.68 s; 2,102,154 L2CAP bytes → 338 kbps), not its 51.75 s span (325 kbps).
        let a2dp = try #require(
            out.sentence(
                "classic",
                containing: [
                    "A2DP with", "SBC 44.1 kHz joint stereo, 16 blocks, 8 subbands, loudness, bitpool 2–53", "set at frame 625",
                    "4972 media packets", "1 suspend",
                ]))
        #expect(a2dp.text.contains("streamed 49.7 s at 338 kbps") && !a2dp.text.contains("stall") && !a2dp.text.contains("skipped"))
        #expect(a2dp.frames.contains(625) && a2dp.frames.contains(672) && a2dp.frames.contains(1148))
        #expect(out.findings("BR-07").isEmpty && out.findings("BR-08").isEmpty)
    }

    @Test func nighthawkSBCOpenedAndAHandsFreeWithoutCodecNegotiation() throws {
        guard let out = try DiagnoseOutput.of("android-btsnoop-broadcom-vsc_aleksa-classic-hfp-avdtp.log", corpus: true) else { return }
        // P2: SLC up at 919; BTRH and CSRSF refused; no codec offered (AT+BRSF=63: no codec negotiation).
        let hfp = try #require(
            out.sentence("classic", containing: ["HFP with", "service level connection up at frame 919", "2 AT commands refused"]))
        #expect(!hfp.text.contains("offered"))
        // P3: SBC bitpool 2–53 at 983, opened at 1004, never started.
        #expect(
            out.sentence("classic", containing: ["A2DP with", "SBC 44.1 kHz joint stereo", "set at frame 983", "never started"]) != nil)
        // P4: AVRCP: GetCapabilities and two RegisterNotification.
        #expect(out.sentence("classic", containing: ["AVRCP with"]) != nil)
        #expect(out.findings("BR-10").isEmpty && out.findings("BR-08").isEmpty)
    }
}
