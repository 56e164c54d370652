import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// LP-05's severity follows what the refusal costs (issue 48): an optional procedure that only tunes what its initiator
/// can do alone (channel classification, Core Spec Vol 6, Part B, 5.1.21, FeatureSet bit 39) refused with
/// LL_UNKNOWN_RSP is info; a refusal that costs the link something (longer PDUs), or of a procedure every link layer
/// must support, stays a warning. The real case: the nRF Sniffer capture of an LED strip, frame 10765
/// (`nrfsniffer-lt272_surplife-led-ll-fragmentation.pcapng`).
extension DiagnosisRuleTests {
    @Suite struct LP05OptionalProcedure {
        /// An air capture: CONNECT_IND, the central's `request`, the peripheral's LL_UNKNOWN_RSP to it (frame 3).
        static func refused(_ request: LLControlPDU, opcode: LLControlOpcode) -> NordicBuilder {
            var b = NordicBuilder()
            b.connect()
            b.data(.control, LLControlPacket(request).bytes, event: 1)
            b.data(.control, LLControlPacket(.unknownRsp(unknownType: opcode)).bytes, central: false, event: 1)
            b.data(.continuation, [], sn: true, event: 2)
            return b
        }

        @Test func channelReportingRefusedAsUnknownIsInfoNothingLost() throws {
            // LL_CHANNEL_REPORTING_IND: Enable 1, Min_Spacing 5, Max_Delay 10 (Vol 6, Part B, 2.4.2.40).
            let r = try RuleTest.diagnose(air: Self.refused(.other(.channelReportingInd, [1, 5, 10]), opcode: .channelReportingInd))
            let d = try #require(r.of("LP-05").first)
            #expect(d.severity == .info && d.frame == 3)
            #expect(d.message.contains("the peripheral does not support LL_CHANNEL_REPORTING_IND (LL_UNKNOWN_RSP) (frame 3)"))
            #expect(
                d.message.contains("Channel Classification Enable is optional (feature bit 39; Core Spec Vol 6, Part B, 4.6 and 5.1.21)"))
            #expect(d.causes == ["a feature the peripheral's link layer does not have (the answer the spec provides)"])
            #expect(d.message.hasSuffix("the central goes on without it: nothing is lost."))
            #expect(!r.findings.contains { $0.severity >= .warning })
        }

        @Test func anOpcodeCoreDoesNotDefineRefusedAsUnknownIsInfo() throws {
            // The crackle captures, frames 22-23: the peripheral sends opcode 0xFF (f0 09 00 00 00), the central answers
            // LL_UNKNOWN_RSP, the pairing goes on.
            var b = NordicBuilder()
            b.connect()
            b.data(
                .control, LLControlPacket(.other(LLControlOpcode(rawValue: 0xFF), [0xF0, 0x09, 0, 0, 0])).bytes, central: false, event: 1)
            b.data(.control, LLControlPacket(.unknownRsp(unknownType: LLControlOpcode(rawValue: 0xFF))).bytes, event: 2)
            b.data(.continuation, [], central: false, sn: true, event: 2)
            let d = try #require(try RuleTest.diagnose(air: b).of("LP-05").first)
            #expect(d.severity == .info && d.frame == 3)
            #expect(
                d.message.contains(
                    "the central does not support LLControlOpcode(0xff) (LL_UNKNOWN_RSP) (frame 3): 0xff is no LL control opcode"))
            #expect(!d.message.contains("fall back"))
        }

        @Test func nearMissALengthRequestRefusedCostsLongerPDUsAndStaysAWarning() throws {
            let length = LLLengthParameters(maxRxOctets: 251, maxRxTime: 2120, maxTxOctets: 251, maxTxTime: 2120)
            let r = try RuleTest.diagnose(air: Self.refused(.lengthReq(length), opcode: .lengthReq))
            let d = try #require(r.of("LP-05").first)
            #expect(d.severity == .warning && d.frame == 3)
            #expect(
                d.message.hasSuffix("the peer does not support it; the link goes without longer PDUs: the link keeps 27-byte payloads."))
        }

        @Test func nearMissAMandatoryProcedureRefusedIsTheWarningThatSaysSo() throws {
            let update = LLConnectionUpdate(windowSize: 1, windowOffset: 0, interval: 24, latency: 0, timeout: 72, instant: 20)
            let r = try RuleTest.diagnose(air: Self.refused(.connectionUpdateInd(update), opcode: .connectionUpdateInd))
            let d = try #require(r.of("LP-05").first)
            #expect(d.severity == .warning)
            #expect(d.message.contains("although every link layer must support Connection Update (Core Spec Vol 6, Part B, 5.1.1)"))
        }

        @Test func theProcedureTableHoldsTheSpecsBitsAndMandatoryProcedures() {
            #expect(LLProcedureTable.procedure(opening: .channelReportingInd)?.featureBit == 39)
            #expect(LLProcedureTable.procedure(opening: .lengthReq)?.featureBit == 5)
            #expect(LLProcedureTable.procedure(opening: .connectionParamReq)?.featureBit == 1)
            #expect(LLProcedureTable.procedure(opening: .unknownRsp) == nil)
            let mandatory = LLProcedureTable.procedures.filter { !$0.isOptional }.map(\.section)
            #expect(mandatory == ["5.1.1", "5.1.2", "5.1.4", "5.1.5", "5.1.6"])
            // One procedure per opening PDU.
            let opens = LLProcedureTable.procedures.flatMap(\.opens)
            #expect(Set(opens).count == opens.count)
        }
    }
}
