import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEReports

/// `diff` of an HCI log against an air capture of the same link (the central's btsnoop and an nRF Sniffer capture,
/// built from the same typed PDUs): the facts both see agree (GATT, ATT_MTU and who asked it, the order of the
/// procedures, interval, latency and timeout, the write stream), so `diff` says "no differences"; the air's own
/// link-layer figures are not compared.
@Suite struct DiffHCIAgainstAirTests {
    static let peripheral = BDAddress(0xC0FF_EE00_0001)

    /// The ATT PDUs of the session, central first: MTU exchange (247/247), primary service discovery (0x180F at
    /// 0x0010–0x0015, then Attribute Not Found), a write request to 0x0012 and its response.
    static let exchange: [(ATTPDU, central: Bool)] = [
        (.exchangeMTURequest(clientRxMTU: 247), true), (.exchangeMTUResponse(serverRxMTU: 247), false),
        (
            .readByGroupTypeRequest(
                ATTTypeRequest(range: ATTHandleRange(start: 0x0001, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))), true
        ),
        (.readByGroupTypeResponse([ATTGroupValue(start: 0x0010, end: 0x0015, value: [0x0F, 0x18])]), false),
        (
            .readByGroupTypeRequest(
                ATTTypeRequest(range: ATTHandleRange(start: 0x0016, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))), true
        ),
        (.errorResponse(ATTErrorResponse(requestOpcode: .readByGroupTypeRequest, handle: 0x0016, error: .attributeNotFound)), false),
        (.writeRequest(handle: 0x0012, value: [0x01]), true), (.writeResponse, false),
    ]

    /// The central's HCI log: LE Connection Complete (interval 24 = 30 ms, timeout 72 = 720 ms), the PDUs.
    static func hciLog() throws -> FileAnalysis {
        var b = CaptureBuilder().connect(handle: 0x40, peer: peripheral, role: .central, interval: 24, timeout: 72)
        for (pdu, central) in exchange { b = b.att(pdu, handle: 0x40, central ? .tx : .rx) }
        return Report.analyze(capture: try b.captureFile(), options: ReportOptions(backgroundTrackers: false))
    }

    /// The same link on air: CONNECT_IND with the same parameters, each PDU in one data PDU of its own event.
    static func airCapture() throws -> FileAnalysis {
        var b = NordicBuilder()
        b.connect()
        var sn = (false, false), event: UInt16 = 1
        for (pdu, central) in exchange {
            let att = pdu.bytes
            b.data(.start, [UInt8(att.count), 0, 0x04, 0x00] + att, central: central, sn: central ? sn.0 : sn.1, event: event)
            if central { sn.0.toggle() } else { sn.1.toggle(); event += 1 }
        }
        let owned = b.records.map { r in
            OwnedRecord(
                frame: r.frame, timestamp: Timestamp(microseconds: r.micros), direction: .unknown, kind: .linkLayer,
                originalLength: r.origLen, linkType: 272, bytes: r.bytes)
        }
        let capture = try CaptureFile.open(bytes: CaptureWriter.pcap(owned, linkType: 272), name: "air.pcap")
        return Report.analyze(capture: capture, options: ReportOptions(backgroundTrackers: false))
    }

    @Test func theFactsBothSeeAgree() throws {
        let hci = try Self.hciLog(), air = try Self.airCapture()
        // One is an HCI log, the other an air capture (link-layer figures only there).
        #expect(hci.connections.count == 1 && air.connections.count == 1)
        #expect(hci.connections[0].linkLayer == nil && air.connections[0].linkLayer?.packets == 8)
        // Both saw the central ask 247 and the peripheral answer 247 (the HCI log's local side is the central).
        for f in [hci, air] {
            #expect(DiffLink.cell("mtu", f.connections[0]) == "247" && DiffLink.cell("interval_ms", f.connections[0]) == "30.00")
            let asked = f.evidence.compactMap { e -> String? in
                guard case .mtuExchange(let requester, let client?, let server, _, _) = e.kind else { return nil }
                return DiffLink.mtuExchangeText(requester: requester, client: client, server: server, on: f.connections[0])
            }
            #expect(asked == ["central asked 247, peripheral answered 247"])
        }
        let d = CaptureDiffer.compare(hci, air)
        #expect(d.pairs.map(\.matchedBy) == ["address"], "\(d.pairs)")
        #expect(d.isEmpty, "\(d.differences.map(\.sentence))")
        #expect(CaptureDiffer.compare(air, hci).isEmpty)
    }
}
