import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// One machine per link: an air capture's LL procedures become the same link inputs as the HCI events (data length,
/// encryption), and only a connection event, a CONNECT_IND or traffic acknowledged both ways opens a link.
@Suite struct LinkMachineTests {
    /// The analyzer over built nRF Sniffer records.
    static func analyze(_ recs: [TinyPcap.Rec]) -> Analyzer {
        let analyzer = Analyzer(options: AnalyzerOptions(timeline: false))
        for r in recs {
            r.bytes.withUnsafeBytes { raw in
                analyzer.process(
                    CaptureRecord(
                        frame: r.frame, timestamp: Timestamp(microseconds: r.micros), direction: .unknown, kind: .linkLayer,
                        originalLength: r.origLen, includedLength: r.bytes.count, fileOffset: 0, linkType: r.linkType, bytes: raw))
            }
        }
        analyzer.finish()
        return analyzer
    }

    static func control(_ b: inout NordicBuilder, _ pdu: LLControlPDU, central: Bool, event: UInt16, encrypted: Bool = false) {
        b.data(.control, LLControlPacket(pdu).bytes, central: central, event: event, encrypted: encrypted, micOK: encrypted)
    }

    /// The peripheral's LL_LENGTH_REQ collides with the central's procedure and is rejected (LL_REJECT_EXT_IND 0x2A,
    /// Core Spec Vol 6, Part B, 5.3); the central's redone LL_LENGTH_REQ and its LL_LENGTH_RSP set the data length, each
    /// direction the smaller of what its sender can send and its receiver take (4.5.10): central → peripheral
    /// min(200, 120) octets, min(1712, 1064) µs; back min(251, 251), min(2120, 2120).
    @Test func dataLengthIsTheLengthProcedureRedoneAfterACollision() {
        var b = NordicBuilder()
        b.connect()
        let big = LLLengthParameters(maxRxOctets: 251, maxRxTime: 17040, maxTxOctets: 251, maxTxTime: 17040)
        Self.control(&b, .lengthReq(big), central: false, event: 1)  // frame 2
        Self.control(&b, .rejectExtInd(rejectOpcode: .lengthReq, errorCode: 0x2A), central: true, event: 2)  // frame 3
        let central = LLLengthParameters(maxRxOctets: 251, maxRxTime: 2120, maxTxOctets: 200, maxTxTime: 1712)
        let peripheral = LLLengthParameters(maxRxOctets: 120, maxRxTime: 1064, maxTxOctets: 251, maxTxTime: 2120)
        Self.control(&b, .lengthReq(central), central: true, event: 3)  // frame 4
        Self.control(&b, .lengthRsp(peripheral), central: false, event: 3)  // frame 5
        let analyzer = Self.analyze(b.records)
        #expect(analyzer.connections.count == 1)
        let fact = analyzer.connections[0].link.dataLength
        #expect(fact.value == DataLength(maxTxOctets: 120, maxTxTime: 1064, maxRxOctets: 251, maxRxTime: 2120))
        #expect(fact.source == .observed(frame: 5) && fact.changes.count == 1)
    }

    /// LL_LENGTH_RSP with no LL_LENGTH_REQ before it (the capture missed it) settles nothing.
    @Test func aLengthResponseWithoutItsRequestChangesNothing() {
        var b = NordicBuilder()
        b.connect()
        Self.control(
            &b, .lengthRsp(LLLengthParameters(maxRxOctets: 251, maxRxTime: 2120, maxTxOctets: 251, maxTxTime: 2120)), central: false,
            event: 1)
        let fact = Self.analyze(b.records).connections[0].link.dataLength
        #expect(fact.value == .default && fact.changes.isEmpty)
    }

    /// LL_ENC_REQ, LL_ENC_RSP, LL_START_ENC_REQ in the clear, then both LL_START_ENC_RSPs decrypted by the sniffer: the
    /// link is encrypted from the peripheral's (frame 7), the procedure's end (Vol 6, Part B, 5.1.3.1), as HCI's
    /// Encryption Change would say; the evidence the diagnosis reads says so at the same frame.
    @Test func encryptionIsOnFromThePeripheralsStartEncRsp() {
        var b = NordicBuilder()
        b.connect()
        Self.control(&b, .encReq(rand: 1, ediv: 2, skdCentral: 3, ivCentral: 4), central: true, event: 1)  // frame 2
        Self.control(&b, .encRsp(skdPeripheral: 5, ivPeripheral: 6), central: false, event: 1)  // frame 3
        Self.control(&b, .startEncReq, central: false, event: 2)  // frame 4
        b.data(.continuation, [], central: true, event: 3)  // frame 5: empty PDUs are never encrypted
        Self.control(&b, .startEncRsp, central: true, event: 4, encrypted: true)  // frame 6
        Self.control(&b, .startEncRsp, central: false, event: 4, encrypted: true)  // frame 7
        let analyzer = Self.analyze(b.records)
        let fact = analyzer.connections[0].link.encryption
        #expect(fact.value == true && fact.source == .observed(frame: 7) && fact.changes.map(\.frame) == [7])
        let changes = Evidence(pass: analyzer).events.filter {
            if case .encryptionChange = $0.kind { true } else { false }
        }
        #expect(changes.map(\.frame) == [7])
    }

