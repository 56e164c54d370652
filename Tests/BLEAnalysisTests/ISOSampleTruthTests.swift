import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// The LE Audio Samples against their truth files: every count `Samples/generate/isoread.py` read back from the
/// written btsnoop (without bumble), in all three forms of each capture.
@Suite struct ISOSampleTruthTests {
    static let samples = ["le-audio-unicast", "le-audio-broadcast", "le-audio-broadcast-receiver"]
    static let formats = ["btsnoop", "pcap", "pklg"]

    static func analyze(_ name: String, _ format: String) throws -> CaptureAnalysis {
        let capture = try CaptureFile.open(path: samplesDirectory.appendingPathComponent("\(name).\(format)").path)
        return CaptureAnalysis.analyze(capture, options: AnalyzerOptions(timeline: false), observing: Observing(leAudio: true))
    }

    @Test(arguments: samples, formats)
    func everyStreamDirectionMatchesTheTruth(_ name: String, _ format: String) throws {
        let truth = try #require(loadTruth(name))
        let result = try Self.analyze(name, format)
        let streams = try #require(truth["iso_streams"] as? [String: [String: Any]])
        #expect(result.iso.health.count == streams.count)
        for (key, t) in streams {
            let handle = try #require(TruthJSON.int(t["handle"]))
            let direction: Direction = t["direction"] as? String == "tx" ? .tx : .rx
            let h = try #require(result.iso.health.first { Int($0.handle) == handle && $0.direction == direction }, "\(key)")
            #expect(h.packets == TruthJSON.int(t["packets"]), "\(key)")
            #expect(h.sdus == TruthJSON.int(t["sdus"]), "\(key)")
            #expect(h.sduBytes == Int64(TruthJSON.int(t["sdu_bytes"]) ?? -1), "\(key)")
            let fragments = try #require(t["fragments"] as? [String: Any])
            #expect(h.fragmentedSDUs == TruthJSON.int(fragments["first"]), "\(key)")
            #expect(h.fragmentedSDUs == TruthJSON.list(t["fragmented_sdus"]).count, "\(key)")
            #expect(h.firstSequence == TruthJSON.int(t["first_sequence_number"]), "\(key)")
            #expect(h.lastSequence == TruthJSON.int(t["last_sequence_number"]), "\(key)")
            #expect(h.expectedSDUs == TruthJSON.int(t["expected_sdus"]), "\(key)")
            #expect(h.missingSDUs == TruthJSON.ints(t["missing_sequence_numbers"]).count, "\(key)")
            #expect(h.sequenceGaps == TruthJSON.list(t["sequence_gaps"]).count, "\(key)")
            let status = try #require(t["status"] as? [String: Any])
            #expect(h.valid == (TruthJSON.int(status["valid"]) ?? 0), "\(key)")
            #expect(h.possiblyInvalid == (TruthJSON.int(status["possibly_invalid"]) ?? 0), "\(key)")
            #expect(h.flaggedLost == (TruthJSON.int(status["lost"]) ?? 0), "\(key)")
            let frames = t["status_frames"] as? [String: Any] ?? [:]
            #expect(h.possiblyInvalidFrames == TruthJSON.ints(frames["possibly_invalid"]), "\(key)")
            #expect(h.lostFrames == TruthJSON.ints(frames["lost"]), "\(key)")
            #expect(h.firstFrame == TruthJSON.int(t["first_frame"]), "\(key)")
            #expect(h.lastFrame == TruthJSON.int(t["last_frame"]), "\(key)")
            if let deviation = TruthJSON.int(t["time_stamp_max_deviation_us"]) {
                #expect(h.timestampJitterMaxMicroseconds == Int64(deviation), "\(key)")
            } else {
                #expect(h.timestampJitterMaxMicroseconds == nil, "\(key)")
            }
        }
    }

    /// The generator's loss pattern, as runs of consecutive SDUs lost: what the health calls bursts.
    static func runs(_ lost: [Int]) -> [Int] {
        var runs: [Int] = []
        for (i, s) in lost.sorted().enumerated() {
            if i > 0, s == lost.sorted()[i - 1] + 1 { runs[runs.count - 1] += 1 } else { runs.append(1) }
        }
        return runs
    }

