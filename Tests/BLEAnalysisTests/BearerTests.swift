import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// ATT on every bearer (LE fixed, BR/EDR PSM 0x001F, EATT PSM 0x0027) and decode health, on captures built from
/// typed packets. Expected values are worked out by hand from the packets each test builds.
@Suite struct BearerTests {
    static let hrService = BluetoothUUID(uuid16: 0x180D)
    static func analyze(_ b: CaptureBuilder, options: AnalyzerOptions = AnalyzerOptions()) throws -> (Analyzer, [TimelineEvent]) {
        try AnalyzerRun.analyze(b, options: options)
    }
    static func codes(_ analyzer: Analyzer) -> [String] { analyzer.findings.map(\.kind.code.id) }

    // MARK: builder round trip

    @Test(arguments: [
        TestBearer.leFixed, .bredr(cid: 0x0041), .eatt(cid: 0x0040, mps: 23), .eatt(cid: 0x0047, mps: 5), .eatt(cid: 0x0050, mps: 600),
    ])
    func bearerFramingRoundTrips(_ bearer: TestBearer) throws {
        let pdus: [ATTPDU] = [
            .readRequest(handle: 0x0003),
            .handleValueNotification(handle: 0x0010, value: (0..<300).map { UInt8(truncatingIfNeeded: $0) }),
            .readByGroupTypeResponse([ATTGroupValue(start: 1, end: 5, value: [0x0D, 0x18])]),
        ]
        for pdu in pdus {
            let frames = bearer.l2capPDUs(pdu)
            #expect(try bearer.decode(frames) == pdu)
            if case .eatt(_, let mps) = bearer {
                // Every K-frame fits the MPS; only the first carries the SDU length: 2 + SDU bytes in all.
                #expect(frames.allSatisfy { $0.count - 4 <= max(3, mps) })
                #expect(frames.reduce(0) { $0 + $1.count - 4 } == pdu.bytes.count + 2)
            }
        }
        // Decoding on the wrong CID fails instead of guessing.
        #expect(throws: DecodeError.self) { try TestBearer.bredr(cid: 0x0099).decode(TestBearer.bredr(cid: 0x0041).l2capPDUs(pdus[0])) }
    }

    @Test func configurationMTUOption() {
        // A flush-timeout option (hint bit set) before the MTU option: MTU 0x029B = 667.
        #expect(L2CAPSignalCommand.mtuOption([0x82, 0x02, 0xFF, 0xFF, 0x01, 0x02, 0x9B, 0x02]) == 667)
        #expect(L2CAPSignalCommand.mtuOption([]) == nil)
        // An option whose length runs past the end: nothing trusted.
        #expect(L2CAPSignalCommand.mtuOption([0x01, 0x04, 0x9B, 0x02]) == nil)
    }

    // MARK: BR/EDR

    /// A BR/EDR link: ATT channel 0x0040 (ours) ↔ 0x0041 (peer's), we receive up to 672, the peer up to 339: ATT_MTU 339.
    static func bredrCapture() -> CaptureBuilder {
        CaptureBuilder()
            .connectBREDR(handle: 0x000B)  // 1
            .openBREDRChannel(handle: 0x000B, localCID: 0x0040, remoteCID: 0x0041, localMTU: 672, remoteMTU: 339)  // 2–7
            .att(
                .readByGroupTypeRequest(ATTTypeRequest(range: .init(start: 1, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))),
                handle: 0x000B, .tx, bearer: .bredr(cid: 0x0041)
            )  // 8
            .att(
                .readByGroupTypeResponse([ATTGroupValue(start: 0x0010, end: 0x0015, value: hrService.littleEndianBytes)]),
                handle: 0x000B, .rx, bearer: .bredr(cid: 0x0040)
            )  // 9
            .att(.writeRequest(handle: 0x0013, value: [0x01, 0x00]), handle: 0x000B, .tx, bearer: .bredr(cid: 0x0041))  // 10
            .att(.writeResponse, handle: 0x000B, .rx, bearer: .bredr(cid: 0x0040))  // 11
            .att(.handleValueNotification(handle: 0x0012, value: [0x00, 72]), handle: 0x000B, .rx, bearer: .bredr(cid: 0x0040))  // 12
            // 337 bytes: fits 339 …
            .att(
                .handleValueNotification(handle: 0x0012, value: Array(repeating: 7, count: 334)), handle: 0x000B, .rx,
                bearer: .bredr(cid: 0x0040), fragmentSize: 100
            )  // 13–16
            // … 343 bytes does not.
            .att(
                .handleValueNotification(handle: 0x0012, value: Array(repeating: 8, count: 340)), handle: 0x000B, .rx,
                bearer: .bredr(cid: 0x0040))  // 17–18
    }

