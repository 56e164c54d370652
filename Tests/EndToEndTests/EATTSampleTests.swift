import BLETestSupport
import Foundation
import Testing

/// The EATT Sample (Samples/eatt.*: bumble's GATT client and server on the LE fixed channel and three enhanced ATT
/// bearers, MTUs 247/247/128) against its truth file, whose per-bearer counts the generator read from the btsnoop
/// without bumble (Samples/generate/eatt.py `read_bearers`: its own ACL, signalling and K-frame reassembly).
@Suite struct EATTSampleTests {
    static let formats = ["btsnoop", "pcap", "pklg"]

    static func bearers() throws -> [[String: Any]] {
        try #require(try Blescope.truth("eatt")["bearers"] as? [[String: Any]])
    }

    @Test(arguments: formats)
    func everyBearerCarriesTheGeneratorsATTPDUs(_ format: String) throws {
        let lines = try Blescope.run(["timeline", "--format", "jsonl", "--layer", "att", "--quiet", "Samples/eatt.\(format)"]).jsonLines
            .filter { $0["layer"] as? String == "att" && $0["opcode"] as? Int != nil }
        for b in try Self.bearers() {
            let kind = b["kind"] as! String, phoneCID = b["phone_cid"] as! Int, deviceCID = b["device_cid"] as! Int
            // The phone's PDUs (tx) carry the device's endpoint, the device's (rx) the phone's.
            let mine = lines.filter {
                $0["bearer"] as? String == kind
                    && $0["cid"] as? Int == ($0["dir"] as? String == "tx" ? deviceCID : phoneCID)
            }
            #expect(mine.count == b["att_pdus"] as? Int, "\(b["name"]!) in \(format)")
            var counts: [String: [String: Int]] = [:]
            for l in mine {
                let key = String(format: "0x%02x", l["opcode"] as! Int)
                counts[key, default: ["sent": 0, "rcvd": 0]][l["dir"] as? String == "tx" ? "sent" : "rcvd"]! += 1
            }
            let want = try #require(b["att_pdus_by_opcode"] as? [String: [String: Int]])
            #expect(
                counts == Dictionary(uniqueKeysWithValues: want.map { (String($0.key.prefix(4)), $0.value) }), "\(b["name"]!) in \(format)")
            // Notifications: at the generator's frames, with the values the device sent on that bearer.
            let notifications = mine.filter { $0["opcode"] as? Int == 0x1B }
            #expect(notifications.compactMap { $0["frame"] as? Int } == b["notification_frames"] as? [Int], "\(b["name"]!)")
            let values = (try Blescope.truth("eatt")["notification_values"] as? [String: [String]])?[b["name"] as! String] ?? []
            #expect(notifications.compactMap { $0["value"] as? String } == values, "\(b["name"]!)")
            #expect(
                mine.filter { $0["opcode"] as? Int == 0x0C }.compactMap { $0["frame"] as? Int } == b["read_blob_request_frames"] as? [Int])
        }
        // Nothing else: every ATT PDU is on one of the four bearers.
        #expect(lines.count == (try Blescope.truth("eatt")["capture"] as? [String: Any])?["att_pdus"] as? Int)
    }

    @Test(arguments: formats)
    func gattListsEachBearerWithItsMTUAndCIDs(_ format: String) throws {
        let r = try Blescope.run(["gatt", "--json", "Samples/eatt.\(format)"])
        let connection = try #require(((r.json as? [String: Any])?["connections"] as? [[String: Any]])?.first)
        let listed = try #require(connection["bearers"] as? [[String: Any]])
        let truth = try Self.bearers()
        #expect(listed.count == truth.count)
        for (got, want) in zip(listed, truth) {
            #expect(got["bearer"] as? String == want["kind"] as? String)
            #expect(got["mtu"] as? Int == want["mtu"] as? Int, "\(want["name"]!)")
            #expect(got["cid_tx"] as? Int == want["device_cid"] as? Int)
            #expect(got["cid_rx"] as? Int == want["phone_cid"] as? Int)
        }
        #expect(connection["mtu"] as? Int == truth.first?["mtu"] as? Int)
    }

    @Test func longReadsOnTwoBearersAtOnceBothGiveTheWholeValue() throws {
        let truth = try Blescope.truth("eatt")
        let log = try #require(truth["log"] as? [String: Any])
        let lines = try Blescope.run(["timeline", "--format", "jsonl", "--layer", "att", "--quiet", "Samples/eatt.btsnoop"]).jsonLines
        let longReads = lines.filter { $0["opcode_name"] as? String == "Long Read" }
        #expect(longReads.count == 2)
        for l in longReads {
            let hex = try #require(l["value"] as? String)
            #expect(hex.count == 2 * (log["size"] as! Int))
            #expect(l["handle"] as? Int == truth["log_value_handle"] as? Int)
            #expect(hex == Self.xorshift(seed: 0xEA77_0027, count: log["size"] as! Int), "the generator's log bytes (\(log["generator"]!))")
        }
    }

    /// The Samples' generator (Samples/generate/common.py): xorshift32 (13, 17, 5), one step per byte, low 8 bits, as hex.
    static func xorshift(seed: UInt32, count: Int) -> String {
        var x = seed
        var out = ""
        for _ in 0..<count {
            x ^= x << 13; x ^= x >> 17; x ^= x << 5
            out += String(format: "%02x", x & 0xFF)
        }
        return out
    }
}
