import BLETestSupport
import Foundation
import Testing

/// Stories of the captures of `corpus/README.md` "Added 2026-11-30 (16)" (stories from tshark alone, committed before
/// blescope's first run; scores in corpus/stories/README.md), held point by point to `diagnose --json`. Needs the
/// corpus (BLESCOPE_CORPUS).
@Suite struct CorpusStoryTests1130 {
    static func of(_ capture: String) throws -> DiagnoseOutput? { try DiagnoseOutput.of(capture, corpus: true) }

    static let pump =
        "android-btsnoop_pumpx2-galaxy-s20fe-qualcomm-from-reset-tandem-tslim-x2-nordic-stored-ltk-gatt-rediscovered-x3-lost-08-x2-fail-establish-3e.log"
    static let call =
        "android-btsnoop_blueprobe-unisoc-from-reset-jbl-wave-buds-aac-chosen-of-sbc-aac-aptx-ldac-incoming-call-clcc-msbc-esco-sniff-refused-24.log"
    static let clip3 =
        "android-btsnoop_blueprobe-unisoc-jbl-clip-3-forgotten-page-timeout-04-x4-peer-old-key-negative-reply-disc-06-ssp-repair-cme-error-4.log"

    static let midlog =
        "android-btsnoop-last_blueprobe-unisoc-midlog-jbl-wave-buds-page-collision-3a-0b-call-answered-ata-esco-dropped-then-redone-peer-disc-13.log"