    @Test(arguments: formats)
    func unicastLossPatternIsTheGenerators(_ format: String) throws {
        let truth = try #require(loadTruth("le-audio-unicast"))
        let pattern = try #require(truth["rx_fault_pattern"] as? [String: Any])
        let h = try #require(try Self.analyze("le-audio-unicast", format).iso.health.first { $0.direction == .rx })
        let lost = TruthJSON.ints(pattern["missing"]) + TruthJSON.ints(pattern["lost_flag"])
        #expect(h.lostSDUs == lost.count)
        #expect(h.possiblyInvalid == TruthJSON.ints(pattern["possibly_invalid_flag"]).count)
        #expect(h.fragmentedSDUs == TruthJSON.ints(pattern["fragmented"]).count)
        let runs = Self.runs(lost)
        #expect(h.lossBursts == runs.count)
        #expect(h.longestBurst?.sdus == runs.max())
        let interval = try #require(TruthJSON.int(truth["sdu_interval_us"]))
        #expect(h.longestBurst?.durationMicroseconds == Int64((runs.max() ?? 0) * interval))
        #expect(h.configuredBitrate == Double(try #require(TruthJSON.int(truth["configured_bitrate_bps"]))))
        #expect(h.verdict(label: "CIS 0x0002").hasPrefix("CIS 0x0002 rx: \(lost.count) of 300 SDUs lost (8.0 %) in \(runs.count) bursts"))
    }

    @Test(arguments: formats)
    func receiverLossPatternAndSyncLoss(_ format: String) throws {
        let truth = try #require(loadTruth("le-audio-broadcast-receiver"))
        let patterns = try #require(truth["rx_fault_pattern"] as? [String: [String: Any]])
        let result = try Self.analyze("le-audio-broadcast-receiver", format)
        let lifecycle = try #require(truth["iso_lifecycle"] as? [String: Any])
        let lost = try #require(TruthJSON.list(lifecycle["le_big_sync_lost"]).first)
        for s in result.iso.streams {
            let p = try #require(patterns["bis\(s.bisIndex ?? 0)"])
            let h = try #require(result.iso.health.first { $0.handle == s.handle })
            let first = try #require(h.firstSequence)
            let silentFrom = try #require(TruthJSON.int(p["silent_from"]))
            let lostSequences = (TruthJSON.ints(p["missing"]) + TruthJSON.ints(p["lost_flag"])).filter { $0 >= first && $0 < silentFrom }
            #expect(h.lostSDUs == lostSequences.count)
            #expect(h.lossBursts == Self.runs(lostSequences).count)
            #expect(h.lastSequence == silentFrom - 1)
            #expect(s.endFrame == TruthJSON.int(lost["frame"]))
            #expect(s.endReason?.rawValue == UInt8(try #require(TruthJSON.int(lost["reason"]))))
            #expect(h.endFrame == TruthJSON.int(lost["frame"]))
            // Silent from the last SDU to the sync loss: the BIG sync timeout, within one SDU interval.
            let timeout = Int64(try #require(TruthJSON.int(truth["big_sync_timeout_ms"]))) * 1000
            #expect(abs((h.silenceBeforeEndMicroseconds ?? 0) - timeout) <= 10_000)
        }
    }
}

/// The same ISO counts from every container that carries ISO records with their direction, written from the unicast
/// Sample: Linux monitor (btsnoop 2001: opcodes 18/19; pcap LT 254), H4 with a direction pseudo-header (pcap LT 201) and
/// PacketLogger (types 0x12/0x13). The Sample's own truth is held in ISOSampleTruthTests; here, only that no container
/// loses or reorders an ISO record.
@Suite struct ISOContainerTests {
    @Test(arguments: [
        CaptureOutputFormat.btsnoop(datalink: BTSnoop.datalinkMonitor), .pcap(linkType: PcapLinkType.linuxMonitor),
        .pcap(linkType: PcapLinkType.h4WithPHDR), .packetLogger(bigEndian: true),
    ])
    func everyContainerGivesTheSameHealth(_ format: CaptureOutputFormat) throws {
        let original = try CaptureFile.open(path: samplesDirectory.appendingPathComponent("le-audio-unicast.btsnoop").path)
        let records = RecordFixtures.readAll(original)
        let rewritten = try CaptureFile.open(bytes: CaptureWriter.write(records, as: format), name: "iso")
        let want = try ISOSampleTruthTests.analyze("le-audio-unicast", "btsnoop").iso.health
        let got = CaptureAnalysis.analyze(rewritten, options: AnalyzerOptions(timeline: false)).iso.health
        #expect(got.count == want.count && want.count == 2)
        for (g, w) in zip(got, want) {
            #expect(g.handle == w.handle && g.direction == w.direction && g.packets == w.packets && g.sdus == w.sdus)
            #expect(g.lostSDUs == w.lostSDUs && g.possiblyInvalid == w.possiblyInvalid && g.fragmentedSDUs == w.fragmentedSDUs)
            #expect(g.lastFrame == w.lastFrame)
        }
    }
}