    @Test func attOverBREDR() throws {
        let (analyzer, events) = try Self.analyze(Self.bredrCapture())
        let att = AnalyzerRun.att(events)
        #expect(att.map(\.frame) == [8, 9, 10, 11, 12, 16, 18])
        #expect(att.allSatisfy { $0.bearer == .bredr })
        #expect(att.map(\.cid) == [0x41, 0x40, 0x41, 0x40, 0x40, 0x40, 0x40])
        #expect(att[1].requestFrame == 8 && att[3].requestFrame == 10)
        let c = try #require(analyzer.connections.first)
        #expect(!c.isLE && c.peerAddress == "00:1A:7D:DA:71:13")
        #expect(c.channels.map(\.psm) == [.att])
        #expect(c.channels.first?.commonMTU == 339)
        // The database is the connection's, whatever the bearer: the service discovered on BR/EDR names the CCCD write.
        #expect(c.gatt.services.map(\.uuid) == [Self.hrService])
        // Only the 343-byte notification exceeds ATT_MTU 339.
        let mtu = analyzer.findings.filter { $0.kind.code.id == "att.pdu-exceeds-mtu" }
        #expect(mtu.map(\.frame) == [18])
        #expect(mtu.first?.message.contains("bredr bearer's ATT_MTU 339") == true)
        // Decode health: 6 signalling + 7 ATT PDUs (the 4-fragment one counts once), nothing lost.
        #expect(c.decode.signalling == 6 && c.decode.att == 7 && c.decode.l2capPDUs == 13)
        #expect(analyzer.decodeHealth.warnings.isEmpty)
    }

    @Test func bredrMTUDefaultsTo672WhenAConfigurationNamesNone() throws {
        let b = CaptureBuilder().connectBREDR(handle: 0x000B)
            .openBREDRChannel(handle: 0x000B, localCID: 0x0040, remoteCID: 0x0041, localMTU: nil, remoteMTU: 1000)
            .att(
                .handleValueNotification(handle: 3, value: Array(repeating: 1, count: 669)), handle: 0x000B, .rx,
                bearer: .bredr(cid: 0x0040)
            )
            .att(
                .handleValueNotification(handle: 3, value: Array(repeating: 1, count: 670)), handle: 0x000B, .rx,
                bearer: .bredr(cid: 0x0040))
        let (analyzer, _) = try Self.analyze(b)
        #expect(analyzer.connections[0].channels.first?.commonMTU == 672)
        // 672 fits, 673 does not.
        #expect(analyzer.findings.filter { $0.kind.code.id == "att.pdu-exceeds-mtu" }.map(\.frame) == [13])
    }

    @Test func refusedAndPendingConnectionsOpenNothing() throws {
        let b = CaptureBuilder().connectBREDR(handle: 0x000B)
            .signal(.connectionRequest(psm: 0x001F, sourceCID: 0x0040), identifier: 1, handle: 0x000B, .tx)
            .signal(.connectionResponse(destinationCID: 0, sourceCID: 0x0040, result: 1, status: 2), identifier: 1, handle: 0x000B, .rx)
            .signal(.connectionResponse(destinationCID: 0, sourceCID: 0x0040, result: 3, status: 0), identifier: 1, handle: 0x000B, .rx)
            .att(.readRequest(handle: 3), handle: 0x000B, .tx, bearer: .bredr(cid: 0x0041))
        let (analyzer, events) = try Self.analyze(b)
        #expect(analyzer.connections[0].channels.isEmpty)
        #expect(AnalyzerRun.att(events).isEmpty)
        #expect(analyzer.connections[0].decode.unclaimedByCID[0x0041]?.pdus == 1)
    }

