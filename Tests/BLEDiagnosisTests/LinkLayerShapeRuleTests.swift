import BLEAnalysis
import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// The link-layer shape rules (LL-04…LL-06) on nRF Sniffer air captures built from typed PDUs, each with its near misses
/// (the same PDU well formed; the same PDU with a bad CRC, which the sniffer flags and which is no violation): the
/// reserved LLID (Core Spec Vol 6, Part B, 2.4), a Length past the octets carried (2.4), an LL control PDU of the wrong
/// size (2.4.2).
extension DiagnosisRuleTests {
    @Suite struct LinkLayerShapes {
        /// SweynTooth's NXP Length Overflow PDU (frame 19 of its capture): an ATT Exchange MTU Request for 247 in its L2CAP
        /// frame, 7 octets, under a header saying 114.
        static let mtuRequest: [UInt8] = [0x03, 0x00, 0x04, 0x00, 0x02, 0xF7, 0x00]

        /// CONNECT_IND (1), then one data PDU from the central with `header` over `payload` (2), the peripheral's empty
        /// answer (3), and when `terminate`, the peripheral's LL_TERMINATE_IND 50 ms later (4).
        static func link(
            _ header: LLDataHeader, _ payload: [UInt8], crcOK: Bool = true, crcInit: UInt32 = NordicBuilder.crcInit,
            terminate: Bool = false
        ) -> NordicBuilder {
            var b = NordicBuilder()
            b.connect()
            b.add(
                aa: NordicBuilder.aa, pdu: LLDataPDU(header: header, payload: payload).bytes, crcInit: crcInit, data: true, event: 1,
                crcOK: crcOK)
            b.data(.continuation, [], central: false, sn: false, nesn: true, event: 1)
            if terminate {
                b.time += 50_000
                b.data(.control, LLControlPacket(.terminateInd(errorCode: 0x13)).bytes, central: false, sn: true, nesn: true, event: 2)
            }
            return b
        }

