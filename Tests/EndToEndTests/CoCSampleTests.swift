import BLETestSupport
import Foundation
import Testing

/// The LE CoC Sample (Samples/coc-stream.*: bumble's L2CAP LE credit-based channel to PSM 0x0080, a count request and
/// twelve records) decoded by a codec spec that matches the channel's PSM (Samples/codecs/coc/coc-records.yaml), against
/// the truth file (the generator's SDU frames, read from the btsnoop without bumble).
@Suite struct CoCSampleTests {
    static let codec = ["--codec", "Samples/codecs/coc"]

    @Test(arguments: ["btsnoop", "pcap", "pklg"])
    func everySDUIsDecodedByTheSpecThatNamesItsPSM(_ format: String) throws {
        let truth = try Blescope.truth("coc-stream")
        let lines = try Blescope.run(["timeline", "--format", "jsonl", "--quiet"] + Self.codec + ["Samples/coc-stream.\(format)"]).jsonLines
        let sdus = lines.filter { $0["opcode_name"] as? String == "LE Credit Based SDU" }
        let records = try #require(truth["records_hex"] as? [String])
        #expect(sdus.compactMap { $0["frame"] as? Int } == [truth["request_frame"] as! Int] + (truth["record_frames"] as! [Int]))
        #expect(sdus.compactMap { $0["value"] as? String } == [truth["request_hex"] as! String] + records)
        let decoded = sdus.compactMap { $0["decoded"] as? [String: Any] }
        #expect(decoded.count == sdus.count)
        #expect(decoded.allSatisfy { $0["codec"] as? String == "coc-records" && $0["valid"] as? Bool == true })
        #expect(decoded.map { $0["message"] as? String } == ["countRequest"] + Array(repeating: "record", count: records.count))
        let indices = decoded.dropFirst().compactMap { ($0["fields"] as? [String: Any])?["index"] as? Int }
        #expect(indices == Array(0..<records.count))
        #expect(lines.filter { $0["layer"] as? String == "finding" }.isEmpty)
    }

    @Test func theRecordsAreOneCompleteTransferAndAStreamByPSM() throws {
        let truth = try Blescope.truth("coc-stream")
        let records = try #require(truth["records_hex"] as? [String])
        let t = try Blescope.run(["transfers", "--json"] + Self.codec + ["Samples/coc-stream.btsnoop"])
        let transfers = try #require((t.json as? [String: Any])?["transfers"] as? [[String: Any]])
        #expect(transfers.count == 1)
        let transfer = try #require(transfers.first)
        #expect(transfer["complete"] as? Bool == true && transfer["chunks"] as? Int == records.count)
        #expect(transfer["data"] as? String == records.joined())
        let s = try Blescope.run(["throughput", "--json", "Samples/coc-stream.btsnoop"])
        let streams = try #require((s.json as? [String: Any])?["streams"] as? [[String: Any]])
        let coc = try #require(streams.first { $0["psm"] as? Int == truth["psm"] as? Int && $0["dir"] as? String == "rx" })
        #expect(coc["packets"] as? Int == records.count)
        #expect(coc["value_bytes"] as? Int == records.reduce(0) { $0 + $1.count / 2 })
    }

    @Test func withoutTheSpecNothingIsDecoded() throws {
        let lines = try Blescope.run([
            "timeline", "--format", "jsonl", "--quiet", "--codec", "Samples/codecs/bracelet.yaml", "Samples/coc-stream.btsnoop",
        ]).jsonLines
        #expect(
            lines.filter { $0["opcode_name"] as? String == "LE Credit Based SDU" }.allSatisfy {
                $0["decoded"] is NSNull || $0["decoded"] == nil
            })
    }
}
