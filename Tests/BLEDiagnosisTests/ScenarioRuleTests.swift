import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

@testable import BLEDiagnosis

/// SC-01 …: the capture's shape as a whole (issue 48, scope 6), each on a capture that shows it and on the near miss
/// that must stay quiet, and what the other rules then say.
extension DiagnosisRuleTests {
    @Suite struct Scenario {
        /// A link to the peer, then `writes` Write Commands to 0x000E from 1 s on, one each 20 ms, of `size(i)` bytes
        /// (each value different, each reported sent by Number Of Completed Packets), with a notification on the control
        /// handle 0x0010 before every 100th.
        static func run(writes: Int, size: (Int) -> Int) -> CaptureBuilder {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer).at(0.5)
            for i in 0..<writes {
                b = b.at(microsecondsFromStart: 1_000_000 + Int64(i) * 20_000)
                if i % 100 == 0 { b = b.notify(handle: 0x0010, [0x01, UInt8(truncatingIfNeeded: i / 100)], connection: 0x40) }
                let value = (0..<size(i)).map { UInt8(truncatingIfNeeded: i &* 7 &+ $0) }
                b = b.att(.writeCommand(handle: 0x000E, value: value), handle: 0x40, .tx).completed(handle: 0x40)
            }
            return b
        }

        /// 501 writes: 500 of 18 bytes, the last of 12 (9012 bytes, from 1 s to 11 s).
        static func update() -> CaptureBuilder { run(writes: 501) { $0 == 500 ? 12 : 18 } }

        // MARK: SC-01 probable firmware update, protocol not known

