import BLETestSupport
import Foundation
import Testing

/// `diff` on BR/EDR audio (issue 46): the same hands-free call made twice with the same headset (Samples `hfp-call`
/// and `hfp-esco-fails`, truth files): both select mSBC (+BCS: 2), only the first gets its eSCO link (Synchronous
/// Connection Complete #119: status 0, air mode 3 transparent; the second: status 0x1A, no link).
@Suite struct DiffAudioTests {
    @Test func aCallWhoseESCOFailedDiffersByItsAirModeOnly() throws {
        let c = try DiffTests.comparison("hfp-call.btsnoop", "hfp-esco-fails.btsnoop")
        let audio = try #require(c["differences"] as? [[String: Any]]).filter { $0["section"] as? String == "audio" }
        let seen = audio.map {
            "\($0["kind"]!) \($0["a"] as? String ?? "-") \($0["b"] as? String ?? "-") \($0["frame_a"] as? Int ?? 0) \($0["frame_b"] as? Int ?? 0)"
        }
        // The near miss: the HFP codec (mSBC on both sides) and the peer's profile versions are not differences.
        #expect(seen == ["sco-air-mode transparent - 119 0"])
    }
}
