import BLETestSupport
import Foundation
import Testing

/// The binary against the Samples, compared with the ground truth the generator recorded
/// (Samples/*.truth.json: what bumble's host actually sent, byte for byte).
@Suite struct SampleTruthTests {
    static let formats = ["btsnoop", "pcap", "pklg"]

    static let samples = TestEnvironment.sampleNames

    @Test(arguments: samples, formats)
    func infoCountsMatchTheGenerator(_ sample: String, _ format: String) throws {
        let truth = try Blescope.truth(sample)
        let capture = try #require(truth["capture"] as? [String: Any])
        let r = try Blescope.run(["info", "--json", "Samples/\(sample).\(format)"])
        #expect(r.status == 0)
        let info = try #require(r.jsonLines.first)
        #expect(info["records"] as? Int == capture["frames"] as? Int)
        let byType = try #require(info["by_type"] as? [String: Int])
        #expect(byType["command"] == capture["hci_commands"] as? Int)
        #expect(byType["event"] == capture["hci_events"] as? Int)
        #expect((byType["acl_tx"] ?? 0) + (byType["acl_rx"] ?? 0) == capture["acl_packets"] as? Int)
        #expect((info["findings"] as? [Any])?.isEmpty == true)
        #expect(info["format"] as? String == (format == "pklg" ? "pklg" : format))
    }

    @Test(arguments: samples, formats)
    func attCountsPerOpcodeMatchTheGenerator(_ sample: String, _ format: String) throws {
        let truth = try Blescope.truth(sample)
        let expected = try #require((truth["capture"] as? [String: Any])?["att_pdus_by_opcode"] as? [String: [String: Int]])
        let lines = try Blescope.run(["timeline", "--format", "jsonl", "--layer", "att", "--quiet", "Samples/\(sample).\(format)"])
            .jsonLines
        var counts: [Int: Int] = [:]
        for l in lines where l["layer"] as? String == "att" {
            if let op = l["opcode"] as? Int { counts[op, default: 0] += 1 }
        }
        var want: [Int: Int] = [:]
        for (key, dirs) in expected {
            let op = Int(key.split(separator: " ")[0].dropFirst(2), radix: 16)!
            want[op] = dirs.values.reduce(0, +)
        }
        #expect(counts == want)
    }

    @Test(arguments: formats)
    func eomMessagesArriveWholeByteForByte(_ format: String) throws {
        let truth = try Blescope.truth("eom-transfer")
        let messages = try #require(truth["messages"] as? [[String: Any]])
        let r = try Blescope.run(["transfers", "--json", "Samples/eom-transfer.\(format)"])
        let transfers = try #require((r.json as? [String: Any])?["transfers"] as? [[String: Any]])
        #expect(transfers.count == messages.count)
        for (t, m) in zip(transfers, messages) {
            #expect(t["data"] as? String == m["hex"] as? String)
            #expect(t["length"] as? Int == m["length"] as? Int)
            #expect(t["chunks"] as? Int == m["chunk_count"] as? Int)
            #expect(t["first_frame"] as? Int == (m["chunk_frames"] as? [Int])?.first)
            #expect(t["complete"] as? Bool == true)
            #expect(t["handle"] as? Int == truth["value_handle"] as? Int)
        }
    }

    @Test func braceletFramesDecodeAndTheBadChecksumIsFound() throws {
        let truth = try Blescope.truth("bracelet")
        let frames = try #require(truth["frames"] as? [[String: Any]])
        let lines = try Blescope.run(["timeline", "--format", "jsonl", "--codec", "Samples/codecs", "--quiet", "Samples/bracelet.btsnoop"])
            .jsonLines
        var byFrame: [Int: [String: Any]] = [:]
        for l in lines where l["layer"] as? String == "att" { byFrame[l["frame"] as! Int] = l }
        for f in frames {
            let line = try #require(byFrame[f["frame"] as! Int])
            #expect(line["value"] as? String == f["hex"] as? String)
            let decoded = try #require(line["decoded"] as? [String: Any])
            #expect(decoded["codec"] as? String == "bracelet")
            #expect(decoded["valid"] as? Bool == f["checksum_ok"] as? Bool)
        }
        let invalid = lines.filter { ($0["decoded"] as? [String: Any])?["valid"] as? Bool == false }.compactMap { $0["frame"] as? Int }
        #expect(invalid == [truth["bad_frame_number"] as! Int])
        let findings = lines.filter { $0["layer"] as? String == "finding" && $0["code"] as? String == "codec.invalid" }
        #expect(findings.compactMap { $0["frame"] as? Int } == [93])
    }

