import BLETestSupport
import Foundation
import Testing

/// Issue 49, point 6, on a real peripheral-side log: the corpus's BTstack LE pairing log (2014), where the peer discovers
/// and reads this side's database over 18 ATT PDUs. tshark (`btatt.opcode == 0x11`, three Read By Group Type Responses
/// this side sent) lists six primary services starting at 0x0001, 0x000c, 0x0015, 0x001a, 0x0024 and 0x0056; `gatt`
/// showed "No GATT database or attribute traffic in this capture".
@Suite struct ThisSideGATTEndToEndTests {
    @Test func aPeripheralSideLogShowsThisSidesDatabase() throws {
        guard let corpus = TestEnvironment.corpusDirectory else { return }
        let path = corpus + "/pklg-btstack-be_le-sm-pairing-2014.pklg"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let text = try Blescope.run(["gatt", path]).stdout
        #expect(!text.contains("No GATT database") && text.contains("this side's own database, as the peer discovered and used it:"))
        let json = try #require(try Blescope.run(["gatt", "--json", path]).jsonLines.first)
        let connection = try #require((json["connections"] as? [[String: Any]])?.first)
        #expect((connection["services"] as? [Any])?.isEmpty == true)
        let services = try #require((connection["this_side"] as? [String: Any])?["services"] as? [[String: Any]])
        #expect(services.compactMap { $0["start_handle"] as? Int } == [0x0001, 0x000C, 0x0015, 0x001A, 0x0024, 0x0056])
        #expect(services.compactMap { $0["end_handle"] as? Int } == [0x000B, 0x000E, 0x0019, 0x001E, 0x0055, 0x007A])
    }
}
