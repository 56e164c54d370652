import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// A headset's BR/EDR link from typed packets, as a phone's log shows it: SDP finds the hands-free gateway's RFCOMM
/// channel (answered in two parts), RFCOMM opens it with credit-based flow, the headset brings the service level
/// connection up and the gateway selects mSBC; AVDTP configures SBC, opens a media channel and streams with one RTP
/// sequence gap and one stall, then suspends. Every expected value is the packets' own.
@Suite struct ClassicProfilesFlowTests {
    static let h: UInt16 = 0x000B

    static func at(_ b: CaptureBuilder, _ line: String, rx: Bool, credits: UInt8? = nil) -> CaptureBuilder {
        let f = RFCOMMFrame(dlci: 6, commandResponse: !rx, type: .uih, credits: credits, information: Array(line.utf8))
        return rx ? b.l2cap(cid: 0x0041, payload: f.bytes, handle: h, .rx) : b.l2cap(cid: 0x0051, payload: f.bytes, handle: h, .tx)
    }

    static func avdtp(_ b: CaptureBuilder, _ m: AVDTPMessage, rx: Bool) -> CaptureBuilder {
        rx ? b.l2cap(cid: 0x0042, payload: m.bytes, handle: h, .rx) : b.l2cap(cid: 0x0052, payload: m.bytes, handle: h, .tx)
    }

