import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// What a Classic capture's first screen still missed (issues 45 and 46): which end of an A2DP stream this side is and
/// who sent the media, why an HFP command was refused, the peer's Class of Device, and who started the link's
/// authentication. Each from typed packets, with the near miss that stays quiet.
@Suite struct BREDRFirstScreenTests {
    static let h = ClassicProfilesFlowTests.h
    static let peer = BDAddress(0x00_1A_7D_DA_71_13)

    static func story(_ b: CaptureBuilder) throws -> [String] { try RuleTest.diagnose(b).story.sentences.map(\.text) }

    // MARK: A2DP role

    /// A sink's view, as the BlueZ sink of the corpus (ht90152): this side discovers the phone's end points (all
    /// sources, Discover answer 52), configures one, and receives every media packet (679, none sent; tshark
    /// `-Y bta2dp`: all 679 with direction 0x01). `discover: false` leaves the Discover out (the end from the media).
    static func sink(discover: Bool, media: Int) -> CaptureBuilder {
        typealias F = ClassicProfilesFlowTests
        var b = CaptureBuilder().connectBREDR(handle: h)  // 1
            .openBREDRChannel(handle: h, psm: 0x0019, localCID: 0x0042, remoteCID: 0x0052, localMTU: 672, remoteMTU: 672)  // 2–7
        if discover {
            b = F.avdtp(b, AVDTPMessage(label: 1, messageType: .command, signal: .discover), rx: false)  // 8
            let sources = AVDTPParameters.endpoints([AVDTPEndpoint(seid: 1, isSink: false)])
            b = F.avdtp(b, AVDTPMessage(label: 1, messageType: .accept, signal: .discover, parameters: sources), rx: true)  // 9
        }
        let config = [AVDTPCapability(category: 1, value: []), AVDTPCapability(category: 7, value: F.sbc.capabilityBytes)]
        b = F.avdtp(
            b,
            AVDTPMessage(label: 3, messageType: .command, signal: .setConfiguration, parameters: .setConfiguration(acp: 1, int: 2, config)),
            rx: false)
        b = F.avdtp(b, AVDTPMessage(label: 3, messageType: .accept, signal: .setConfiguration), rx: true)
        b = F.avdtp(b, AVDTPMessage(label: 4, messageType: .command, signal: .open, parameters: .seid(1)), rx: false)
        b = F.avdtp(b, AVDTPMessage(label: 4, messageType: .accept, signal: .open), rx: true)
        b = b.openBREDRChannel(handle: h, psm: 0x0019, localCID: 0x0043, remoteCID: 0x0053, localMTU: 895, remoteMTU: 672, identifier: 7)
        b = F.avdtp(b, AVDTPMessage(label: 5, messageType: .command, signal: .start, parameters: .seids([1])), rx: true)
        b = F.avdtp(b, AVDTPMessage(label: 5, messageType: .accept, signal: .start), rx: false)
        for i in 0..<media {
            let rtp = RTPHeader(sequence: UInt16(i + 1), timestamp: UInt32(i) * 640).bytes
            b = b.at(microsecondsFromStart: 100_000 + Int64(i) * 20_000).l2cap(
                cid: 0x0043, payload: rtp + [0x05] + Array(repeating: 0x9C, count: 100), handle: h, .rx)
        }
        return b
    }

    static func a2dpLine(_ b: CaptureBuilder) throws -> String {
        let texts = try story(b)
        return try #require(texts.first { $0.hasPrefix("A2DP with") }, "\(texts)")
    }