        @Test func aDataPDUWithTheReservedLLIDIsNamedAWellFormedOrCorruptOneIsNot() throws {
            let reserved = LLDataHeader(llid: .reserved, nesn: false, sn: false, moreData: false, length: 7)
            let d = try #require(try RuleTest.diagnose(air: Self.link(reserved, Self.mtuRequest)).of("LL-04").first)
            #expect(d.frame == 2 && d.severity == .warning && d.occurrences == [2], "\(d.message)")
            #expect(
                d.message.contains(
                    "The central sent a data PDU with the reserved LLID 0b00 on link #1 (seen, CRC good: frame 2 (7 octets))"))
            #expect(d.message.hasSuffix("the link was still open when the capture ended."), "\(d.message)")
            // The peripheral ending the link 50 ms later: the link lost to it, an error.
            let lost = try #require(try RuleTest.diagnose(air: Self.link(reserved, Self.mtuRequest, terminate: true)).of("LL-04").first)
            #expect(
                lost.severity == .error && lost.message.contains("link #1 ended 50.") && lost.supporting.map(\.frame) == [4],
                "\(lost.severity) \(lost.supporting)")
            // Near misses: the same PDU as an L2CAP start (0b10); the reserved one with a bad CRC.
            let start = LLDataHeader(llid: .start, nesn: false, sn: false, moreData: false, length: 7)
            #expect(try RuleTest.diagnose(air: Self.link(start, Self.mtuRequest)).of("LL-04").isEmpty)
            #expect(try RuleTest.diagnose(air: Self.link(reserved, Self.mtuRequest, crcOK: false)).of("LL-04").isEmpty)
        }

        /// SweynTooth's NXP Length Overflow: a header saying 114 octets on a link that never raised its 27, the sniffer
        /// keeping 10 octets after the header (the 7 of the request and 3 more, as in its frame 19: the record shorter than
        /// its Length, CRC good), the link lost after it.
        @Test func aPDULongerThanTheLinksMaximumIsNamedWithinItIsNot() throws {
            let overlong = LLDataHeader(llid: .start, nesn: false, sn: false, moreData: false, length: 114)
            let r = try RuleTest.diagnose(air: Self.link(overlong, Self.mtuRequest, terminate: true))
            let d = try #require(r.of("LL-05").first)
            #expect(
                d.frame == 2 && d.severity == .error && d.headline == "114-octet PDU over the 27-octet maximum from the central",
                "\(d.headline)")
            #expect(
                d.message.contains(
                    "an L2CAP data PDU of 114 octets where the link allows 27 octets, no Data Length Update since its CONNECT_IND; the sniffer checked its CRC and kept 10 octets of it"
                ),
                "\(d.message)")
            // Near misses: the same PDU with its true Length; with a bad CRC.
            let whole = LLDataHeader(llid: .start, nesn: false, sn: false, moreData: false, length: 7)
            #expect(try RuleTest.diagnose(air: Self.link(whole, Self.mtuRequest)).of("LL-05").isEmpty)
            #expect(try RuleTest.diagnose(air: Self.link(overlong, Self.mtuRequest, crcOK: false)).of("LL-05").isEmpty)
        }

        /// A whole 40-octet L2CAP PDU: over the 27 of a link without a Data Length Update; within the 251 both sides
        /// settled on (LL_LENGTH_REQ from the central, LL_LENGTH_RSP from the peripheral, Vol 6, Part B, 5.1.9).
        @Test func aWholePDUOverTwentySevenOctetsNeedsADataLengthUpdate() throws {
            let pdu = NordicBuilder.attPDU(Array(repeating: 0x5A, count: 33))
            #expect(pdu.count == 40)
            var plain = NordicBuilder()
            plain.connect()
            plain.data(.start, pdu, central: false, sn: false, nesn: true, event: 1)
            let d = try #require(try RuleTest.diagnose(air: plain).of("LL-05").first)
            #expect(
                d.frame == 2 && d.message.contains("The peripheral")
                    && d.message.contains("an L2CAP data PDU of 40 octets where the link allows 27 octets"), "\(d.message)")
            var updated = NordicBuilder()
            updated.connect()
            let most = LLLengthParameters(maxRxOctets: 251, maxRxTime: 2120, maxTxOctets: 251, maxTxTime: 2120)
            updated.data(.control, LLControlPacket(.lengthReq(most)).bytes, sn: false, nesn: false, event: 1)
            updated.data(.control, LLControlPacket(.lengthRsp(most)).bytes, central: false, sn: false, nesn: true, event: 1)
            updated.data(.start, pdu, central: false, sn: true, nesn: true, event: 2)
            #expect(try RuleTest.diagnose(air: updated).of("LL-05").isEmpty)
        }

        @Test func aControlPDULongerThanItsOpcodeIsNamedTheRightSizeIsNot() throws {
            // LL_FEATURE_REQ of 12 octets (the SweynTooth Cypress capture's frame 487), and of its own 9.
            let features = LLControlPacket(.featureReq(features: 0xFF)).bytes
            let long = features + [0xAA, 0xBB, 0xCC]
            let header = { (n: Int) in LLDataHeader(llid: .control, nesn: false, sn: false, moreData: false, length: UInt8(n)) }
            let d = try #require(try RuleTest.diagnose(air: Self.link(header(12), long)).of("LL-06").first)
            #expect(d.frame == 2 && d.severity == .warning, "\(d.message)")
            #expect(d.message.contains("(seen, CRC good: LL_FEATURE_REQ of 12 octets at 2 (9))"), "\(d.message)")
            #expect(try RuleTest.diagnose(air: Self.link(header(9), features)).of("LL-06").isEmpty)
            #expect(try RuleTest.diagnose(air: Self.link(header(12), long, crcOK: false)).of("LL-06").isEmpty)
        }

        /// A record the nRF Sniffer wrote one octet short of its CRC (the Cypress fuzzer's LL_CONNECTION_UPDATE_IND of 23
        /// octets at 410, CRC good): its PDU is whole and read as one; the same cut record of a 9-octet LL_FEATURE_REQ
        /// is quiet.
        @Test func aRecordShortOfItsCRCIsReadForItsShape() throws {
            let features = LLControlPacket(.featureReq(features: 0xFF)).bytes
            func cut(_ payload: [UInt8]) -> NordicBuilder {
                var b = Self.link(LLDataHeader(llid: .control, length: UInt8(payload.count)), payload)
                b.records[1].bytes.removeLast()
                b.records[1].origLen -= 1
                return b
            }
            let d = try #require(try RuleTest.diagnose(air: cut(features + [0xAA, 0xBB, 0xCC])).of("LL-06").first)
            #expect(d.frame == 2 && d.message.contains("LL_FEATURE_REQ of 12 octets at 2 (9)"), "\(d.message)")
            #expect(try RuleTest.diagnose(air: cut(features)).of("LL-06").isEmpty)
        }
    }
}
