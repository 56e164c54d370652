import BLEAnalysis
import BLEAnalysisTestSupport
import BLECodecs
import BLECore
import Testing

/// The DFU and headset samples' ground truth fed as attribute values, in frame order.
@Suite struct SampleTruthOTATests {
    @Test(.enabled(if: truthExists("nordic-dfu")))
    func nordicDFUSample() throws {
        let truth = try #require(loadTruth("nordic-dfu"))
        let imageInfo = truth["image"] as! [String: Any]
        let image = xorshiftImage(seed: 0x0DF0_1234, count: imageInfo["size"] as! Int)
        #expect(hexString(image.prefix(32)) == imageInfo["first_32_bytes_hex"] as! String)
        let initPacket = hexBytes(truth["init_packet_hex"] as! String)
        let payload = truth["packet_payload_size"] as! Int
        let cp = UInt16(truth["control_point_value_handle"] as! Int)
        let pk = UInt16(truth["packet_value_handle"] as! Int)
        // (frame, order, event): packets get frames spread between the Create response and the CRC request.
        var events: [(Double, Int, TestEvent)] = []
        var order = 0
        func add(_ f: Double, _ e: TestEvent) { events.append((f, order, e)); order += 1 }
        var pending: [[UInt8]] = []
        var pendingFrom = 0
        var dataOffset = 0
        for step in truth["control_steps"] as! [[String: Any]] {
            let req = hexBytes(step["request_hex"] as! String)
            let rf = step["request_frame"] as! Int, sf = step["response_frame"] as! Int
            if req.first == 0x03, !pending.isEmpty {
                for (i, p) in pending.enumerated() {
                    let f = Double(pendingFrom) + Double(rf - pendingFrom) * Double(i + 1) / Double(pending.count + 1)
                    add(f, .write(0, handle: pk, uuid: dfuPacket, p, command: true))
                }
                pending = []
            }
            add(Double(rf), .write(rf, handle: cp, uuid: dfuControl, req))
            add(Double(sf), .notify(sf, handle: cp, uuid: dfuControl, hexBytes(step["response_hex"] as! String)))
            if req.first == 0x01 {
                pendingFrom = sf
                let size = Int(req[2]) | Int(req[3]) << 8 | Int(req[4]) << 16 | Int(req[5]) << 24
                if req[1] == 1 {
                    pending = chunked(initPacket, payload)
                } else {
                    pending = chunked(Array(image[dataOffset..<(dataOffset + size)]), payload); dataOffset += size
                }
            }
        }
        for r in truth["prn_receipts"] as! [[String: Any]] {
            let f = r["frame"] as! Int
            add(Double(f), .notify(f, handle: cp, uuid: dfuControl, hexBytes(r["hex"] as! String)))
        }
        events.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        let stream = events.map { f, _, e -> TestEvent in
            var e = e
            e.frame = Int(f.rounded(.down))
            e.time = Int64(f * 4600)
            return e
        }
        var t = OTATracker()
        feed(&t, stream)
        #expect(t.sessions.count == 1)
        let s = try #require(t.sessions.first)
        #expect(s.protocolName == .nordicSecureDFU)
        #expect(s.result == .success)
        #expect(s.image.count == imageInfo["size"] as! Int)
        #expect(s.imageSHA256 == imageInfo["sha256"] as! String)
        #expect(crcHex(s.imageCRC32) == imageInfo["crc32"] as! String)
        #expect(s.compare(expected: image).matches)
        #expect(s.initPacket == initPacket)
        #expect(crcHex(CRC32.checksum(s.initPacket)) == truth["init_packet_crc32"] as! String)
        #expect(s.expectedSize == 100_000)
        #expect(s.packets == truth["packet_count_total"] as! Int)
        #expect(s.phases.first { $0.name == "data" }?.packets == truth["data_packet_count"] as? Int)
        #expect(s.receipts == truth["prn_receipt_count"] as! Int)
        #expect(s.packetReceiptInterval == truth["prn"] as? Int)
        let objects = truth["objects"] as! [[String: Any]]
        let data = s.objects.filter { $0.type == 2 }
        #expect(data.count == objects.count)
        for (o, x) in zip(data, objects) {
            #expect(o.offset == x["offset"] as! Int)
            #expect(o.size == x["size"] as! Int)
            #expect(o.packets == x["packets"] as! Int)
            #expect(o.reportedCRC.map { crcHex($0) } == x["crc32_after"] as? String)
            #expect(o.crcMatches == true)
            #expect(o.executed)
        }
        #expect(s.retransmittedPackets.isEmpty)
        #expect(!s.findings.contains { $0.severity >= .warning })
        #expect(s.startFrame == 77)
        #expect(s.endFrame == 1260)
    }

