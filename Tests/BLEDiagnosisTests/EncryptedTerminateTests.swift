import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// Issue 49, point 1: an air link encrypted without its key ends with an encrypted control PDU of an LL_TERMINATE_IND's
/// size (6 octets on air: opcode, error code, MIC), its acknowledgement and silence: "probably LL_TERMINATE_IND
/// (encrypted)", not "ended with no LL_TERMINATE_IND". The bsniffhub reconnection capture's frames 847–848 have that shape
/// (decrypted with its LTK, 847 is the central's LL_TERMINATE_IND 0x13).
@Suite struct EncryptedTerminateTests {
    /// The link encrypted, a notification, then the central's `last` control PDU (encrypted), the peripheral's empty
    /// acknowledgement, and strangers advertising for 1.5 s (twice the link's 720 ms supervision timeout).
    static func link(last: [UInt8], thenMore: Bool = false) -> EncryptedLinkBuilder {
        var link = EncryptedLinkBuilder()
        link.startEncryption()
        link.notify(Array(0..<10))
        let sn = link.sn.0
        link.encrypted(.control, last, central: true)
        link.b.add(
            aa: NordicBuilder.aa, pdu: LLDataPDU(llid: .continuation, nesn: !sn, sn: link.sn.1, payload: []).bytes,
            crcInit: NordicBuilder.crcInit, data: true, central: false, event: link.event, encrypted: true)
        if thenMore { link.notify(Array(10..<20)) }
        for _ in 0..<15 {
            link.b.add(
                aa: .advertising, pdu: LLAdvertisingPacketPDU(.advInd(advertiser: LLDeviceAddress(0x0A0B_0C0D_0E0F), data: [])).bytes,
                crcInit: 0x55_5555, data: false, dt: 100_000)
        }
        return link
    }

    static func ending(_ link: EncryptedLinkBuilder, keys: LinkKeyMaterial = LinkKeyMaterial()) throws -> ConnectionLifecycle.Ending? {
        LinkEncryptionRun.run(try link.capture(), keys: keys).analyzer.connections.first?.lifecycle.ending
    }

    @Test func anEncryptedTerminateSizedPDUAcknowledgedThenSilenceEndsTheLink() throws {
        let link = Self.link(last: LLControlPacket(.terminateInd(errorCode: 0x13)).bytes)
        // Frames: 1 CONNECT_IND, 2–6 the encryption procedure, 7 the notification, 8 the terminate, 9 its acknowledgement.
        let end = try #require(try Self.ending(link))
        #expect(end.reason == LinkSilence.encryptedTerminateReason && end.endedBy == .local && end.frame == 8 && end.code == nil)
        #expect(
            end.inferredFrom?.hasPrefix(
                "the central's encrypted control PDU at frame 8 has an LL_TERMINATE_IND's size (2 octets and the MIC; no key opened it), acknowledged at frame 9, and the link was silent after it for 1.50 s"
            ) == true)
        let diagnosis = DiagnosisReport.analyze(try link.capture()).result
        let dc10 = diagnosis.of("DC-10")
        #expect(dc10.count == 1 && dc10[0].severity == .info && dc10[0].frame == 8)
        #expect(
            diagnosis.story.sentences.map(\.text).joined().contains("probably closed by the central (LL_TERMINATE_IND encrypted, inferred)")
        )
    }

    /// With the key, the same PDU is the LL_TERMINATE_IND seen: the end the capture shows, not an inference.
    @Test func withTheKeyItIsTheTerminateSeen() throws {
        let link = Self.link(last: LLControlPacket(.terminateInd(errorCode: 0x13)).bytes)
        let end = try #require(try Self.ending(link, keys: try LinkKeyMaterial(ltkOption: EncryptedLinkBuilder.ltkText)))
        #expect(end.inferredFrom == nil && end.frame == 8 && end.endedBy == .local && end.code?.rawValue == 0x13)
    }

    /// Near miss: the same PDU with the link going on after it (more notifications) is no end.
    @Test func aTerminateSizedPDUTheLinkOutlivesIsNoEnd() throws {
        let link = Self.link(last: LLControlPacket(.terminateInd(errorCode: 0x13)).bytes, thenMore: true)
        let end = try Self.ending(link)
        #expect(end?.reason != LinkSilence.encryptedTerminateReason)
    }

    /// Near miss: an encrypted control PDU of another size (LL_PING_REQ: 1 octet and the MIC) as the last exchange is
    /// not named a terminate: the link stays without a seen end.
    @Test func anotherSizeIsNotATerminate() throws {
        let link = Self.link(last: LLControlPacket(.pingReq).bytes)
        let end = try Self.ending(link)
        #expect(end?.reason != LinkSilence.encryptedTerminateReason)
    }
}
