import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

@testable import BLEAnalysis
@testable import BLEDiagnosis

/// The LE Audio diagnosis rules (LA-01 … LA-06), each on a capture that must trigger it and one that must not: the
/// LE Audio Samples, and captures built record by record where no Sample shows the case.
@Suite struct LEAudioRuleTests {
    static func evidence(_ capture: CaptureFile) -> Evidence {
        CaptureAnalysis.analyze(capture, options: AnalyzerOptions(timeline: false), observing: Observing(leAudio: true)).evidence
    }

    static func sample(_ name: String) throws -> Evidence {
        evidence(try CaptureFile.open(path: TestEnvironment.sample("\(name).btsnoop")))
    }

    static func leMeta<T: HCIParameterSet>(_ value: T) -> [UInt8] {
        guard case .leSubevent(let s) = T.carrier else { return [] }
        return HCIEventPacket(code: .leMeta, parameters: [s.rawValue] + value.bytes).bytes
    }

    static func command<T: HCIParameterSet>(_ value: T) -> [UInt8] { HCICommandPacket(opcode: T.command, parameters: value.bytes).bytes }

    static func complete(_ opcode: HCICommand, _ ret: [UInt8]) -> [UInt8] {
        HCIEventPacket(code: .commandComplete, parameters: [1] + [UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8)] + ret).bytes
    }

    /// A central's CIG 1 with CIS 0 on handle 0x0060 for the ACL link 0x0040, then LE CIS Established with `status`,
    /// after what `base` holds.
    static func cis(status: HCIStatus, after base: CaptureBuilder = CaptureBuilder()) -> CaptureBuilder {
        var cig = LESetCIGParameters()
        cig.cigID = 1
        cig.sduIntervalCToP = 10_000
        cig.sduIntervalPToC = 10_000
        var one = CIGParametersCIS()
        one.maxSDUCToP = 40
        one.maxSDUPToC = 40
        cig.cis = [one]
        var create = LECreateCIS()
        var pair = CreateCISPair()
        pair.cisHandle = 0x60
        pair.aclHandle = 0x40
        create.pairs = [pair]
        var established = LECISEstablished()
        established.cis.status = status
        established.cis.handle = 0x60
        established.cis.isoInterval = 8
        return base.connect(handle: 0x40)
            .command(command(cig)).event(complete(LESetCIGParameters.command, [0x00, 0x01, 0x01, 0x60, 0x00]))
            .command(command(create)).event(HCIBuild.event(.commandStatus(CommandStatus(status: .success, opcode: LECreateCIS.command))))
            .event(leMeta(established))
    }

    static func isoPacket(_ sequence: UInt16, status: ISOPacketStatus = .valid) -> [UInt8] {
        ISOHeader(
            handle: 0x60, boundary: .complete, timestamp: UInt32(sequence) * 10_000, sequenceNumber: sequence, sduLength: 40,
            status: status, fragmentLength: 40
        ).packet(Array(repeating: 0xA5, count: 40))
    }

    @Test func la01NamesACISThatFailedAndNotOneThatCameUp() throws {
        let failed = LA01IsochronousSetupFailed.evaluate(Self.evidence(try Self.cis(status: HCIStatus(0x3E)).captureFile()))
        #expect(failed.count == 1)
        #expect(failed.first?.frame == 6)  // connect (1), CIG (2, 3), Create CIS (4, 5), the failed CIS Established (6)
        #expect(failed.first?.message.contains("Connection Failed to be Established") == true)
        #expect(LA01IsochronousSetupFailed.evaluate(Self.evidence(try Self.cis(status: .success).captureFile())).isEmpty)
        #expect(LA01IsochronousSetupFailed.evaluate(try Self.sample("le-audio-unicast")).isEmpty)
    }

    @Test func la02NamesTheRefusedConfigQoSWithItsReason() throws {
        let truth = try #require(loadTruth("le-audio-unicast"))
        let responses = TruthJSON.list(truth["ase_control_point_responses"])
        let refused = try #require(
            responses.first { TruthJSON.list($0["responses"]).contains { TruthJSON.int($0["code"]) != 0 } })
        let found = LA02ASEOperationRefused.evaluate(try Self.sample("le-audio-unicast"))
        #expect(found.count == 1)
        #expect(found.first?.frame == TruthJSON.int(refused["frame"]))
        #expect(found.first?.message.contains("Presentation_Delay") == true)
        #expect(found.first?.message.contains("succeeded at frame") == true)
        #expect(LA02ASEOperationRefused.evaluate(try Self.sample("le-audio-broadcast")).isEmpty)
    }

    @Test func la03NamesTheLossyReceivedStreamOnly() throws {
        let found = LA03AudioStreamLossy.evaluate(try Self.sample("le-audio-unicast"))
        #expect(found.count == 1)  // the received stream; the sent one lost nothing
        #expect(found.first?.message.hasPrefix("CIS 0x0002 rx: 24 of 300 SDUs lost") == true)
        #expect(LA03AudioStreamLossy.evaluate(try Self.sample("le-audio-broadcast")).isEmpty)
    }

    /// CIS 0x0060 receives SDUs 0-9 every 10 ms from 100 ms, then nothing until the CIS is lost (0x08) 999.6 ms after
    /// the last one: 99 SDU intervals of silence, 999.6 ms said as 1000 ms.
    static func stoppedCIS() -> CaptureBuilder {
        var b = cis(status: .success)
        for s: UInt16 in 0..<10 { b = b.at(microsecondsFromStart: 100_000 + Int64(s) * 10_000).record(.iso, .rx, isoPacket(s)) }
        return b.at(microsecondsFromStart: 190_000 + 999_600).disconnect(handle: 0x60, reason: HCIStatus(0x08))
    }

    @Test func la04NamesACISThatStoppedBeforeItWasLost() throws {
        let built = Self.stoppedCIS()
        let evidence = Self.evidence(try built.captureFile())
        let found = LA04AudioStreamStopped.evaluate(evidence)
        #expect(found.count == 1)
        #expect(found.first?.frame == built.nextFrame - 1)  // the Disconnection Complete
        #expect(found.first?.supporting.map(\.frame) == [built.nextFrame - 2])  // SDU 9
        #expect(
            found.first?.message.contains(
                "CIS 0x0060 rx stopped: its last SDU came at frame \(built.nextFrame - 2), then nothing for 1000 ms (about 99 SDUs)")
                == true)
        // The stream's verdict says the same figure (one computation, one rounding: 999.6 ms is not "999 ms" there).
        let health = try #require(evidence.iso?.health.first)
        #expect(health.silenceText == "1000 ms (about 99 SDUs)")
        #expect(health.verdict(label: "CIS 0x0060").contains("then no SDU for 1000 ms (about 99 SDUs)"))
        // The unicast CIS ended by the phone's own Disconnect (0x16): not a stop.
        #expect(LA04AudioStreamStopped.evaluate(try Self.sample("le-audio-unicast")).isEmpty)
    }

    /// The receiver's BIG sync is lost once, ending both BISes: one event, one finding (LA-05's), not one LA-04 per BIS.
    @Test func la04LeavesTheBISesOfALostSyncToLA05() throws {
        let evidence = try Self.sample("le-audio-broadcast-receiver")
        #expect(evidence.iso?.health.filter { $0.silenceBeforeEndMicroseconds != nil }.count == 2)  // both did stop
        #expect(LA04AudioStreamStopped.evaluate(evidence).isEmpty)
    }

    @Test func la05NamesALostSyncWithEachBISsSilenceButNotOneTheHostEnded() throws {
        let truth = try #require(loadTruth("le-audio-broadcast-receiver"))
        let lifecycle = try #require(truth["iso_lifecycle"] as? [String: Any])
        let lost = try #require(TruthJSON.list(lifecycle["le_big_sync_lost"]).first)
        let streams = try #require(truth["iso_streams"] as? [String: [String: Any]])
        let last200 = try #require(TruthJSON.int(streams["0x0200 rx"]?["last_frame"]))
        let last201 = try #require(TruthJSON.int(streams["0x0201 rx"]?["last_frame"]))
        let timeout = try #require(TruthJSON.int(truth["big_sync_timeout_ms"]))
        let found = LA05BIGSyncLost.evaluate(try Self.sample("le-audio-broadcast-receiver"))
        #expect(found.count == 1)
        let d = try #require(found.first)
        #expect(d.frame == TruthJSON.int(lost["frame"]))
        #expect(d.message.contains("Connection Timeout"))
        // Both BISes fell silent when the source stopped, the sync timeout before the loss.
        #expect(d.message.contains("BIS 0x0200 and BIS 0x0201 had received nothing for \(timeout) ms"))
        #expect(d.message.contains("last SDUs at frames \(last200) and \(last201)"))
        #expect(d.supporting.map(\.frame) == [last200, last201])
        var established = LEBIGSyncEstablished()
        established.big.bisHandles = [0x200]
        var ended = LEBIGSyncLost()
        ended.reason = HCIStatus(0x16)
        let byHost = try CaptureBuilder().event(Self.leMeta(established)).event(Self.leMeta(ended)).captureFile()
        #expect(LA05BIGSyncLost.evaluate(Self.evidence(byHost)).isEmpty)
        #expect(LA05BIGSyncLost.evaluate(try Self.sample("le-audio-broadcast")).isEmpty)
    }

    /// The phone (the Broadcast Assistant) removes its source (BASS Remove Source), then ends the link with 0x13: the
    /// normal end of its visit, context (info) rather than a warning, citing the Remove Source.
    @Test func dc02TakesAnAssistantLeavingAfterRemoveSourceAsExpected() throws {
        let truth = try #require(loadTruth("le-audio-broadcast-receiver"))
        let remove = try #require(
            TruthJSON.list(truth["bass_operations"]).first { $0["name"] as? String == "remove_source" })
        let removeFrame = try #require(TruthJSON.int(remove["frame"]))
        let frames = try #require(truth["capture"] as? [String: Any])["frames"] as? Int  // the disconnection is the last record
        let found = DC02PeerEndedLink.evaluate(try Self.sample("le-audio-broadcast-receiver"))
        #expect(found.count == 1)
        let d = try #require(found.first)
        #expect(d.frame == frames)
        #expect(d.severity == .info)
        #expect(d.supporting.contains { $0.frame == removeFrame && $0.text.contains("Remove Source") })
        // Without the Remove Source, a 0x13 after 10 s of nothing outstanding is a routine close (info, DC-02's rule by
        // what the end cut short); with a Read Request left unanswered by it, the peer's 0x13 cut a request short: an error.
        let plain = try CaptureBuilder().connect(handle: 0x40).at(microsecondsFromStart: 10_000_000).disconnect(handle: 0x40)
            .captureFile()
        #expect(DC02PeerEndedLink.evaluate(Self.evidence(plain)).first?.severity == .info)
        let cut = try CaptureBuilder().connect(handle: 0x40).at(microsecondsFromStart: 9_000_000)
            .att(.readRequest(handle: 0x03), handle: 0x40, .tx).at(microsecondsFromStart: 10_000_000).disconnect(handle: 0x40)
            .captureFile()
        #expect(DC02PeerEndedLink.evaluate(Self.evidence(cut)).first?.severity == .error)
    }

    @Test func la06TiesAChoppyReportToTheStream() throws {
        var b = Self.cis(status: .success)
        for s: UInt16 in [0, 1, 2, 9, 10] { b = b.record(.iso, .rx, Self.isoPacket(s)) }  // 3-8 never delivered
        let q = BQRLinkQuality(
            packetType: 0, handle: 0x40, role: 0, txPowerLevel: 0, rssi: -80, snr: 10, unusedAFHChannelCount: 0,
            afhSelectUnidealChannelCount: 0, lsto: 0, piconetClock: 0, retransmissionCount: 30, noRxCount: 5, nakCount: 0,
            lastTxAckTimestamp: 0, flowOffCount: 0, lastFlowOnTimestamp: 0, bufferOverflowBytes: 0, bufferUnderflowBytes: 0)
        let choppy = try b.qualityReport(BluetoothQualityReport(reportID: .leAudioChoppy, linkQuality: q, remaining: [])).captureFile()
        let found = LA06LEAudioChoppy.evaluate(Self.evidence(choppy))
        #expect(found.count == 1)
        #expect(found.first?.message.contains("on CIS 0x0060") == true)
        #expect(found.first?.message.contains("lost 6 SDUs") == true)
        let monitor = try Self.cis(status: .success)
            .qualityReport(BluetoothQualityReport(reportID: .monitorMode, linkQuality: q, remaining: [])).captureFile()
        #expect(LA06LEAudioChoppy.evaluate(Self.evidence(monitor)).isEmpty)
    }

    /// scripts/make_iso_capture.py: its own truth against the health of a 20,000-packet capture (gaps, flags,
    /// fragments over hundreds of seconds of two streams each way).
    @Test func theBenchmarkGeneratorsTruthHolds() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("iso-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("iso.btsnoop").path, truthPath = dir.appendingPathComponent("truth.json").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [
            "python3", TestEnvironment.repositoryRoot + "/scripts/make_iso_capture.py", "-n", "20000", "--seed", "7", "-o", out, "--truth",
            truthPath,
        ]
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return }  // no python3 here
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let truth = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: truthPath))) as? [String: Any])
        let streams = try #require(truth["streams"] as? [String: [String: Int]])
        let analysis = CaptureAnalysis.analyze(try CaptureFile.open(path: out), options: AnalyzerOptions(timeline: false))
        #expect(analysis.counters.isoPackets == truth["iso_packets"] as? Int)
        for h in analysis.iso.health {
            let t = try #require(streams[String(format: "0x%04x %@", h.handle, h.direction == .tx ? "tx" : "rx")])
            #expect(h.packets == t["packets"] && h.sdus == t["sdus"] && h.missingSDUs == t["missing"])
            #expect(h.flaggedLost == t["lost_flag"] && h.possiblyInvalid == t["possibly_invalid"])
            #expect(h.fragmentedSDUs == t["fragmented"] && h.sduBytes == Int64(t["sdu_bytes"] ?? -1))
        }
        #expect(analysis.iso.health.count == 4 && analysis.iso.streams.count == 2)
    }

    /// ASCS 5.6: Release is opcode 0x08, Enable 0x03; response code 0x04 is Invalid ASE State Machine Transition.
    static func operation(_ frame: Int, _ opcode: UInt8, ases: [UInt8], code: UInt8 = 0, answered: Int? = nil) -> ASEOperation {
        var op = ASEOperation(
            frame: frame, timestamp: Timestamp(microseconds: Int64(frame)), connectionNumber: 2, opcode: opcode, aseIDs: ases)
        op.responseFrame = answered ?? frame + 5
        op.responses = ases.map { .init(aseID: $0, code: code, reason: 0) }
        return op
    }

    /// The Redmi K70 LE Audio log (tshark): Release of ASEs 1 and 2 written at 4465, accepted at 4472, then Release again
    /// at 4477, refused at 4482 with Invalid ASE State Machine Transition for both: a repeat, context. The near misses
    /// stay warnings: an operation on those ASEs between the two, another response code, an earlier Release refused.
    @Test func la02ARepeatOfAnAcceptedReleaseIsContext() {
        let accepted = Self.operation(4465, 0x08, ases: [1, 2], answered: 4472)
        let again = Self.operation(4477, 0x08, ases: [1, 2], code: 0x04, answered: 4482)
        let refusals = again.responses
        #expect(LA02ASEOperationRefused.repeatOfAcceptedOperation(again, refusals, [accepted, again])?.frame == 4465)
        let between = Self.operation(4470, 0x03, ases: [2])
        #expect(LA02ASEOperationRefused.repeatOfAcceptedOperation(again, refusals, [accepted, between, again]) == nil)
        let unsupported = Self.operation(4477, 0x08, ases: [1, 2], code: 0x06)
        #expect(LA02ASEOperationRefused.repeatOfAcceptedOperation(unsupported, unsupported.responses, [accepted, unsupported]) == nil)
        let refusedFirst = Self.operation(4465, 0x08, ases: [1, 2], code: 0x04)
        #expect(LA02ASEOperationRefused.repeatOfAcceptedOperation(again, refusals, [refusedFirst, again]) == nil)
    }
}