    static func capture() -> CaptureBuilder {
        var b = CaptureBuilder().connectBREDR(handle: h)  // 1
            .openBREDRChannel(handle: h, psm: 0x0001, localCID: 0x0040, remoteCID: 0x0050, localMTU: 672, remoteMTU: 672)  // 2–7
        let list = SDPElement.sequence([ClassicProfilesTests.handsFreeGatewayRecord(channel: 3)]).bytes
        let pattern = SDPElement.sequence([.uuid(BluetoothUUID(uuid16: 0x111F))])
        let ids = SDPElement.sequence([.uint(0x0000_FFFF, width: 4)])
        let request = SDPParameters.serviceSearchAttributeRequest(pattern: pattern, maxBytes: 64, attributes: ids, continuation: .init())
        // frame 8
        b = b.l2cap(
            cid: 0x0050, payload: SDPPDU(id: .serviceSearchAttributeRequest, transaction: 1, parameters: request).bytes, handle: h, .tx)
        let first = SDPParameters.serviceSearchAttributeResponse(attributeBytes: Array(list.prefix(20)), continuation: .init([0x14]))
        // frame 9
        b = b.l2cap(
            cid: 0x0040, payload: SDPPDU(id: .serviceSearchAttributeResponse, transaction: 1, parameters: first).bytes, handle: h, .rx)
        let again = SDPParameters.serviceSearchAttributeRequest(
            pattern: pattern, maxBytes: 64, attributes: ids, continuation: .init([0x14]))
        // frame 10
        b = b.l2cap(
            cid: 0x0050, payload: SDPPDU(id: .serviceSearchAttributeRequest, transaction: 2, parameters: again).bytes, handle: h, .tx)
        let rest = SDPParameters.serviceSearchAttributeResponse(attributeBytes: Array(list.dropFirst(20)), continuation: .init())
        // frame 11
        b = b.l2cap(
            cid: 0x0040, payload: SDPPDU(id: .serviceSearchAttributeResponse, transaction: 2, parameters: rest).bytes, handle: h, .rx)
        // frames 12–17
        b = b.openBREDRChannel(handle: h, psm: 0x0003, localCID: 0x0041, remoteCID: 0x0051, localMTU: 1013, remoteMTU: 1013, identifier: 3)
        let pn = RFCOMMParameterNegotiation(dlci: 6, typeAndLayer: 0xF0, maxFrameSize: 1008, window: 7)
        var pnAnswer = pn
        pnAnswer.typeAndLayer = 0xE0
        b = b.l2cap(cid: 0x0051, payload: RFCOMMFrame(dlci: 0, type: .sabm, pollFinal: true).bytes, handle: h, .tx)  // 18
            .l2cap(cid: 0x0041, payload: RFCOMMFrame(dlci: 0, type: .ua, pollFinal: true).bytes, handle: h, .rx)  // 19
            .l2cap(
                cid: 0x0051,
                payload: RFCOMMFrame(
                    dlci: 0, type: .uih, information: RFCOMMControlMessage(type: .pn, isCommand: true, values: pn.bytes).bytes
                ).bytes,
                handle: h, .tx
            )  // 20
            .l2cap(
                cid: 0x0041,
                payload: RFCOMMFrame(
                    dlci: 0, commandResponse: false, type: .uih,
                    information: RFCOMMControlMessage(type: .pn, isCommand: false, values: pnAnswer.bytes).bytes
                ).bytes,
                handle: h, .rx
            )  // 21
            .l2cap(cid: 0x0051, payload: RFCOMMFrame(dlci: 6, type: .sabm, pollFinal: true).bytes, handle: h, .tx)  // 22
            .l2cap(cid: 0x0041, payload: RFCOMMFrame(dlci: 6, type: .ua, pollFinal: true).bytes, handle: h, .rx)  // 23
        // The headset (peer) is the hands-free unit: its commands come in, the phone's results go out.
        b = at(b, "AT+BRSF=191\r", rx: true)  // 24
        b = at(b, "\r\n+BRSF: 871\r\n", rx: false)  // 25
        b = at(b, "\r\nOK\r\n", rx: false)  // 26
        b = at(b, "AT+BAC=1,2\r", rx: true)  // 27
        b = at(b, "\r\nOK\r\n", rx: false)  // 28
        b = at(b, "AT+CIND=?\r", rx: true)  // 29
        b = at(b, "\r\n+CIND: (\"service\",(0,1)),(\"call\",(0,1)),(\"callsetup\",(0-3))\r\n\r\nOK\r\n", rx: false)  // 30
        b = at(b, "AT+CIND?\r", rx: true)  // 31
        b = at(b, "\r\n+CIND: 1,0,0\r\n\r\nOK\r\n", rx: false)  // 32
        b = at(b, "AT+CMER=3,0,0,1\r", rx: true)  // 33
        b = at(b, "\r\nOK\r\n", rx: false)  // 34
        b = at(b, "AT+CHLD=?\r", rx: true)  // 35
        b = at(b, "\r\n+CHLD: (0,1,2,3)\r\n", rx: false)  // 36
        b = at(b, "\r\nOK\r\n", rx: false)  // 37: the SLC is up
        b = at(b, "\r\n+CIEV: 2,1\r\n", rx: false)  // 38: call = 1
        b = at(b, "\r\n+BCS: 2\r\n", rx: false, credits: 5)  // 39
        b = at(b, "AT+BCS=2\r", rx: true)  // 40
        b = at(b, "\r\nOK\r\n", rx: false)  // 41
        return b
    }