    /// A moto g04s's log of JBL WAVE BUDS over two links. The second carries the call: +CIEV 2,1 at 6282, ATA from
    /// the buds at 6319, +CIEV 1,1 at 6328, +CIEV 1,0 at 6531; and its AVDTP signalling channel, closed at 6312 and
    /// opened again at 6349, configures AAC at 6383 (tshark: 557 media packets on 0x0043 of the first link, 191 on
    /// 0x0045 of the second). The first run told the first link's HFP ("the first of 2 links", no call) and its 557
    /// packets alone.
    @Test func theCallOnTheSecondLinkIsTold() throws {
        guard let out = try Self.of(Self.midlog) else { return }
        #expect(
            out.sentence(
                "classic",
                containing: [
                    "HFP with B4:84:D5:CA:7F:97", "1 incoming call at 6282: answered by the peer (ATA, 6319)", "(the second of 2 links)",
                ])
                != nil)
        #expect(
            out.sentence(
                "classic", containing: ["2 streams of AAC", "(set at frames 1683, 6383)", "748 media packets, from this side's source"])
                != nil)
        // The ring's eSCO link lived 33 ms (Synchronous Connection Complete 6299 at 3289.181 s, Disconnection Complete
        // 6307 at 3289.214 s); the call's own ran 202 frames, no duration said.
        #expect(out.sentence("classic", containing: ["removed at 6307 after 33 ms", "removed at 6528."]) != nil)
    }

    /// The first screens (25 lines at 100 columns) of the two call logs (audio19): each one's profile lines fold into the
    /// buds' digest, which keeps the call (ATA 6319, +CIEV 1,1 6328, +CIEV 1,0 6531; on the call log, no ATA, 1529 →
    /// 1568), the ring's 33 ms eSCO, each session's packets (tshark: 557 on the first link, 191 on the second) and this
    /// side's codec offer (850–886, AAC set by the buds at 918); CE-01's four give-ups now start on line 24. The whole
    /// sentences follow the findings.
    @Test func theCallLogsFirstScreensReachTheFirstFinding() throws {
        for (capture, buds, told) in [
            (
                Self.midlog, "B4:84:D5:CA:7F:97",
                [
                    "(748 media packets: 557 + 191)", "service level connection up at 1620, 6228",
                    "1 incoming call at 6282: answered by the peer (ATA, 6319), up at 6328 for 24.8 s, ended by this side (6531)",
                    "removed at 6307 after 33 ms",
                ]
            ),
            (
                Self.call, "JBL WAVE BUDS",
                [
                    "this side offered SBC, AAC, aptX, aptX HD, LDAC (850–886), the peer chose AAC",
                    "answered on this side (no ATA), up at 1529 for 20.9 s, ended by this side (1568)",
                ]
            ),
        ] {
            guard let out = try Self.of(capture) else { return }
            let lines = out.text.split(separator: "\n", omittingEmptySubsequences: false)
            let screen = lines.prefix(25).joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for text in told { #expect(screen.contains(text), "\(capture): \(text)") }
            #expect(lines.prefix(25).contains { $0.hasPrefix("CRITICAL  CE-01") }, "\(capture)")
            let rest = lines.dropFirst(25).joined(separator: "\n")
            #expect(rest.contains("Story, continued:") && rest.contains("  HFP with \(buds) on RFCOMM"), "\(capture)")
        }
    }

    /// The same phone's accept-list connects (tshark): 04:da:28:4d:cd:62 added at 1094 and removed at 1266 after the
    /// cancel 30.0 s later (and three more times), a direct connect that ran Android's 30 s; and at 2096 a background
    /// connect for three devices added at 724–732 cancelled after 26.2 s, the three removed together (2107–2111).
    @Test func theBackgroundConnectTheStackStoppedIsNoGiveUp() throws {
        guard
            let out = try Self.of(
                "android-btsnoop_blueprobe-unisoc-from-reset-jbl-wave-buds-aac-chosen-of-sbc-aac-aptx-ldac-incoming-call-clcc-msbc-esco-sniff-refused-24.log"
            )
        else { return }
        let gaveUp = out.findings("CE-01").filter(\.atLeastWarning)
        #expect(gaveUp.map(\.occurrences) == [[1264, 1534, 1902, 1956]])
        #expect(gaveUp.first?.message.hasPrefix("Connecting to 04:DA:28:4D:CD:62 (on the accept list) gave up after 30.0 s") == true)
        #expect(out.findings("CE-01").contains { $0.severity == "info" && $0.message.contains("it stopped connecting in the background") })
    }

    /// Refusals where nothing failed (tshark): the Galaxy S20 FE's Write Link Policy Settings for each new LE handle
    /// (171 → 172 0x02 …); the moto g04s's Write Default Link Policy Settings 0x12 (1108 …), Change Connection Packet
    /// Type 0x1A (1515, 6084) and Create Connection 0x0B (6065) while the buds paged it (6066, link up 6070). The first
    /// run raised each as a warning ("a host state-machine bug").
    @Test func refusalsTheLinkTypesExplainAreContext() throws {
        guard
            let pump = try Self.of(
                "android-btsnoop_pumpx2-galaxy-s20fe-qualcomm-from-reset-tandem-tslim-x2-nordic-stored-ltk-gatt-rediscovered-x3-lost-08-x2-fail-establish-3e.log"
            ), let buds = try Self.of(Self.midlog)
        else { return }
        #expect(pump.findings("HH-04").contains { $0.occurrences == [172, 533, 544, 1109] && $0.severity == "info" })
        #expect(buds.findings("HH-04").allSatisfy { $0.severity == "info" })
        #expect(buds.findings("HH-04").contains { $0.occurrences == [6065] && $0.message.contains("the link came up at frame 6070") })
        // The page that collided first: Connection Complete 0x3A at 6063.
        #expect(buds.findings("BR-02").map(\.severity) == ["info"] && buds.findings("BR-02")[0].message.contains("a page collision"))
    }

    /// The forgotten JBL Clip 3 (tshark): Link Key Request 3298, this side's Negative Reply 3299, the speaker ends the
    /// link 0x06 at 3304; it is paired again by Secure Simple Pairing and a new key is notified at 3467. The first run
    /// said "no pairing followed" at error.
    @Test func aLostKeyThenPairedAgainSaysSo() throws {
        guard
            let out = try Self.of(
                "android-btsnoop_blueprobe-unisoc-jbl-clip-3-forgotten-page-timeout-04-x4-peer-old-key-negative-reply-disc-06-ssp-repair-cme-error-4.log"
            )
        else { return }
        let f = try #require(out.findings("BR-04").first)
        #expect(f.severity == "warning" && f.message.contains("they paired again and a new link key was made at frame 3467"))
    }

    /// The buds' two 0x13 ends (tshark): at 3051 after the phone closed A2DP, AVRCP and RFCOMM (2987–3027; only the
    /// SDP channel the buds opened at 1704 stayed open), at 6988 after the phone's AVDTP Suspend (6950/6957). Both
    /// ordinary ends; the first run warned on both.
    @Test func theBudsEndsAfterTheProfilesClosedAreOrderly() throws {
        guard let out = try Self.of(Self.midlog) else { return }
        let ends = try #require(out.findings("DC-02").first)
        #expect(ends.occurrences == [3051, 6988] && ends.severity == "info")
    }

    /// The pump's two losses (tshark): 0x08 at 521, 9.06 s after its last notification (517, 80.307 s → 89.369 s);
    /// 0x08 at 1057, 15.4 s after its last notification (1054, 185.190 s → 200.554 s), the phone's Write Command to
    /// 0x0019 at 1055 (198.973 s) with nothing after it. The first run told the first alone.
    @Test func eachLossOfThePumpKeepsItsOwnSilence() throws {
        guard let out = try Self.of(Self.pump) else { return }
        let f = try #require(out.findings("DC-01").first)
        #expect(f.occurrences == [521, 1057])
        #expect(f.message.contains("at frame 521; its last data came 9.06 s before"))
        #expect(
            f.message.contains(
                "Then at frame 1057: its last data came 15.4 s before, this side's write to 0x0019 at frame 1055 got nothing back"))
    }

    /// The call log's A2DP (tshark): the buds' Get All Capabilities of this side's five end points answered at 850,
    /// 856, 862, 869 and 886 (SBC, AAC, aptX, aptX HD, LDAC), the buds' SetConfiguration of SEID 2 (AAC) at 918; and
    /// the sniff request refused 0x24 (Mode Change 1547) while the call's eSCO link was up (1522–1566).
    @Test func theSourcesOfferAndTheSniffRefusalDuringTheCall() throws {
        guard let out = try Self.of(Self.call) else { return }
        #expect(
            out.sentence(
                "classic", containing: ["(set at frame 918; this side offered SBC, AAC, aptX, aptX HD, LDAC (850–886), the peer chose AAC"])
                != nil)
        let sniff = try #require(out.findings("BR-06").first)
        #expect(sniff.occurrences == [1547] && sniff.severity == "info")
        #expect(sniff.message.hasSuffix("the link went on as it was, during the call's eSCO link (1522–1566)."))
    }

    /// The Clip 3 log (tshark): Delete Stored Link Key for f8:5c:7d:18:e2:ff, Delete_All 0, at 3038, before the
    /// speaker's Link Key Request (3298) and this side's Negative Reply (3299); the one at 3406, 2 ms after this side's
    /// Create Connection to it (3404), opens the new pairing and is not cited.
    @Test func theDeletedKeyIsTheRemovedBond() throws {
        guard let out = try Self.of(Self.clip3) else { return }
        let f = try #require(out.findings("BR-04").first)
        #expect(f.message.contains("(Negative Reply at frame 3299): this side deleted the stored key for it at frame 3038"))
        // tshark: 3304 is a Disconnect Complete, reason 0x06, with no Authentication Complete before it.
        #expect(
            f.message.hasPrefix(
                "The link with F8:5C:7D:18:E2:FF ended, its authentication not completed (0x06 PIN or Key Missing at frame 3304)"),
            "\(f.message)")
        #expect(
            out.sentence(
                "security",
                containing: [
                    "no stored key for 2 requests (3299, 3432: this side had deleted the stored key of JBL Clip 3 at 3038)"
                ])
                != nil)
    }
}
