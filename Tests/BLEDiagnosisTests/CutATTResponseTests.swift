import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// An ATT response whose record the capturer cut was still sent whole: it answers its request, and the next request is
/// in turn (Core Spec Vol 3, Part F, 3.3.2). The Mi Watch btsnooz log (ACL payloads cut to 10 bytes): the watch's Find
/// Information Request at 356 is answered at 357 (cut from 19 to 15 bytes, tshark: opcode 0x05), so its next request at
/// 362 overlaps nothing; the phone's Read By Type Request at 385 is answered by a 111-byte Read By Type Response in five
/// cut fragments, 390–394 (the first keeps `6b 00 04 00 09`). Near misses: a request still waiting when the next one
/// comes (its response missing, or cut and later) overlaps as before.
extension DiagnosisRuleTests {
    @Suite struct CutATTResponses {
        typealias GATT = DiagnosisRuleTests.GATT

        /// The peer's Find Information Request for 0x0001–0xFFFF.
        static let peerFindInformation = ATTPDU.findInformationRequest(ATTHandleRange(start: 0x0001, end: 0xFFFF))

        /// This side's Find Information Response on link 0x40 as btsnooz logs it: ACL 14 bytes (L2CAP 10: format 1, two
        /// entries), the record cut after the first entry's handle and UUID (10 of 14 ACL payload bytes kept).
        static func cutFindInformationResponse(_ b: CaptureBuilder) -> CaptureBuilder {
            let kept: [UInt8] = [0x40, 0x20, 14, 0, 10, 0, 0x04, 0x00, 0x05, 0x01, 0x02, 0x00, 0x03, 0x28]
            return b.record(.acl, .tx, kept, originalLength: 4 + 14)
        }

        /// The peer's Read By Type Response on link 0x40 (L2CAP 30, PDU 34 bytes) in two fragments, each record cut to its
        /// first bytes: ACL 27 kept 10, ACL 7 kept 2.
        static func cutTwoFragmentReadByTypeResponse(_ b: CaptureBuilder) -> CaptureBuilder {
            let first: [UInt8] = [0x40, 0x20, 27, 0, 30, 0, 0x04, 0x00, 0x09, 0x07, 0x02, 0x00, 0x0A, 0x03]
            let next: [UInt8] = [0x40, 0x10, 7, 0, 0x00, 0x29]
            return b.record(.acl, .rx, first, originalLength: 4 + 27).record(.acl, .rx, next, originalLength: 4 + 7)
        }

        @Test func aCutResponseAnswersThePeersRequest() throws {
            var b = GATT.connected().att(Self.peerFindInformation, handle: 0x40, .rx)
            b = Self.cutFindInformationResponse(b).att(Self.peerFindInformation, handle: 0x40, .rx)
                .att(GATT.errorResponse(.findInformationRequest, handle: 0x0001, .attributeNotFound), handle: 0x40, .tx)
            #expect(try RuleTest.diagnose(b).of("GATT-02").isEmpty)
            // Its value not captured, nothing is said of it but the cut: no malformed PDU, no response without a request.
            let found = Analyzer.analyze(try b.captureFile(), options: AnalyzerOptions(timeline: false)).findings.map(\.kind.code.id)
            #expect(Set(found) == ["decode.health", "hci.acl-cut-by-capturer"], "\(found)")
        }

        @Test func nearMissTheResponseMissingOverlaps() throws {
            var b = GATT.connected()
            let first = b.nextFrame
            b = b.att(Self.peerFindInformation, handle: 0x40, .rx)
            let second = b.nextFrame
            b = b.att(Self.peerFindInformation, handle: 0x40, .rx)
            let d = try #require(try RuleTest.diagnose(b).of("GATT-02").first)
            #expect(d.severity == .warning && d.frame == second && d.supporting.map(\.frame) == [first])
        }

        @Test func aResponseCutInTwoFragmentsAnswersOurRequest() throws {
            let type = ATTTypeRequest(range: ATTHandleRange(start: 0x0001, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2803))
            var b = GATT.connected().att(.readByTypeRequest(type), handle: 0x40, .tx)
            b = Self.cutTwoFragmentReadByTypeResponse(b).att(.readRequest(handle: 0x0003), handle: 0x40, .tx)
            #expect(try RuleTest.diagnose(b).of("GATT-02").isEmpty)
        }

        /// The cut response comes after our next request: that request did not wait for it.
        @Test func nearMissACutResponseAfterTheNextRequestStillOverlaps() throws {
            let type = ATTTypeRequest(range: ATTHandleRange(start: 0x0001, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2803))
            var b = GATT.connected()
            let first = b.nextFrame
            b = b.att(.readByTypeRequest(type), handle: 0x40, .tx)
            let second = b.nextFrame
            b = Self.cutTwoFragmentReadByTypeResponse(b.att(.readRequest(handle: 0x0003), handle: 0x40, .tx))
            let d = try #require(try RuleTest.diagnose(b).of("GATT-02").first)
            #expect(d.frame == second && d.supporting.map(\.frame) == [first])
        }

        /// A server may answer in turn requests a client sent ahead (the SweynTooth Cypress capture: three Read By Group
        /// Type Requests 9223, 9248, 9274, two responses 9276, 9277): the overlap is told, the second response is no orphan.
        @Test func aReplacedRequestAnsweredInTurnIsNoOrphan() throws {
            let group = ATTTypeRequest(range: ATTHandleRange(start: 0x0001, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))
            let response = ATTPDU.readByGroupTypeResponse([ATTGroupValue(start: 0x0001, end: 0x0005, value: [0x00, 0x18])])
            var b = GATT.connected().att(.readByGroupTypeRequest(group), handle: 0x40, .tx)
            let second = b.nextFrame
            b = b.att(.readByGroupTypeRequest(group), handle: 0x40, .tx).att(response, handle: 0x40, .rx).att(response, handle: 0x40, .rx)
            let r = try RuleTest.diagnose(b)
            #expect(r.of("GATT-02").map(\.frame) == [second])
            #expect(r.of("GATT-02").allSatisfy { $0.severity == .warning })
        }

        /// A third response has no request left to answer: an orphan, told at info.
        @Test func nearMissAThirdResponseIsAnOrphan() throws {
            let group = ATTTypeRequest(range: ATTHandleRange(start: 0x0001, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))
            let response = ATTPDU.readByGroupTypeResponse([ATTGroupValue(start: 0x0001, end: 0x0005, value: [0x00, 0x18])])
            var b = GATT.connected().att(.readByGroupTypeRequest(group), handle: 0x40, .tx)
            b = b.att(.readByGroupTypeRequest(group), handle: 0x40, .tx).att(response, handle: 0x40, .rx).att(response, handle: 0x40, .rx)
            let orphan = b.nextFrame
            b = b.att(response, handle: 0x40, .rx)
            let info = try #require(try RuleTest.diagnose(b).of("GATT-02").first { $0.severity == .info })
            #expect(info.frame == orphan && info.message.hasPrefix("1 ATT response came without a request"))
        }
    }
}
