import BLETestSupport
import Foundation
import Testing

/// `blescope iso` reads as an answer: the stream directions' verdicts first, then the ASE operations refused, each
/// citing its frames; figures and frames from the unicast Sample's truth file (`Samples/generate`).
@Suite struct ISOCommandTests {
    @Test func theTextLeadsWithTheVerdictsAndTheRefusal() throws {
        let truth = try Blescope.truth("le-audio-unicast")
        let pattern = try #require(truth["rx_fault_pattern"] as? [String: Any])
        let lost = ((pattern["missing"] as? [Int]) ?? []).count + ((pattern["lost_flag"] as? [Int]) ?? []).count
        let streams = try #require(truth["iso_streams"] as? [String: [String: Any]])
        let expected = try #require(streams["0x0002 rx"]?["expected_sdus"] as? Int)
        let lines = try Blescope.run(["iso", "--wide", "Samples/le-audio-unicast.btsnoop"]).stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "Stream health")
        #expect(lines.count > 1 && lines[1].hasPrefix("  CIS 0x0002 rx: \(lost) of \(expected) SDUs lost"), "\(lines.prefix(3))")
        // The refused Config QoS (ASCS response code 0x09 Invalid Configuration Parameter Value, reason 0x09
        // Presentation_Delay: ASCS 1.0 Table 5.1 and 5.2) before the streams' parameters, request and answer frames.
        let refused = try #require(lines.firstIndex(of: "ASE operations refused"))
        let streamsHeading = try #require(lines.firstIndex { $0.hasPrefix("ISO streams") })
        #expect(refused < streamsHeading)
        let operations = try #require(truth["ase_control_point_operations"] as? [[String: Any]])
        let responses = try #require(truth["ase_control_point_responses"] as? [[String: Any]])
        let request = try #require(operations.first { $0["name"] as? String == "config_qos" }?["frame"] as? Int)
        let answer = try #require(responses.first { $0["opcode"] as? Int == 2 }?["frame"] as? Int)
        let text = try #require(lines.dropFirst(refused + 1).first)
        #expect(text.hasPrefix("  frame \(request)  #1 Config QoS ASE 1,2 REFUSED → frame \(answer): "), "\(text)")
        #expect(text.contains("Invalid Configuration Parameter Value (Presentation_Delay)"), "\(text)")
    }

    @Test func aCaptureWithoutLEAudioSaysSo() throws {
        let r = try Blescope.run(["iso", "Samples/nordic-dfu.btsnoop"])
        #expect(r.status == 0 && r.stdout == "No isochronous channels or LE Audio profiles in this capture.\n")
    }
}
