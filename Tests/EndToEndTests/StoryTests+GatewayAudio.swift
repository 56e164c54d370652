import BLETestSupport
import Foundation
import Testing

/// The two BTstack Audio Gateway logs of `corpus/README.md` "Added 2026-11-29 (6)", on the points their first run got
/// wrong (corpus/stories/README.md): no call in their HFP exchange (tshark: no RING, no +CIEV of call or callsetup, no
/// ATA or ATD), so an audio connection, not "Calls' audio links"; the SCO audio on the first screen, counted on the eSCO
/// link (tshark `bthci_sco.chandle`, by direction); the eSCO's Disconnect (45707, 25211) answered by the Disconnection
/// Complete logged 10–11 ms before it (45697, 25201), not "still waiting for its answer". Needs the corpus.
@Suite struct CorpusStoryTestsGatewayAudio {
    @Test func cvsdGatewayAudioConnectionAndItsShutdown() throws {
        guard
            let out = try DiagnoseOutput.of(
                "pklg-btstack-be_hfp-ag-stale-apple-connect-complete-after-reset-bcs1-cvsd-esco-18k-sco.pklg", corpus: true)
        else { return }
        let audio = out.sentence(
            "classic",
            containing: [
                "Audio connection (no call in the HFP exchange): eSCO link up at frame 478", "removed at 45697",
                "9,042 SCO packets sent and 9,036 received",
            ])
        #expect(audio != nil, "\(out.story.map(\.text))")
        #expect(!out.text.contains("Calls' audio") && !out.text.contains("the call's audio"))
        #expect(!out.findings("CQ-03").contains { $0.message.contains("Disconnect still waiting") })
    }

    @Test func msbcGatewayAudioConnectionAndItsShutdown() throws {
        guard
            let out = try DiagnoseOutput.of(
                "pklg-btstack-be_hfp-ag-stale-sco-acl-disconnects-after-reset-11s-page-bcs2-msbc-esco-10k-sco.pklg", corpus: true)
        else { return }
        let audio = out.sentence(
            "classic",
            containing: [
                "Audio connection (no call in the HFP exchange): eSCO link up at frame 463", "removed at 25201",
                "4,945 SCO packets sent and 4,938 received",
            ])
        #expect(audio != nil, "\(out.story.map(\.text))")
        #expect(!out.findings("CQ-03").contains { $0.message.contains("Disconnect still waiting") })
    }
}
