import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis
@testable import BLEDiagnosis

/// The BR/EDR audio rules (BR-07 to BR-12), each on a capture that triggers it and on a near miss that must stay quiet,
/// built from typed packets (the flows of ``ClassicProfilesFlowTests`` and ``ClassicLinkTests``).
@Suite struct ClassicAudioRuleTests {
    static func evidence(_ b: CaptureBuilder) throws -> Evidence { Evidence(pass: try AnalyzerRun.analyze(b).0) }

    /// The hands-free flow up to the SLC (frame 37), then `lines` from the gateway (tx) or the headset (rx).
    static func call(_ lines: [(String, Bool)], eSCOAfter: Set<Int> = []) -> CaptureBuilder {
        var b = CaptureBuilder()
        for r in ClassicProfilesFlowTests.capture().records.prefix(37) { b = b.record(r.kind, r.direction, r.bytes) }
        for (i, (line, rx)) in lines.enumerated() {
            b = ClassicProfilesFlowTests.at(b, line, rx: rx)
            if eSCOAfter.contains(i) {
                b = b.declaredEvent(
                    SynchronousConnectionComplete {
                        $0.handle = 0x0100 + UInt16(i); $0.address = BDAddress(0x00_1A_7D_DA_71_13); $0.linkType = 2;
                        $0.airMode = .transparent
                    })
            }
        }
        return b
    }

    @Test func br07StallWhilePlaying() throws {
        let d = BR07A2DPStreamStalled.evaluate(try Self.evidence(ClassicProfilesFlowTests.a2dp()))
        #expect(d.map(\.frame) == [28] && d.first?.severity == .warning)
        #expect(d.first?.message.contains("320 ms (frames 27–28)") == true)
        // Near miss: the same stream with packets 20 ms apart throughout (a 180 ms gap is under the threshold) has none.
        #expect(BR07A2DPStreamStalled.evaluate(try Self.evidence(ClassicProfilesFlowTests.a2dp(gap: 160_000))).isEmpty)
    }

