import BLETestSupport
import Foundation
import Testing

/// Stories of the captures of `corpus/README.md` "Added 2026-11-29 (6)" (stories from tshark alone, committed before
/// blescope's first run; scores in corpus/stories/README.md), held point by point to `diagnose --json`. Needs the
/// corpus (BLESCOPE_CORPUS).
@Suite struct CorpusStoryTests1129d {
    static func of(_ capture: String) throws -> DiagnoseOutput? { try DiagnoseOutput.of(capture, corpus: true) }

    /// BTstack as the Audio Gateway (CSR dongle): a Connection Complete for 6C:72:E7:10:22:EE (Apple) on handle 0x0047 comes
    /// 1.5 ms after the HCI Reset (frames 33, 34), before the reset's Command Complete (38); on 0x0047 tshark shows only
    /// a Max Slots Change (36). Then one BR/EDR link with the hands-free unit 00:1A:7D:DA:71:02, closed by this side (0x16, 45708). The
    /// first run counted 2 BR/EDR links, one "still open when the log ends".
    @Test func audioGatewayStaleConnectCompleteAfterReset() throws {
        guard let out = try Self.of("pklg-btstack-be_hfp-ag-stale-apple-connect-complete-after-reset-bcs1-cvsd-esco-18k-sco.pklg")
        else { return }
        #expect(out.sentence("classic", containing: ["1 BR/EDR link with 00:1A:7D:DA:71:02", "1 closed by this side (0x16)"]) != nil)
        #expect(!out.story.contains { $0.text.contains("LE link") || $0.text.contains("still open") })
        #expect(out.text.contains("a Connection Complete for handle 0x0047 at frame 34 came before the HCI"))
        #expect(out.sentence("classic", containing: ["this side the audio gateway", "mSBC offered, CVSD used"]) != nil)
    }
}
