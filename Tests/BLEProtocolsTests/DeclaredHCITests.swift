import BLECore
import Testing

@testable import BLEProtocols

/// The HCI parameter sets declared once (``HCIParameterSet``): bytes built field by field from the Core Spec's tables
/// decode to the fields, encode back to the same bytes, and reach the event, command and return tables.
@Suite struct DeclaredHCITests {
    /// LE CIS Established v2 (Core 6.0 Vol 4, Part E, 7.7.65.25, subevent 0x2A), field by field.
    static let cisEstablishedV2: [UInt8] =
        [0x00, 0x60, 0x00]  // status, handle 0x0060
        + [0x88, 0x05, 0x00, 0x88, 0x05, 0x00]  // CIG and CIS sync delay 1416 µs
        + [0x98, 0x2C, 0x00, 0x10, 0x27, 0x00]  // transport latency C→P 11416 µs, P→C 10000 µs
        + [0x02, 0x01, 0x02, 0x01, 0x01, 0x02, 0x01]  // PHY 2M/1M, NSE 2, BN 1/1, FT 2/1
        + [0x28, 0x00, 0x3C, 0x00, 0x08, 0x00]  // max PDU 40/60, ISO interval 8 (10 ms)
        + [0xC4, 0x02, 0x00]  // sub-interval 708 µs
        + [0x28, 0x00, 0x3C, 0x00]  // max SDU 40/60
        + [0x10, 0x27, 0x00, 0x4C, 0x1D, 0x00]  // SDU interval 10000 / 7500 µs
        + [0x00]  // unframed

    @Test func cisEstablishedV2ReadsEveryField() throws {
        let e = try LECISEstablishedV2(bytes: Self.cisEstablishedV2)
        #expect(e.cis.status == .success && e.cis.handle == 0x0060)
        #expect(e.cis.cigSyncDelay == 1416 && e.cis.cisSyncDelay == 1416)
        #expect(e.cis.transportLatencyCToP == 11416 && e.cis.transportLatencyPToC == 10000)
        #expect(e.cis.phyCToP == 2 && e.cis.phyPToC == 1 && e.cis.nse == 2)
        #expect(e.cis.bnCToP == 1 && e.cis.bnPToC == 1 && e.cis.ftCToP == 2 && e.cis.ftPToC == 1)
        #expect(e.cis.maxPDUCToP == 40 && e.cis.maxPDUPToC == 60 && e.cis.isoInterval == 8)
        #expect(e.subInterval == 708 && e.maxSDUCToP == 40 && e.maxSDUPToC == 60)
        #expect(e.sduIntervalCToP == 10000 && e.sduIntervalPToC == 7500 && e.framing == 0)
        #expect(e.bytes == Self.cisEstablishedV2)
        #expect(LECISEstablishedV2.size == .fixed(Self.cisEstablishedV2.count))
        #expect(e.connectionHandle == 0x0060 && e.status == .success)
        #expect(e.summary.hasPrefix("status=Success handle=0x0060 cigSyncDelay=1416 µs"))
        #expect(e.summary.contains("phyCToP=2M phyPToC=1M") && e.summary.contains("isoInterval=10.00 ms"))
        #expect(e.summary.hasSuffix("sduIntervalPToC=7500 µs framing=unframed"))
    }

