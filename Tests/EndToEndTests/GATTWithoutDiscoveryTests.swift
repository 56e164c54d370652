import BLETestSupport
import Foundation
import Testing

/// `gatt` on a capture without (full) discovery: handles the traffic names, each with how it was learned; a hint of
/// `--gatt` where nothing was discovered; ATT_MTU with where it came from.
@Suite struct GATTWithoutDiscoveryTests {
    static var capture: String? {
        TestEnvironment.sharedCaptures.map { $0 + "/pklg-ios-le_even-g2-glasses-discovery-indicate.pklg" }
    }

    /// Connection #3 discovers its services but not Generic Access's characteristics; the phone reads the Device Name
    /// with a Read By Type for 0x2A00 (tshark: frame 429 asks `btatt.uuid16 == 0x2a00`, frame 432 answers handle
    /// 0x0003 with `btatt.device_name` "Even G2_32_L_C76E30"): 0x0003 is the Device Name, learned from frame 432.
    @Test func aReadByTypeNamesItsHandle() throws {
        guard let path = Self.capture else {
            print("shared captures absent: skipped")
            return
        }
        let json = try #require(try Blescope.run(["gatt", "--json", path]).json as? [String: Any])
        let connections = try #require(json["connections"] as? [[String: Any]])
        let third = try #require(connections.first { $0["conn_number"] as? Int == 3 })
        let used = try #require(third["handles_used"] as? [[String: Any]])
        let name = try #require(used.first { $0["handle"] as? Int == 0x0003 })
        #expect(name["uuid"] as? String == "00002A00-0000-1000-8000-00805F9B34FB")
        #expect(name["learned_from"] as? String == "a Read By Type for 0x2A00 answered at frame 432")
        #expect(third["mtu"] as? Int == 247 && third["mtu_source"] as? String == "observed")
        let text = try Blescope.run(["gatt", "--wide", path]).stdout
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("    0x0003  ") })
        #expect(line.hasPrefix("    0x0003  Device Name (0x2A00)  [1 read"), "\(line)")
        #expect(line.hasSuffix("(learned from a Read By Type for 0x2A00 answered at frame 432)"), "\(line)")
    }

    /// Connection #2 (handle 0x005a) was open before the capture and never discovered: `gatt` says how to name its
    /// handles, and that its ATT_MTU 23 is the default (its largest ATT PDU is 14 bytes: tshark `btl2cap.length`).
    @Test func withoutDiscoveryItHintsTheMapAndSaysTheMTUIsAssumed() throws {
        guard let path = Self.capture else {
            print("shared captures absent: skipped")
            return
        }
        let text = try Blescope.run(["gatt", "--wide", path]).stdout
        let block = try #require(text.components(separatedBy: "\n\n").first { $0.hasPrefix("Connection #2") })
        #expect(
            block.contains("database: none (no discovery in the capture), ATT_MTU 23 (assumed: the default, the capture does not show it)"))
        #expect(block.contains("names: give --gatt FILE"))
    }

    /// An MTU only known as a lower bound says so (corpus iOS capture, connection #3: its largest ATT PDU is 208 bytes at
    /// frame 147, a notification on 0x0864; tshark `btl2cap.length` 208 at frame 147).
    @Test func anInferredMTUIsALowerBound() throws {
        guard let dir = TestEnvironment.corpusDirectory else {
            print("BLESCOPE_CORPUS not set: skipped")
            return
        }
        let path = dir + "/pklg-ios-le_even-g2-glasses-app-control.pklg"
        let text = try Blescope.run(["gatt", "--wide", path]).stdout
        #expect(text.contains("ATT_MTU ≥ 208 (inferred: at least the 208-byte ATT PDU at frame 147)"), "\(text.prefix(600))")
    }
}

/// A CCCD told by the traffic: the Even G2 gesture capture (corpus) never discovers connection #2 (handle 0x0048), yet
/// writes 01 00 to 0x0845 at frame 194 and receives notifications of 0x0844 from frame 331 (tshark:
/// `btatt.opcode==0x12` value 0100 at 194; the first `btatt.opcode==0x1b && btatt.handle==0x0844` on 0x0048 is 331).
@Suite struct CCCDFromTrafficTests {
    @Test func aWriteThenNotificationsOfTheHandleBeforeMakeACCCD() throws {
        guard let dir = TestEnvironment.corpusDirectory else {
            print("BLESCOPE_CORPUS not set: skipped")
            return
        }
        let path = dir + "/pklg-ios-le_even-g2-glasses-gesture-notify-bt3.pklg"
        let json = try #require(try Blescope.run(["gatt", "--json", path]).json as? [String: Any])
        let second = try #require((json["connections"] as? [[String: Any]])?.first { $0["conn_number"] as? Int == 2 })
        let used = try #require(second["handles_used"] as? [[String: Any]])
        let cccd = try #require(used.first { $0["handle"] as? Int == 0x0845 })
        #expect(cccd["uuid"] as? String == "00002902-0000-1000-8000-00805F9B34FB")
        #expect(cccd["learned_from"] as? String == "a write of 01 00 at frame 194, then notifications of 0x0844 at frame 331")
        // 0x0825 was written 01 00 too, but nothing was notified on 0x0824: left unknown.
        #expect(used.first { $0["handle"] as? Int == 0x0825 }?["uuid"] is NSNull)
    }
}