    @Test(arguments: formats)
    func nordicDFUImageIsRebuiltExactly(_ format: String) throws {
        let truth = try Blescope.truth("nordic-dfu")
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "Samples/nordic-dfu.\(format)"])
        #expect(r.status == 0)
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s["protocol"] as? String == "nordic-secure-dfu")
        #expect(s["result"] as? String == "success")
        #expect(s["image_size"] as? Int == image["size"] as? Int)
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["image_crc32"] as? String == image["crc32"] as? String)
        #expect(s["packets"] as? Int == truth["packet_count_total"] as? Int)
        #expect(s["receipts"] as? Int == truth["prn_receipt_count"] as? Int)
    }

    @Test(arguments: formats)
    func headsetOTAResendIsFound(_ format: String) throws {
        let truth = try Blescope.truth("headset-ota")
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "--codec", "Samples/codecs", "Samples/headset-ota.\(format)"])
        #expect(r.status == 0)
        let s = try #require(((r.json as? [String: Any])?["sessions"] as? [[String: Any]])?.first)
        #expect(s["protocol"] as? String == "vendor")
        #expect(s["result"] as? String == "success")
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["retransmitted_packets"] as? [Int] == truth["resent_indices"] as? [Int])
        #expect(s["resend_requests"] as? Int == (truth["resent_indices"] as? [Int])?.count)
        #expect(s["packets"] as? Int == truth["data_packets_sent"] as? Int)
    }

    @Test(arguments: [("legacy-dfu", "nordic-legacy-dfu"), ("mcumgr-upload", "mcumgr-smp"), ("silabs-ota", "silabs-ota")], formats)
    func otherOTAProtocolsAreRebuiltExactly(_ sample: (String, String), _ format: String) throws {
        let truth = try Blescope.truth(sample.0)
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "Samples/\(sample.0).\(format)"])
        #expect(r.status == 0)
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s["protocol"] as? String == sample.1)
        #expect(s["result"] as? String == "success")
        #expect(s["image_size"] as? Int == image["size"] as? Int)
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["image_crc32"] as? String == image["crc32"] as? String)
        let packets = (truth["packets"] ?? truth["requests"]) as? Int
        if let packets { #expect(s["packets"] as? Int == packets) }
        if let receipts = truth["receipts"] as? Int { #expect(s["receipts"] as? Int == receipts) }
    }

    /// A vendor OTA over two characteristics (control: 01 size crc, 81, E1 resend, 02, 82 status; data:
    /// index + payload) declared as two specs, or as one spec with a part per characteristic: one
    /// session either way, the image exact, the resend matched to the packet sent again, exit 0.
    @Test(arguments: ["two-specs", "one-spec"], formats)
    func vendorOTAOverTwoCharacteristicsIsOneSession(_ specs: String, _ format: String) throws {
        let truth = try Blescope.truth("vendor-ota")
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "--codec", "Samples/codecs/vendor-ota/\(specs)", "Samples/vendor-ota.\(format)"])
        #expect(r.status == 0, "\(r.stderr)")
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s["protocol"] as? String == "vendor")
        #expect(s["codec"] as? String == (specs == "one-spec" ? "vendor-ota" : "vendor-ota-control+vendor-ota-data"))
        #expect(s["result"] as? String == truth["result"] as? String)
        #expect(s["image_size"] as? Int == image["size"] as? Int)
        #expect(s["expected_size"] as? Int == image["size"] as? Int)
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["image_crc32"] as? String == image["crc32"] as? String)
        #expect(s["packets"] as? Int == truth["data_packets_sent"] as? Int)
        #expect(s["retransmitted_packets"] as? [Int] == truth["resent_indices"] as? [Int])
        #expect(s["resend_request_indices"] as? [Int] == truth["resend_requests"] as? [Int])
        let resends = try #require(s["resends"] as? [[String: Any]])
        #expect(resends.count == 1)
        #expect(resends.first?["request_frame"] as? Int == truth["resend_request_frame"] as? Int)
        #expect(resends.first?["resent_frame"] as? Int == truth["resent_packet_frame"] as? Int)
        #expect(s["start_frame"] as? Int == truth["start_frame"] as? Int)
        #expect(s["end_frame"] as? Int == truth["result_frame"] as? Int)
        #expect((s["findings"] as? [Any])?.isEmpty == true)
        let rate = try #require(s["throughput_bps"] as? Double)
        let want = try #require(truth["throughput_bps"] as? Double)
        #expect(abs(rate - want) / want < 0.01, "rate \(rate) vs truth \(want)")
    }

    /// Buttonless DFU: the app connection asks for the bootloader, the device comes back at address + 1 and
    /// takes the image over Secure DFU: one update, both connections with why each ended and the gap.
    @Test(arguments: formats)
    func buttonlessDFUIsOneUpdateAcrossTheReconnect(_ format: String) throws {
        let truth = try Blescope.truth("buttonless-dfu")
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "Samples/buttonless-dfu.\(format)"])
        #expect(r.status == 0, "\(r.stderr)")
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s["protocol"] as? String == "nordic-secure-dfu")
        #expect(s["result"] as? String == truth["result"] as? String)
        #expect(s["image_size"] as? Int == image["size"] as? Int)
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["packets"] as? Int == truth["packet_count_total"] as? Int)
        #expect(s["receipts"] as? Int == truth["prn_receipt_count"] as? Int)
        #expect(s["start_frame"] as? Int == truth["enter_bootloader_frame"] as? Int)
        let connections = try #require(s["connections"] as? [[String: Any]])
        let want = try #require(truth["connections"] as? [[String: Any]])
        #expect(connections.compactMap { $0["role"] as? String } == ["application", "bootloader"])
        #expect(connections.compactMap { $0["peer"] as? String } == want.compactMap { $0["address"] as? String })
        #expect(connections.compactMap { $0["start_frame"] as? Int } == want.compactMap { $0["start_frame"] as? Int })
        #expect(connections.compactMap { $0["end_frame"] as? Int } == want.compactMap { $0["end_frame"] as? Int })
        // reason 0x13 in the truth file's Disconnection Complete events
        #expect(want.allSatisfy { $0["end_reason_code"] as? Int == 0x13 })
        #expect(connections.allSatisfy { $0["end_reason"] as? String == "Remote User Terminated Connection" })
        let gap = try #require(connections.last?["gap_s"] as? Double)
        #expect(abs(gap * 1e6 - (truth["reconnect_gap_us"] as! Double)) < 1)
        #expect(
            (s["phases"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
                == ["enter bootloader", "reconnect", "init packet", "data"])
        let rate = try #require(s["throughput_bps"] as? Double)
        let wantRate = try #require(truth["throughput_bps"] as? Double)
        #expect(abs(rate - wantRate) / wantRate < 0.01, "rate \(rate) vs truth \(wantRate)")
    }

    /// TI OAD: blocks asked for one by one, one asked for again after a flash error and written again.
    @Test(arguments: formats)
    func tiOADImageAndResendMatchTheTruth(_ format: String) throws {
        let truth = try Blescope.truth("ti-oad")
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "Samples/ti-oad.\(format)"])
        #expect(r.status == 0, "\(r.stderr)")
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s["protocol"] as? String == "ti-oad")
        #expect(s["result"] as? String == truth["result"] as? String)
        #expect(s["image_size"] as? Int == image["size"] as? Int)
        #expect(s["expected_size"] as? Int == image["size"] as? Int)
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["image_crc32"] as? String == image["crc32"] as? String)
        #expect(s["packets"] as? Int == truth["blocks_sent"] as? Int)
        #expect(s["retransmitted_packets"] as? [Int] == truth["resent_indices"] as? [Int])
        let resends = try #require(s["resends"] as? [[String: Any]])
        #expect(resends.compactMap { $0["index"] as? Int } == truth["resend_requests"] as? [Int])
        #expect(resends.first?["request_frame"] as? Int == truth["resend_request_frame"] as? Int)
        #expect(resends.first?["resent_frame"] as? Int == truth["resent_block_frame"] as? Int)
        #expect(s["end_frame"] as? Int == truth["enable_response_frame"] as? Int)
        let rate = try #require(s["throughput_bps"] as? Double)
        let want = try #require(truth["throughput_bps"] as? Double)
        #expect(abs(rate - want) / want < 0.01, "rate \(rate) vs truth \(want)")
    }

    /// Dialog/Renesas SUOTA: blocks of chunks, each block acknowledged, end of transfer accepted, reboot.
    @Test(arguments: formats)
    func dialogSUOTAImageMatchesTheTruth(_ format: String) throws {
        let truth = try Blescope.truth("dialog-suota")
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "Samples/dialog-suota.\(format)"])
        #expect(r.status == 0, "\(r.stderr)")
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s["protocol"] as? String == "dialog-suota")
        #expect(s["result"] as? String == truth["result"] as? String)
        #expect(s["image_size"] as? Int == image["size"] as? Int)
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["image_crc32"] as? String == image["crc32"] as? String)
        #expect(s["packets"] as? Int == truth["packets"] as? Int)
        #expect((s["retransmitted_packets"] as? [Int])?.isEmpty == true)
        #expect((s["phases"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["upload", "end", "reboot"])
        let rate = try #require(s["throughput_bps"] as? Double)
        let want = try #require(truth["throughput_bps"] as? Double)
        #expect(abs(rate - want) / want < 0.01, "rate \(rate) vs truth \(want)")
    }

    /// Espressif BLE OTA: 4096-byte sectors, one refused with a CRC error (a flipped byte) and sent again,
    /// Stop OTA accepted.
    @Test(arguments: formats)
    func espressifBLEOTAImageAndResendMatchTheTruth(_ format: String) throws {
        let truth = try Blescope.truth("esp-ble-ota")
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "Samples/esp-ble-ota.\(format)"])
        #expect(r.status == 0, "\(r.stderr)")
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s["protocol"] as? String == "esp-ble-ota")
        #expect(s["result"] as? String == truth["result"] as? String)
        #expect(s["image_size"] as? Int == image["size"] as? Int)
        #expect(s["expected_size"] as? Int == image["size"] as? Int)
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["image_crc32"] as? String == image["crc32"] as? String)
        #expect(s["packets"] as? Int == truth["packets"] as? Int)
        #expect(s["retransmitted_packets"] as? [Int] == truth["resent_sectors"] as? [Int])
        let resends = try #require(s["resends"] as? [[String: Any]])
        #expect(resends.compactMap { $0["index"] as? Int } == truth["resend_requests"] as? [Int])
        #expect(resends.first?["request_frame"] as? Int == truth["resend_request_frame"] as? Int)
        #expect(resends.first?["resent_frame"] as? Int == truth["resent_frame"] as? Int)
        #expect(s["end_frame"] as? Int == truth["stop_ack_frame"] as? Int)
        #expect((s["phases"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["start", "transfer", "stop"])
        // The flipped byte: the sector's CRC-16 disagrees with its data on the first sending.
        let findings = (s["findings"] as? [[String: Any]])?.compactMap { $0["message"] as? String } ?? []
        #expect(findings.contains { $0.hasPrefix("sector \(truth["resend_requests"].flatMap { ($0 as? [Int])?.first } ?? -1): CRC-16") })
        let rate = try #require(s["throughput_bps"] as? Double)
        let want = try #require(truth["throughput_bps"] as? Double)
        #expect(abs(rate - want) / want < 0.01, "rate \(rate) vs truth \(want)")
    }

    /// Telink OTA (legacy): version, start, 600 packets of index + 16 bytes + CRC-16, end with the last
    /// index, CMD_OTA_RESULT success.
    @Test(arguments: formats)
    func telinkOTAImageMatchesTheTruth(_ format: String) throws {
        let truth = try Blescope.truth("telink-ota")
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "Samples/telink-ota.\(format)"])
        #expect(r.status == 0, "\(r.stderr)")
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s["protocol"] as? String == "telink-ota")
        #expect(s["result"] as? String == truth["result"] as? String)
        #expect(s["image_size"] as? Int == image["size"] as? Int)
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["packets"] as? Int == truth["packets"] as? Int)
        #expect(s["expected_packets"] as? Int == (truth["last_index"] as? Int).map { $0 + 1 })
        #expect(s["retransmitted_packets"] as? [Int] == truth["resent_indices"] as? [Int])
        #expect(s["end_frame"] as? Int == truth["result_frame"] as? Int)
        #expect((s["phases"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["version", "start", "transfer", "end"])
        #expect((s["phases"] as? [[String: Any]])?.last?["start_frame"] as? Int == truth["end_frame"] as? Int)
        #expect((s["findings"] as? [Any])?.isEmpty == true)
        let rate = try #require(s["throughput_bps"] as? Double)
        let want = try #require(truth["throughput_bps"] as? Double)
        #expect(abs(rate - want) / want < 0.01, "rate \(rate) vs truth \(want)")
    }

    /// MCUmgr across a reboot: upload, test and reset on connection 1 (lost: Connection Timeout), confirm on
    /// connection 2 to the same address: one update story.
    @Test(arguments: formats)
    func mcumgrResetAndConfirmAreOneStory(_ format: String) throws {
        let truth = try Blescope.truth("mcumgr-confirm")
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "Samples/mcumgr-confirm.\(format)"])
        #expect(r.status == 0, "\(r.stderr)")
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s["protocol"] as? String == "mcumgr-smp")
        #expect(s["result"] as? String == truth["result"] as? String)
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["packets"] as? Int == truth["requests"] as? Int)
        #expect((s["retransmitted_packets"] as? [Int])?.isEmpty == true)
        #expect(s["start_frame"] as? Int == truth["upload_start_frame"] as? Int)
        #expect(s["end_frame"] as? Int == truth["confirm_response_frame"] as? Int)
        let phases = try #require(s["phases"] as? [[String: Any]])
        #expect(phases.compactMap { $0["name"] as? String } == ["upload", "test", "reset", "reconnect", "confirm"])
        #expect(
            phases.compactMap { $0["start_frame"] as? Int }
                == [
                    truth["upload_start_frame"], truth["test_frame"], truth["reset_frame"],
                    (truth["connections"] as? [[String: Any]])?.first?["end_frame"], truth["confirm_frame"],
                ].compactMap { $0 as? Int })
        let connections = try #require(s["connections"] as? [[String: Any]])
        let want = try #require(truth["connections"] as? [[String: Any]])
        #expect(connections.compactMap { $0["role"] as? String } == ["upload", "confirm"])
        #expect(connections.compactMap { $0["peer"] as? String } == want.compactMap { $0["address"] as? String })
        #expect(connections.compactMap { $0["start_frame"] as? Int } == want.compactMap { $0["start_frame"] as? Int })
        #expect(connections.compactMap { $0["end_frame"] as? Int } == want.compactMap { $0["end_frame"] as? Int })
        // 0x08 and 0x13 in the truth file's Disconnection Complete events.
        #expect(want.compactMap { $0["end_reason_code"] as? Int } == [0x08, 0x13])
        #expect(connections.compactMap { $0["end_reason"] as? String } == ["Connection Timeout", "Remote User Terminated Connection"])
        let gap = try #require(connections.last?["gap_s"] as? Double)
        #expect(abs(gap * 1e6 - (truth["reconnect_gap_us"] as! Double)) < 1)
        let rate = try #require(s["throughput_bps"] as? Double)
        let wantRate = try #require(truth["throughput_bps"] as? Double)
        #expect(abs(rate - wantRate) / wantRate < 0.01, "rate \(rate) vs truth \(wantRate)")
    }

    /// Cypress/Infineon bootloader: 64 rows as Send data + Program row, each answered, checksum valid, exit.
    @Test(arguments: formats)
    func cypressBootloaderImageMatchesTheTruth(_ format: String) throws {
        let truth = try Blescope.truth("cypress-bootloader")
        let image = try #require(truth["image"] as? [String: Any])
        let r = try Blescope.run(["ota", "--json", "Samples/cypress-bootloader.\(format)"])
        #expect(r.status == 0, "\(r.stderr)")
        let sessions = try #require((r.json as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(sessions.count == 1)
        let s = try #require(sessions.first)
        #expect(s["protocol"] as? String == "cypress-bootloader")
        #expect(s["result"] as? String == truth["result"] as? String)
        #expect(s["image_size"] as? Int == image["size"] as? Int)
        #expect(s["image_sha256"] as? String == image["sha256"] as? String)
        #expect(s["packets"] as? Int == truth["packets"] as? Int)
        #expect(s["retransmitted_packets"] as? [Int] == truth["resent_rows"] as? [Int])
        #expect(s["start_frame"] as? Int == truth["enter_frame"] as? Int)
        #expect(s["end_frame"] as? Int == truth["exit_frame"] as? Int)
        #expect((s["phases"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["enter", "program", "verify", "exit"])
        #expect((s["findings"] as? [Any])?.isEmpty == true)
        let rate = try #require(s["throughput_bps"] as? Double)
        let want = try #require(truth["throughput_bps"] as? Double)
        #expect(abs(rate - want) / want < 0.01, "rate \(rate) vs truth \(want)")
    }

    /// The image written by --extract is the truth's, byte for byte, and --image against it passes.
    @Test func vendorOTAExtractAndImageCheck() throws {
        let truth = try Blescope.truth("vendor-ota")
        let sha = try #require((truth["image"] as? [String: Any])?["sha256"] as? String)
        let dir = NSTemporaryDirectory() + "blescope-extract-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Blescope.run(["ota", "--codec", "Samples/codecs/vendor-ota/one-spec", "--extract", dir, "Samples/vendor-ota.btsnoop"])
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(files.count == 1)
        let path = dir + "/" + (files.first ?? "")
        // sha256sum, independent of blescope's own SHA-256.
        let sum = try #require(TestEnvironment.execute("/usr/bin/sha256sum", [path]))
        #expect(sum.stdout.split(separator: " ").first.map(String.init) == sha)
        #expect(
            try Blescope.run([
                "ota", "--codec", "Samples/codecs/vendor-ota/one-spec", "--image", path, "--min-rate", "400kbps",
                "Samples/vendor-ota.btsnoop",
            ]).status == 0)
        #expect(
            try Blescope.run([
                "ota", "--codec", "Samples/codecs/vendor-ota/one-spec", "--min-rate", "600kbps",
                "Samples/vendor-ota.btsnoop",
            ]).status == 1)
    }

    @Test func otaGatesExitNonZero() throws {
        // 100 KB in ~4.6 s is ~185 kbps: a 1 Mbps minimum must fail, a 100 kbps one pass.
        #expect(try Blescope.run(["ota", "--min-rate", "1Mbps", "Samples/nordic-dfu.btsnoop"]).status == 1)
        #expect(try Blescope.run(["ota", "--min-rate", "100kbps", "Samples/nordic-dfu.btsnoop"]).status == 0)
        // An image that differs from the one sent fails the comparison.
        let wrong = FileManager.default.temporaryDirectory.appendingPathComponent("blescope-wrong-image.bin")
        try Data(repeating: 0xAB, count: 100_000).write(to: wrong)
        #expect(try Blescope.run(["ota", "--image", wrong.path, "Samples/nordic-dfu.btsnoop"]).status == 1)
    }

    @Test func unreadableInputsExitTwo() throws {
        // A folder's notes and scripts are skipped; named, a file that is not a capture is an error.
        #expect(try Blescope.run(["info", "Samples"]).status == 0)
        #expect(try Blescope.run(["info", "Samples/PROTOCOLS.md"]).status == 2)
        #expect(try Blescope.run(["info", "does-not-exist.btsnoop"]).status == 2)
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("blescope-empty.btsnoop")
        try Data().write(to: empty)
        #expect(try Blescope.run(["timeline", empty.path]).status == 2)
    }
}

