import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// The BR/EDR profiles decoded and followed: SDP, RFCOMM, hands-free AT, AVDTP with the A2DP codec and media, AVRCP.
/// Decoders round-trip typed PDUs and read bytes written here from the specs; the trackers run on captures built
/// from typed packets, whose expected values are the packets' own.
@Suite struct ClassicProfilesTests {
    // MARK: decoders

    @Test func rfcommFCSMatchesTS0710() throws {
        // TS 07.10's SABM and UA on DLCI 0 (address 0x03, length 0): FCS 0x1C and 0xD7.
        #expect(RFCOMMFrame(dlci: 0, type: .sabm, pollFinal: true).bytes == [0x03, 0x3F, 0x01, 0x1C])
        #expect(RFCOMMFrame(dlci: 0, type: .ua, pollFinal: true).bytes == [0x03, 0x73, 0x01, 0xD7])
        let uih = RFCOMMFrame(dlci: 4, type: .uih, credits: 3, information: Array("AT+BRSF=959\r".utf8))
        let back = try RFCOMMFrame(bytes: uih.bytes)
        #expect(back == uih && back.fcsValid && back.credits == 3 && back.serverChannel == 2)
        var bad = uih.bytes
        bad[bad.count - 1] ^= 0xFF
        #expect(try !RFCOMMFrame(bytes: bad).fcsValid)
        // A 200-byte information field takes a 2-byte length (EA 0).
        let long = RFCOMMFrame(dlci: 6, type: .uih, information: Array(repeating: 0x41, count: 200))
        let decoded = try RFCOMMFrame(bytes: long.bytes)
        #expect(long.bytes[2] & 1 == 0 && decoded == long)
    }

    @Test func rfcommParameterNegotiation() throws {
        let pn = RFCOMMParameterNegotiation(dlci: 4, typeAndLayer: 0xF0, maxFrameSize: 1008, window: 7)
        let m = RFCOMMControlMessage(type: .pn, isCommand: true, values: pn.bytes)
        let f = RFCOMMFrame(dlci: 0, type: .uih, information: m.bytes)
        let back = try #require(try RFCOMMFrame(bytes: f.bytes).controlMessages?.first)
        #expect(back.parameterNegotiation == pn && back.parameterNegotiation?.creditFlow == true)
        #expect(back.summary == "PN command dlci=4 frameSize=1008 credits=7")
    }

    @Test func sdpRecordOfAHandsFreeGateway() throws {
        let record = Self.handsFreeGatewayRecord(channel: 3)
        let pdu = SDPPDU(
            id: .serviceSearchAttributeResponse, transaction: 1,
            parameters: .serviceSearchAttributeResponse(
                attributeBytes: SDPElement.sequence([record]).bytes, continuation: SDPContinuation()))
        #expect(try SDPPDU(bytes: pdu.bytes) == pdu)
        let r = try #require(SDPRecord(record))
        #expect(r.serviceClasses.compactMap(\.uuid16) == [0x111F, 0x1203])
        #expect(r.rfcommChannel == 3 && r.psm == nil && r.profiles.first?.version == 0x0108)
        #expect(SDPProfileVersion(profile: r.profiles[0].profile, version: 0x0108).text == "Handsfree 1.8")
        // Nesting past the bound is refused, not a crash.
        var deep = SDPElement.uint(1, width: 1)
        for _ in 0..<20 { deep = .sequence([deep]) }
        #expect(throws: DecodeError.self) { try SDPElement(bytes: deep.bytes) }
    }

    @Test func a2dpCodecsNamed() throws {
        // SBC 44.1 kHz joint stereo, 16 blocks, 8 subbands, loudness, bitpool 2–53 (A2DP 1.4, 4.3.2).
        let sbc = A2DPCodec(codecType: A2DPCodec.sbc, element: [0x21, 0x15, 2, 53])
        #expect(sbc.description == "SBC 44.1 kHz joint stereo, 16 blocks, 8 subbands, loudness, bitpool 2–53")
        #expect(sbc.sbcBitpool == 2...53 && sbc.frequencies == [44100])
        // AAC MPEG-2 LC, 44.1/48 kHz, 2 channels, VBR, 320 kbps (A2DP 1.4, 4.5.2).
        let aac = A2DPCodec(codecType: A2DPCodec.aac, element: [0x80, 0x01, 0x84, 0x84, 0xE2, 0x00])
        #expect(aac.description == "AAC MPEG-2 LC 48/44.1 kHz 2 ch VBR 320 kbps")
        // LDAC (Sony 0x012D, codec 0x00AA), 96 kHz, stereo; LHDC v3 (Savitech 0x053A, 0x4C33) as the codestudy headset.
        let ldac = A2DPCodec(codecType: 0xFF, element: [0x2D, 0x01, 0, 0, 0xAA, 0x00, 0x04, 0x01])
        #expect(ldac.description == "LDAC 96 kHz stereo")
        #expect(A2DPCodec(codecType: 0xFF, element: [0x3A, 0x05, 0, 0, 0x33, 0x4C, 0x35]).name == "LHDC v3")
        #expect(A2DPCodec(codecType: 0xFF, element: [0xD7, 0, 0, 0, 0x02, 0x00]).name == "vendor 0x000000d7 codec 0x0002")
    }

