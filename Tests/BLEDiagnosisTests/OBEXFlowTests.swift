import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// A car kit (the peer) pulls a phone's phone book over PBAP on RFCOMM channel 19, as the Honda log shows it: Connect
/// with the PBAP Target, a size query, then the phone book whose answer spans RFCOMM frames and comes in two parts
/// (Continue, then Success); a Get refused Not Found; Disconnect. Every expected value is the packets' own.
@Suite struct OBEXFlowTests {
    static let h: UInt16 = 0x0004
    static let dlci: UInt8 = 0x26
    static let pbap: [UInt8] = [0x79, 0x61, 0x35, 0xF0, 0xF0, 0xC5, 0x11, 0xD8, 0x09, 0x66, 0x08, 0x00, 0x20, 0x0C, 0x9A, 0x66]
    static let connect = OBEXPacket(
        code: 0x80, isResponse: false, version: 0x10, flags: 0, maxPacketLength: 3956, headers: [OBEXHeader(id: .target, bytes: pbap)])
    static let connected = OBEXPacket(
        code: 0xA0, isResponse: true, version: 0x10, flags: 0, maxPacketLength: 3956,
        headers: [OBEXHeader(id: .connectionID, number: 1), OBEXHeader(id: .who, bytes: pbap)])

    /// One OBEX packet sent as RFCOMM UIH frames of at most `size` bytes.
    static func send(_ b: CaptureBuilder, _ p: OBEXPacket, fromPeer: Bool, size: Int) -> CaptureBuilder {
        send(b, p.bytes, fromPeer: fromPeer, size: size)
    }

    static func send(_ b: CaptureBuilder, _ bytes: [UInt8], fromPeer: Bool, size: Int) -> CaptureBuilder {
        var b = b
        for start in stride(from: 0, to: bytes.count, by: size) {
            let f = RFCOMMFrame(
                dlci: dlci, commandResponse: fromPeer, type: .uih, information: Array(bytes[start..<min(start + size, bytes.count)]))
            b = fromPeer ? b.l2cap(cid: 0x0041, payload: f.bytes, handle: h, .rx) : b.l2cap(cid: 0x0041, payload: f.bytes, handle: h, .tx)
        }
        return b
    }

    static func opened() -> CaptureBuilder {
        CaptureBuilder().connectBREDR(handle: h)
            .openBREDRChannel(handle: h, psm: 0x0003, localCID: 0x0041, remoteCID: 0x0041, localMTU: 1013, remoteMTU: 1013)
            .l2cap(cid: 0x0041, payload: RFCOMMFrame(dlci: 0, type: .sabm, pollFinal: true).bytes, handle: h, .rx)
            .l2cap(cid: 0x0041, payload: RFCOMMFrame(dlci: 0, type: .ua, pollFinal: true).bytes, handle: h, .tx)
            .l2cap(cid: 0x0041, payload: RFCOMMFrame(dlci: dlci, type: .sabm, pollFinal: true).bytes, handle: h, .rx)
            .l2cap(cid: 0x0041, payload: RFCOMMFrame(dlci: dlci, type: .ua, pollFinal: true).bytes, handle: h, .tx)
    }

    static func get(_ name: String?) -> OBEXPacket {
        var headers = [OBEXHeader(id: .connectionID, number: 1)]
        if let name { headers += [.text(.name, name), OBEXHeader(id: .type, bytes: Array("x-bt/phonebook".utf8) + [0])] }
        return OBEXPacket(code: 0x83, isResponse: false, headers: headers)
    }

    static func answer(_ code: UInt8, body: Int = 0, end: Bool = false, size: Int? = nil) -> OBEXPacket {
        var headers = [OBEXHeader(id: .connectionID, number: 1)]
        if let size { headers.append(OBEXHeader(id: .applicationParameters, bytes: [0x08, 2, UInt8(size >> 8), UInt8(size & 0xFF)])) }
        if body > 0 { headers.append(OBEXHeader(id: end ? .endOfBody : .body, bytes: Array(repeating: 0x41, count: body))) }
        return OBEXPacket(code: code, isResponse: true, headers: headers)
    }

    /// The session; `size` is the RFCOMM frames' largest information field. Frames: 1 connection, 2–7 the L2CAP
    /// channel, 8–11 the multiplexer and the DLC; then each packet in ceil(length / size) frames.
    static func capture(size: Int) -> CaptureBuilder {
        var b = opened()
        b = send(b, Self.connect, fromPeer: true, size: size)
        b = send(b, Self.connected, fromPeer: false, size: size)
        b = send(b, get("telecom/pb.vcf"), fromPeer: true, size: size)
        b = send(b, answer(0xA0, size: 2), fromPeer: false, size: size)
        b = send(b, get("telecom/pb.vcf"), fromPeer: true, size: size)
        b = send(b, answer(0x90, body: 1500), fromPeer: false, size: size)
        b = send(b, get(nil), fromPeer: true, size: size)
        b = send(b, answer(0xA0, body: 300, end: true), fromPeer: false, size: size)
        b = send(b, get("telecom/spd.vcf"), fromPeer: true, size: size)
        b = send(b, answer(0xC4), fromPeer: false, size: size)
        b = send(
            b, OBEXPacket(code: 0x81, isResponse: false, headers: [OBEXHeader(id: .connectionID, number: 1)]), fromPeer: true, size: size)
        return send(b, answer(0xA0), fromPeer: false, size: size)
    }