    /// A Service Search (OBEX Object Push) answered with a handle, then a Service Attribute Request for that handle's
    /// protocol list alone, as the BTVS laptop log asks (549, 552, 553–555): the record is the class it was found by,
    /// and its handle the one asked about. Near miss: a record whose attribute list names its classes keeps them.
    @Test func aRecordAskedForItsProtocolsAloneIsTheClassItWasFoundBy() throws {
        func u16(_ v: UInt16) -> SDPElement { .uint(UInt64(v), width: 2) }
        func uuid(_ v: UInt16) -> SDPElement { .uuid(BluetoothUUID(uuid16: v)) }
        func exchange(
            _ b: CaptureBuilder, _ t: UInt16, _ request: SDPParameters, _ id: SDPPDUID, _ response: SDPParameters, _ rid: SDPPDUID
        )
            -> CaptureBuilder
        {
            b.l2cap(cid: 0x0050, payload: SDPPDU(id: id, transaction: t, parameters: request).bytes, handle: Self.h, .tx)
                .l2cap(cid: 0x0040, payload: SDPPDU(id: rid, transaction: t, parameters: response).bytes, handle: Self.h, .rx)
        }
        let protocols = SDPElement.sequence([
            u16(0x0004),
            .sequence([.sequence([uuid(0x0100)]), .sequence([uuid(0x0003), .uint(12, width: 1)]), .sequence([uuid(0x0008)])]),
        ])
        func capture(_ record: SDPElement) -> CaptureBuilder {
            var b = CaptureBuilder().connectBREDR(handle: Self.h)  // 1
                .openBREDRChannel(handle: Self.h, psm: 0x0001, localCID: 0x0040, remoteCID: 0x0050, localMTU: 672, remoteMTU: 672)  // 2–7
            b = exchange(
                b, 1, .serviceSearchRequest(pattern: .sequence([uuid(0x1105)]), maxRecords: 8, continuation: .init()),
                .serviceSearchRequest,
                .serviceSearchResponse(total: 1, handles: [0x0001_0003], continuation: .init()), .serviceSearchResponse)  // 8–9
            return exchange(
                b, 2,
                .serviceAttributeRequest(
                    handle: 0x0001_0003, maxBytes: 64, attributes: .sequence([u16(0x0004)]), continuation: .init()),
                .serviceAttributeRequest, .serviceAttributeResponse(attributeBytes: record.bytes, continuation: .init()),
                .serviceAttributeResponse)  // 10–11
        }
        let p = try #require(try AnalyzerRun.analyze(capture(protocols)).0.connections.first?.profiles)
        let s = try #require(p.sdp.services.first)
        #expect(s.frame == 11 && s.handle == 0x0001_0003 && s.rfcommChannel == 12 && s.title == "OBEX Object Push")
        let named = SDPElement.sequence([
            u16(0x0001), .sequence([uuid(0x110A)]), u16(0x0009), .sequence([.sequence([uuid(0x110D), u16(0x0103)])]),
        ])
        let source = try #require(try AnalyzerRun.analyze(capture(named)).0.connections.first?.profiles?.sdp.services.first)
        // The role with the profile's version, as tshark names the record ("Audio Source"), not "Advanced Audio Distribution".
        #expect(
            source.title == "Audio Source" && source.roleText == "Audio Source 1.3"
                && source.profiles.map(\.text) == ["Advanced Audio Distribution 1.3"])
    }

    @Test func sdpRFCOMMAndTheHandsFreeConnection() throws {
        let a = try AnalyzerRun.analyze(Self.capture()).0
        let p = try #require(a.connections.first?.profiles)
        #expect(p.sdp.requests == 2 && p.sdp.responses == 2)
        let s = try #require(p.sdp.services.first)
        #expect(p.sdp.services.count == 1 && s.frame == 11 && s.fromPeer && s.rfcommChannel == 3)
        #expect(s.title == "Handsfree Audio Gateway" && s.profiles.map(\.text) == ["Handsfree 1.8"])
        // One search (8, continued at 10), answered in two parts: found one record at 11.
        #expect(
            p.sdp.searches == [SDPSearch(frame: 8, fromPeer: false, uuids: [BluetoothUUID(uuid16: 0x111F)], responseFrame: 11, found: 1)])
        let dlc = try #require(p.rfcomm.first { $0.dlci == 6 })
        #expect(dlc.openRequestFrame == 22 && dlc.openFrame == 23 && dlc.creditFlow && dlc.maxFrameSize == 1008)
        #expect(dlc.service == "Handsfree Audio Gateway")
        #expect(dlc.frames.rx == 7 && dlc.frames.tx == 11 && dlc.creditsGiven.tx == 7 + 5 && dlc.creditsGiven.rx == 7)
        let hfp = try #require(p.hfp)
        #expect(hfp.thisSideIsGateway && hfp.handsFreeFeatures == 191 && hfp.gatewayFeatures == 871)
        #expect(hfp.availableCodecs == [1, 2] && hfp.availableCodecsFrame == 27)
        #expect(hfp.indicators == ["service", "call", "callsetup"])
        #expect(hfp.slcFrame == 37 && hfp.slcFailure == nil)
        #expect(hfp.indicatorChanges == [HFPIndicatorChange(frame: 38, name: "call", value: 1)])
        #expect(hfp.codecSelections == [HFPCodecSelection(frame: 39, codec: 2, confirmedFrame: 40)])
    }

    /// An RFCOMM serial link no SDP names, as the HappyLeaf tablet's OBD dongle log shows it: this side sends ELM327
    /// commands (`ATE1`, 249), the dongle answers, and later sends "NO DATA\r\r>" in five frames, the last `ATA\r\r>`
    /// (66077–66081). Its first whole line was not hands-free traffic, so the fragment is no call answered. The near
    /// miss: a DLC whose first line is `AT+BRSF=191` then `ATA\r` from the peer is HFP, with the call answered.
    @Test(arguments: [false, true]) func aSerialPortsFragmentIsNotACall(_ handsFree: Bool) throws {
        var b = CaptureBuilder().connectBREDR(handle: Self.h)
            .openBREDRChannel(handle: Self.h, psm: 0x0003, localCID: 0x0041, remoteCID: 0x0051, localMTU: 1013, remoteMTU: 1013)
            .l2cap(cid: 0x0051, payload: RFCOMMFrame(dlci: 0, type: .sabm, pollFinal: true).bytes, handle: Self.h, .tx)
            .l2cap(cid: 0x0041, payload: RFCOMMFrame(dlci: 0, type: .ua, pollFinal: true).bytes, handle: Self.h, .rx)
            .l2cap(cid: 0x0051, payload: RFCOMMFrame(dlci: 6, type: .sabm, pollFinal: true).bytes, handle: Self.h, .tx)
            .l2cap(cid: 0x0041, payload: RFCOMMFrame(dlci: 6, type: .ua, pollFinal: true).bytes, handle: Self.h, .rx)
        if handsFree {
            b = Self.at(b, "AT+BRSF=191\r", rx: true)
        } else {
            b = Self.at(b, "ATE1\r", rx: false)
            b = Self.at(b, "ATE1\rOK\r\r>", rx: true)
            for fragment in ["N", "O", " ", "D"] { b = Self.at(b, fragment, rx: true) }
        }
        b = Self.at(b, "ATA\r\r>", rx: true)
        let last = b.records.count
        let p = try #require(try AnalyzerRun.analyze(b).0.connections.first?.profiles)
        if handsFree {
            let hfp = try #require(p.hfp)
            #expect(hfp.callEvents == [HFPCallEvent(frame: last, what: "answered (ATA)")])
        } else {
            #expect(p.hfp == nil)
        }
    }

    @Test func anSLCThatFails() throws {
        var b = Self.capture().records.prefix(29).reduce(CaptureBuilder()) { $0.record($1.kind, $1.direction, $1.bytes) }
        b = Self.at(b, "\r\nERROR\r\n", rx: false)  // 30: AT+CIND=? refused
        let hfp = try #require(try AnalyzerRun.analyze(b).0.connections.first?.profiles?.hfp)
        #expect(hfp.slcFrame == nil && hfp.slcFailure == HFPFailure(frame: 30, command: "AT+CIND=?", why: "ERROR"))
    }
}