    @Test func theEventTableDecodesADeclaredSubevent() throws {
        let packet = HCIEventPacket(code: .leMeta, parameters: [0x2A] + Self.cisEstablishedV2)
        let decoded = try packet.decodeParameters()
        guard case .declared(let d) = decoded else {
            Issue.record("not declared: \(decoded)")
            return
        }
        #expect(d.as(LECISEstablishedV2.self)?.cis.handle == 0x0060)
        #expect(decoded.name == "LE CIS Established v2" && decoded.subevent?.rawValue == 0x2A && decoded.code == .leMeta)
        #expect(decoded.bytes == [0x2A] + Self.cisEstablishedV2)
        #expect(HCIEventPacket(decoded) == packet)
        // One byte short or one too many: the size rule, then `.leMeta` for callers that want the raw bytes.
        #expect(throws: DecodeError.self) {
            try HCIEventPacket(code: .leMeta, parameters: [0x2A] + Self.cisEstablishedV2.dropLast()).decodeParameters()
        }
        #expect(throws: DecodeError.self) {
            try HCIEventPacket(code: .leMeta, parameters: [0x2A] + Self.cisEstablishedV2 + [0]).decodeParameters()
        }
    }

    /// LE Channel Selection Algorithm (7.7.65.20), the event an Android log has after each LE connection: the bytes of
    /// frame 6992 of the corpus's btsnooper sample (`04 3e 04 14 03 00 00`), which tshark reads as Connection Handle
    /// 0x0003, Channel Selection Algorithm #1 (0x00). Declared in 10 lines of LinkEvents.swift and one of
    /// HCIDeclaredSets.swift, nothing else.
    @Test func channelSelectionAlgorithmReadsAsTsharkDoes() throws {
        let packet = try HCIEventPacket(bytes: [0x3E, 0x04, 0x14, 0x03, 0x00, 0x00])
        let decoded = try packet.decodeParameters()
        let d = try #require(decoded.declared?.as(LEChannelSelectionAlgorithm.self))
        #expect(d.handle == 0x0003 && d.algorithm == 0)
        #expect(decoded.name == "LE Channel Selection Algorithm" && decoded.summary == "handle=0x0003 algorithm=#1")
        #expect(HCIEventPacket(decoded) == packet)
    }

    /// LE Set CIG Parameters with two CISes, each's parameters together (Core 5.3+ Vol 4, Part E, 5.2 and 7.8.97).
    @Test func cigParametersListsEachCIS() throws {
        let bytes: [UInt8] =
            [0x01, 0x10, 0x27, 0x00, 0x4C, 0x1D, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x0A, 0x00, 0x02]
            + [0x00, 0x28, 0x00, 0x28, 0x00, 0x02, 0x02, 0x02, 0x02]
            + [0x01, 0x64, 0x00, 0x00, 0x00, 0x01, 0x04, 0x0D, 0x00]
        let command = HCICommandPacket(opcode: HCICommand(ogf: 0x08, ocf: 0x0062), parameters: bytes)
        guard case .declared(let d) = command.decoded, let p = d.as(LESetCIGParameters.self) else {
            Issue.record("not declared")
            return
        }
        #expect(p.cigID == 1 && p.sduIntervalCToP == 10000 && p.sduIntervalPToC == 7500)
        #expect(p.maxTransportLatencyCToP == 20 && p.maxTransportLatencyPToC == 10 && p.cis.count == 2)
        #expect(p.cis[1].cisID == 1 && p.cis[1].maxSDUCToP == 100 && p.cis[1].maxSDUPToC == 0)
        #expect(p.cis[1].phyCToP == 1 && p.cis[1].phyPToC == 4 && p.cis[1].rtnCToP == 13)
        #expect(p.bytes == bytes)
        #expect(command.summary.contains("cis[cisId=1 maxSduCToP=100 maxSduPToC=0 phyCToP=1M phyPToC=Coded rtnCToP=13 rtnPToC=0]"))
        let ret = try HCIReturnParameters.decode(opcode: command.opcode, bytes: [0x00, 0x01, 0x02, 0x60, 0x00, 0x61, 0x00])
        guard case .declared(let r) = ret, let cig = r.as(LESetCIGParametersReturn.self) else {
            Issue.record("return not declared")
            return
        }
        #expect(cig.handles == [0x60, 0x61] && ret.status == .success && ret.summary == "status=Success cigId=1 handles=[0x0060,0x0061]")
    }

    /// Every declared set: its table row carries its name and decoder, and a value built from bytes encodes back to them.
    @Test func everyDeclaredSetReachesItsTableAndRoundTrips() throws {
        for type in HCIDeclaredSets.all {
            switch type.carrier {
            case .leSubevent(let s): #expect(HCIEventTable.subevents[s.rawValue]?.name == type.name)
            case .event(let c): #expect(HCIEventTable.events[c.rawValue]?.name == type.name)
            case .command(let c): #expect(HCICommandTable.entries[c.rawValue]?.decode != nil, "\(type.name)")
            case .returnParameters(let c): #expect(HCICommandTable.entries[c.rawValue]?.decodeReturn != nil, "\(type.name)")
            }
            try roundTrip(type)
        }
    }

    /// Bytes of the set's minimum size (one element in each list) with every byte distinct, decoded and encoded back.
    func roundTrip<T: HCIParameterSet>(_ type: T.Type) throws {
        var bytes: [UInt8] = []
        let empty = T()
        for (i, field) in T.fields.enumerated() {
            if let width = field.width {
                bytes += (0..<width).map { UInt8(truncatingIfNeeded: 0x11 &* (i + 1) &+ $0) }
            } else {
                var w = ByteWriter()
                field.write(empty, &w)
                bytes += w.bytes  // an empty list or length-prefixed field: its count byte, 0
            }
        }
        let value = try T(bytes: bytes)
        #expect(value.bytes == bytes, "\(T.name)")
        #expect(!value.summary.isEmpty || T.fields.allSatisfy { $0.width == nil }, "\(T.name)")
    }

    /// The names the event table gave the isochronous subevents before they were declared, unchanged.
    @Test func subeventNamesAreTheSpecsNames() {
        let names: [UInt8: String] = [
            0x0E: "LE Periodic Advertising Sync Established", 0x10: "LE Periodic Advertising Sync Lost", 0x19: "LE CIS Established",
            0x1A: "LE CIS Request", 0x1B: "LE Create BIG Complete", 0x1C: "LE Terminate BIG Complete",
            0x1D: "LE BIG Sync Established", 0x1E: "LE BIG Sync Lost", 0x22: "LE BIGInfo Advertising Report",
        ]
        for (code, name) in names { #expect(HCIEventTable.subevents[code]?.name == name) }
    }
}

