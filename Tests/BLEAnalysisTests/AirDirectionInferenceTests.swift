import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// Issue 49, point 3, where the pseudo-header gives no direction or a wrong one: the side of each data PDU comes from the
/// connection event (Core Spec Vol 6, Part B, 4.5.1: the central opens each event, the sides alternate T_IFS apart).
/// The corpus's crackle capture (PPI, no direction; record times running backwards, its PPI-BTLE clock right) had 27
/// requests "unanswered" and 24 responses "without request"; the WHAD pairing capture (LT 256) marks the third packet of
/// an event as the peripheral's (frame 13: tshark's own times put it 230 µs after the peripheral's empty PDU at 12).
@Suite struct AirDirectionInferenceTests {
    static let aa = LLAccessAddress(0x5065_5491)
    static let crcInit: UInt32 = 0x12_3456

    /// A data PDU carrying an ATT PDU (or empty), as LL bytes.
    static func data(_ att: [UInt8]?, sn: Bool, nesn: Bool) -> [UInt8] {
        let payload = att.map { [UInt8($0.count), 0, 0x04, 0x00] + $0 } ?? []
        let pdu = LLDataPDU(llid: att == nil ? .continuation : .start, nesn: nesn, sn: sn, payload: payload).bytes
        return LLPacket(accessAddress: aa, pdu: pdu, crcInit: crcInit).bytes
    }

    static func connectInd() -> [UInt8] {
        let c = LLConnectInd(
            initiator: LLDeviceAddress(0x1122_3344_5566, isRandom: true), advertiser: LLDeviceAddress(0xC0FF_EE00_0001),
            parameters: LLConnectionParameters(accessAddress: aa, crcInit: crcInit, interval: 54, timeout: 42))
        return LLPacket(accessAddress: .advertising, pdu: LLAdvertisingPacketPDU(.connectInd(c)).bytes, crcInit: 0x55_5555).bytes
    }

    /// Two events of a link: a Read Request and its Response in the first, an empty PDU and a Read Request the other way
    /// (the peripheral as client) in the second, answered by the central in the third: (LL bytes, µs since the CONNECT_IND).
    static let link: [([UInt8], Int64)] = [
        (connectInd(), 0),
        (data([0x0A, 0x03, 0x00], sn: false, nesn: false), 2_500),
        (data([0x0B, 0x41], sn: false, nesn: true), 2_500 + 318),
        (data(nil, sn: true, nesn: true), 2_500 + 67_500),
        (data([0x0A, 0x05, 0x00], sn: true, nesn: false), 2_500 + 67_500 + 230),
        (data([0x0B, 0x42], sn: false, nesn: false), 2_500 + 135_000),
        (data(nil, sn: false, nesn: true), 2_500 + 135_000 + 318),
    ]

    /// crackle's PPI record: a PPI-BTLE field (Ubertooth's ppi.h) with the sniffer's clock, written at `file` µs.
    static func ppi(_ ll: [UInt8], clock: Int64?, file: Int64) -> OwnedRecord {
        var w = ByteWriter()
        w.write(0)
        w.write(0)
        w.write(littleEndian: UInt16(clock == nil ? 8 : 24))
        w.write(littleEndian: UInt32(147))
        if let clock {
            w.write(littleEndian: UInt16(30006))
            w.write(littleEndian: UInt16(12))
            w.write(0)
            w.write(littleEndian: UInt16(2402 + 2 * 7))
            w.write(0)
            w.write(littleEndian: UInt32(truncatingIfNeeded: clock * 10))
            for _ in 0..<4 { w.write(0) }
        }
        return OwnedRecord(
            timestamp: Timestamp(microseconds: file), direction: .unknown, kind: .linkLayer, linkType: 192, bytes: w.bytes + ll)
    }

    static func analyze(_ records: [OwnedRecord], linkType: UInt32) throws -> (directions: [Int: Direction], analyzer: Analyzer) {
        var directions: [Int: Direction] = [:]
        let analyzer = Analyzer.analyze(
            try CaptureFile.open(bytes: CaptureWriter.pcap(records, linkType: linkType), name: "air.pcap"),
            options: AnalyzerOptions(timeline: true),
            configure: { a in a.onEvent = { e in if e.layer == .att { directions[e.frame] = e.direction } } })
        return (directions, analyzer)
    }

    static func attFindings(_ a: Analyzer) -> [String] {
        a.findings.map(\.kind.code.id).filter { $0.hasPrefix("att.") }
    }

    /// The PPI clock (100 ns, starting near its wrap) gives the events; the record times crackle wrote (230 ms apart,
    /// one going back) are not read for them. Each ATT PDU is the side the alternation says, every request answered.
    @Test func ppiClockGivesTheEventsAndTheSides() throws {
        let base: Int64 = (1 << 32) / 10 - 70_000
        let records = Self.link.enumerated().map { i, p in
            Self.ppi(p.0, clock: base + p.1, file: 1_700_000_000_000_000 + Int64(i % 3 == 2 ? -1 : i) * 230_000)
        }
        let (directions, analyzer) = try Self.analyze(records, linkType: 192)
        #expect(directions == [2: .tx, 3: .rx, 5: .rx, 6: .tx])
        #expect(Self.attFindings(analyzer).isEmpty)
        let ll = analyzer.connections.first?.linkLayer
        #expect(ll?.directionsInferred == 6 && ll?.directionsCorrected == 0)
    }