extension ClassicProfilesFlowTests {
    static let sbc = A2DPCodec(codecType: A2DPCodec.sbc, element: [0x21, 0x15, 2, 53])

    /// A phone (this side) streams SBC to a headset: signalling on 0x0042/0x0052, media on 0x0043/0x0053. Media packets
    /// every 20 ms with 5 SBC frames of 128 samples (640 RTP ticks at 44.1 kHz); sequence 1, 2, 3, 5 (one missing), then
    /// a 300 ms silence before 6 and 7; then Suspend.
    static func a2dp(gap: Int64 = 300_000) -> CaptureBuilder {
        var b = CaptureBuilder().connectBREDR(handle: h)  // 1
            .openBREDRChannel(handle: h, psm: 0x0019, localCID: 0x0042, remoteCID: 0x0052, localMTU: 672, remoteMTU: 672)  // 2–7
        b = avdtp(b, AVDTPMessage(label: 1, messageType: .command, signal: .discover), rx: false)  // 8
        b = avdtp(
            b,
            AVDTPMessage(label: 1, messageType: .accept, signal: .discover, parameters: .endpoints([AVDTPEndpoint(seid: 1, isSink: true)])),
            rx: true)  // 9
        let caps = [
            AVDTPCapability(category: 1, value: []),
            AVDTPCapability(category: 7, value: A2DPCodec(codecType: 0, element: [0xFF, 0xFF, 2, 53]).capabilityBytes),
        ]
        b = avdtp(b, AVDTPMessage(label: 2, messageType: .command, signal: .getAllCapabilities, parameters: .seid(1)), rx: false)  // 10
        // frame 11
        b = avdtp(b, AVDTPMessage(label: 2, messageType: .accept, signal: .getAllCapabilities, parameters: .capabilities(caps)), rx: true)
        let config = [AVDTPCapability(category: 1, value: []), AVDTPCapability(category: 7, value: sbc.capabilityBytes)]
        b = avdtp(
            b,
            AVDTPMessage(label: 3, messageType: .command, signal: .setConfiguration, parameters: .setConfiguration(acp: 1, int: 2, config)),
            rx: false)  // 12
        b = avdtp(b, AVDTPMessage(label: 3, messageType: .accept, signal: .setConfiguration), rx: true)  // 13
        b = avdtp(b, AVDTPMessage(label: 4, messageType: .command, signal: .open, parameters: .seid(1)), rx: false)  // 14
        b = avdtp(b, AVDTPMessage(label: 4, messageType: .accept, signal: .open), rx: true)  // 15
        // frames 16–21
        b = b.openBREDRChannel(handle: h, psm: 0x0019, localCID: 0x0043, remoteCID: 0x0053, localMTU: 672, remoteMTU: 895, identifier: 7)
        b = avdtp(b, AVDTPMessage(label: 5, messageType: .command, signal: .start, parameters: .seids([1])), rx: false)  // 22
        b = avdtp(b, AVDTPMessage(label: 5, messageType: .accept, signal: .start), rx: true)  // 23
        let start = Int64(100_000)
        for (i, seq) in [UInt16(1), 2, 3, 5, 6, 7].enumerated() {
            // 20 ms apart, 300 ms more before the fifth packet.
            let t = start + Int64(i) * 20_000 + (i >= 4 ? gap : 0)
            let rtp = RTPHeader(sequence: seq, timestamp: UInt32(seq) * 640).bytes
            b = b.at(microsecondsFromStart: t).l2cap(
                cid: 0x0053, payload: rtp + [0x05] + Array(repeating: 0x9C, count: 100), handle: h, .tx)  // 24–29
        }
        b = avdtp(b, AVDTPMessage(label: 6, messageType: .command, signal: .suspend, parameters: .seids([1])), rx: false)  // 30
        b = avdtp(b, AVDTPMessage(label: 6, messageType: .accept, signal: .suspend), rx: true)  // 31
        b = avdtp(b, AVDTPMessage(label: 7, messageType: .command, signal: .start, parameters: .seids([1])), rx: false)  // 32
        b = avdtp(
            b,
            AVDTPMessage(
                label: 7, messageType: .reject, signal: .start, parameters: .reject(first: 1 << 2, error: AVDTPError(rawValue: 0x31))),
            rx: true)  // 33
        return b
    }