/// `info` over directories: every capture once, in a stable order, the same in parallel and in sequence;
/// files in them that are not captures are skipped, one line each on stderr (named explicitly, they are errors).
@Suite struct ManyFilesTests {
    @Test func infoOverADirectoryIsParallelAndIdenticalToSequential() throws {
        let parallel = try Blescope.run(["info", "--json", "Samples"])
        let sequential = try Blescope.run(["info", "--json", "--jobs", "1", "Samples"])
        #expect(parallel.stdout == sequential.stdout)
        let captures = parallel.jsonLines.filter { $0["records"] != nil }
        let files = captures.compactMap { $0["file"] as? String }
        // every sample × 3 formats; PROTOCOLS.md, README.md and the truth files are not captures.
        #expect(files.count == TestEnvironment.sampleNames.count * 3)
        #expect(files == files.sorted())
        #expect(parallel.status == 0)
        #expect(parallel.jsonLines.allSatisfy { $0["error"] == nil })
        let skipped = parallel.stderr.split(separator: "\n").filter { $0.hasPrefix("blescope: skipped Samples/") }
        #expect(skipped.contains { $0.hasPrefix("blescope: skipped Samples/PROTOCOLS.md: not a capture") })
        #expect(skipped.count == parallel.stderr.split(separator: "\n").count)
        let records = Dictionary(uniqueKeysWithValues: captures.map { ($0["file"] as! String, $0["records"] as! Int) })
        #expect(records["Samples/nordic-dfu.pklg"] == 1263)
        #expect(records["Samples/bracelet.pcap"] == 111)
    }

