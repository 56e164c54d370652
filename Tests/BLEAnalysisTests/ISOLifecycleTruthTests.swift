import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// CIG/CIS/BIG lifecycles, ASE states and control-point operations, BASS, against the LE Audio Samples' truth.
@Suite struct ISOLifecycleTruthTests {
    typealias S = ISOSampleTruthTests
    static let formats = S.formats

    @Test(arguments: formats)
    func unicastCISAsTheControllerReportedIt(_ format: String) throws {
        let truth = try #require(loadTruth("le-audio-unicast"))
        let lifecycle = try #require(truth["iso_lifecycle"] as? [String: Any])
        let result = try S.analyze("le-audio-unicast", format)
        let s = try #require(result.iso.streams.first)
        #expect(result.iso.streams.count == 1)
        let established = try #require(TruthJSON.list(lifecycle["le_cis_established"]).first)
        let cig = try #require(TruthJSON.list(lifecycle["le_set_cig_parameters"]).first)
        let cis = try #require(TruthJSON.list(cig["cis"]).first)
        #expect(Int(s.handle) == TruthJSON.int(truth["cis_handle"]))
        #expect(TruthJSON.ints(TruthJSON.list(lifecycle["le_set_cig_parameters_complete"]).first?["cis_handles"]) == [Int(s.handle)])
        #expect(s.kind == .cis && s.role == "central")
        #expect(Int(s.cigID ?? 0) == TruthJSON.int(truth["cig_id"]) && Int(s.cisID ?? 9) == TruthJSON.int(truth["cis_id"]))
        #expect(Int(s.aclHandle ?? 0) == TruthJSON.int(truth["acl_handle"]))
        #expect(s.connectionNumber == 1)
        #expect(s.establishedFrame == TruthJSON.int(established["frame"]))
        #expect(Int(s.isoInterval) == TruthJSON.int(established["iso_interval"]))
        #expect(Int(s.nse) == TruthJSON.int(established["nse"]))
        // The phone is the central: tx is C→P, rx P→C.
        #expect(s.transportLatencyTx.map(Int.init) == TruthJSON.int(established["transport_latency_c_to_p"]))
        #expect(s.transportLatencyRx.map(Int.init) == TruthJSON.int(established["transport_latency_p_to_c"]))
        #expect(s.phyTx?.rawValue == UInt8(TruthJSON.int(established["phy_c_to_p"]) ?? 0))
        #expect(s.flushTimeoutTx.map(Int.init) == TruthJSON.int(established["ft_c_to_p"]))
        #expect(s.burstNumberRx.map(Int.init) == TruthJSON.int(established["bn_p_to_c"]))
        #expect(s.maxPDUTx.map(Int.init) == TruthJSON.int(established["max_pdu_c_to_p"]))
        #expect(s.sduIntervalTx.map(Int.init) == TruthJSON.int(cig["sdu_interval_c_to_p"]))
        #expect(s.maxSDURx.map(Int.init) == TruthJSON.int(cis["max_sdu_p_to_c"]))
        let end = try #require(TruthJSON.list(lifecycle["disconnection_complete"]).first { TruthJSON.int($0["handle"]) == Int(s.handle) })
        #expect(s.endFrame == TruthJSON.int(end["frame"]))
        #expect(s.endReason?.rawValue == UInt8(TruthJSON.int(end["reason"]) ?? 0))
        let paths = TruthJSON.list(lifecycle["le_setup_iso_data_path"])
        let pathsComplete = TruthJSON.list(lifecycle["le_setup_iso_data_path_complete"])
        #expect(s.dataPaths.map(\.frame) == pathsComplete.map { TruthJSON.int($0["frame"]) ?? 0 })
        #expect(s.dataPaths.map { $0.direction == .tx ? 0 : 1 } == paths.map { TruthJSON.int($0["direction"]) ?? -1 })
        #expect(s.dataPaths.map { hexString($0.codec.bytes) } == paths.map { $0["codec_id"] as? String ?? "" })
        let removed = try #require(TruthJSON.list(lifecycle["le_remove_iso_data_path_complete"]).first)
        #expect(s.dataPaths.allSatisfy { $0.removedFrame == TruthJSON.int(removed["frame"]) })
        let kinds = result.iso.events.map(\.kind)
        #expect(kinds.contains(.cigConfigured) && kinds.contains(.cisEstablished) && kinds.contains(.cisDisconnected))
        #expect(
            result.iso.events.first { $0.kind == .cigRemoved }?.frame
                == TruthJSON.int(TruthJSON.list(lifecycle["le_remove_cig"]).first?["frame"]))
    }

    @Test(arguments: formats)
    func aseStatesAndOperationsAsTheServerSaidThem(_ format: String) throws {
        let truth = try #require(loadTruth("le-audio-unicast"))
        let profiles = try #require(try S.analyze("le-audio-unicast", format).leAudio)
        let notified = profiles.aseStates.filter { !$0.viaRead }
        let transitions = TruthJSON.list(truth["ase_transitions"])
        #expect(notified.map(\.frame) == transitions.map { TruthJSON.int($0["frame"]) ?? 0 })
        #expect(notified.map { Int($0.aseID) } == transitions.map { TruthJSON.int($0["ase_id"]) ?? 0 })
        let names = ["idle", "codec_configured", "qos_configured", "enabling", "streaming", "disabling", "releasing"]
        #expect(notified.map { names[Int($0.state)] } == transitions.map { $0["state"] as? String ?? "" })
        #expect(profiles.aseStates.allSatisfy { $0.allowed })
        let operations = TruthJSON.list(truth["ase_control_point_operations"])
        let responses = TruthJSON.list(truth["ase_control_point_responses"])
        #expect(profiles.operations.map(\.frame) == operations.map { TruthJSON.int($0["frame"]) ?? 0 })
        #expect(profiles.operations.map { Int($0.opcode) } == operations.map { TruthJSON.int($0["opcode"]) ?? 0 })
        #expect(profiles.operations.map { $0.aseIDs.map(Int.init) } == operations.map { TruthJSON.ints($0["ase_ids"]) })
        #expect(profiles.operations.map { $0.responseFrame ?? 0 } == responses.map { TruthJSON.int($0["frame"]) ?? 0 })
        for (op, r) in zip(profiles.operations, responses) {
            let want = TruthJSON.list(r["responses"])
            #expect(
                op.responses.map { [Int($0.aseID), Int($0.code), Int($0.reason)] }
                    == want.map { [TruthJSON.int($0["ase_id"]) ?? 0, TruthJSON.int($0["code"]) ?? 0, TruthJSON.int($0["reason"]) ?? 0] })
        }
        let refused = try #require(truth["refused_config_qos"] as? [String: Any])
        #expect(profiles.refusals.count == 1)
        #expect(
            profiles.refusals.first?.responses.allSatisfy {
                Int($0.code) == TruthJSON.int(refused["response_code"]) && Int($0.reason) == TruthJSON.int(refused["reason"])
            } == true)
        #expect(profiles.refusals.first?.responses.first?.reasonName == "Presentation_Delay")
    }

    @Test(arguments: ["le-audio-broadcast", "le-audio-broadcast-receiver"], formats)
    func bigLifecycleAsTheControllerReportedIt(_ name: String, _ format: String) throws {
        let truth = try #require(loadTruth(name))
        let lifecycle = try #require(truth["iso_lifecycle"] as? [String: Any])
        let result = try S.analyze(name, format)
        let source = name == "le-audio-broadcast"
        let opened = try #require(TruthJSON.list(lifecycle[source ? "le_create_big_complete" : "le_big_sync_established"]).first)
        #expect(result.iso.streams.map { Int($0.handle) } == TruthJSON.ints(opened["bis_handles"]))
        for (i, s) in result.iso.streams.enumerated() {
            #expect(s.kind == .bis && s.role == (source ? "source" : "receiver"))
            #expect(s.establishedFrame == TruthJSON.int(opened["frame"]))
            #expect(Int(s.bisIndex ?? 0) == i + 1)
            #expect(Int(s.isoInterval) == TruthJSON.int(opened["iso_interval"]) && Int(s.nse) == TruthJSON.int(opened["nse"]))
            let latency = source ? s.transportLatencyTx : s.transportLatencyRx
            #expect(latency.map(Int.init) == TruthJSON.int(opened["transport_latency_big"]))
            #expect((source ? s.maxPDUTx : s.maxPDURx).map(Int.init) == TruthJSON.int(opened["max_pdu"]))
            if source {
                let create = try #require(TruthJSON.list(lifecycle["le_create_big"]).first)
                #expect(s.sduIntervalTx.map(Int.init) == TruthJSON.int(create["sdu_interval"]))
                let end = try #require(TruthJSON.list(lifecycle["le_terminate_big_complete"]).first)
                #expect(s.endFrame == TruthJSON.int(end["frame"]) && s.endReason?.rawValue == UInt8(TruthJSON.int(end["reason"]) ?? 0))
            } else {
                let info = try #require(TruthJSON.list(lifecycle["le_biginfo_advertising_report"]).first)
                #expect(s.sduIntervalRx.map(Int.init) == TruthJSON.int(info["sdu_interval"]))
                #expect(s.maxSDURx.map(Int.init) == TruthJSON.int(info["max_sdu"]))
            }
        }
    }

    @Test(arguments: ["le-audio-broadcast", "le-audio-broadcast-receiver"], formats)
    func bassOperationsAndReceiveStates(_ name: String, _ format: String) throws {
        let truth = try #require(loadTruth(name))
        let bass = try #require(try S.analyze(name, format).leAudio?.bass)
        let operations = TruthJSON.list(truth["bass_operations"])
        let states = TruthJSON.list(truth["broadcast_receive_states"])
        let ours = bass.filter { $0.kind == "operation" }
        #expect(ours.map(\.frame) == operations.map { TruthJSON.int($0["frame"]) ?? 0 })
        #expect(ours.map { Int($0.opcode ?? 99) } == operations.map { TruthJSON.int($0["opcode"]) ?? 0 })
        // Receive states notified (the truth leaves out the initial read).
        let notified = bass.filter { $0.kind == "receive-state" && states.map { TruthJSON.int($0["frame"]) }.contains($0.frame) }
        #expect(notified.count == states.count)
        for (b, t) in zip(notified, states) {
            if t["empty"] as? Bool == true {
                #expect(b.sourceID == nil)
            } else {
                #expect(b.paSyncState.map(Int.init) == TruthJSON.int(t["pa_sync_state"]))
                #expect(b.broadcastID.map(Int.init) == TruthJSON.int(t["broadcast_id"]))
                #expect(b.bisSync.map(Int.init) == TruthJSON.ints(t["bis_sync"]))
            }
        }
    }
}