    // MARK: EATT

    /// LE link, fixed bearer MTU 247 by exchange; two EATT bearers (0x0040→0x0060, 0x0041→0x0061), MTUs 512/300 → 300.
    static func eattCapture(mps: UInt16 = 64) -> CaptureBuilder {
        CaptureBuilder()
            .connect(handle: 0x0040)  // 1
            .att(.exchangeMTURequest(clientRxMTU: 247), handle: 0x0040, .tx)  // 2
            .att(.exchangeMTUResponse(serverRxMTU: 247), handle: 0x0040, .rx)  // 3
            .openEATT(handle: 0x0040, cids: [(0x0040, 0x0060), (0x0041, 0x0061)], localMTU: 512, remoteMTU: 300, mps: mps)  // 4–5
    }

    @Test(arguments: [23, 64, 300])
    func interleavedBearersPairOnTheirOwnBearer(_ mps: Int) throws {
        // Three reads outstanding at once, one per bearer; answered in reverse order.
        let b = Self.eattCapture(mps: UInt16(mps))
            .att(.readRequest(handle: 0x0003), handle: 0x0040, .tx, bearer: .eatt(cid: 0x0060, mps: mps))  // 6
            .att(.readRequest(handle: 0x0005), handle: 0x0040, .tx, bearer: .eatt(cid: 0x0061, mps: mps))  // 7
            .att(.readRequest(handle: 0x0007), handle: 0x0040, .tx)  // 8
        var b2 = b.att(.readResponse(value: [7]), handle: 0x0040, .rx)  // 9
        let r5 = b2.nextFrame
        b2 = b2.att(.readResponse(value: Array(repeating: 5, count: 290)), handle: 0x0040, .rx, bearer: .eatt(cid: 0x0041, mps: mps))
        let r3 = b2.nextFrame
        b2 = b2.att(.readResponse(value: [3, 3]), handle: 0x0040, .rx, bearer: .eatt(cid: 0x0040, mps: mps))
        let (analyzer, events) = try Self.analyze(b2)
        let att = AnalyzerRun.att(events)
        let byRequest = Dictionary(uniqueKeysWithValues: att.filter { $0.code == 0x0B }.map { ($0.requestFrame ?? 0, $0) })
        #expect(byRequest[6]?.value == [3, 3] && byRequest[6]?.bearer == .eatt && byRequest[6]?.cid == 0x0040)
        #expect(byRequest[7]?.value == Array(repeating: 5, count: 290) && byRequest[7]?.cid == 0x0041)
        #expect(byRequest[8]?.value == [7] && byRequest[8]?.bearer == .leFixed && byRequest[8]?.cid == 0x0004)
        // The SDU completes at the last ACL packet of its last K-frame, whatever the MPS (ACL packets of 251 bytes at most).
        func records(_ pdu: ATTPDU, _ bearer: TestBearer) -> Int { bearer.l2capPDUs(pdu).reduce(0) { $0 + ($1.count + 250) / 251 } }
        #expect(
            byRequest[7]?.frame == r5 + records(.readResponse(value: Array(repeating: 5, count: 290)), .eatt(cid: 0x0041, mps: mps)) - 1)
        #expect(byRequest[6]?.frame == r3 + records(.readResponse(value: [3, 3]), .eatt(cid: 0x0040, mps: mps)) - 1)
        #expect(!Self.codes(analyzer).contains("att.request-unanswered"))
        #expect(!Self.codes(analyzer).contains("att.response-on-other-bearer"))
        let c = analyzer.connections[0]
        #expect(c.channels.count == 2 && c.channels.allSatisfy { $0.psm == .eatt && $0.mode == .enhancedCredit && $0.commonMTU == 300 })
    }

    @Test func eachBearerHasItsOwnMTU() throws {
        // 283 bytes: over the fixed bearer's 247, within the EATT bearers' 300; 303 bytes exceeds both.
        let b = Self.eattCapture()
            .att(.handleValueNotification(handle: 9, value: Array(repeating: 1, count: 280)), handle: 0x0040, .rx)  // 6
        var b2 = b
        let onEATT = b2.nextFrame
        b2 = b2.att(
            .handleValueNotification(handle: 9, value: Array(repeating: 1, count: 280)), handle: 0x0040, .rx,
            bearer: .eatt(cid: 0x0040, mps: 64))
        let tooBig = b2.nextFrame
        b2 = b2.att(
            .handleValueNotification(handle: 9, value: Array(repeating: 1, count: 300)), handle: 0x0040, .rx,
            bearer: .eatt(cid: 0x0041, mps: 64))
        let end = b2.nextFrame
        let (analyzer, events) = try Self.analyze(b2)
        let over = analyzer.findings.filter { $0.kind.code.id == "att.pdu-exceeds-mtu" }.map(\.frame)
        // The fixed-bearer notification (287 L2CAP bytes) takes two ACL packets, 6 and 7.
        #expect(over == [7, end - 1])
        #expect(AnalyzerRun.att(events).filter { $0.code == 0x1B }.map(\.frame) == [7, tooBig - 1, end - 1])
        #expect(onEATT == 8)
    }

    @Test func responseOnTheWrongBearerIsAFinding() throws {
        let b = Self.eattCapture()
            .att(.readRequest(handle: 0x0003), handle: 0x0040, .tx, bearer: .eatt(cid: 0x0060, mps: 64))  // 6
            .att(.readResponse(value: [1]), handle: 0x0040, .rx)  // 7: on the fixed bearer
        let (analyzer, events) = try Self.analyze(b)
        let f = try #require(analyzer.findings.first { $0.kind.code.id == "att.response-on-other-bearer" })
        #expect(f.frame == 7)
        #expect(f.message.contains("le-fixed bearer (CID 0x0004)") && f.message.contains("frame 6") && f.message.contains("eatt bearer"))
        // Not paired, and the request is still waiting at the end.
        #expect(AnalyzerRun.att(events).first { $0.frame == 7 }?.requestFrame == nil)
        #expect(analyzer.findings.contains { $0.kind.code.id == "att.request-unanswered" && $0.frame == 6 })
    }

    @Test func exchangeMTUOnAnEnhancedBearerIsIgnored() throws {
        let b = Self.eattCapture()
            .att(.exchangeMTURequest(clientRxMTU: 100), handle: 0x0040, .tx, bearer: .eatt(cid: 0x0060, mps: 64))
            .att(.exchangeMTUResponse(serverRxMTU: 100), handle: 0x0040, .rx, bearer: .eatt(cid: 0x0040, mps: 64))
        let (analyzer, _) = try Self.analyze(b)
        #expect(analyzer.connections[0].currentMTU == 247)
        #expect(Self.codes(analyzer).contains("att.mtu-exchange-on-bearer"))
    }

    @Test func refusedEATTChannelOpensOnlyTheOthers() throws {
        let b = CaptureBuilder().connect(handle: 0x0040)
            .openEATT(handle: 0x0040, cids: [(0x0040, 0x0060), (0x0041, 0)], localMTU: 100, remoteMTU: 200)
            .att(.handleValueNotification(handle: 9, value: [1]), handle: 0x0040, .rx, bearer: .eatt(cid: 0x0041, mps: 64))
        let (analyzer, events) = try Self.analyze(b)
        #expect(analyzer.connections[0].channels.map(\.initiatorCID) == [0x0040])
        #expect(AnalyzerRun.att(events).isEmpty)
        #expect(analyzer.connections[0].decode.unclaimedByCID[0x0041]?.pdus == 1)
    }

    // MARK: LE CoC streams

    @Test func leCreditChannelSDUsAreAThroughputStreamByPSM() throws {
        // LE CoC to PSM 0x0080: we receive on 0x0040. Three 100-byte SDUs from the peer, each in K-frames of at
        // most 50 bytes: [len 2 + 48] [50] [2] → 3 K-frames per SDU, 4 + 4 + 4 header bytes + 102 = 114 L2CAP bytes.
        var b = CaptureBuilder().connect(handle: 0x0040)
            .signal(
                .leCreditBasedConnectionRequest(spsm: 0x0080, sourceCID: 0x0040, mtu: 512, mps: 50, initialCredits: 20),
                identifier: 1, handle: 0x0040, .tx, cid: 0x0005
            )
            .signal(
                .leCreditBasedConnectionResponse(destinationCID: 0x0070, mtu: 512, mps: 50, initialCredits: 20, result: 0),
                identifier: 1, handle: 0x0040, .rx, cid: 0x0005)
        var lastFrames: [Int] = []
        for n in 0..<3 {
            let sdu = (0..<100).map { UInt8(truncatingIfNeeded: $0 + n) }
            let stream = [UInt8(100), 0] + sdu
            for start in stride(from: 0, to: stream.count, by: 50) {
                b = b.l2cap(cid: 0x0040, payload: Array(stream[start..<min(stream.count, start + 50)]), handle: 0x0040, .rx)
            }
            lastFrames.append(b.nextFrame - 1)
        }
        let (analyzer, events) = try AnalyzerRun.analyze(b, observers: [ThroughputTracker()])
        let tracker = try #require(analyzer.observers.first as? ThroughputTracker)
        let s = try #require(tracker.streams.first { $0.key.kind == .creditSDU })
        #expect(s.psm == 0x0080 && s.key.handle == 0x0040 && s.key.direction == .rx)
        #expect(s.packets == 3 && s.valueBytes == 300 && s.l2capBytes == 3 * 114)
        #expect(s.firstFrame == lastFrames[0] && s.lastFrame == lastFrames[2])
        #expect(events.filter { $0.name == "LE Credit Based SDU" }.map(\.frame) == lastFrames)
        #expect(analyzer.connections[0].channels.map(\.psm) == [L2CAPPSM(0x0080)])
        #expect(analyzer.connections[0].decode.creditFrames == 9)
        #expect(analyzer.decodeHealth.warnings.isEmpty)
    }

    // MARK: decode health

    @Test func healthyConnectionHasNoWarning() throws {
        let (analyzer, _) = try Self.analyze(
            Self.eattCapture()
                .att(.readRequest(handle: 3), handle: 0x0040, .tx, bearer: .eatt(cid: 0x0060, mps: 64)))
        #expect(analyzer.decodeHealth.warnings.isEmpty)
        #expect(!Self.codes(analyzer).contains("decode.health"))
        let h = analyzer.decodeHealth.totals
        // Exchange MTU ×2 on the fixed bearer, 2 signalling, 1 K-frame.
        #expect(h.att == 2 && h.signalling == 2 && h.creditFrames == 1 && h.l2capPDUs == 5 && h.decoded == 5)
    }

    /// `lost` continuations without a start among complete PDUs: 1 of 21 (4.8 %) is fine, 2 of 21 (9.5 %) is not.
    @Test(arguments: [(1, false), (2, true)])
    func incompleteShareAboveFivePercentWarns(_ lost: Int, _ warns: Bool) throws {
        var b = CaptureBuilder().connect(handle: 0x0040)
        var lostFrames: [Int] = []
        for i in 0..<(20 - lost + 1) {
            if i < lost {
                lostFrames.append(b.nextFrame)
                b = b.record(.acl, .rx, ACLPacket(handle: 0x0040, packetBoundary: .continuation, data: [1, 2, 3]).bytes)
            }
            b = b.notify(handle: 3, [UInt8(i)], connection: 0x0040)
        }
        let (analyzer, _) = try Self.analyze(b)
        let c = analyzer.connections[0]
        #expect(c.decode.reassemblyDropped == lost)
        #expect(c.decode.attempted == 21 && c.decode.l2capPDUs == 21 - lost)
        let health = analyzer.findings.filter { $0.kind.code.id == "decode.health" }
        #expect(health.count == (warns ? 1 : 0))
        if warns {
            #expect(health[0].frame == lostFrames[0])
            #expect(health[0].message.contains("incomplete, frames \(lostFrames.map(String.init).joined(separator: ", "))"))
        }
    }

    @Test(arguments: [(3, false), (4, true)])
    func unclaimedCIDWarnsAboveAFewPDUs(_ n: Int, _ warns: Bool) throws {
        var b = CaptureBuilder().connect(handle: 0x0040)
        let first = b.nextFrame
        for i in 0..<n { b = b.l2cap(cid: 0x0077, payload: [UInt8(i)], handle: 0x0040, .rx) }
        let (analyzer, _) = try Self.analyze(b)
        #expect(
            analyzer.connections[0].decode.unclaimedByCID[0x0077]
                == CIDTally(pdus: n, bytes: 5 * n, firstFrame: first, lastFrame: first + n - 1))
        let health = analyzer.findings.filter { $0.kind.code.id == "decode.health" }
        #expect(health.count == (warns ? 1 : 0))
        if warns { #expect(health[0].message.contains("CID 0x0077 4 PDUs (frames \(first)–\(first + 3))")) }
    }

    /// A fixed channel (below 0x0040) is never opened by signalling: its traffic is no sign of a missed Connection
    /// Request. Apple's IOBluetooth names 0x003A "Magnet" (kBluetoothL2CAPChannelMagnet); a CID the table does not
    /// name is said to be in the range the Core reserves (Vol 3, Part A, 2.1). The dynamic CID beside it still warns.
    @Test(arguments: [
        (UInt16(0x003A), "CID 0x003a (Apple's Magnet channel) 5 PDUs, 25 bytes"), (0x0025, "CID 0x0025 (a fixed channel the Core reserves"),
    ])
    func aFixedChannelNoDecoderReadsIsInfoNotAMissedConnectionRequest(_ cid: UInt16, _ said: String) throws {
        var b = CaptureBuilder().connect(handle: 0x0040)
        let first = b.nextFrame
        for i in 0..<5 { b = b.l2cap(cid: cid, payload: [UInt8(i)], handle: 0x0040, .rx) }
        let (analyzer, _) = try Self.analyze(b)
        #expect(analyzer.findings.filter { $0.kind.code.id == "decode.health" }.isEmpty)
        let notes = analyzer.findings.filter { $0.kind.code.id == "decode.fixed-channel" }
        #expect(notes.count == 1 && notes.first?.severity == .info && notes.first?.frame == first)
        #expect(notes.first?.message.contains(said) == true)
        #expect(notes.first?.message.contains("(frames \(first)–\(first + 4))") == true)
        // Near miss: the same PDUs on a dynamic CID are a channel whose opening the log does not hold.
        var d = CaptureBuilder().connect(handle: 0x0040)
        for i in 0..<5 { d = d.l2cap(cid: 0x0040, payload: [UInt8(i)], handle: 0x0040, .rx) }
        let (dynamic, _) = try Self.analyze(d)
        #expect(dynamic.findings.filter { $0.kind.code.id == "decode.health" }.count == 1)
        #expect(dynamic.findings.filter { $0.kind.code.id == "decode.fixed-channel" }.isEmpty)
    }

    @Test func twoReasonsStillGiveOneWarningPerConnection() throws {
        var b = CaptureBuilder().connect(handle: 0x0040).connect(handle: 0x0041)
        for i in 0..<5 { b = b.l2cap(cid: 0x0070, payload: [UInt8(i)], handle: 0x0040, .rx) }
        for _ in 0..<3 { b = b.record(.acl, .rx, ACLPacket(handle: 0x0040, packetBoundary: .continuation, data: [9]).bytes) }
        b = b.notify(handle: 3, [1], connection: 0x0041)
        let (analyzer, _) = try Self.analyze(b)
        let health = analyzer.findings.filter { $0.kind.code.id == "decode.health" }
        #expect(health.count == 1)
        #expect(health.first?.message.hasPrefix("connection #1 (handle 0x0040, LE)") == true)
        #expect(health.first?.message.contains("3 of 8 L2CAP PDUs (37.5 %) incomplete") == true)
        #expect(health.first?.message.contains("5 of 8 L2CAP PDUs on CIDs no decoder claims") == true)
    }

    @Test func encryptedUndecryptedSlotWarns() {
        var c = Connection(number: 1, handle: 0x40, controller: 0, inferred: false, startFrame: 1, startTime: Timestamp(microseconds: 0))
        c.decode.l2capPDUs = 10
        c.decode.encryptedUndecrypted = 12
        let h = DecodeHealth(connections: [c], vendorTrace: VendorTrace())
        #expect(h.warnings.count == 1)
        #expect(
            h.warnings[0].warning?.hasPrefix("connection #1 (handle 0x0040, LE): 12 link-layer data PDUs encrypted and not decrypted")
                == true)
        // Said once: the link layer's own ll.encrypted-no-key finding carries it; decode health shows it in info only.
        #expect(h.warnings[0].saidByLinkLayer && h.findings.isEmpty)
        c.decode.encryptedUndecrypted = 0
        #expect(DecodeHealth(connections: [c], vendorTrace: VendorTrace()).warnings.isEmpty)
    }

    // MARK: vendor trace

    @Test func qualcommDebugHandleIsVendorTraceUnlessAConnectionNamesIt() throws {
        // Bytes that look like an ATT Read Request on CID 0x0004 (as in the OPPO capture's frame 711).
        let trace = ACLPacket(handle: 0x0EDC, packetBoundary: .firstFlushable, data: [0x03, 0x00, 0x04, 0x00, 0x0A, 0xFF, 0x20]).bytes
        let (a1, e1) = try Self.analyze(CaptureBuilder().record(.acl, .rx, trace).record(.acl, .rx, trace))
        #expect(a1.connections.isEmpty && AnalyzerRun.att(e1).isEmpty)
        #expect(
            a1.decodeHealth.vendorTrace
                == {
                    var v = VendorTrace(); v.packets = 2; v.bytes = 24; v.firstFrame = 1; v.lastFrame = 2; v.handles = [0x0EDC]; return v
                }())
        #expect(a1.findings.map(\.kind.code.id) == ["decode.vendor-trace"])
        // A connection on that handle decodes as any other.
        let (a2, e2) = try Self.analyze(CaptureBuilder().connect(handle: 0x0EDC).record(.acl, .rx, trace))
        #expect(AnalyzerRun.att(e2).map(\.frame) == [2])
        #expect(a2.decodeHealth.vendorTrace.packets == 0)
        // A handle above 0x0EFF is reserved: never a connection (the Broadcom SPP capture's 0x0FF1).
        let reserved = ACLPacket(handle: 0x0FF1, packetBoundary: .firstFlushable, data: [0x03, 0x00, 0x04, 0x00, 0x0A, 0xFF, 0x20]).bytes
        let (a3, e3) = try Self.analyze(CaptureBuilder().record(.acl, .rx, reserved))
        #expect(a3.connections.isEmpty && AnalyzerRun.att(e3).isEmpty)
        #expect(a3.decodeHealth.vendorTrace.handles == [0x0FF1])
        #expect(
            a3.findings.first?.message.hasPrefix(
                "1 ACL packets (12 bytes) on handle 0x0ff1 (reserved, above 0x0eff) outside any connection") == true)
    }

    // MARK: bad input

    @Test func damagedSignallingIsAFindingNotACrash() throws {
        // A Connection Request whose length says 4 but carries 2 bytes; a Configure Request for a CID never opened.
        let b = CaptureBuilder().connectBREDR(handle: 0x000B)
            .l2cap(cid: 0x0001, payload: [0x02, 0x01, 0x04, 0x00, 0x1F, 0x00], handle: 0x000B, .tx)
            .signal(
                .configureRequest(destinationCID: 0x0055, flags: 0, options: [0x01, 0x02, 0x00, 0x01]), identifier: 2, handle: 0x000B, .tx
            )
            .att(.readRequest(handle: 3), handle: 0x000B, .tx, bearer: .bredr(cid: 0x0055))
        let (analyzer, _) = try Self.analyze(b)
        let malformed = try #require(analyzer.findings.first { $0.kind.code.id == "decode.malformed" })
        #expect(malformed.frame == 2)
        #expect(analyzer.connections[0].channels.isEmpty)
        #expect(analyzer.connections[0].decode.unclaimedByCID[0x0055]?.pdus == 1)
    }
}
