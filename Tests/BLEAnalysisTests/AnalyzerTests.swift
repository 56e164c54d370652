import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECodecs
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// The analyzer on captures built from typed packets: every expected value is computed here by hand.
@Suite struct AnalyzerTests {
    @Test(arguments: Array(1...251))
    func fragmentSizeNeverChangesTheDecodedValue(_ size: Int) throws {
        let value = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 31) }
        let b = CaptureBuilder().connect(handle: 0x40)
            .att(.exchangeMTURequest(clientRxMTU: 517), handle: 0x40, .tx)
            .att(.exchangeMTUResponse(serverRxMTU: 517), handle: 0x40, .rx)
            .notify(handle: 0x2A, value, connection: 0x40, fragmentSize: size)
        let (analyzer, events) = try AnalyzerRun.analyze(b)
        let n = try #require(AnalyzerRun.att(events).last)
        #expect(n.name == "Handle Value Notification")
        #expect(n.value == value)
        #expect(n.handle == 0x2A)
        #expect(n.frame == b.records.count)  // completes at its last fragment
        #expect(analyzer.findings.isEmpty)
    }

    @Test func requestsPairWithResponsesAndMTUIsPerConnection() throws {
        let b = CaptureBuilder(step: 2_000)
            .connect(handle: 0x40).connect(handle: 0x41, peer: BDAddress(0xC0_00_00_00_00_02))
            .att(.exchangeMTURequest(clientRxMTU: 247), handle: 0x40, .tx)  // frame 3
            .att(.exchangeMTUResponse(serverRxMTU: 185), handle: 0x40, .rx)  // frame 4
            .att(.readRequest(handle: 0x03), handle: 0x41, .tx)  // frame 5
            .att(.readResponse(value: Array("Bracelet".utf8)), handle: 0x41, .rx)  // frame 6
        let (analyzer, events) = try AnalyzerRun.analyze(b)
        let att = AnalyzerRun.att(events)
        #expect(att.map(\.frame) == [3, 4, 5, 6])
        #expect(att[0].responseFrame == 4 && att[1].requestFrame == 3)
        #expect(att[0].latency == 2_000)
        #expect(att[2].responseFrame == 6 && att[3].requestFrame == 5 && att[3].handle == 0x03)
        #expect(analyzer.connections.map(\.currentMTU) == [185, 23])  // min(247, 185) on 0x40 only
        #expect(analyzer.connections.map(\.peerAddress) == ["C0:11:22:33:44:55", "C0:00:00:00:00:02"])
    }

    @Test func indicationsPairWithConfirmationsAndUnansweredRequestsAreFound() throws {
        let b = CaptureBuilder().connect(handle: 0x40)
            .att(.handleValueIndication(handle: 0x0E, value: [1, 2]), handle: 0x40, .rx)  // 2
            .att(.handleValueConfirmation, handle: 0x40, .tx)  // 3
            .att(.writeRequest(handle: 0x10, value: [9]), handle: 0x40, .tx)  // 4, never answered
            .disconnect(handle: 0x40)  // 5
        let (analyzer, events) = try AnalyzerRun.analyze(b)
        let att = AnalyzerRun.att(events)
        #expect(att[0].responseFrame == 3 && att[1].requestFrame == 2 && att[1].handle == 0x0E)
        let unanswered = analyzer.findings.filter { $0.kind.code.id == "att.request-unanswered" }
        #expect(unanswered.map(\.frame) == [4])
        #expect(analyzer.connections[0].endFrame == 5)
        #expect(analyzer.connections[0].disconnectReason == "Remote User Terminated Connection")
    }

    @Test func gattDiscoveryNamesHandlesAndCCCDWritesSayNotificationsOn() throws {
        let hrService = BluetoothUUID(uuid16: 0x180D), hrm = BluetoothUUID(uuid16: 0x2A37)
        let b = CaptureBuilder().connect(handle: 0x40)
            .att(
                .readByGroupTypeRequest(ATTTypeRequest(range: .init(start: 1, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))),
                handle: 0x40, .tx
            )
            .att(.readByGroupTypeResponse([ATTGroupValue(start: 0x0C, end: 0x0F, value: hrService.littleEndianBytes)]), handle: 0x40, .rx)
            .att(
                .readByTypeRequest(ATTTypeRequest(range: .init(start: 0x0C, end: 0x0F), type: BluetoothUUID(uuid16: 0x2803))), handle: 0x40,
                .tx
            )
            .att(.readByTypeResponse([ATTHandleValue(handle: 0x0D, value: [0x10, 0x0E, 0x00] + hrm.littleEndianBytes)]), handle: 0x40, .rx)
            .att(.findInformationRequest(.init(start: 0x0F, end: 0x0F)), handle: 0x40, .tx)
            .att(
                .findInformationResponse(
                    ATTFindInformationResponse(format: 1, entries: [.init(handle: 0x0F, uuid: BluetoothUUID(uuid16: 0x2902))])),
                handle: 0x40, .rx
            )
            .att(.writeRequest(handle: 0x0F, value: [0x01, 0x00]), handle: 0x40, .tx)
            .att(.writeResponse, handle: 0x40, .rx)
            .notify(handle: 0x0E, [0x00, 72], connection: 0x40)
        let (analyzer, events) = try AnalyzerRun.analyze(b, options: AnalyzerOptions(codecs: CodecRegistry()))
        let db = analyzer.connections[0].gatt
        #expect(db.services.map(\.uuid) == [hrService])
        #expect(db.characteristics.map(\.valueHandle) == [0x0E])
        #expect(db.characteristics.first?.properties == [.notify])
        let write = try #require(AnalyzerRun.att(events).first { $0.name == "Write Request" })
        #expect(write.attributeName == "Client Characteristic Configuration")
        #expect(write.summary.contains("CCCD: notifications on"))
        let n = try #require(AnalyzerRun.att(events).last)
        #expect(n.uuid == hrm && n.attributeName == "Heart Rate Measurement" && n.nameSource == .discovery)
        #expect(n.decoded?.summary.contains("72") == true)  // heart rate 72 bpm from the SIG codec
    }

    @Test func longReadsAndPreparedWritesAreReassembled() throws {
        let part1 = Array(repeating: UInt8(0xAA), count: 22), part2: [UInt8] = [0xBB, 0xCC]
        let b = CaptureBuilder().connect(handle: 0x40)
            .att(.readRequest(handle: 0x20), handle: 0x40, .tx)
            .att(.readResponse(value: part1), handle: 0x40, .rx)  // MTU 23: a full response (MTU-1 bytes)
            .att(.readBlobRequest(handle: 0x20, offset: 22), handle: 0x40, .tx)
            .att(.readBlobResponse(value: part2), handle: 0x40, .rx)
            .att(.prepareWriteRequest(handle: 0x30, offset: 0, value: [1, 2, 3]), handle: 0x40, .tx)
            .att(.prepareWriteResponse(handle: 0x30, offset: 0, value: [1, 2, 3]), handle: 0x40, .rx)
            .att(.prepareWriteRequest(handle: 0x30, offset: 3, value: [4, 5]), handle: 0x40, .tx)
            .att(.prepareWriteResponse(handle: 0x30, offset: 3, value: [4, 5]), handle: 0x40, .rx)
            .att(.executeWriteRequest(flags: 1), handle: 0x40, .tx)
            .att(.executeWriteResponse, handle: 0x40, .rx)
        let (_, events) = try AnalyzerRun.analyze(b)
        let longRead = try #require(events.first { $0.name == "Long Read" })
        #expect(longRead.value == part1 + part2 && longRead.handle == 0x20 && longRead.frame == 5)
        let longWrite = try #require(events.first { $0.name == "Long Write" })
        #expect(longWrite.value == [1, 2, 3, 4, 5] && longWrite.handle == 0x30 && longWrite.frame == 10)
    }

    @Test func valuesLongerThanTheMTUAreFlagged() throws {
        let b = CaptureBuilder().connect(handle: 0x40).notify(handle: 0x2A, Array(repeating: 1, count: 30), connection: 0x40)
        let (analyzer, _) = try AnalyzerRun.analyze(b)
        #expect(analyzer.findings.map(\.kind.code.id) == ["att.pdu-exceeds-mtu"])
        #expect(analyzer.findings.first?.frame == 2)
    }

    @Test func trafficWithoutConnectionCompleteInfersAConnection() throws {
        let b = CaptureBuilder().notify(handle: 0x2A, [1], connection: 0x0B)
        let (analyzer, events) = try AnalyzerRun.analyze(b)
        #expect(analyzer.connections.count == 1)
        #expect(analyzer.connections[0].inferred)
        #expect(analyzer.findings.map(\.kind.code.id) == ["hci.connection-inferred"])
        #expect(AnalyzerRun.att(events).first?.connection == 0x0B)
    }

    @Test func commandsPairWithTheirCompletionAndUnansweredOnesAreFound() throws {
        let b = CaptureBuilder(step: 500)
            .command(HCIBuild.command(.reset))
            .event(HCIBuild.commandComplete(.reset))
            .command(HCIBuild.command(.leReadBufferSize))
        let (analyzer, events) = try AnalyzerRun.analyze(b)
        #expect(events[0].responseFrame == 2 && events[0].latency == 500 && events[1].requestFrame == 1)
        #expect(analyzer.findings.map(\.kind.code.id) == ["hci.command-unanswered"])
        #expect(analyzer.findings.first?.frame == 3)
    }

    @Test func disconnectionCutsAPDUInProgress() throws {
        let pdu = HCIBuild.l2cap(cid: 4, payload: ATTPDU.handleValueNotification(handle: 0x2A, value: Array(repeating: 7, count: 60)).bytes)
        let first = HCIBuild.aclFragments(handle: 0x40, l2capPDU: pdu, fragmentSize: 27, firstBoundary: .firstFlushable)[0]
        let b = CaptureBuilder().connect(handle: 0x40).record(.acl, .rx, first).disconnect(handle: 0x40)
        let (analyzer, events) = try AnalyzerRun.analyze(b)
        #expect(AnalyzerRun.att(events).isEmpty)
        #expect(analyzer.findings.map(\.kind.code.id) == ["l2cap.cut-by-end"])
        #expect(analyzer.findings.first?.frame == 3)
    }

    @Test func creditBasedChannelSDUsAreReassembled() throws {
        let request = L2CAPSignal(
            identifier: 1, command: .leCreditBasedConnectionRequest(spsm: 0x0080, sourceCID: 0x0040, mtu: 512, mps: 23, initialCredits: 10))
        let response = L2CAPSignal(
            identifier: 1,
            command: .leCreditBasedConnectionResponse(destinationCID: 0x0041, mtu: 512, mps: 23, initialCredits: 10, result: 0))
        let sdu = (0..<40).map { UInt8($0) }
        // SDU of 40 bytes over MPS 23: a first K-frame with the 2-byte SDU length, then the rest.
        let k1 = [UInt8(40), 0] + sdu[0..<21], k2 = Array(sdu[21...])
        let b = CaptureBuilder().connect(handle: 0x40)
            .l2cap(cid: 5, payload: request.bytes, handle: 0x40, .tx)
            .l2cap(cid: 5, payload: response.bytes, handle: 0x40, .rx)
            .l2cap(cid: 0x0041, payload: k1, handle: 0x40, .tx)  // to the peer's CID
            .l2cap(cid: 0x0041, payload: k2, handle: 0x40, .tx)
        let (_, events) = try AnalyzerRun.analyze(b)
        let e = try #require(events.first { $0.name == "LE Credit Based SDU" })
        #expect(e.value == sdu && e.frame == 5 && e.summary.contains("spsm=0x0080"))
    }

    @Test func aFullControllerQueueIsTimed() throws {
        // LE Read Buffer Size: 251-byte packets, 2 of them; two sends fill it until Number Of Completed Packets.
        let b = CaptureBuilder(step: 1_000)
            .command(HCIBuild.command(.leReadBufferSize))  // 1
            .event(HCIBuild.commandComplete(.leReadBufferSize, returnParameters: [0x00, 0xFB, 0x00, 0x02]))  // 2
            .connect(handle: 0x40)  // 3
            .att(.writeCommand(handle: 0x10, value: [1]), handle: 0x40, .tx)  // 4
            .att(.writeCommand(handle: 0x10, value: [2]), handle: 0x40, .tx)  // 5: full
            .event(HCIBuild.numberOfCompletedPackets(handle: 0x40, count: 1))  // 6: room again
        let (analyzer, _) = try AnalyzerRun.analyze(b)
        let c = analyzer.connections[0]
        #expect(c.maxInFlight == 2 && c.inFlight == 1)
        #expect(c.controllerQueueFull.map(\.startFrame) == [5])
        #expect(c.controllerQueueFull.map(\.endFrame) == [6])
        #expect(c.controllerQueueFullMicroseconds == 1_000)
    }

    @Test func aSenderOutOfCreditsIsTimedUntilTheNextCredits() throws {
        // The peer grants 2 credits; the phone sends 2 K-frames (single-frame SDUs), then waits for a credit.
        let request = L2CAPSignal(
            identifier: 1, command: .leCreditBasedConnectionRequest(spsm: 0x0080, sourceCID: 0x0040, mtu: 64, mps: 64, initialCredits: 5))
        let response = L2CAPSignal(
            identifier: 1, command: .leCreditBasedConnectionResponse(destinationCID: 0x0041, mtu: 64, mps: 64, initialCredits: 2, result: 0)
        )
        let credit = L2CAPSignal(identifier: 2, command: .flowControlCreditIndication(cid: 0x0041, credits: 4))
        let b = CaptureBuilder(step: 1_000).connect(handle: 0x40)
            .l2cap(cid: 5, payload: request.bytes, handle: 0x40, .tx)  // 2
            .l2cap(cid: 5, payload: response.bytes, handle: 0x40, .rx)  // 3
            .l2cap(cid: 0x0041, payload: [2, 0, 0xAA, 0xBB], handle: 0x40, .tx)  // 4
            .l2cap(cid: 0x0041, payload: [2, 0, 0xCC, 0xDD], handle: 0x40, .tx)  // 5: last credit used
            .l2cap(cid: 5, payload: credit.bytes, handle: 0x40, .rx)  // 6: 4 more credits
        let (analyzer, events) = try AnalyzerRun.analyze(b)
        #expect(events.filter { $0.name == "LE Credit Based SDU" }.map(\.value) == [[0xAA, 0xBB], [0xCC, 0xDD]])
        let stalls = analyzer.connections[0].creditStalls
        #expect(stalls.map(\.startFrame) == [5] && stalls.map(\.endFrame) == [6] && stalls.map(\.cid) == [0x0041])
        #expect(stalls.first?.durationMicroseconds == 1_000)
        #expect(analyzer.findings.isEmpty)
    }
}