        @Test func aRunOfSameSizeWritesEndedByThePeerThenTheDeviceBackIsAProbableUpdateAndItsDisconnectTheReboot() throws {
            var b = Self.update()
            let firstWrite = 3  // after the connection and the first notification
            let lastWrite = b.nextFrame - 2  // before its Number Of Completed Packets
            // The last write goes 1 ms after the 500th notification (records are 1 ms apart): at 11.001 s.
            b = b.at(microsecondsFromStart: 11_300_000)
            let end = b.nextFrame
            b = b.disconnect(handle: 0x40).at(13.3)
            let back = b.nextFrame
            b = b.connect(handle: 0x41, peer: RuleTest.peer)
            let r = try RuleTest.diagnose(b)
            let sc = try #require(r.of("SC-01").first)
            #expect(r.of("SC-01").count == 1 && sc.severity == .info && sc.frame == lastWrite && sc.connection == 1)
            let summary =
                "probable firmware update (protocol not known): 501 Write Commands, 500 of them 18 bytes, to handle 0x000e on link #1, 9012 bytes at 0.9 kB/s, frames \(firstWrite)–\(lastWrite), the link also carrying 6 notifications on 0x0010"
            #expect(
                sc.message
                    == "With \(RuleTest.peerText): \(summary). The device ended the link at frame \(end) (0x13 Remote User Terminated Connection), 299 ms after the last write; the device came back at frame \(back) (link #2, 2.00 s later)."
            )
            #expect(sc.supporting.map(\.frame) == [firstWrite, lastWrite, end, back])
            // The story names it on the first screen.
            #expect(r.story.sentences.contains { $0.text.hasPrefix("Probable firmware update (protocol not known): 501 Write Commands") })
            // The disconnect is the reboot into the new firmware, at info, with causes to match; nothing above info.
            let dc = try #require(r.of("DC-02").first)
            #expect(dc.severity == .info && dc.message.hasSuffix("probably the device rebooting into the new firmware."))
            #expect(dc.causes.first?.hasPrefix("the device rebooting into the new firmware") == true)
            #expect(r.atLeast(.warning).isEmpty, "\(r.atLeast(.warning).map(\.message))")
        }

        @Test func aDeviceThatComesBackUnderAnotherAddressIsSaidToPerhapsBeTheSameOne() throws {
            let b = Self.update().at(11.3).disconnect(handle: 0x40, reason: .connectionTimeout).at(15).connect(
                handle: 0x41, peer: RuleTest.otherPeer)
            let r = try RuleTest.diagnose(b)
            let sc = try #require(r.of("SC-01").first)
            #expect(sc.message.contains("The link was lost at frame"))
            #expect(sc.message.contains("a device at another address connected at frame"))
            let dc = try #require(r.of("DC-01").first)
            #expect(dc.severity == .info && dc.causes.first?.hasPrefix("the device rebooting") == true)
        }

        /// On air: 420 Write Commands of 20 bytes (8400 bytes) to 0x000E, each acknowledged by an empty PDU, then the
        /// peripheral advertising again 1 ms after its last packet (no LL_TERMINATE_IND: a device rebooting sends none).
        @Test func onAirTheDeviceLeavingWithoutATerminateAfterTheRunIsTheRebootNotACrash() throws {
            var b = NordicBuilder()
            b.connect()
            for i in 0..<420 {
                let att: [UInt8] = [0x52, 0x0E, 0x00] + (0..<20).map { UInt8(truncatingIfNeeded: i &* 3 &+ $0) }
                b.data(.start, [UInt8(att.count), 0, 0x04, 0x00] + att, central: true, sn: i & 1 == 1, event: UInt16(i))
                b.data(.continuation, [], central: false, sn: i & 1 == 1, event: UInt16(i))
            }
            let lastPacket = b.records.count
            LinkSilenceTests.advertise(&b, LinkSilenceTests.peripheral, after: 1_000)
            for _ in 0..<10 { LinkSilenceTests.advertise(&b, LinkSilenceTests.stranger, after: 100_000) }
            let r = try RuleTest.diagnose(air: b)
            let sc = try #require(r.of("SC-01").first)
            #expect(sc.message.contains("420 Write Commands of 20 bytes to handle 0x000e on link #1, 8400 bytes"))
            #expect(sc.message.contains("with no LL_TERMINATE_IND (inferred: the peripheral was advertising again"))
            #expect(sc.message.hasSuffix("the device did not come back in the log."))
            let dc = try #require(r.of("DC-10").first)
            #expect(dc.frame == lastPacket && dc.severity == .info)
            #expect(dc.message.hasSuffix("probably the device rebooting into the new firmware."))
            #expect(dc.causes.first?.hasPrefix("the device rebooting into the new firmware") == true)
        }

        enum NotAnUpdate: String, CaseIterable {
            /// The same run, but the link stays up to the end of the log: a stream, not an update that reboots.
            case linkStaysUp
            /// Writes of changing sizes (commands, not an image in pieces), then the peer leaves and comes back.
            case sizesVary
            /// A bulk write this side closes once done, the device not coming back: a print job, a file sent.
            case thisSideClosesAndTheDeviceStaysAway
            /// Too little for an image (150 writes of 18 bytes, 2.7 KB), then the peer leaves and comes back.
            case tooShort
        }

        @Test(arguments: NotAnUpdate.allCases)
        func nearMissARunThatIsNoUpdateStaysQuietAndTheDisconnectKeepsItsUsualReading(_ kind: NotAnUpdate) throws {
            var b: CaptureBuilder
            switch kind {
            case .linkStaysUp:
                b = Self.update().at(20)
            case .sizesVary:
                b = Self.run(writes: 501) { $0 % 3 == 0 ? 10 : 18 }.at(11.3).disconnect(handle: 0x40).at(13.3)
                    .connect(handle: 0x41, peer: RuleTest.peer)
            case .thisSideClosesAndTheDeviceStaysAway:
                b = Self.update().at(11.3).disconnectCommand(handle: 0x40).disconnect(
                    handle: 0x40, reason: .connectionTerminatedByLocalHost)
            case .tooShort:
                b = Self.run(writes: 150) { _ in 18 }.at(4.3).disconnect(handle: 0x40).at(6.3).connect(handle: 0x41, peer: RuleTest.peer)
            }
            let r = try RuleTest.diagnose(b)
            #expect(r.of("SC-01").isEmpty)
            #expect(!r.story.sentences.contains { $0.text.contains("probable firmware update") })
            if kind == .sizesVary || kind == .tooShort {
                let dc = try #require(r.of("DC-02").first)
                #expect(dc.severity == .warning && !dc.message.contains("firmware"))
            }
        }

        // MARK: SC-02 fuzzing-like run

        /// `attempts` links to the peer, one every 3 s from 0, each up 1 s: a Pairing Request the peer answers with
        /// Pairing Failed (Invalid Parameters) when `failing(i)`, a Read Request answered otherwise, then this side
        /// closes (0x13).
        static func attempts(_ attempts: Int, failing: (Int) -> Bool) -> CaptureBuilder {
            var b = CaptureBuilder()
            for i in 0..<attempts {
                let handle = UInt16(0x40 + i)
                b = b.at(microsecondsFromStart: Int64(i) * 3_000_000).connect(handle: handle, peer: RuleTest.peer)
                if failing(i) {
                    b = b.smp(.pairingRequest(.bonding()), handle: handle, .tx).smp(.pairingFailed(.invalidParameters), handle: handle, .rx)
                } else {
                    b = b.att(.readRequest(handle: 0x2A), handle: handle, .tx).att(.readResponse(value: [1]), handle: handle, .rx)
                }
                b = b.completed(handle: handle).at(microsecondsFromStart: Int64(i) * 3_000_000 + 1_000_000).disconnectCommand(
                    handle: handle
                )
                .disconnect(handle: handle, reason: .connectionTerminatedByLocalHost)
            }
            return b
        }

        @Test func manyShortAttemptsWithPairingsAbortedAreAFuzzingLikeRunAndTheirFailuresAreToldAtInfo() throws {
            let b = Self.attempts(10) { $0 != 4 }
            let r = try RuleTest.diagnose(b)
            let sc = try #require(r.of("SC-02").first)
            #expect(r.of("SC-02").count == 1 && sc.severity == .info && sc.connection == 1)
            // 10 links, 9 of them with a pairing that failed; the first starts at 0 s, the last at 27 s.
            #expect(
                sc.message.hasPrefix(
                    "Fuzzing-like run: 10 attempts in 27.0 s by this side to \(RuleTest.peerText), frames 1–\(b.nextFrame - 1) (links #1–#10): 9 of them malformed or aborted: 9 with a pairing started (9 failed)."
                ), "\(sc.message)")
            #expect(r.story.sentences.contains { $0.text.hasPrefix("Fuzzing-like run: 10 attempts in 27.0 s") })
            // The 9 pairings failed are the fuzzer's: SEC-03 folds them at info, naming the run; nothing above info.
            let sec = try #require(r.of("SEC-03").first)
            #expect(sec.severity == .info && sec.count == 9 && sec.headline.hasPrefix("during the fuzzing-like run: 10 attempts"))
            #expect(r.atLeast(.warning).isEmpty, "\(r.atLeast(.warning).map(\.message))")
        }

        enum NotFuzzing: String, CaseIterable {
            /// Ten short links that each read a value: a device polled, nothing aborted.
            case pollingApp
            /// Five pairings failed: too few attempts for a run.
            case fewAttempts
            /// Ten links, only four of them with a pairing failed: mostly healthy.
            case mostlyHealthy
        }

        @Test(arguments: NotFuzzing.allCases)
        func nearMissShortLinksThatAreNoFuzzingRunStayQuietAndPairingFailuresStayCritical(_ kind: NotFuzzing) throws {
            let b: CaptureBuilder
            switch kind {
            case .pollingApp: b = Self.attempts(10) { _ in false }
            case .fewAttempts: b = Self.attempts(5) { _ in true }
            case .mostlyHealthy: b = Self.attempts(10) { $0 % 3 == 0 }
            }
            let r = try RuleTest.diagnose(b)
            #expect(r.of("SC-02").isEmpty)
            if kind != .pollingApp {
                let sec = try #require(r.of("SEC-03").first)
                #expect(sec.severity == .critical && !sec.headline.contains("fuzzing"))
            }
        }
    }
}