    /// Fragment size never changes the result (DESIGN.md §6.8): the same operations, bytes and codes at any size from 4
    /// (with no SDP record naming the channel, the Connect's first 4 bytes must come in one frame to be recognized).
    @Test(arguments: [4, 5, 127, 1000])
    func pbapSessionAtAnyFrameSize(_ size: Int) throws {
        let (a, events) = try AnalyzerRun.analyze(Self.capture(size: size), options: AnalyzerOptions(timeline: true))
        let p = try #require(a.connections.first?.profiles)
        let s = try #require(p.obex.first)
        #expect(p.obex.count == 1 && s.dlci == Self.dlci && s.service == "PBAP" && !s.thisSideIsClient)
        #expect(s.connectionID == 1 && s.connectResult == .success && s.requests == 6 && s.responses == 6 && s.malformed.isEmpty)
        #expect(s.operations.map(\.opcode) == [.connect, .get, .get, .get, .disconnect])
        let gets = s.gets
        #expect(gets.map(\.name) == ["telecom/pb.vcf", "telecom/pb.vcf", "telecom/spd.vcf"])
        #expect(gets.map(\.requestPackets) == [1, 2, 1] && gets.map(\.responsePackets) == [1, 2, 1])
        #expect(gets.map(\.bodyBytes) == [0, 1800, 0] && gets.map(\.phonebookSize) == [2, nil, nil])
        #expect(gets.map(\.response) == [.success, .success, .notFound])
        let obex = events.filter { $0.layer == .obex }
        #expect(obex.count == 12 && obex.allSatisfy { $0.connection == Self.h })
        // Each packet's event is at the frame it completed in, and a response names its request's frame.
        let responses = obex.filter { $0.name == "OBEX response" }
        let requests = obex.filter { $0.name != "OBEX response" }
        #expect(responses.map(\.requestFrame) == requests.map { Optional($0.frame) })
        #expect(responses.last { $0.status != nil }?.status == "Not Found (404)")
        // An operation starts at its first packet's first frame (the one after the previous answer's last, at any size)
        // and its requests end where the last completed.
        #expect(gets[1].responseFrame == responses[3].frame && gets[1].firstFrame == responses[1].frame + 1)
        #expect(gets[1].lastRequestFrame == requests[3].frame && requests[2].frame >= gets[1].firstFrame)
        #expect(a.findings.filter { $0.kind.code == .decodeMalformed }.isEmpty)
    }

    @Test func theStoryTellsWhoPulledWhat() throws {
        let story = try RuleTest.diagnose(Self.capture(size: 1000)).story
        let line = try #require(story.sentences.first { $0.text.hasPrefix("PBAP with ") })
        let (_, events) = try AnalyzerRun.analyze(Self.capture(size: 1000), options: AnalyzerOptions(timeline: true))
        let obex = events.filter { $0.layer == .obex }
        #expect(
            line.text.hasSuffix(
                ": the peer pulled the phone book and speed dials from this side in 3 Gets (\(obex[2].frame)–\(obex[9].frame)): "
                    + "telecom/pb.vcf 1800 bytes (size 2), telecom/spd.vcf 0 bytes; 1 refusal: Get telecom/spd.vcf Not Found (404) at "
                    + "\(obex[9].frame); connected at \(obex[0].frame) on RFCOMM channel 19, disconnected at \(obex[10].frame)."),
            "\(line.text)")
        #expect(line.frames.contains(obex[0].frame) && line.frames.contains(obex[9].frame))
    }

    /// A packet whose length field says 2 (under the 3-byte minimum): a finding with its frame and offset, and the
    /// next packet on the DLC decodes. A near miss: the same session whole gives no finding (above).
    @Test func aMalformedPacketIsAFindingAndTheSessionGoesOn() throws {
        var b = Self.opened()
        b = Self.send(b, Self.connect, fromPeer: true, size: 1000)  // 12
        b = Self.send(b, Self.connected, fromPeer: false, size: 1000)  // 13
        b = Self.send(b, [0x83, 0x00, 0x02, 0xCB], fromPeer: true, size: 1000)  // 14
        b = Self.send(b, Self.get("telecom/pb.vcf"), fromPeer: true, size: 1000)  // 15
        b = Self.send(b, Self.answer(0xA0, body: 10, end: true), fromPeer: false, size: 1000)  // 16
        // A Name header that says 2 bytes: decoded up to there, reported at its offset.
        b = Self.send(b, [0x83, 0x00, 0x0B, 0xCB, 0, 0, 0, 1, 0x01, 0x00, 0x02], fromPeer: true, size: 1000)  // 17
        let a = try AnalyzerRun.analyze(b).0
        let found = a.findings.filter { $0.kind.code == .decodeMalformed }
        #expect(found.map(\.frame) == [14, 17] && found.map(\.offset) == [1, 9], "\(found)")
        #expect(found[0].message.contains("OBEX packet on RFCOMM DLCI 38"))
        let s = try #require(a.connections.first?.profiles?.obex.first)
        #expect(s.malformed == [14, 17] && s.gets.first?.bodyBytes == 10 && s.gets.first?.response == .success)
    }

    /// With no SDP and no Connect first, a DLC's data is not taken for OBEX (a near miss: serial data starting 0x83).
    @Test func dataThatIsNotAConnectIsNotOBEX() throws {
        var b = Self.opened()
        b = Self.send(b, Self.get("telecom/pb.vcf"), fromPeer: true, size: 1000)
        let p = try AnalyzerRun.analyze(b).0.connections.first?.profiles
        #expect(p?.obex.isEmpty == true)
    }
}
