import BLEAnalysis
import BLEAnalysisTestSupport
import BLECodecs
import BLECore
import Testing

/// The Samples' ground truth fed as attribute values: the rebuilt messages must match byte for byte.
@Suite struct SampleTruthTransferTests {
    static func eomEvents(_ truth: [String: Any], uuid: BluetoothUUID?) -> (events: [TestEvent], messages: [[String: Any]]) {
        let handle = UInt16(truth["value_handle"] as! Int)
        let messages = truth["messages"] as! [[String: Any]]
        var events: [TestEvent] = []
        for m in messages {
            let chunks = m["chunks_hex"] as! [String]
            let frames = m["chunk_frames"] as! [Int]
            for (c, f) in zip(chunks, frames) { events.append(.notify(f, handle: handle, uuid: uuid, hexBytes(c))) }
            events.append(.notify(m["eom_frame"] as! Int, handle: handle, uuid: uuid, hexBytes(truth["eom_hex"] as! String)))
        }
        return (events, messages)
    }

    @Test(.enabled(if: truthExists("eom-transfer")), arguments: [true, false])
    func eomTransferSample(knownCharacteristic: Bool) throws {
        let truth = try #require(loadTruth("eom-transfer"))
        let (events, messages) = Self.eomEvents(truth, uuid: knownCharacteristic ? appleUUID : nil)
        var t = ChunkedTransferTracker()
        feed(&t, events)
        #expect(t.transfers.count == messages.count)
        #expect(t.allFindings.isEmpty)
        for (x, m) in zip(t.transfers, messages) {
            #expect(hexString(x.data) == m["hex"] as! String)
            #expect(x.length == m["length"] as! Int)
            #expect(x.chunks == m["chunk_count"] as! Int)
            #expect(x.firstFrame == (m["chunk_frames"] as! [Int])[0])
            #expect(x.lastFrame == m["eom_frame"] as! Int)
            #expect(x.complete)
            #expect(x.handle == 16)
            #expect(x.textPreview(limit: 10_000) == m["text"] as? String)
        }
    }

    @Test(.enabled(if: truthExists("bracelet")))
    func braceletSample() throws {
        let truth = try #require(loadTruth("bracelet"))
        let frames = truth["frames"] as! [[String: Any]]
        let writeHandle = UInt16(truth["write_value_handle"] as! Int)
        let notifyHandle = UInt16(truth["notify_value_handle"] as! Int)
        // Roles as the bracelet YAML codec gives them (built by hand here).
        var events: [TestEvent] = []
        for f in frames {
            let bytes = hexBytes(f["hex"] as! String)
            let frame = f["frame"] as! Int
            let ok = f["checksum_ok"] as! Bool
            switch f["kind"] as! String {
            case "count_request":
                events.append(
                    .write(
                        frame, handle: writeHandle, uuid: BluetoothUUID(uuid16: 0xFFE1), bytes,
                        decoded: DecodedValue(codec: "bracelet", message: "countRequest")))
            case "count_response":
                events.append(
                    .notify(
                        frame, handle: notifyHandle, uuid: BluetoothUUID(uuid16: 0xFFE2), bytes,
                        decoded: DecodedValue(
                            codec: "bracelet", message: "countResponse",
                            roles: [.totalCount: .int(Int64(f["count"] as! Int))])))
            default:
                events.append(
                    .notify(
                        frame, handle: notifyHandle, uuid: BluetoothUUID(uuid16: 0xFFE2), bytes,
                        decoded: DecodedValue(
                            codec: "bracelet", message: "activityRecord", valid: ok,
                            problems: ok ? [] : ["checksum"],
                            roles: [.sequence: .int(Int64(f["index"] as! Int))])))
            }
        }
        var t = ChunkedTransferTracker()
        feed(&t, events)
        let days = truth["days"] as! [[String: Any]]
        #expect(t.transfers.count == days.count)
        let responses = frames.filter { $0["kind"] as! String == "count_response" }
        for (i, x) in t.transfers.enumerated() {
            let day = responses[i]["day"] as! String
            let records = frames.filter { $0["kind"] as! String == "activity_record" && $0["day"] as! String == day }
            #expect(x.framing == .records)
            #expect(x.expectedCount == days[i]["record_count"] as? Int)
            #expect(x.chunks == records.count)
            #expect(hexString(x.data) == records.map { $0["hex"] as! String }.joined())
            #expect(x.firstFrame == responses[i]["frame"] as! Int)
            #expect(x.lastFrame == records.last!["frame"] as! Int)
            #expect(x.complete)
            #expect(x.missingIndices.isEmpty && x.duplicateIndices.isEmpty)
        }
        let bad = t.allFindings.filter { $0.kind.code.id == "transfer.invalid-record" }
        #expect(bad.map(\.frame) == [truth["bad_frame_number"] as? Int])
    }
}