/// SC-01 on the real capture issue 48 names (corpus `android-btsnoop_blefun-18k-att-notify-stream.log`, a Sphero robot's
/// custom update), with figures checked against tshark 4.0.17:
/// `tshark -r F -Y 'btatt.opcode==0x52' -T fields -e frame.number -e btatt.handle -e btatt.value` gives 8189 Write
/// Commands, all to 0x000e, 8186 of 20 bytes (2 of 12, 1 of 14), frames 1613 to 18712 (754.292636 s to 1027.884915 s),
/// 163758 value bytes; `-Y 'btatt.opcode==0x1b && btatt.handle==0x0010 && bthci_acl.chandle==0x0007'` gives 686
/// notifications on that link; `-Y 'bthci_evt.code==0x05'` the link (handle 0x0007) ended by the peer, 0x13, at frame
/// 18722, and LE Connection Complete for the same address at 18743.
@Suite struct ScenarioRealCaptureTests {
    static let name = "android-btsnoop_blefun-18k-att-notify-stream.log"

    static var path: String? {
        TestEnvironment.corpusDirectory.map { $0 + "/" + name }.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
    }

    @Test(.enabled(if: path != nil)) func theSpheroUpdateIsNamedAndItsDisconnectIsTheReboot() throws {
        let r = DiagnosisReport.analyze(try CaptureFile.open(path: try #require(Self.path))).result
        let sc = try #require(r.of("SC-01").first)
        #expect(r.of("SC-01").count == 1 && sc.frame == 18712)
        #expect(
            sc.message.contains(
                "8189 Write Commands, 8186 of them 20 bytes, to handle 0x000e on link #6, 163758 bytes at 0.6 kB/s, frames 1613–18712, the link also carrying 686 notifications on 0x0010"
            ))
        #expect(sc.message.contains("The device ended the link at frame 18722 (0x13 Remote User Terminated Connection)"))
        #expect(sc.message.contains("the device came back at frame 18743"))
        let reboot = try #require(r.findings.first { $0.rule == "DC-02" && $0.frame == 18722 })
        #expect(reboot.severity == .info && reboot.count == 1)
        // The flapping count leaves the reboot out: 3 ends (18994, 19555, 20313), not 4.
        let flap = try #require(r.of("DC-09").first)
        #expect(flap.message.contains("3 connections ended"))
    }
}

/// SC-02 on the two SweynTooth runs of the corpus, checked with tshark 4.0.17:
/// `-Y 'btle.advertising_header.pdu_type==0x05' -T fields -e frame.number -e frame.time_relative -e btle.initiator_address`
/// gives 52 CONNECT_INDs (frames 260 to 9186, 8.346632 s to 195.890302 s: 187.5 s) from 5d:36:ac:90:0b:22 to
/// 00:a0:50:00:00:03 in the Cypress PSoC 6 run, 46 Pairing Requests (`btsmp.opcode==0x01`) and 14 Pairing Failed
/// (`btsmp.opcode==0x05`); 13 CONNECT_INDs (frames 142 to 2403, 3.048125 s to 50.825256 s: 47.8 s) from the same central
/// to a4:c1:38:d8:ad:a9 in the Telink run, 11 Pairing Requests and no Pairing Failed.
@Suite struct FuzzingRealCaptureTests {
    static func diagnose(_ name: String) throws -> DiagnosisResult? {
        guard let dir = TestEnvironment.corpusDirectory, FileManager.default.fileExists(atPath: dir + "/" + name) else { return nil }
        return DiagnosisReport.analyze(try CaptureFile.open(path: dir + "/" + name)).result
    }

