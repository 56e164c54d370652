import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

@testable import BLEAnalysis

/// The BR/EDR audio Samples (made with bumble, `Samples/generate/a2dpstream.py` and `hfpcall.py`) against their truth
/// files, in all three formats: the A2DP stream's configuration, starts, suspends, close and media; the call's codec
/// selection, eSCO link (own handle, transparent air mode, removed before the ACL ends); the eSCO setup that fails and
/// its finding. The truth files are written by the generator from the capture's own bytes.
@Suite struct AudioSampleTruthTests {
    static let formats = ["btsnoop", "pcap", "pklg"]

    static func truth(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample(name + ".truth.json")))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func analyze(_ name: String, _ format: String) throws -> Analyzer? {
        let path = TestEnvironment.sample("\(name).\(format)")
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return Analyzer.analyze(try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: false))
    }

    @Test(arguments: formats)
    func a2dpStreamMatchesItsTruth(_ format: String) throws {
        guard let a = try Self.analyze("a2dp-stream", format) else { return }
        let t = try #require(try Self.truth("a2dp-stream")["stream"] as? [String: Any])
        let c = try #require(a.connections.first)
        #expect(a.connections.count == 1 && c.isBREDR && c.role == .central)
        let s = try #require(c.profiles?.a2dp.streams.first)
        #expect(s.codec?.description == "SBC 44.1 kHz joint stereo, 16 blocks, 8 subbands, loudness, bitpool 2–53")
        #expect(s.configurationFrame == t["configuration_frame"] as? Int && s.acpSEID == 1 && s.configuredByThisSide)
        #expect(s.starts == t["starts"] as? [Int] && s.suspends == t["suspends"] as? [Int] && s.closeFrame == t["close_frame"] as? Int)
        #expect(s.media.packets == t["packets"] as? Int && s.media.bytes == t["bytes"] as? Int)
        #expect(s.media.firstFrame == t["media_first_frame"] as? Int && s.media.lastFrame == t["media_last_frame"] as? Int)
        #expect(s.media.sequenceGaps == 0 && s.media.stalls.isEmpty && s.media.sbcFrames == 5 * s.media.packets)
        #expect(s.media.durationMicroseconds == Int64(t["duration_us"] as? Int ?? -1))
        // Nothing fails: no BR/EDR audio rule fires (the 1 s pause is a suspend, not a stall).
        let rules = DiagnosisEngine.diagnose(Evidence(pass: a)).findings.map(\.rule)
        #expect(!rules.contains { $0.hasPrefix("BR-") })
    }

    @Test(arguments: formats)
    func callESCOLinkMatchesItsTruth(_ format: String) throws {
        guard let a = try Self.analyze("hfp-call", format) else { return }
        let truth = try Self.truth("hfp-call")
        let esco = try #require(truth["esco"] as? [String: Any]), conn = try #require(truth["connection"] as? [String: Any])
        let link = try #require(a.classicAnalysis.synchronousLinks.first)
        #expect(a.classicAnalysis.synchronousLinks.count == 1 && link.established && link.isESCO)
        #expect(link.handle.map(Int.init) == esco["handle"] as? Int && link.requestFrame == esco["setup_frame"] as? Int)
        #expect(link.startFrame == esco["complete_frame"] as? Int && link.endFrame == esco["removed_frame"] as? Int)
        #expect(link.airMode == .transparent && link.requestedCoding == "mSBC" && link.intervalMilliseconds == 7.5)
        // The eSCO removal is not the ACL's end: one connection, ended later.
        #expect(a.connections.count == 1 && a.connections[0].endFrame == conn["end_frame"] as? Int)
        let hfp = try #require(a.connections[0].profiles?.hfp)
        let bcs = try #require(truth["hfp"] as? [String: Any])["bcs_frames"] as? [Int]
        #expect(hfp.codecSelections.map(\.frame) == bcs?.prefix(1).map { $0 } && hfp.codecSelections.first?.confirmedFrame == bcs?.last)
        #expect(hfp.slcFrame != nil && hfp.thisSideIsGateway && hfp.availableCodecs == [1, 2])
    }

    @Test(arguments: formats)
    func failedESCOMatchesItsTruthAndItsFinding(_ format: String) throws {
        guard let a = try Self.analyze("hfp-esco-fails", format) else { return }
        let esco = try #require(try Self.truth("hfp-esco-fails")["esco"] as? [String: Any])
        let link = try #require(a.classicAnalysis.synchronousLinks.first)
        #expect(!link.established && link.status.rawValue == 0x1A && link.resultFrame == esco["complete_frame"] as? Int)
        #expect(link.requestFrame == esco["setup_frame"] as? Int && link.aclConnection == 1)
        let findings = DiagnosisEngine.diagnose(Evidence(pass: a)).findings.filter { $0.rule == "BR-09" }
        #expect(findings.map(\.frame) == [link.resultFrame ?? -1] && findings.first?.severity == .critical)
    }
}