/// LL_CIS_REQ/RSP/IND on air captures (Core Spec Vol 6, Part B, 2.4.2.29–31): their fields named in the summary.
@Suite struct LLCISFieldsTests {
    @Test func cisRequestFieldsAsTheSpecLaysThemOut() throws {
        let req: [UInt8] =
            [0x01, 0x00, 0x02, 0x02, 0x28, 0x80, 0x28, 0x00]  // CIG 1, CIS 0, 2M/2M, max SDU 40 (framed) / 40
            + [0x10, 0x27, 0x00, 0x4C, 0x1D, 0x00]  // SDU interval 10000 / 7500 µs
            + [0x28, 0x00, 0x3C, 0x00, 0x02, 0xC4, 0x02, 0x00, 0x21, 0x02, 0x01]  // max PDU 40/60, NSE 2, 708 µs, BN 1/2, FT 2/1
            + [0x08, 0x00, 0xE8, 0x03, 0x00, 0xD0, 0x07, 0x00, 0x64, 0x00]  // ISO 10 ms, offset 1000–2000 µs, event 100
        let packet = try LLControlPacket(bytes: [0x1F] + req)
        #expect(
            packet.pdu.summary
                == "LL_CIS_REQ CIG 1 CIS 0 PHY C→P 0x02 P→C 0x02 max SDU 40/40 SDU interval 10000/7500 µs max PDU 40/60 NSE 2 sub-interval 708 µs BN 1/2 FT 2/1 ISO interval 10.00 ms offset 1000–2000 µs event 100 framed"
        )
        let ind = try LLControlPacket(bytes: [
            0x21, 0x78, 0x56, 0x34, 0x12, 0xE8, 0x03, 0x00, 0x88, 0x05, 0x00, 0x88, 0x05, 0x00, 0x65, 0x00,
        ])
        #expect(ind.pdu.summary == "LL_CIS_IND AA 0x12345678 offset 1000 µs CIG sync delay 1416 µs CIS sync delay 1416 µs event 101")
        #expect(
            try LLControlPacket(bytes: [0x20, 0xE8, 0x03, 0x00, 0xD0, 0x07, 0x00, 0x64, 0x00]).pdu.summary
                == "LL_CIS_RSP offset 1000–2000 µs event 100")
    }
}
