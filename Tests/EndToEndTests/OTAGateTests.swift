import BLETestSupport
import Foundation
import Testing

/// `ota` as a CI gate over many captures: every capture checked, each failing one named, exit 1.
@Suite struct OTAGateTests {
    @Test func gateOverADirectoryNamesEachFailingCapture() throws {
        let dir = NSTemporaryDirectory() + "blescope-ota-gate-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Rates from the truth files' images and packet times: nordic-dfu ~185 kbps, legacy-dfu ~337 kbps,
        // silabs-ota ~533 kbps, vendor-ota ~516 kbps.
        for name in ["nordic-dfu.btsnoop", "legacy-dfu.pklg", "silabs-ota.pcap", "vendor-ota.pklg"] {
            try FileManager.default.copyItem(atPath: TestEnvironment.sample(name), toPath: dir + "/" + name)
        }
        let codec = ["--codec", "Samples/codecs/vendor-ota/one-spec"]
        let r = try Blescope.run(["ota", "--quiet", "--min-rate", "400kbps"] + codec + [dir])
        #expect(r.status == 1)
        let failing = r.stderr.split(separator: "\n").filter { $0.hasPrefix("blescope: check failed: ") }
        #expect(failing.count == 2)
        #expect(failing.contains { $0.contains(dir + "/nordic-dfu.btsnoop: session on connection #1 (nordic-secure-dfu)") })
        #expect(failing.contains { $0.contains(dir + "/legacy-dfu.pklg: session on connection #1 (nordic-legacy-dfu)") })
        #expect(r.stderr.contains("2 of 4 captures failed the check"))
        #expect(r.stdout.contains("== \(dir)/vendor-ota.pklg"))

        // Below every rate: all pass; sequential and parallel give the same output.
        let pass = try Blescope.run(["ota", "--quiet", "--min-rate", "100kbps"] + codec + [dir])
        #expect(pass.status == 0, "\(pass.stderr)")
        let sequential = try Blescope.run(["ota", "--quiet", "--jobs", "1", "--min-rate", "100kbps"] + codec + [dir])
        #expect(sequential.stdout == pass.stdout)

        // JSON: one line per capture, its file first, in input order.
        let json = try Blescope.run(["ota", "--quiet", "--json"] + codec + [dir]).jsonLines
        #expect(
            json.compactMap { $0["file"] as? String }
                == ["legacy-dfu.pklg", "nordic-dfu.btsnoop", "silabs-ota.pcap", "vendor-ota.pklg"].map { dir + "/" + $0 })
        let protocols = json.map { (($0["sessions"] as? [[String: Any]]) ?? []).compactMap { $0["protocol"] as? String } }
        #expect(protocols == [["nordic-legacy-dfu"], ["nordic-secure-dfu"], ["silabs-ota"], ["vendor"]])

        // A file in the folder that is not a capture is skipped (one line on stderr); named, it is an error (exit 2),
        // and the others are still reported.
        try Data("not a capture".utf8).write(to: URL(fileURLWithPath: dir + "/notes.txt"))
        let skipped = try Blescope.run(["ota", "--quiet"] + codec + [dir])
        #expect(skipped.status == 0 && skipped.stdout == pass.stdout)
        #expect(
            skipped.stderr
                == "blescope: skipped \(dir)/notes.txt: not a capture (expected btsnoop, pcap, pcapng, PacketLogger, hcidump or a bug report with btsnooz); starts with 6e 6f 74 20\n"
        )
        let bad = try Blescope.run(["ota", "--quiet", "--min-rate", "100kbps"] + codec + [dir, dir + "/notes.txt"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains(dir + "/notes.txt: not a capture"))
        #expect(bad.stdout.contains("== \(dir)/silabs-ota.pcap"))
    }

    /// Every protocol's Sample passes --image with its own image (written by --extract) and a rate just
    /// below the truth's, and fails a rate just above it.
    @Test(arguments: [
        ("nordic-dfu", "pcap"), ("legacy-dfu", "pklg"), ("mcumgr-upload", "btsnoop"), ("silabs-ota", "pklg"),
        ("headset-ota", "pcap"), ("vendor-ota", "btsnoop"),
        ("buttonless-dfu", "pklg"), ("ti-oad", "pcap"), ("dialog-suota", "btsnoop"),
        ("esp-ble-ota", "pklg"), ("telink-ota", "pcap"),
        ("mcumgr-confirm", "btsnoop"), ("cypress-bootloader", "pklg"),
    ])
    func everyProtocolKeepsItsGates(_ sample: (String, String)) throws {
        let dir = NSTemporaryDirectory() + "blescope-ota-extract-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let codec = sample.0 == "vendor-ota" ? ["--codec", "Samples/codecs/vendor-ota/two-specs"] : ["--codec", "Samples/codecs"]
        let file = "Samples/\(sample.0).\(sample.1)"
        let r = try Blescope.run(["ota", "--json", "--extract", dir] + codec + [file])
        #expect(r.status == 0, "\(r.stderr)")
        let s = try #require(((r.json as? [String: Any])?["sessions"] as? [[String: Any]])?.first)
        let rate = try #require(s["throughput_bps"] as? Double)
        let images = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(images.count == 1)
        let image = dir + "/" + (images.first ?? "")
        let truth = try Blescope.truth(sample.0)
        let sum = try #require(TestEnvironment.execute("/usr/bin/sha256sum", [image]))
        #expect(sum.stdout.split(separator: " ").first.map(String.init) == (truth["image"] as? [String: Any])?["sha256"] as? String)
        let below = "\(Int(rate * 0.99))bps", above = "\(Int(rate * 1.01))bps"
        #expect(try Blescope.run(["ota", "--quiet", "--image", image, "--min-rate", below] + codec + [file]).status == 0)
        #expect(try Blescope.run(["ota", "--quiet", "--min-rate", above] + codec + [file]).status == 1)
        let wrong = dir + "/wrong.bin"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: image)))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: wrong))
        let bad = try Blescope.run(["ota", "--quiet", "--image", wrong] + codec + [file])
        #expect(bad.status == 1)
        #expect(GoldenTruthTests.unwrapped(bad.stdout).contains("first difference at offset \(bytes.count / 2)"))
    }
}
