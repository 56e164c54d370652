import BLETestSupport
import Foundation
import Testing

/// Stories of the captures of `corpus/README.md` "Added 2026-11-30 (17)" (stories from tshark alone, committed before
/// blescope's first run; scores in corpus/stories/README.md), held point by point to `diagnose --json`. Needs the
/// corpus (BLESCOPE_CORPUS).
@Suite struct CorpusStoryTests1130b {
    static func of(_ capture: String) throws -> DiagnoseOutput? { try DiagnoseOutput.of(capture, corpus: true) }

    static let echoAuto =
        "android-btsnoop_blueprobe-unisoc-echo-auto-alexa-rfcomm-uuid128-lost-08-x2-clip-3-call-cvsd-esco-disconnect-cmd-status-12.log"
    static let band =
        "android-btsnoop-last_blueprobe-65536-records-xiaomi-band-8-active-gatt-unanswered-att-timeout-disc-22-x5-lost-08-x3-then-works.log"
    static let keyboard =
        "android-btsnoop_blueprobe-unisoc-from-reset-echo-auto-first-ssp-pairing-466510-confirmed-23s-le-legacy-justworks-band-disconnect-refused-12-then-13.log"

    /// tshark: 16 BR/EDR links, 15 paged by the peer (Connect Request → Accept Connection Request: 753/754, 3247/3248,
    /// 4346/4347, 6560/6561, 9258/9259, …), link #3 by this side (Create Connection 3404); Disconnection Complete 0x13
    /// ten times on ACL handles, 0x16 three (two more for the eSCO links), 0x08 twice, 0x06 once. The first run counted
    /// "5 opened by the peer": the ten whose role switch to central preceded Connection Complete were left out; and
    /// "2 closed by this side (0x13)": the two ends whose Disconnect the controller refused (0x12 at 22345, 23268).
    /// By device (story18): the Echo Auto's nine links ended 0x13 six times (9350, 9421, 22596, 23466; 22346 and 23269
    /// right after this side's refused Disconnect), 0x08 twice (11072, 24852), 0x16 once (25776); the Clip 3's six 0x13
    /// four times, 0x06 (3304), 0x16 (14398); the buds' one 0x16 (2095); the Echo's 0x0033 (14781–22346) and the Clip
    /// 3's 0x0032 (17222–18578) up together 30.59 s (21132.6–21163.2 s).
    @Test func whoOpenedAndWhoEndedEachBREDRLink() throws {
        guard let out = try Self.of(Self.echoAuto) else { return }
        #expect(
            out.sentence(
                "classic",
                containing: [
                    "16 BR/EDR links with 3 devices",
                    "1 opened by this side (Create Connection 3404), 15 by the peer (its Connection Request, 753, 3247, 4346, …)",
                    "Echo Auto F47Q (4C:17:44:79:6B:59) ×9, Wearable Headset Device (class at 9258): 4 ended by the peer (0x13 Remote User Terminated Connection), 2 lost by supervision timeout (0x08), 2 ended by the peer (0x13) while this side's Disconnect was refused (0x12), 1 closed by this side (0x16)",
                    "JBL Clip 3 (F8:5C:7D:18:E2:FF) ×6, Loudspeaker (class at 3247): 4 ended by the peer (0x13), 1 ended (0x06 PIN or Key Missing), 1 closed by this side (0x16)",
                    "2 links up at once for 30.6 s (17222–18578: Echo Auto F47Q, JBL Clip 3)",
                ]) != nil, "\(out.story.map(\.text))")
        let refused = try #require(out.findings("HH-04").first { $0.message.contains("refused Disconnect") })
        #expect(refused.severity == "info" && refused.occurrences == [22345, 23268])
        #expect(out.findings("DC-02").contains { $0.occurrences == [22346, 23269] })
    }

    /// tshark: 04:da:28:4d:cd:62 added to the accept list at 17028 (21112.569 s), the create's cancel at 17584 (29.4 s)
    /// followed by LE Set Random Address at 17589 and a new create at 17592, cancelled at 17596 (30.004 s after the Add)
    /// and the device removed at 17601; the same at 12271/12286/12295/12300 and 25071/25144/25504/25509. The first run
    /// gave 17586 its own CRITICAL naming no device and left the three give-ups out of the 76.
    @Test func aConnectReCreatedToRotateTheAddressGivesUpFromItsAdd() throws {
        guard let out = try Self.of(Self.echoAuto) else { return }
        let gaveUp = out.findings("CE-01").filter(\.atLeastWarning)
        #expect(gaveUp.count == 1)
        let series = try #require(gaveUp.first)
        #expect(series.occurrences.count == 79 && [12298, 17599, 25506].allSatisfy(series.occurrences.contains))
        #expect(!series.occurrences.contains(17586))
        #expect(
            out.findings("CE-01").contains {
                $0.severity == "info" && $0.occurrences.contains(17586)
            })
    }

    /// tshark (the band `.last` file): this side's Disconnect, then its own LE Connection Update 3–34 ms later, completed
    /// 0x16 (54133/54135/54137 and five more); LE Set Extended Scan Enable 0x00 at 26919, no link open, then 8 h 16 min
    /// without a record before 26927. The first run: LP-01 WARNING ×6, and "a paused or rotated log?".
    @Test func updatesOvertakenByTheDisconnectAndAnIdleGapAreContext() throws {
        guard let out = try Self.of(Self.band) else { return }
        let updates = try #require(out.findings("LP-01").first)
        #expect(out.findings("LP-01").count == 1 && updates.severity == "info")
        #expect(updates.occurrences == [54137, 54337, 54466, 54664, 54768, 56674])
        let gap = try #require(out.findings("CQ-04").first { $0.occurrences.contains(26927) })
        #expect(gap.severity == "info" && gap.message.contains("LE scanning off since frame 26919, no link open"))
    }

    /// tshark (the K-BT40 keyboard): CCCDs of four reports written from 963, the key report 0x0015 notified at
    /// 982–1013 and the battery 0x002c, 0x0019 and 0x001d never, the link ended 41 s later; Disconnect refused 0x12 at
    /// 14927, the link's 0x13 at 14928. The first run: GATT-05 WARNING for the keyboard, HH-04 warning.
    @Test func silentReportsOfAKeyboardThatNotifiedAreContext() throws {
        guard let out = try Self.of(Self.keyboard) else { return }
        let keyboard = try #require(out.findings("GATT-05").first { $0.message.contains("K-BT40") })
        #expect(keyboard.severity == "info" && keyboard.message.contains("the peer notified 0x0015 meanwhile"))
        #expect(out.findings("HH-04").contains { $0.occurrences == [14927] && $0.severity == "info" })
    }

    /// tshark (the band `.last` file): Read Remote Version Information on 0x0010 at 54115, 54313, 54445, 54641, 54747,
    /// 54846, 56475, 56653, none answered before its link ended; the ninth's (58232) answered at 58284, the tenth's
    /// (58527) at 58546. On link #10, 21 L2CAP Connection Parameter Update Requests from the band (58689, 58709, 58718,
    /// …, 59253; intervals 12, then 240–264 and 8 in turn) and 23 LE Connection Update Complete events.
    @Test func theBandNeverAnsweredTheVersionExchangeAndAskedForTheParameters() throws {
        guard let out = try Self.of(Self.band) else { return }
        #expect(
            out.sentence(
                "links",
                containing: [
                    "the version exchange this side asked never completed on 8 of them (Read Remote Version Information at 54115, 54313, 54445, …)"
                ]) != nil, "\(out.story.map(\.text))")
        let setup = try #require(out.story.first { $0.topic == "setup" })
        #expect(
            setup.text.contains(
                "20 more changes (the peer asked for 21: L2CAP Connection Parameter Update Request at 58689, 58709, 58718, …)"))
        // On the first screen: the links, the set-up, and GATT-01's answer (the caveat yields after the findings).
        let screen = out.text.split(separator: "\n").prefix(25).joined(separator: " ").split(whereSeparator: \.isWhitespace)
            .joined(separator: " ")
        #expect(screen.contains("the peer asked for 21") && screen.contains("the ATT bearer timed out after 30 s"))
    }

    /// tshark (BTlogs22): the Echo Auto's link, Disconnect at 14926 refused 0x12 at 14927, Disconnection Complete 0x13
    /// at 14928; its SSP from 13425 (IO Capability Request) with 4c:17:44:79:6b:59, the user's confirmation 23.2 s after
    /// the request.
    @Test func theFirstPairingsDeviceAndTheRefusedDisconnect() throws {
        guard let out = try Self.of(Self.keyboard) else { return }
        #expect(
            out.sentence(
                "classic",
                containing: [
                    "Echo Auto F47Q (4C:17:44:79:6B:59) ×1: 1 ended by the peer (0x13 Remote User Terminated Connection) while this side's Disconnect was refused (0x12)"
                ]) != nil, "\(out.story.map(\.text))")
        #expect(out.sentence("security", containing: ["1 Secure Simple Pairing with Echo Auto F47Q started (13425; "]) != nil)
        // tshark: User Confirmation Request 13453 at 3394.578251 s, this side's Reply 13820 at 3417.746625 s (23.17 s).
        #expect(out.sentence("security", containing: ["this side's user confirmed after 23.2 s (13453 → 13820)"]) != nil)
        // The same fact in `report --format json` (schemas/security.schema.json, pairing.user_answer): 23,168,374 µs.
        let path = try #require(TestEnvironment.corpusDirectory) + "/" + Self.keyboard
        let json = try Blescope.run(["report", "--format", "json", path]).stdout
        #expect(
            json.contains(
                #""user_answer":{"accepted":true,"verb":"confirmed","request_frame":13453,"frame":13820,"microseconds":23168374}"#),
            "\(json.count) bytes")
    }

    /// The first screens of the two Echo Auto logs and the Clip 3 log (audio20): where the audio digests left the first
    /// finding below line 25, the routine lines take their tight forms. BTlogs22 point 5: the Echo's vendor service on
    /// RFCOMM 11 (tshark: SDP answer 13428, SABM on DLCI 22) beside the 23.2 s confirmation (13453 → 13820); the Clip 3
    /// log point 5: AT+BTRH? answered +CME ERROR: 4 (3629) beside the SBC configured (3542) and never started; the Echo
    /// Auto log keeps points 7–9 (the Clip 3 link this side closed, the two links at once, the ends after a refused
    /// Disconnect). The whole sentences follow the findings.
    @Test func theTightFormsBringTheStorysPointsOntoTheFirstScreen() throws {
        for (capture, told) in [
            (
                Self.keyboard,
                [
                    "this side's user confirmed after 23.2 s (13453 → 13820)",
                    "Echo Auto F47Q: SDP: 931C7E8A-540F-4686-B798-E8DF0A2AD9F7 (RFCOMM 11)",
                ]
            ),
            (
                CorpusStoryTests1130.clip3,
                [
                    "no stored key for 2 requests (3299, 3432: this side had deleted the stored key of JBL Clip 3 at 3038)",
                    "JBL Clip 3: A2DP SBC 44.1 kHz (set at frame 3542), never started",
                    "1 AT command refused (AT+BTRH? answered +CME ERROR: 4 at 3629)",
                ]
            ),
            (
                Self.echoAuto,
                [
                    "221 LE connection attempts, all cancelled by this side in the background by accept list (0x02)",
                    "JBL Clip 3 ×6: 4 ended by the peer (0x13), 1 ended (0x06 PIN or Key Missing), 1 closed by this side (0x16)",
                    "2 ended by the peer (0x13) while this side's Disconnect was refused (0x12)",
                    "2 links up at once for 30.6 s (17222–18578: Echo Auto F47Q, JBL Clip 3)",
                ]
            ),
        ] {
            guard let out = try Self.of(capture) else { return }
            let lines = out.text.split(separator: "\n", omittingEmptySubsequences: false)
            let screen = lines.prefix(25).joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for text in told { #expect(screen.contains(text), "\(capture): \(text)") }
            let rest = lines.dropFirst(25).joined(separator: "\n")
            #expect(rest.contains("Story, continued:") && rest.contains("  SDP with "), "\(capture)")
        }
    }
}