    /// The stall of ``br07StallWhilePlaying`` with the link in sniff mode across it (Mode Change to sniff before the
    /// silent stretch, back to active as the media resumes): the sniff is its first cause, cited, as on the UE BOOM log
    /// (sniff 500 ms at 710, 437 ms without media 726–728, active at 729). The near miss: the link active throughout
    /// (Mode Change to active before the stall) keeps the host-side causes alone.
    @Test(arguments: [UInt8(2), 0]) func br07StallInSniffModeSaysSo(_ mode: UInt8) throws {
        let records = ClassicProfilesFlowTests.a2dp().records
        let h = ClassicProfilesFlowTests.h
        var b = CaptureBuilder()
        for (i, r) in records.enumerated() {
            b = b.at(microsecondsFromStart: r.timestamp.microseconds(since: records[0].timestamp))
            if i == 26 {
                b = b.declaredEvent(
                    ModeChange {
                        $0.handle = h; $0.mode = mode; $0.interval = mode == 2 ? 800 : 0
                    })
            }  // 27
            if i == 28, mode == 2 {
                b = b.declaredEvent(
                    ModeChange {
                        $0.handle = h; $0.mode = 0
                    })
            }  // 30
            b = b.record(r.kind, r.direction, r.bytes)
        }
        let d = try #require(BR07A2DPStreamStalled.evaluate(try Self.evidence(b)).first)
        #expect(d.message.hasSuffix(" ms (frames 28–29)."), "\(d.message)")
        if mode == 2 {
            #expect(
                d.causes.first
                    == "the link was in sniff mode (Mode Change at 27, active again at 30): packets wait for the sniff anchor points (seen)"
            )
            #expect(d.supporting.map(\.frame).contains(27))
        } else {
            #expect(d.causes.first?.hasPrefix("the source's audio path underran") == true && !d.supporting.map(\.frame).contains(27))
        }
    }

    @Test func br08RejectionWithAndWithoutAStartAfter() throws {
        // The Start rejected at 33 (BAD_STATE) has no Start after it: an error (no A2DP audio).
        let d = BR08AVDTPRejected.evaluate(try Self.evidence(ClassicProfilesFlowTests.a2dp()))
        #expect(d.map(\.frame) == [33] && d.first?.severity == .error && d.first?.message.contains("BAD_STATE (0x31)") == true)
        // Near miss: a Start accepted after the rejection makes it context (info), not a failure.
        let b = ClassicProfilesFlowTests.avdtp(
            ClassicProfilesFlowTests.avdtp(
                ClassicProfilesFlowTests.a2dp(), AVDTPMessage(label: 8, messageType: .command, signal: .start, parameters: .seids([1])),
                rx: false),
            AVDTPMessage(label: 8, messageType: .accept, signal: .start), rx: true)
        #expect(BR08AVDTPRejected.evaluate(try Self.evidence(b)).map(\.severity) == [.info])
    }

    @Test func br09FailedESCOAndItsRetry() throws {
        let failed = BR09SynchronousSetupFailed.evaluate(try Self.evidence(ClassicLinkTests.call(eSCOStatus: .unsupportedRemoteFeature)))
        #expect(failed.map(\.frame) == [4] && failed.first?.severity == .critical)
        #expect(failed.first?.message.contains("when mSBC was asked") == true)
        // Near miss: the gateway falls back and a CVSD link comes up at 6: info only.
        let retried = ClassicLinkTests.call(eSCOStatus: .unsupportedRemoteFeature)
            .declaredCommand(
                SetupSynchronousConnection {
                    $0.handle = 0x000B; $0.voiceSetting = 0x0060
                }
            )  // 5
            .declaredEvent(
                SynchronousConnectionComplete {
                    $0.handle = 0x000C; $0.address = ClassicLinkTests.peer; $0.linkType = 2; $0.airMode = .cvsd
                })  // 6
        #expect(BR09SynchronousSetupFailed.evaluate(try Self.evidence(retried)).map(\.severity) == [.info])
        #expect(BR09SynchronousSetupFailed.evaluate(try Self.evidence(ClassicLinkTests.call())).isEmpty)
    }

    @Test func br10SLCFailedOrUp() throws {
        var b = CaptureBuilder()
        for r in ClassicProfilesFlowTests.capture().records.prefix(29) { b = b.record(r.kind, r.direction, r.bytes) }
        b = ClassicProfilesFlowTests.at(b, "\r\nERROR\r\n", rx: false)
        let d = BR10HFPConnectionFailed.evaluate(try Self.evidence(b))
        #expect(d.map(\.frame) == [30] && d.first?.severity == .error && d.first?.message.contains("AT+CIND=? got ERROR") == true)
        #expect(BR10HFPConnectionFailed.evaluate(try Self.evidence(ClassicProfilesFlowTests.capture())).isEmpty)
    }

    @Test func br11FallbackToCVSD() throws {
        let fallback = Self.call([("\r\n+BCS: 1\r\n", false), ("AT+BCS=1\r", true)])
        let d = BR11HFPCodecFallback.evaluate(try Self.evidence(fallback))
        #expect(d.map(\.frame) == [38] && d.first?.headline == "mSBC offered, CVSD used with 00:1A:7D:DA:71:13")
        // This side sends +BCS: the gateway; the peer's AT+BAC offered mSBC (the BTstack hands-free log is the other way).
        #expect(
            d.first?.message.hasPrefix("00:1A:7D:DA:71:13 offered mSBC (AT+BAC) but this side (the gateway) selected CVSD at frame 38")
                == true)
        // Near miss: mSBC selected and a transparent eSCO link.
        let wideband = Self.call([("\r\n+BCS: 2\r\n", false), ("AT+BCS=2\r", true)], eSCOAfter: [1])
        #expect(BR11HFPCodecFallback.evaluate(try Self.evidence(wideband)).isEmpty)
    }

    /// The BTstack CVSD log's shape (+BCS: 1 at 454 the only selection, the eSCO link up at 478): CVSD chosen though
    /// mSBC was offered, no wideband attempt in the log: context. After an mSBC selection (+BCS: 2, confirmed), the same
    /// +BCS: 1 is a fallback from it: a warning citing the wideband selection.
    @Test func br11CVSDChosenIsContextAFallbackFromWidebandIsAWarning() throws {
        let chosen = BR11HFPCodecFallback.evaluate(try Self.evidence(Self.call([("\r\n+BCS: 1\r\n", false), ("AT+BCS=1\r", true)])))
        #expect(chosen.map(\.severity) == [.info])
        #expect(
            chosen.first?.message.hasSuffix(
                "Nothing in the log shows a wideband attempt that failed (no earlier wideband selection, no failed voice-link setup): this side chose CVSD though mSBC was offered."
            ) == true)
        let fellBack = BR11HFPCodecFallback.evaluate(
            try Self.evidence(
                Self.call([("\r\n+BCS: 2\r\n", false), ("AT+BCS=2\r", true), ("\r\n+BCS: 1\r\n", false), ("AT+BCS=1\r", true)])))
        let d = try #require(fellBack.first)
        #expect(fellBack.count == 1 && d.severity == .warning && d.frame == 40 && d.supporting.map(\.frame).contains(38))
        #expect(d.message.hasSuffix("It fell back from a wideband attempt: mSBC selected (+BCS: 2) at frame 38."))
    }

    /// The Sony bug report's layout: with two audio devices the profile lines (SDP, A2DP, HFP, AVRCP per device) pushed
    /// the Security line to line 30 of `diagnose`. It now comes right after the links, before any audio line.
    @Test func theSecurityLineComesBeforeTheAudioLines() throws {
        let b = Self.call([("\r\n+BCS: 2\r\n", false), ("AT+BCS=2\r", true)], eSCOAfter: [1])
            .declaredEvent(
                EncryptionChange {
                    $0.handle = ClassicProfilesFlowTests.h; $0.encryptionEnabled = 1
                })
        let story = try RuleTest.diagnose(b).story
        let texts = story.sentences.map(\.text)
        let security = try #require(texts.firstIndex { $0.hasPrefix("Security: ") }, "\(texts)")
        let hfp = try #require(texts.firstIndex { $0.hasPrefix("HFP with ") })
        let calls = try #require(texts.firstIndex { $0.hasPrefix("Audio connection") })
        let links = try #require(texts.firstIndex { $0.contains("BR/EDR link") })
        #expect(links < security && security < calls && calls < hfp, "\(texts)")
    }

    @Test func br12SelectionsInALoop() throws {
        let lines = [
            ("\r\n+BCS: 2\r\n", false), ("AT+BCS=2\r", true), ("\r\n+BCS: 2\r\n", false), ("AT+BCS=2\r", true), ("\r\n+BCS: 2\r\n", false),
        ]
        let d = BR12RenegotiationLoop.evaluate(try Self.evidence(Self.call(lines)))
        #expect(d.map(\.frame) == [42] && d.first?.severity == .warning)
        // Near miss: an eSCO link comes up after each selection's confirmation.
        #expect(BR12RenegotiationLoop.evaluate(try Self.evidence(Self.call(lines, eSCOAfter: [1, 3]))).isEmpty)
    }
}