    @Test func theCypressRunIsAFuzzingRunAndItsPairingFailuresAreNoUsersCancelling() throws {
        guard let r = try Self.diagnose("nrfsniffer-lt272-pcap-named-pcapng_sweyntooth-cypress-psoc6-llid-crash-pairing-loop.pcapng")
        else { return }
        let sc = try #require(r.of("SC-02").first)
        #expect(
            sc.message.hasPrefix(
                "Fuzzing-like run: 52 attempts in 3 min 8 s by 5D:36:AC:90:0B:22 to Find Me Target (00:A0:50:00:00:03), frames 260–9427 (links #1–#52)"
            ))
        #expect(sc.message.contains("45 with a pairing started (14 failed"))
        // No pairing failure is read as a user's any more: every SEC-03 and SEC-04 is info.
        #expect(r.findings.filter { $0.rule.hasPrefix("SEC-") }.allSatisfy { $0.severity == .info })
        #expect(r.findings.filter { $0.rule == "SEC-03" }.reduce(0) { $0 + $1.count } == 14)
    }

    @Test func theTelinkRunIsAFuzzingRunToo() throws {
        guard let r = try Self.diagnose("nrfsniffer-lt272-pcap-named-pcapng_sweyntooth-telink-invalid-ctrl-pdu-enc-loop.pcapng")
        else { return }
        let sc = try #require(r.of("SC-02").first)
        #expect(
            sc.message.hasPrefix(
                "Fuzzing-like run: 13 attempts in 47.8 s by 5D:36:AC:90:0B:22 to kHID (A4:C1:38:D8:AD:A9), frames 142–2403"))
        #expect(sc.message.contains("11 with a pairing started"))
        #expect(r.of("SEC-01").allSatisfy { $0.severity == .info })
    }
}

/// The scenarios' precision over every real capture the tests find and every Sample (270 files on 2026-11-29): SC-01
/// fires on the Sphero update alone (the known updates of the Samples and `btsnooper-sample-4.7k-att.log` are the OTA
/// tracker's; the LED controllers' writes change size; the printer's run has no end), SC-02 on the two SweynTooth runs
/// alone (Sphero's 12 reconnects and the Pixel's 14 links are no fuzzing). Each firing was read against tshark (above).
@Suite struct ScenarioPrecisionTests {
    @Test(.enabled(if: TestEnvironment.corpusDirectory != nil)) func eachScenarioFiresWhereItIsTheSceneAndNowhereElse() throws {
        let samples = (try? FileManager.default.contentsOfDirectory(atPath: TestEnvironment.samplesDirectory)) ?? []
        let paths =
            TestEnvironment.realCaptures
            + samples.filter { !$0.hasSuffix(".json") && !$0.hasSuffix(".md") }.sorted().map { TestEnvironment.samplesDirectory + "/" + $0 }
        var fired: [String: Set<String>] = [:]
        for path in paths {
            guard let file = try? CaptureFile.open(path: path) else { continue }
            for d in DiagnosisReport.analyze(file).result.findings where d.rule.hasPrefix("SC-") {
                fired[d.rule, default: []].insert((path as NSString).lastPathComponent)
            }
        }
        #expect(fired["SC-01"] == ["android-btsnoop_blefun-18k-att-notify-stream.log"])
        #expect(
            fired["SC-02"] == [
                "nrfsniffer-lt272-pcap-named-pcapng_sweyntooth-cypress-psoc6-llid-crash-pairing-loop.pcapng",
                "nrfsniffer-lt272-pcap-named-pcapng_sweyntooth-telink-invalid-ctrl-pdu-enc-loop.pcapng",
            ])
    }
}