    @Test func theSinksEndIsTheDiscoveredSourcesOtherEndAndTheMediaItReceivedIsTold() throws {
        let s = try #require(
            try AnalyzerRun.analyze(Self.sink(discover: true, media: 3)).0.connections.first?.profiles?.a2dp.streams.first)
        #expect(s.thisSideIsSink == true && s.roleFrame == 9 && s.media.packets == 3 && s.media.packetsSent == 0)
        let line = try Self.a2dpLine(Self.sink(discover: true, media: 3))
        #expect(line.hasPrefix("A2DP with 00:1A:7D:DA:71:13, this side the sink (Discover answer, 9): SBC"), "\(line)")
        #expect(line.contains("(3 media packets, from the peer's source; none from this side)"), "\(line)")
    }

    /// The phone's side of the flow's stream: the headset's end point 1 is a sink (Discover answer 9), this side sent the
    /// six media packets.
    @Test func theSourcesEndAndTheMediaItSent() throws {
        let s = try #require(try AnalyzerRun.analyze(ClassicProfilesFlowTests.a2dp()).0.connections.first?.profiles?.a2dp.streams.first)
        #expect(s.thisSideIsSink == false && s.roleFrame == 9 && s.media.packetsSent == 6)
        let line = try Self.a2dpLine(ClassicProfilesFlowTests.a2dp())
        #expect(
            line.contains(", this side the source (Discover answer, 9):")
                && line.contains("(6 media packets, from this side's source; none from the peer)"))
    }

    /// Near misses: with no Discover answer the end comes from who sent the media (the evidence named); with neither, no
    /// end is claimed.
    @Test func withoutADiscoverTheMediaSaysTheEndAndWithoutMediaNothingDoes() throws {
        let fromMedia = try Self.a2dpLine(Self.sink(discover: false, media: 2))
        #expect(fromMedia.contains(", this side the sink (from who sent the media):"), "\(fromMedia)")
        let none = try Self.a2dpLine(Self.sink(discover: false, media: 0))
        #expect(!none.contains("this side the"), "\(none)")
    }

    // MARK: HFP refusal cause

    /// The Realtek headset's log: AT+BIND=2 (225) answered ERROR (230) after the gateway's +BRSF: 871 (184), whose bit 10
    /// (HF indicators, HFP 1.9, 4.34.1) is clear (871 = 0x367). Here the flow's gateway (this side) answers +BRSF: 871
    /// at 25. The near miss, AT+CLCC (enhanced call status, bit 6, set in 871) answered ERROR, is named with no cause.
    @Test(arguments: [("AT+BIND=2", "the AG's +BRSF: 871 (25) has no HF indicators"), ("AT+CLCC", nil)])
    func aCommandForAFeatureTheGatewayLacksSaysWhy(_ command: String, _ cause: String?) throws {
        var b = ClassicProfilesFlowTests.capture()
        b = ClassicProfilesFlowTests.at(b, command + "\r", rx: true)  // 42
        b = ClassicProfilesFlowTests.at(b, "\r\nERROR\r\n", rx: false)  // 43
        let hfp = try #require(try AnalyzerRun.analyze(b).0.connections.first?.profiles?.hfp)
        #expect(hfp.errors == [HFPFailure(frame: 43, command: command, why: "ERROR", cause: cause)])
        let line = try #require(try Self.story(b).first { $0.hasPrefix("HFP with") })
        #expect(line.contains("1 AT command refused (\(command) answered ERROR at 43\(cause.map { ": " + $0 } ?? ""))"), "\(line)")
    }

    // MARK: Class of Device

    /// The Realtek headset's log: the phone pages with Class of Device 0x5a020c (tshark: major Phone 0x02, minor
    /// Smartphone 0x03) at 51. The Cobra detector's 0x240404 (Audio/Video, Wearable Headset 0x01) and the Honda's
    /// 0x340420 (Audio/Video, Car audio 0x08) are named too; Miscellaneous and Uncategorized name nothing.
    @Test func thePagingPeersClassIsToldWithItsPage() throws {
        #expect(ClassOfDevice.name(0x5A_020C) == "a Phone (Smartphone)")
        #expect(ClassOfDevice.name(0x24_0404) == "an Audio/Video device (Wearable Headset Device)")
        #expect(ClassOfDevice.name(0x34_0420) == "an Audio/Video device (Car audio)")
        #expect(ClassOfDevice.name(0x00_0000) == nil && ClassOfDevice.name(0x00_1F00) == nil)
        func paged(_ cod: UInt32) -> CaptureBuilder {
            var r = ConnectionRequest()
            (r.address, r.classOfDevice, r.linkType) = (Self.peer, cod, 1)
            var a = AcceptConnectionRequest()
            a.address = Self.peer
            return CaptureBuilder().declaredEvent(r).declaredCommand(a).connectBREDR(handle: Self.h)
        }
        let c = try #require(try AnalyzerRun.analyze(paged(0x5A_020C)).0.connections.first)
        #expect(c.link.classic?.classOfDevice.value == 0x5A_020C && c.link.classic?.classOfDevice.source == .observed(frame: 1))
        let texts = try Self.story(paged(0x5A_020C))
        #expect(
            texts.contains { $0.contains(", the peer, a Phone (Smartphone), connected to this side (its Connection Request, 1)") },
            "\(texts)")
        let misc = try Self.story(paged(0))
        #expect(misc.contains { $0.contains(", the peer connected to this side (its Connection Request, 1)") }, "\(misc)")
    }

    /// An inquiry answer (Inquiry Result with RSSI, 7.7.33, as the Cobra logs' frame 24 and 158) before this side's
    /// Create Connection: the class is the link's, from the answer's frame.
    @Test func anInquiryAnswersClassIsTheLinksWhenThisSideConnects() throws {
        var w = ByteWriter()
        w.write(UInt8(1))
        Self.peer.encode(into: &w)
        w.write(contentsOf: [0x01, 0x00, 0x04, 0x04, 0x24, 0x34, 0x12, 0xC8])  // PSRM, reserved, CoD 0x240404, clock, RSSI
        var create = CreateConnection()
        create.address = Self.peer
        let b = CaptureBuilder().event(HCIBuild.event(HCIEventCode(0x22), parameters: w.bytes)).declaredCommand(create)
            .connectBREDR(handle: Self.h)
        let c = try #require(try AnalyzerRun.analyze(b).0.connections.first)
        #expect(c.link.classic?.classOfDevice.value == 0x24_0404 && c.link.classic?.classOfDevice.source == .observed(frame: 1))
        let texts = try Self.story(b)
        #expect(
            texts.contains {
                $0.contains(
                    "×1, an Audio/Video device (Wearable Headset Device; Class of Device at 1), this side connected (Create Connection 2)")
            }, "\(texts)")
    }

    // MARK: who authenticated

    /// The Cobra detector's mid-session log: it pages the phone (Connection Request 30), and the phone's controller asks
    /// for the link key (Link Key Request 50) with no Authentication Requested or Set Connection Encryption from the
    /// phone's host; encryption comes on at 55 (tshark: no HCI command 0x0411 or 0x0413 in the log). The near miss:
    /// this host's Authentication Requested before the Link Key Request is this side's authentication.
    @Test(arguments: [false, true]) func whoStartedTheAuthentication(_ asked: Bool) throws {
        var b = CaptureBuilder().connectBREDR(handle: Self.h)  // 1
        if asked {
            var a = AuthenticationRequested()
            a.handle = Self.h
            b = b.declaredCommand(a)  // 2
        }
        var request = LinkKeyRequest()
        request.address = Self.peer
        var reply = LinkKeyRequestReply()
        (reply.address, reply.key) = (Self.peer, Array(repeating: 0x11, count: 16))
        var on = EncryptionChange()
        (on.handle, on.encryptionEnabled) = (Self.h, 1)
        b = b.declaredEvent(request).declaredCommand(reply).declaredEvent(on)
        let start = try #require(try AnalyzerRun.analyze(b).0.connections.first?.machine.securityRecord.authenticationStart)
        #expect(start.byThisSide == asked && start.frame == 2 && start.shownBy == (asked ? "Authentication Requested" : "Link Key Request"))
        let texts = try Self.story(b)
        let told =
            asked
            ? "this side authenticated (Authentication Requested at 2)"
            : "the peer authenticated and encrypted (Link Key Request at 2, not asked by this host)"
        #expect(texts.contains { $0.contains(told) }, "\(texts)")
    }

    // MARK: presence probes

    /// The Nespresso log's 20 BR/EDR links (two BlueZ hosts, each link three L2CAP Echo Requests answered and a 0x15,
    /// no Connection Request: tshark `btl2cap.cmd_code == 0x08`, 60 in all): the Data line says what they carried.
    /// Near miss: a link that also opens SDP (PSM 0x0001) carried a profile, and is no probe.
    @Test(arguments: [false, true]) func linksThatCarriedOnlyEchoRequestsAreProbes(_ sdp: Bool) throws {
        var b = CaptureBuilder().connectBREDR(handle: Self.h, peer: Self.peer)
        for i in 1...3 {
            let id = UInt8(i)
            b = b.signal(.other(.echoRequest, [0x41, 0x42]), identifier: id, handle: Self.h, .rx)
                .signal(.other(.echoResponse, [0x41, 0x42]), identifier: id, handle: Self.h, .tx)
        }
        if sdp { b = b.openBREDRChannel(handle: Self.h, psm: 0x0001, localCID: 0x0040, remoteCID: 0x0050, localMTU: 672, remoteMTU: 672) }
        let data = try #require(try Self.story(b).first { $0.hasPrefix("Data:") })
        #expect(
            data.contains("on 1 BR/EDR link, each: 3 L2CAP echo requests, no profile (a presence probe such as l2ping)") == !sdp, "\(data)")
        #expect(!data.contains("echo request") || !sdp)
    }
}