    @Test func a2dpStreamWithItsCodecMediaAndSuspend() throws {
        let p = try #require(try AnalyzerRun.analyze(Self.a2dp()).0.connections.first?.profiles)
        #expect(p.a2dp.peerEndpoints == [AVDTPEndpoint(seid: 1, isSink: true)])
        #expect(p.a2dp.peerCodecs[1]?.sbcBitpool == 2...53)
        let s = try #require(p.a2dp.streams.first)
        #expect(p.a2dp.streams.count == 1 && s.acpSEID == 1 && s.intSEID == 2 && s.configuredByThisSide && s.configurationFrame == 12)
        #expect(s.codec == Self.sbc && s.openFrame == 15 && s.starts == [23] && s.suspends == [31])
        let m = s.media
        #expect(m.packets == 6 && m.bytes == 6 * 113 && m.firstFrame == 24 && m.lastFrame == 29 && m.sbcFrames == 30)
        #expect(m.sequenceGaps == 1 && m.packetsMissing == 1)
        #expect(m.stalls == [A2DPStall(fromFrame: 27, toFrame: 28, microseconds: 320_000)])
        // 6 × 113 bytes × 8 over 0.4 s.
        #expect(m.durationMicroseconds == 400_000 && m.streamingMicroseconds == 400_000 && m.bitsPerSecond == 13_560)
        #expect(m.jitterMilliseconds != nil)
        #expect(
            p.a2dp.rejections == [
                AVDTPRejection(frame: 33, signal: .start, error: AVDTPError(rawValue: 0x31), commandFrame: 32, byPeer: true)
            ])
    }

    /// The signalling channel closed and another opened (the blueprobe moto g04s log: 0x0066/0x0041 closed at
    /// 6312, 0x006d/0x0041 opened at 6349, whose Set Configuration 6383 starts the call's AAC stream, 191 media packets
    /// in tshark): the new channel signals, so its stream is followed; near miss: a channel opened while the signalling
    /// one is open, after Open, carries media (the test above, media on 0x0053).
    @Test func aSignallingChannelReopenedAfterItClosedSignalsAgain() throws {
        var b = Self.a2dp()
        b = b.signal(.disconnectionRequest(destinationCID: 0x0052, sourceCID: 0x0042), identifier: 9, handle: Self.h, .tx)  // 34
        b = b.signal(.disconnectionResponse(destinationCID: 0x0052, sourceCID: 0x0042), identifier: 9, handle: Self.h, .rx)  // 35
        // frames 36–41: a new signalling channel, same CIDs as the first (the log reuses the peer's 0x0041).
        b = b.openBREDRChannel(
            handle: Self.h, psm: 0x0019, localCID: 0x0044, remoteCID: 0x0054, localMTU: 672, remoteMTU: 672, identifier: 10)
        let config = [AVDTPCapability(category: 1, value: []), AVDTPCapability(category: 7, value: Self.sbc.capabilityBytes)]
        b = b.l2cap(
            cid: 0x0054,
            payload: AVDTPMessage(
                label: 1, messageType: .command, signal: .setConfiguration, parameters: .setConfiguration(acp: 1, int: 2, config)
            ).bytes,
            handle: Self.h, .tx)  // 42
        b = b.l2cap(
            cid: 0x0044, payload: AVDTPMessage(label: 1, messageType: .accept, signal: .setConfiguration).bytes, handle: Self.h, .rx)  // 43
        let p = try #require(try AnalyzerRun.analyze(b).0.connections.first?.profiles)
        #expect(p.a2dp.streams.map(\.configurationFrame) == [12, 42])
        #expect(p.a2dp.streams.last?.codec == Self.sbc && p.a2dp.streams.first?.media.packets == 6)
    }

    /// A stream suspended and started again runs only while started (AVDTP 1.3, 8.15: a suspended stream sends no
    /// media): after the first run (0.4 s, frames 24–29) and the suspend at 31, a Start accepted at 35 and two packets
    /// 20 ms apart 5 s later. It ran 0.42 s, not the 5.02 s from the first packet to the last, and its rate is over
    /// that (the BlueZ A2DP sink of the corpus: two runs of 3.94 and 5.92 s, 19.5 s suspended, 335 kbps by tshark's
    /// L2CAP lengths). The near miss, one run, is the test above: its running time is its span. The peer offered two
    /// codecs (SBC at SEID 1, AAC at SEID 3): the story says what the chosen one was chosen from.
    @Test func aSuspendedStreamRunsOnlyWhileStartedAndTheOfferIsTold() throws {
        var b = Self.a2dp()
        b = Self.avdtp(b, AVDTPMessage(label: 8, messageType: .command, signal: .start, parameters: .seids([1])), rx: false)  // 34
        b = Self.avdtp(b, AVDTPMessage(label: 8, messageType: .accept, signal: .start), rx: true)  // 35
        for (i, seq) in [UInt16(8), 9].enumerated() {
            let rtp = RTPHeader(sequence: seq, timestamp: UInt32(seq) * 640).bytes
            b = b.at(microsecondsFromStart: 5_100_000 + Int64(i) * 20_000).l2cap(
                cid: 0x0053, payload: rtp + [0x05] + Array(repeating: 0x9C, count: 100), handle: Self.h, .tx)  // 36–37
        }
        let aac = [
            AVDTPCapability(category: 1, value: []),
            AVDTPCapability(
                category: 7, value: A2DPCodec(codecType: A2DPCodec.aac, element: [0x80, 0x01, 0x8C, 0x84, 0xE2, 0x00]).capabilityBytes),
        ]
        // frame 38
        b = Self.avdtp(b, AVDTPMessage(label: 9, messageType: .command, signal: .getAllCapabilities, parameters: .seid(3)), rx: false)
        b = Self.avdtp(
            b, AVDTPMessage(label: 9, messageType: .accept, signal: .getAllCapabilities, parameters: .capabilities(aac)), rx: true)
        let p = try #require(try AnalyzerRun.analyze(b).0.connections.first?.profiles)
        let m = try #require(p.a2dp.streams.first).media
        #expect(m.packets == 8 && m.firstFrame == 24 && m.lastFrame == 37)
        #expect(m.durationMicroseconds == 5_020_000 && m.streamingMicroseconds == 420_000)
        // 8 × 113 bytes × 8 over 0.42 s.
        #expect(m.bitsPerSecond.map { Int($0.rounded()) } == 17_219)
        let line = try #require(Story.a2dpLines(p, who: "the headset").first).text
        #expect(
            line.contains(
                "(set at frame 12; the peer's end points offer SBC, AAC), streamed 0.4 s at 17 kbps (8 media packets, from this side's source; none from the peer)"
            ))
        var one = p
        one.a2dp.peerCodecs = [1: Self.sbc]
        #expect(!(Story.a2dpLines(one, who: "the headset").first?.text.contains("offer") ?? true))
    }

    /// The headset (the peer) discovers this side's end points, asks each one's capabilities (SBC at SEID 1, AAC at
    /// SEID 2, answered at 11 and 13) and configures AAC (14): the story says what this side offered and what the peer
    /// chose (the moto g04s call log: SBC, AAC, aptX, aptX HD, LDAC at 850–886, AAC set by the buds at 918). The near
    /// miss: the peer configures with no capabilities asked, and no offer is told.
    @Test(arguments: [true, false]) func theSourcesOwnOfferIsToldWhenThePeerChoseFromIt(_ asked: Bool) throws {
        var b = CaptureBuilder().connectBREDR(handle: Self.h)  // 1
            .openBREDRChannel(handle: Self.h, psm: 0x0019, localCID: 0x0042, remoteCID: 0x0052, localMTU: 672, remoteMTU: 672)  // 2–7
        let endpoints = [AVDTPEndpoint(seid: 1, isSink: false), AVDTPEndpoint(seid: 2, isSink: false)]
        b = Self.avdtp(b, AVDTPMessage(label: 1, messageType: .command, signal: .discover), rx: true)  // 8
        // frame 9
        b = Self.avdtp(b, AVDTPMessage(label: 1, messageType: .accept, signal: .discover, parameters: .endpoints(endpoints)), rx: false)
        let aac = A2DPCodec(codecType: A2DPCodec.aac, element: [0x80, 0x01, 0x8C, 0x84, 0xE2, 0x00])
        for (seid, codec) in [(UInt8(1), Self.sbc), (2, aac)] where asked {
            let caps = [AVDTPCapability(category: 1, value: []), AVDTPCapability(category: 7, value: codec.capabilityBytes)]
            b = Self.avdtp(
                b, AVDTPMessage(label: 1 + seid, messageType: .command, signal: .getAllCapabilities, parameters: .seid(seid)), rx: true)
            b = Self.avdtp(
                b, AVDTPMessage(label: 1 + seid, messageType: .accept, signal: .getAllCapabilities, parameters: .capabilities(caps)),
                rx: false)  // 11, 13
        }
        let config = [AVDTPCapability(category: 1, value: []), AVDTPCapability(category: 7, value: aac.capabilityBytes)]
        let set = b.nextFrame
        b = Self.avdtp(
            b,
            AVDTPMessage(label: 4, messageType: .command, signal: .setConfiguration, parameters: .setConfiguration(acp: 2, int: 1, config)),
            rx: true)
        b = Self.avdtp(b, AVDTPMessage(label: 4, messageType: .accept, signal: .setConfiguration), rx: false)
        let p = try #require(try AnalyzerRun.analyze(b).0.connections.first?.profiles)
        let line = try #require(Story.a2dpLines(p, who: "the headset").first).text
        if asked {
            #expect(set == 14 && line.contains("(set at frame 14; this side offered SBC, AAC (11–13), the peer chose AAC)"))
        } else {
            #expect(line.contains("(set at frame \(set))") && !line.contains("offered"))
        }
    }

    /// The peer searches this side for Headset (0x1108, frame 8) and the answer is an empty list (9): the story says what
    /// it looked for and that this side has none (the BlueZ 2006 capture: frames 77, 78). The near miss: a search that
    /// finds a record is told as the record, not as a missing one.
    @Test(arguments: [true, false]) func aSearchThatFindsNothingIsTold(_ empty: Bool) throws {
        var b = CaptureBuilder().connectBREDR(handle: Self.h)  // 1
            .openBREDRChannel(handle: Self.h, psm: 0x0001, localCID: 0x0040, remoteCID: 0x0050, localMTU: 672, remoteMTU: 672)  // 2–7
        let pattern = SDPElement.sequence([.uuid(BluetoothUUID(uuid16: 0x1108))])
        let ids = SDPElement.sequence([.uint(0x0000_FFFF, width: 4)])
        let request = SDPParameters.serviceSearchAttributeRequest(pattern: pattern, maxBytes: 64, attributes: ids, continuation: .init())
        b = b.l2cap(
            cid: 0x0040, payload: SDPPDU(id: .serviceSearchAttributeRequest, transaction: 1, parameters: request).bytes, handle: Self.h,
            .rx)  // 8
        let list = SDPElement.sequence(empty ? [] : [ClassicProfilesTests.handsFreeGatewayRecord(channel: 3)]).bytes
        let answer = SDPParameters.serviceSearchAttributeResponse(attributeBytes: list, continuation: .init())
        b = b.l2cap(
            cid: 0x0050, payload: SDPPDU(id: .serviceSearchAttributeResponse, transaction: 1, parameters: answer).bytes, handle: Self.h,
            .tx)  // 9
        let p = try #require(try AnalyzerRun.analyze(b).0.connections.first?.profiles)
        #expect(p.sdp.searches.map(\.found) == [empty ? 0 : 1] && p.sdp.searches.first?.fromPeer == true)
        let story = try RuleTest.diagnose(b).story.sentences.map(\.text).joined(separator: "\n")
        #expect(story.contains("the peer looked for Headset (8): this side has none (9)") == empty)
    }
}
