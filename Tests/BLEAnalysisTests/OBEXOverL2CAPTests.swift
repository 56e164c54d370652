import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// OBEX over L2CAP (GOEP 2.0), as the Honda log's AVRCP cover art channel carries it: a dynamic PSM (0x1001) in
/// Enhanced Retransmission Mode, each I-frame a 2-byte enhanced control field, the OBEX bytes, a 2-byte FCS; S-frames
/// between them. The values are the packets' own; the Connect is the one tshark shows at the Honda log's 3119 (26 bytes:
/// version 1.0, max packet 1691, Target 7163dd54-…, the BIP cover art UUID).
@Suite struct OBEXOverL2CAPTests {
    static let h: UInt16 = 0x0004
    static let cover: [UInt8] = [0x71, 0x63, 0xDD, 0x54, 0x4A, 0x7E, 0x11, 0xE2, 0xB4, 0x7C, 0x00, 0x50, 0xC2, 0x49, 0x00, 0x48]

    /// An I-frame: control (TxSeq, SAR unsegmented), the data, an FCS (not checked by the reader: any 2 bytes).
    static func iFrame(_ b: CaptureBuilder, _ data: [UInt8], txSeq: UInt8, fromPeer: Bool, fcs: Bool = true) -> CaptureBuilder {
        let payload = [txSeq << 1, 0x00] + data + (fcs ? [0xB2, 0x24] : [])
        return fromPeer ? b.l2cap(cid: 0x0049, payload: payload, handle: h, .rx) : b.l2cap(cid: 0x0045, payload: payload, handle: h, .tx)
    }

    static func opened() -> CaptureBuilder {
        CaptureBuilder().connectBREDR(handle: h)
            .openBREDRChannel(handle: h, psm: 0x1001, localCID: 0x0049, remoteCID: 0x0045, localMTU: 1691, remoteMTU: 1691)  // 1–7
    }

    static func session(fcs: Bool) -> CaptureBuilder {
        var b = opened()
        let connect = OBEXPacket(
            code: 0x80, isResponse: false, version: 0x10, flags: 0, maxPacketLength: 1691, headers: [OBEXHeader(id: .target, bytes: cover)])
        let connected = OBEXPacket(
            code: 0xA0, isResponse: true, version: 0x10, flags: 0, maxPacketLength: 1691,
            headers: [OBEXHeader(id: .connectionID, number: 1), OBEXHeader(id: .who, bytes: cover)])
        let get = OBEXPacket(
            code: 0x83, isResponse: false,
            headers: [OBEXHeader(id: .connectionID, number: 1), OBEXHeader(id: .type, bytes: Array("x-bt/img-thm".utf8) + [0])])
        let image = OBEXPacket(
            code: 0xA0, isResponse: true, headers: [OBEXHeader(id: .endOfBody, bytes: Array(repeating: 0xFF, count: 200))])
        b = iFrame(b, connect.bytes, txSeq: 0, fromPeer: true, fcs: fcs)  // 8
        b = b.l2cap(cid: 0x0045, payload: [0x01, 0x01] + (fcs ? [0, 0] : []), handle: h, .tx)  // 9: S-frame RR
        b = iFrame(b, connected.bytes, txSeq: 0, fromPeer: false, fcs: fcs)  // 10
        b = iFrame(b, get.bytes, txSeq: 1, fromPeer: true, fcs: fcs)  // 11
        b = iFrame(b, get.bytes, txSeq: 1, fromPeer: true, fcs: fcs)  // 12: the same TxSeq again, a retransmission
        return iFrame(b, image.bytes, txSeq: 1, fromPeer: false, fcs: fcs)  // 13
    }

    @Test(arguments: [true, false])
    func coverArtOverERTM(fcs: Bool) throws {
        let (a, events) = try AnalyzerRun.analyze(Self.session(fcs: fcs), options: AnalyzerOptions(timeline: true))
        let s = try #require(a.connections.first?.profiles?.obex.first)
        #expect(s.psm == 0x1001 && s.channelText == "L2CAP PSM 0x1001" && s.service == "cover art (BIP)" && !s.thisSideIsClient)
        #expect(s.connectFrame == 8 && s.connectResponseFrame == 10 && s.connectionID == 1 && s.requests == 2 && s.responses == 2)
        let get = try #require(s.gets.first)
        #expect(get.type == "x-bt/img-thm" && get.bodyBytes == 200 && get.response == .success && get.responseFrame == 13)
        let obex = events.filter { $0.layer == .obex }
        #expect(obex.map(\.frame) == [8, 10, 11, 13])
        #expect(obex.allSatisfy { $0.fields?.first { $0.0 == "psm" }?.1 == 0x1001 })
        #expect(a.findings.filter { $0.kind.code == .decodeMalformed }.isEmpty)
    }

    /// A near miss: a dynamic channel whose first PDU is not an OBEX Connect stays undecoded.
    @Test func otherDataOnADynamicChannelIsNotOBEX() throws {
        var b = Self.opened()
        b = Self.iFrame(b, [0x83, 0x00, 0x05, 0xCB, 0x00], txSeq: 0, fromPeer: true)
        let (a, events) = try AnalyzerRun.analyze(b, options: AnalyzerOptions(timeline: true))
        #expect(a.connections.first?.profiles?.obex.isEmpty != false && !events.contains { $0.layer == .obex })
    }
}
