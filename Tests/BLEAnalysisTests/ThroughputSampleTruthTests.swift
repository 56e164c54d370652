import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

/// Throughput of the Samples against what their generator recorded (`*.truth.json`) and, for times, tshark.
@Suite struct ThroughputSampleTruthTests {
    static func streams(_ sample: String) throws -> [ThroughputStream] {
        let capture = try CaptureFile.open(path: samplesDirectory.appendingPathComponent(sample).path)
        let analyzer = Analyzer.analyze(
            capture, options: AnalyzerOptions(timeline: false),
            configure: { $0.observers = [ThroughputTracker()] })
        return (analyzer.observers.first as? ThroughputTracker)?.streams ?? []
    }

    static var tsharkPath: String? { TestEnvironment.tsharkPath }

    /// (frame, µs since the epoch) of the frames tshark selects, in order.
    static func tsharkFrames(_ sample: String, filter: String) throws -> [(Int, Int64)] {
        let text = try #require(
            TestEnvironment.tshark([
                "-r", samplesDirectory.appendingPathComponent(sample).path, "-Y", filter,
                "-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch",
            ]))
        return text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: "\t")
            guard f.count == 2, let n = Int(f[0]) else { return nil }
            // "1741951800.471230000": whole seconds and µs, without binary rounding.
            let parts = f[1].split(separator: ".")
            guard let s = Int64(parts[0]) else { return nil }
            let us = parts.count > 1 ? Int64(String(parts[1].prefix(6)).padding(toLength: 6, withPad: "0", startingAt: 0)) ?? 0 : 0
            return (n, s * 1_000_000 + us)
        }
    }

    @Test(.enabled(if: truthExists("nordic-dfu")))
    func nordicDFUPacketStream() throws {
        let truth = try #require(loadTruth("nordic-dfu"))
        let handle = UInt16(truth["packet_value_handle"] as! Int)
        let streams = try Self.streams("nordic-dfu.btsnoop")
        let s = try #require(streams.first { $0.key.handle == handle && $0.key.kind == .writeCommand })
        let imageSize = (truth["image"] as! [String: Any])["size"] as! Int
        // Every write command carries init packet or image bytes: 416 packets, 100,000 + 135 bytes.
        #expect(s.packets == truth["packet_count_total"] as! Int)
        #expect(s.valueBytes == imageSize + (truth["init_packet_size"] as! Int))
        #expect(s.attBytes == s.valueBytes + 3 * s.packets)
        #expect(s.l2capBytes == s.attBytes + 4 * s.packets)
        #expect(s.maxValueSize == truth["packet_payload_size"] as! Int)
        #expect(s.key.direction == .tx)
        // Control point: the write requests and the notifications the generator counted.
        let cp = UInt16(truth["control_point_value_handle"] as! Int)
        let notifications = try #require(streams.first { $0.key.handle == cp && $0.key.kind == .notification })
        #expect(notifications.packets == truth["control_point_notification_count"] as! Int)
        let writes = try #require(streams.first { $0.key.handle == cp && $0.key.kind == .writeRequest })
        #expect(writes.packets == (truth["control_steps"] as! [Any]).count)
        // The link the generator set up: MTU 247, data length 251, CI 15 ms (1M: no PHY update in the sample).
        let link = try #require(s.mainPeriod?.link)
        #expect(link.mtu == truth["att_mtu"] as! Int)
        #expect(Int(link.dataLength.maxTxOctets) == truth["data_length_octets"] as! Int)
        #expect(s.ceilingBitsPerSecond == ThroughputCeiling.ceiling(for: link, direction: .tx))
        // Times and rate: first and last write command as tshark sees them.
        if Self.tsharkPath != nil {
            let frames = try Self.tsharkFrames("nordic-dfu.btsnoop", filter: "btatt.opcode == 0x52 && btatt.handle == \(handle)")
            #expect(frames.count == s.packets)
            let first = try #require(frames.first), last = try #require(frames.last)
            #expect(s.firstFrame == first.0 && s.lastFrame == last.0)
            #expect(s.firstTime.microseconds == first.1 && s.lastTime.microseconds == last.1)
            #expect(s.rateBitsPerSecond == Double(s.valueBytes) * 8 * 1e6 / Double(last.1 - first.1))
        }
    }

    @Test(.enabled(if: truthExists("headset-ota")))
    func headsetOTADataStream() throws {
        let truth = try #require(loadTruth("headset-ota"))
        let handle = UInt16(truth["ota_data_value_handle"] as! Int)
        let s = try #require(try Self.streams("headset-ota.btsnoop").first { $0.key.handle == handle })
        let imageSize = (truth["image"] as! [String: Any])["size"] as! Int
        let payload = truth["packet_payload_size"] as! Int
        let sent = truth["data_packets_sent"] as! Int
        let resent = (truth["resent_indices"] as! [Int]).count
        #expect(s.key.kind == .writeCommand)
        #expect(s.packets == sent)
        // Each packet: 3-byte header (81, index u16) + its slice; the resent packet (index 37) is a full one.
        #expect(s.valueBytes == imageSize + 3 * sent + resent * payload)
        if Self.tsharkPath != nil {
            let frames = try Self.tsharkFrames("headset-ota.btsnoop", filter: "btatt.opcode == 0x52 && btatt.handle == \(handle)")
            #expect(frames.count == sent)
            #expect(s.firstTime.microseconds == frames.first?.1 && s.lastTime.microseconds == frames.last?.1)
        }
    }

    @Test(.enabled(if: truthExists("eom-transfer")))
    func eomNotificationStream() throws {
        let truth = try #require(loadTruth("eom-transfer"))
        let handle = UInt16(truth["value_handle"] as! Int)
        let s = try #require(try Self.streams("eom-transfer.btsnoop").first { $0.key.handle == handle && $0.key.kind == .notification })
        let messages = truth["messages"] as! [[String: Any]]
        // Every message's chunks plus a 3-byte "EOM" notification after each.
        #expect(s.packets == messages.reduce(0) { $0 + ($1["chunk_count"] as! Int) + 1 })
        #expect(s.valueBytes == messages.reduce(0) { $0 + ($1["length"] as! Int) + 3 })
        let firstChunk = (messages.first?["chunk_frames"] as? [Int])?.first
        #expect(s.firstFrame == firstChunk)
        #expect(s.lastFrame == messages.last?["eom_frame"] as? Int)
        // The MTU is exchanged mid-sample (23 → 185, request at the truth's frame): two steady periods, split there.
        #expect(s.periods.map(\.link.mtu) == [23, truth["final_att_mtu"] as! Int])
        let mtuRequest = truth["mtu_request_frame"] as! Int
        #expect(s.periods[0].lastFrame < mtuRequest && s.periods[1].firstFrame > mtuRequest)
        #expect(s.periods.reduce(0) { $0 + $1.packets } == s.packets)
    }
}