    @Test func avdtpMessagesRoundTrip() throws {
        let caps = [
            AVDTPCapability(category: AVDTPCapability.mediaTransport, value: []),
            AVDTPCapability(
                category: AVDTPCapability.mediaCodec, value: A2DPCodec(codecType: 0, element: [0x21, 0x15, 2, 53]).capabilityBytes),
        ]
        let messages: [AVDTPMessage] = [
            AVDTPMessage(label: 1, messageType: .command, signal: .discover),
            AVDTPMessage(label: 1, messageType: .accept, signal: .discover, parameters: .endpoints([AVDTPEndpoint(seid: 1, isSink: true)])),
            AVDTPMessage(label: 2, messageType: .command, signal: .setConfiguration, parameters: .setConfiguration(acp: 1, int: 2, caps)),
            AVDTPMessage(
                label: 2, messageType: .reject, signal: .setConfiguration, parameters: .reject(first: 7, error: AVDTPError(rawValue: 0xC2))),
            AVDTPMessage(label: 3, messageType: .command, signal: .start, parameters: .seids([1])),
            AVDTPMessage(
                label: 3, messageType: .reject, signal: .start, parameters: .reject(first: 1 << 2, error: AVDTPError(rawValue: 0x31))),
            AVDTPMessage(
                label: 4, messageType: .command, signal: .delayReport, parameters: .delayReport(seid: 1, tenthsOfMilliseconds: 2000)),
        ]
        for m in messages { #expect(try AVDTPMessage(bytes: m.bytes) == m) }
        #expect(messages[3].summary == "Set Configuration reject NOT_SUPPORTED_CODEC_TYPE (0xc2) (Media Codec)")
        #expect(messages[5].summary == "Start reject BAD_STATE (0x31) (SEID 1)")
        #expect(messages[6].summary == "Delay Report command SEID 1 delay 200.0 ms")
    }

    @Test func hfpATLines() throws {
        let bac = try #require(HFPATLine(line: "AT+BAC=1,2"))
        #expect(bac.kind == .set && bac.name == "+BAC" && bac.numbers == [1, 2] && bac.bytes == Array("AT+BAC=1,2\r".utf8))
        #expect(HFPATLine(line: "AT+CIND=?")?.kind == .test && HFPATLine(line: "AT+CIND?")?.kind == .read)
        let bcs = try #require(HFPATLine(line: "+BCS: 2"))
        #expect(bcs.kind == .result && bcs.numbers == [2] && bcs.bytes == Array("\r\n+BCS: 2\r\n".utf8))
        #expect(HFPATLine(line: "+CME ERROR: 3") == HFPATLine(kind: .final, name: "+CME ERROR", arguments: "3"))
        #expect(HFPATLine(line: "ATD5551234;") == HFPATLine(kind: .action, name: "D", arguments: "5551234;"))
        #expect(HFPATLine(line: "RING")?.kind == .unsolicited)
        #expect(HFPTracker.indicatorNames("(\"service\",(0,1)),(\"call\",(0,1))") == ["service", "call"])
    }

    @Test func avrcpFrames() throws {
        let play = AVCTPMessage(
            label: 1, isResponse: false, frame: AVCFrame(code: .control, opcode: AVCFrame.passThrough, operands: [0x44, 0x00]))
        let back = try AVCTPMessage(bytes: play.bytes)
        #expect(back == play && back.frame?.what == "play pressed")
        // SetAbsoluteVolume 0x40 (AVRCP 1.6, 6.13.2): company 00 19 58, PDU 0x50, packet type 0, length 1.
        let volume = AVCFrame(code: .control, opcode: 0x00, operands: [0x00, 0x19, 0x58, 0x50, 0x00, 0x00, 0x01, 0x40])
        #expect(volume.what == "SetAbsoluteVolume 64 (50 %)" && volume.absoluteVolume == 64)
        let rejected = AVCFrame(code: .rejected, opcode: 0x00, operands: [0x00, 0x19, 0x58, 0x31, 0x00, 0x00, 0x01, 0x01])
        #expect(rejected.what == "RegisterNotification rejected: invalid parameter" && rejected.code.isRefusal)
    }

    // MARK: fixtures

    /// A Handsfree Audio Gateway record (HFP 1.9, 6.4): classes HFP AG + Generic Audio, L2CAP + RFCOMM channel, HFP 1.8.
    static func handsFreeGatewayRecord(channel: UInt8) -> SDPElement {
        func u16(_ v: UInt16) -> SDPElement { .uint(UInt64(v), width: 2) }
        func uuid(_ v: UInt16) -> SDPElement { .uuid(BluetoothUUID(uuid16: v)) }
        return .sequence([
            u16(0x0000), .uint(0x0001_0001, width: 4),
            u16(0x0001), .sequence([uuid(0x111F), uuid(0x1203)]),
            u16(0x0004), .sequence([.sequence([uuid(0x0100)]), .sequence([uuid(0x0003), .uint(UInt64(channel), width: 1)])]),
            u16(0x0009), .sequence([.sequence([uuid(0x111E), u16(0x0108)])]),
        ])
    }
}
