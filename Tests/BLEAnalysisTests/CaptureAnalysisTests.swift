import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import Testing

/// The typed entry point over whole Samples: each tracker's result where ``Observing`` asked for it, checked against
/// the generator's truth files, the same whether the trackers run inline or on a second thread.
@Suite struct CaptureAnalysisTests {
    static let everything = Observing(
        throughput: ThroughputOptions(), transfers: TransferOptions(), otaStallThreshold: 200_000,
        gattUsage: true)

    func analyze(_ file: String, _ observing: Observing) throws -> CaptureAnalysis {
        let capture = try CaptureFile.open(path: samplesDirectory.appendingPathComponent(file).path)
        return CaptureAnalysis.analyze(capture, options: AnalyzerOptions(timeline: false), observing: observing)
    }

    @Test(.enabled(if: truthExists("nordic-dfu")), arguments: ["btsnoop", "pcap", "pklg"], [false, true])
    func nordicDFUResultsAreTheGenerators(_ format: String, inBackground: Bool) throws {
        let truth = try #require(loadTruth("nordic-dfu"))
        var observing = CaptureAnalysisTests.everything
        observing.inBackground = inBackground
        let result = try analyze("nordic-dfu.\(format)", observing)
        let capture = try #require(truth["capture"] as? [String: Any])
        #expect(result.counters.records == capture["frames"] as? Int)
        #expect(result.connections.map(\.peerAddress) == [truth["device_address"] as? String])

        let image = try #require(truth["image"] as? [String: Any])
        let sessions = try #require(result.otaSessions)
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s.protocolName == .nordicSecureDFU && s.result == .success)
        #expect(s.image.count == image["size"] as? Int && s.imageSHA256 == image["sha256"] as? String)

        let packet = UInt16(truth["packet_value_handle"] as! Int), control = UInt16(truth["control_point_value_handle"] as! Int)
        let streams = try #require(result.throughput?.streams)
        let data = try #require(streams.first { $0.key.handle == packet && $0.key.kind == .writeCommand })
        #expect(data.packets == truth["packet_count_total"] as? Int)
        #expect(data.valueBytes == (image["size"] as! Int) + (truth["init_packet_size"] as! Int))
        #expect(result.throughput?.streamsDropped == 0)

        let usage = try #require(result.gattUsage?.byConnection[1])
        #expect(usage[packet]?.writeCommands == truth["packet_count_total"] as? Int)
        #expect(usage[control]?.notifications == truth["control_point_notification_count"] as? Int)
        // A DFU is not a chunked transfer.
        #expect(result.transfers?.transfers.isEmpty == true)
    }

    @Test(.enabled(if: truthExists("eom-transfer")), arguments: [false, true])
    func eomMessagesAreTheGenerators(inBackground: Bool) throws {
        let truth = try #require(loadTruth("eom-transfer"))
        let result = try analyze("eom-transfer.btsnoop", Observing(transfers: TransferOptions(), inBackground: inBackground))
        let messages = try #require(truth["messages"] as? [[String: Any]])
        let transfers = try #require(result.transfers?.transfers)
        #expect(transfers.map { hexString($0.data) } == messages.map { $0["hex"] as! String })
        #expect(transfers.allSatisfy { $0.complete })
        #expect(result.transfers?.findings.isEmpty == true)
    }

    @Test func onlyTheTrackersAskedForRun() throws {
        let none = try analyze("nordic-dfu.btsnoop", .nothing)
        #expect(none.throughput == nil && none.transfers == nil && none.otaSessions == nil && none.gattUsage == nil)
        #expect(!none.connections.isEmpty)
        let ota = try analyze("nordic-dfu.btsnoop", Observing(otaStallThreshold: 200_000))
        #expect(ota.otaSessions?.count == 1 && ota.throughput == nil && ota.gattUsage == nil)
    }
}