    @Test(.enabled(if: truthExists("headset-ota")))
    func headsetSample() throws {
        let truth = try #require(loadTruth("headset-ota"))
        let imageInfo = truth["image"] as! [String: Any]
        let image = hexBytes(imageInfo["hex"] as! String)
        #expect(image == xorshiftImage(seed: 0x4E5A_0002, count: 20_000))
        let payload = truth["packet_payload_size"] as! Int
        let total = truth["total_packets"] as! Int
        var events: [TestEvent] = []
        for m in truth["messages"] as! [[String: Any]] {
            let frame = m["frame"] as! Int
            let time = Int64(frame) * 18_000
            switch m["characteristic"] as! String {
            case "ota_data":
                let i = m["index"] as! Int
                let chunk = Array(image[(i * payload)..<min(image.count, (i + 1) * payload)])
                let value = [0x81, UInt8(i >> 8), UInt8(i & 0xFF)] + chunk
                #expect(value.count == m["length"] as! Int)
                events.append(
                    .write(
                        frame, handle: 21, uuid: nil, value, command: true, time: time,
                        decoded: DecodedValue(
                            codec: "headset", message: "otaData",
                            roles: [.sequence: .int(Int64(i)), .otaData: .bytes(chunk)])))
            case "control":
                let v = hexBytes(m["hex"] as! String)
                var roles: [Role: RoleValue] = [:]
                if v[0] == 0x80 { roles = [.otaStart: .present, .totalCount: .int(Int64(Int(v[5]) << 8 | Int(v[6])))] }
                if v[0] == 0x82 { roles = [.messageTerminator: .present] }
                events.append(
                    .write(
                        frame, handle: 16, uuid: nil, v, time: time,
                        decoded: DecodedValue(codec: "headset", message: "control", roles: roles)))
            default:
                let v = hexBytes(m["hex"] as! String)
                var d = DecodedValue(codec: "headset", message: "event")
                if v[0] == 0x11 { d.roles = [.resendRequest: .int(Int64(Int(v[1]) << 8 | Int(v[2])))] }
                if v[0] == 0x12 {
                    d.roles = [.otaResult: .int(Int64(v[1]))]
                    d.fields = [DecodedField("result", .named(Int64(v[1]), v[1] == 0 ? "success" : "crc-failure"))]
                    d.otaSuccess = v[1] == 0
                }
                events.append(.notify(frame, handle: 18, uuid: nil, v, time: time, decoded: d))
            }
        }
        var t = OTATracker()
        feed(&t, events)
        var transfers = ChunkedTransferTracker()
        feed(&transfers, events)
        #expect(transfers.transfers.isEmpty)
        #expect(t.sessions.count == 1)
        let s = try #require(t.sessions.first)
        #expect(s.protocolName == .vendor)
        #expect(s.result == .success)
        #expect(s.expectedPackets == total)
        #expect(s.packets == truth["data_packets_sent"] as! Int)
        #expect(s.retransmittedPackets == truth["resent_indices"] as! [Int])
        #expect(s.resendRequests == [37])
        #expect(s.image == image)
        #expect(s.imageSHA256 == imageInfo["sha256"] as! String)
        #expect(crcHex(s.imageCRC32) == imageInfo["crc32"] as! String)
        #expect(s.startFrame == 90)
        #expect(s.endFrame == 268)
        #expect(s.findings.isEmpty)
    }
}