    /// `report` takes the same inputs as `info` (directories recursively, quoted globs) and the same exit
    /// codes: a file found that is not a capture is skipped (not a section of the report), one named is an error.
    @Test func reportOverADirectorySkipsWhatIsNotACapture() throws {
        let r = try Blescope.run(["report", "--format", "json", "--quiet", "Samples"])
        #expect(r.status == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let files = try #require(report["files"] as? [[String: Any]])
        #expect(files.allSatisfy { $0["error"] is NSNull })
        #expect(files.count == TestEnvironment.sampleNames.count * 3)
        #expect(r.stderr.contains("blescope: skipped Samples/PROTOCOLS.md: not a capture"))

        let glob = try Blescope.run(["report", "--format", "json", "--quiet", "Samples/bracelet.*"])
        #expect(glob.status == 0 && glob.stderr.contains("skipped Samples/bracelet.truth.json"))  // matched, not a capture
        let named = try Blescope.run(["report", "--format", "json", "--quiet", "Samples/bracelet.pcap", "Samples/PROTOCOLS.md"])
        #expect(named.status == 2 && named.stderr.contains("blescope: Samples/PROTOCOLS.md: not a capture"))
        let pcaps = try Blescope.run(["report", "--format", "json", "--quiet", "Samples/*.pcap"])
        #expect(pcaps.status == 0)
        let pcapFiles = try #require(
            (try JSONSerialization.jsonObject(with: Data(pcaps.stdout.utf8)) as? [String: Any])?["files"] as? [Any])
        #expect(pcapFiles.count == TestEnvironment.sampleNames.count)
        #expect(try Blescope.run(["report", "--quiet", "Samples/nothing-*.pcap"]).status == 2)
    }

    /// A report written into the directory it reports on is not read back as a capture by the next run;
    /// `.jsonl` output is one line per capture, each with its `file` first.
    @Test func reportIntoItsOwnDirectoryAndAsJSONLines() throws {
        let dir = NSTemporaryDirectory() + "blescope-report-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["bracelet.btsnoop", "nordic-dfu.pcap"] {
            try FileManager.default.copyItem(atPath: TestEnvironment.sample(name), toPath: dir + "/" + name)
        }
        for _ in 0..<2 {
            let r = try Blescope.run(["report", "--quiet", dir, "-o", dir + "/report.html"])
            #expect(r.status == 0, "\(r.stderr)")
            let html = try String(contentsOfFile: dir + "/report.html", encoding: .utf8)
            #expect(html.contains("<p class=\"muted\">2 capture files;"))
            #expect(!html.contains("report.html</a>"))
        }
        try FileManager.default.removeItem(atPath: dir + "/report.html")  // any other file is an input, and not a capture
        let r = try Blescope.run(["report", "--quiet", "--jobs", "2", dir, "-o", dir + "/fleet.jsonl"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = try String(contentsOfFile: dir + "/fleet.jsonl", encoding: .utf8).split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.compactMap { $0["file"] as? String } == [dir + "/bracelet.btsnoop", dir + "/nordic-dfu.pcap"])
        // nordic-dfu: one DFU session, the truth file's 100,000-byte image in 416 packets.
        let ota = try #require((lines.last?["ota"] as? [String: Any])?["sessions"] as? [[String: Any]])
        #expect(ota.count == 1)
        #expect(ota.first?["result"] as? String == "success")
        #expect(ota.first?["image_size"] as? Int == 100_000)
        #expect(ota.first?["packets"] as? Int == 416)
    }
}
