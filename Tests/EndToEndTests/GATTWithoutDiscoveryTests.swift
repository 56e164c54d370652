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

/// A handle named from its values' layout: the bracelet Sample cut after its discovery (its records from frame 71, the
/// CCCD write, on), read with the bracelet codec (`Samples/codecs/bracelet.yaml`: A5, the frame's length, a command,
/// its fields, an XOR of every byte before it). Nothing in the cut capture names 0x0012; its notifications are each a
/// whole bracelet frame with a good checksum (checked here on tshark's `btatt.value`), so `gatt` names it from them,
/// saying so, and names it only with the codec loaded.
@Suite struct ValueLayoutNamingTests {
    /// `Samples/bracelet.btsnoop` from record `first` on (btsnoop: a 16-byte file header, then records of a 24-byte
    /// header, the included length at offset 4, big-endian, and the bytes).
    static func cut(from first: Int) throws -> String {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample("bracelet.btsnoop"))))
        var out = Array(bytes[0..<16])
        var at = 16, frame = 1
        while at + 24 <= bytes.count {
            let length = bytes[at + 4..<at + 8].reduce(0) { $0 << 8 | Int($1) }
            if frame >= first { out += bytes[at..<min(bytes.count, at + 24 + length)] }
            at += 24 + length
            frame += 1
        }
        let path = NSTemporaryDirectory() + "bracelet-after-discovery-\(UUID().uuidString).btsnoop"
        try Data(out).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aCodecFrameNamesAHandleAndSaysHow() throws {
        guard let tshark = TestEnvironment.tsharkPath else {
            print("tshark absent: skipped")
            return
        }
        let path = try Self.cut(from: 71)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // tshark: the notifications of 0x0012 in the cut capture, and no discovery.
        let shown = try #require(
            TestEnvironment.execute(
                tshark,
                [
                    "-r", path, "-Y", "btatt.opcode == 0x1b && btatt.handle == 0x0012", "-T", "fields", "-e", "frame.number", "-e",
                    "btatt.value",
                ]))
        let notifications = shown.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(notifications.count == 26, "\(shown.stdout)")
        let first = try #require(Int(notifications.first?.first ?? ""))
        // Each is A5 and the frame's length; the XOR of every byte before the last is the last in all but one (the
        // Sample's damaged frame).
        var badChecksums: [Int] = []
        for n in notifications {
            let value = stride(from: 0, to: n[1].count, by: 2).map { i -> UInt8 in
                let start = n[1].index(n[1].startIndex, offsetBy: i)
                return UInt8(n[1][start..<n[1].index(start, offsetBy: 2)], radix: 16) ?? 0
            }
            #expect(value.first == 0xA5 && Int(value[1]) == value.count, "\(n)")
            if value.dropLast().reduce(0, ^) != value.last { badChecksums.append(Int(n[0]) ?? 0) }
        }
        #expect(badChecksums == [23])
        let how =
            "inferred from its value layout: bracelet frame (6 bytes, countResponse, checksum good) at frame \(first); all 26 values fit it"
            + " (1 with a bad checksum, the first at frame 23), no other layout"
        let discovery = try #require(TestEnvironment.execute(tshark, ["-r", path, "-Y", "btatt.opcode <= 0x11 && btatt.opcode >= 0x02"]))
        #expect(discovery.stdout.isEmpty, "\(discovery.stdout)")

        let json = try #require(try Blescope.run(["gatt", "--json", "--codec", "Samples/codecs", path]).json as? [String: Any])
        let used = try #require((json["connections"] as? [[String: Any]])?.first?["handles_used"] as? [[String: Any]])
        let notified = try #require(used.first { $0["handle"] as? Int == 0x0012 })
        // The codec names two characteristics (0xFFE1 and 0xFFE2): the frame, not a UUID, is what the layout tells.
        #expect(notified["uuid"] is NSNull)
        #expect(notified["name"] as? String == "bracelet frame")
        #expect(notified["learned_from"] as? String == how)
        let text = try Blescope.run(["gatt", "--wide", "--codec", "Samples/codecs", path]).stdout
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("    0x0012  ") }, "\(text)")
        #expect(line.hasPrefix("    0x0012  bracelet frame  [26 notif."), "\(line)")
        #expect(line.hasSuffix("(" + how + ")"), "\(line)")
        // Without the codec, nothing names it.
        let bare = try #require(try Blescope.run(["gatt", "--json", path]).json as? [String: Any])
        let bareUsed = (bare["connections"] as? [[String: Any]])?.first?["handles_used"] as? [[String: Any]] ?? []
        #expect(bareUsed.first { $0["handle"] as? Int == 0x0012 }?["name"] is NSNull)
    }
}