    /// The encryption start encrypted with a key nobody has: the first encrypted PDU (frame 5) says the link is
    /// encrypted, inferred, not observed.
    @Test func anUnreadableStartIsInferredFromTheFirstEncryptedPDU() {
        var b = NordicBuilder()
        b.connect()
        Self.control(&b, .encReq(rand: 1, ediv: 2, skdCentral: 3, ivCentral: 4), central: true, event: 1)
        Self.control(&b, .encRsp(skdPeripheral: 5, ivPeripheral: 6), central: false, event: 1)
        Self.control(&b, .startEncReq, central: false, event: 2)  // frame 4
        b.data(.control, [0x3C, 0x11, 0x22, 0x33, 0x44], central: true, event: 3, encrypted: true)  // frame 5: MIC not checked
        let fact = Self.analyze(b.records).connections[0].link.encryption
        #expect(fact.value == true && fact.source == .inferred(.encryptedPDU(frame: 5)))
    }

    /// A single data PDU at an access address no CONNECT_IND announced, inside a followed connection, opens nothing:
    /// one finding says how many and the first. Two PDUs of a link the sniffer joined, the peripheral answering the
    /// central 300 µs later, open one connection from the first.
    @Test func onlyAnsweredTrafficOpensALinkTheSnifferJoined() {
        var b = NordicBuilder()
        b.connect()  // frame 1
        b.data(.continuation, [], central: true, event: 1)  // frame 2
        let stray = LLAccessAddress(0x1234_5678)
        b.add(aa: stray, pdu: LLDataPDU(llid: .start, sn: false, payload: [1, 0, 4, 0, 0x52]).bytes, crcInit: 1, data: true, dt: 5000)  // 3
        b.data(.continuation, [], central: false, event: 1)  // frame 4
        b.add(aa: stray, pdu: LLDataPDU(llid: .continuation, sn: false, payload: []).bytes, crcInit: 1, data: true, dt: 5000)  // 5
        let joined = LLAccessAddress(0x2233_4455)
        b.add(aa: joined, pdu: LLDataPDU(llid: .continuation, sn: false, payload: []).bytes, crcInit: 2, data: true, dt: 9000)  // 6
        b.add(aa: joined, pdu: LLDataPDU(llid: .continuation, sn: false, payload: []).bytes, crcInit: 2, data: true, central: false)  // 7
        let analyzer = Self.analyze(b.records)
        #expect(analyzer.connections.count == 2)
        #expect(analyzer.connections.map(\.accessAddress) == [NordicBuilder.aa.description, joined.description])
        #expect(analyzer.connections[1].inferred && analyzer.connections[1].startFrame == 6)
        #expect(analyzer.connections[1].linkLayer?.packets == 2)
        let unanswered = analyzer.findings.filter { $0.kind.code.id == "ll.unanswered-pdus" }
        #expect(unanswered.map(\.frame) == [3])
        #expect(unanswered.first?.message.hasPrefix("2 data PDUs at access addresses no CONNECT_IND announced (first at frame 3)") == true)
    }

    /// An Android quality report on a handle no connection has opens nothing: a report the link that traffic later
    /// opens on its handle claims (it was up before the capture), one before a Connection Complete on its handle and
    /// one on a handle that never carries traffic are said once.
    @Test func aQualityReportOpensNoLink() throws {
        let q40 = BQRLinkQuality(handle: 0x40, rssi: -60)
        let q41 = BQRLinkQuality(handle: 0x41, rssi: -61)
        let q42 = BQRLinkQuality(handle: 0x42, rssi: -62)
        let b = CaptureBuilder()
            .qualityReport(BluetoothQualityReport(reportID: .monitorMode, linkQuality: q40))  // frame 1
            .qualityReport(BluetoothQualityReport(reportID: .monitorMode, linkQuality: q41))  // frame 2
            .qualityReport(BluetoothQualityReport(reportID: .monitorMode, linkQuality: q42))  // frame 3
            .connect(handle: 0x41)  // frame 4
            .notify(handle: 0x2A, [1], connection: 0x40)  // frame 5: traffic on 0x40, a link up before the capture
        let (analyzer, _) = try AnalyzerRun.analyze(b)
        #expect(analyzer.connections.map(\.handle) == [0x41, 0x40])
        #expect(analyzer.connections[1].inferred && analyzer.connections[1].linkQuality.map(\.frame) == [1])
        #expect(analyzer.connections[0].linkQuality.isEmpty)
        let said = analyzer.findings.filter { $0.kind.code.id == "hci.bqr-without-connection" }
        #expect(said.map(\.frame) == [2] && said.first?.message.hasPrefix("2 Bluetooth Quality Reports") == true)
    }
}