    /// Near miss: the same records without the PPI-BTLE field. Nothing but the record times is left, each packet is
    /// an event of its own and the central's: the responses have no request.
    @Test func withoutTheClockEveryPacketOpensAnEvent() throws {
        let records = Self.link.enumerated().map { i, p in Self.ppi(p.0, clock: nil, file: 1_700_000_000_000_000 + Int64(i) * 230_000) }
        let (directions, analyzer) = try Self.analyze(records, linkType: 192)
        #expect(directions == [2: .tx, 3: .tx, 5: .tx, 6: .tx])
        #expect(Self.attFindings(analyzer).contains("att.response-without-request"))
    }

    /// An event whose central packet the sniffer missed opens with the peripheral's Read Response (SN/NESN 1/0, its empty
    /// PDU before it 0/1 flipped: the missed central packet, 1/1, acknowledged it and was new): the peripheral's, the
    /// request answered. Near miss: the same packet with the bits the central's answer to that empty PDU carries (1/1) is
    /// the central's, and a response from the central has no request.
    @Test(arguments: [(true, false, Direction.rx), (true, true, Direction.tx)])
    func anEventOpenedByThePeripheralAfterAMissedCentralPacket(_ sn: Bool, _ nesn: Bool, _ expected: Direction) throws {
        let link: [([UInt8], Int64)] = [
            (Self.connectInd(), 0),
            (Self.data([0x0A, 0x03, 0x00], sn: false, nesn: false), 2_500),
            (Self.data(nil, sn: false, nesn: true), 2_500 + 318),
            (Self.data([0x0B, 0x41], sn: sn, nesn: nesn), 2_500 + 67_500 + 318),
            (Self.data(nil, sn: false, nesn: false), 2_500 + 135_000),
            (Self.data(nil, sn: false, nesn: true), 2_500 + 135_000 + 318),
        ]
        let records = link.map { Self.ppi($0.0, clock: 1_000_000 + $0.1, file: 1_700_000_000_000_000 + $0.1) }
        let (directions, analyzer) = try Self.analyze(records, linkType: 192)
        #expect(directions == [2: .tx, 4: expected])
        #expect(Self.attFindings(analyzer).contains("att.response-without-request") == (expected == .tx))
    }

    static func lt256(_ ll: [UInt8], pduType: UInt16, time: Int64) -> OwnedRecord {
        let h = LERFHeader(rfChannel: 8, flags: LERFFlags(rawValue: 0x0003 | pduType << 7))
        return OwnedRecord(
            timestamp: Timestamp(microseconds: 1_700_000_000_000_000 + time), direction: .unknown, kind: .linkLayer, linkType: 256,
            bytes: h.bytes + ll)
    }

    /// WHAD's pattern: the central's second packet of an event (the peripheral's request, answered in the next event, is
    /// its fourth) marked as the peripheral's, T_IFS after the peripheral's packet: corrected, the request answered.
    /// Near miss: 600 µs after it (room for a packet the sniffer missed between them, still in the event) the header is kept.
    @Test(arguments: [(Int64(230), true), (Int64(600), false)])
    func aHeaderSayingTheSameSideTwiceInARowIsCorrected(_ gap: Int64, _ corrected: Bool) throws {
        let ll: [[UInt8]] = [
            Self.connectInd(), Self.data(nil, sn: false, nesn: false), Self.data(nil, sn: false, nesn: true),
            Self.data([0x0A, 0x03, 0x00], sn: true, nesn: true), Self.data(nil, sn: false, nesn: false),
            Self.data(nil, sn: false, nesn: false), Self.data([0x0B, 0x41], sn: true, nesn: true),
        ]
        let types: [UInt16] = [0, 2, 3, 3, 0, 2, 3]
        let times: [Int64] = [0, 2_500, 2_730, 2_730 + gap, 2_730 + gap + 318, 70_000, 70_230]
        let records = (0..<ll.count).map { Self.lt256(ll[$0], pduType: types[$0], time: times[$0]) }
        let (directions, analyzer) = try Self.analyze(records, linkType: 256)
        #expect(directions[4] == (corrected ? .tx : .rx))
        #expect(Self.attFindings(analyzer).isEmpty == corrected)
        #expect(analyzer.connections.first?.linkLayer?.directionsCorrected == (corrected ? 1 : 0))
    }

    /// The H-Band capture's shape (LT 256, no empty PDUs, notifications with PDU type 0, flags 0x0c03): the central
    /// writes the CCCD of 0x000d (0x000e, 01 00) and the watch answers, each with its direction; then two notifications
    /// of 0x000d with none, each opening an event of its own, which the events alone gave the central. ATT puts them on
    /// the peripheral (the server notifies, and the central wrote the CCCD). Near miss: the same two marked as the
    /// central's (PDU type 2) stay as given.
    @Test(arguments: [(UInt16(0), Direction.rx), (UInt16(2), Direction.tx)])
    func directionlessNotificationsComeFromTheServer(_ pduType: UInt16, _ expected: Direction) throws {
        let ll: [[UInt8]] = [
            Self.connectInd(), Self.data([0x12, 0x0E, 0x00, 0x01, 0x00], sn: false, nesn: false), Self.data([0x13], sn: false, nesn: true),
            Self.data([0x1B, 0x0D, 0x00, 0xA7, 0x01], sn: true, nesn: true),
            Self.data([0x1B, 0x0D, 0x00, 0xA7, 0x02], sn: false, nesn: true),
        ]
        let types: [UInt16] = [0, 2, 3, pduType, pduType]
        let times: [Int64] = [0, 2_500, 2_830, 70_000, 140_000]
        let records = (0..<ll.count).map { Self.lt256(ll[$0], pduType: types[$0], time: times[$0]) }
        let (directions, analyzer) = try Self.analyze(records, linkType: 256)
        #expect(directions == [2: .tx, 3: .rx, 4: expected, 5: expected])
        #expect(analyzer.connections.first?.linkLayer?.directionsFromATT == (pduType == 0 ? 2 : 0))
    }
}
