import BLECore
import Testing

@testable import BLEProtocols

/// OBEX packets (IrOBEX 1.5; GOEP, PBAP 1.2) from typed values. The lengths and values expected are tshark 4.0.17's
/// for the same packets in the Honda car kit log (`android-btsnoop_btagent-honda-…-ldac-then-aac.log`): Connect 2776
/// (26 bytes, max packet 3956, Target PBAP), its Success 2780 (31 bytes, Connection Id 1, Who PBAP), Get 2795 (83 bytes:
/// Name `telecom/pb.vcf`, Type `x-bt/phonebook`, 4 application parameters), its Success 2796 (15 bytes, Phonebook
/// Size 2).
@Suite struct OBEXTests {
    static let pbap: [UInt8] = [0x79, 0x61, 0x35, 0xF0, 0xF0, 0xC5, 0x11, 0xD8, 0x09, 0x66, 0x08, 0x00, 0x20, 0x0C, 0x9A, 0x66]

    static let connect = OBEXPacket(
        code: 0x80, isResponse: false, version: 0x10, flags: 0, maxPacketLength: 3956, headers: [OBEXHeader(id: .target, bytes: pbap)])
    static let connected = OBEXPacket(
        code: 0xA0, isResponse: true, version: 0x10, flags: 0, maxPacketLength: 3956,
        headers: [OBEXHeader(id: .connectionID, number: 1), OBEXHeader(id: .who, bytes: pbap)])
    /// Filter 0x00000000000000AE, Format 2.1, Max List Count 0, List Start Offset 0 (the car asks the size first).
    static let parameters: [UInt8] = [6, 8, 0, 0, 0, 0, 0, 0, 0, 0xAE, 7, 1, 0, 4, 2, 0, 0, 5, 2, 0, 0]
    static let get = OBEXPacket(
        code: 0x83, isResponse: false,
        headers: [
            OBEXHeader(id: .connectionID, number: 1), .text(.name, "telecom/pb.vcf"),
            OBEXHeader(id: .type, bytes: Array("x-bt/phonebook".utf8) + [0]), OBEXHeader(id: .applicationParameters, bytes: parameters),
        ])
    static let size = OBEXPacket(
        code: 0xA0, isResponse: true,
        headers: [OBEXHeader(id: .connectionID, number: 1), OBEXHeader(id: .applicationParameters, bytes: [0x08, 2, 0x00, 0x02])])

    static func parse(_ bytes: [UInt8], response: Bool, answering: OBEXOpcode? = nil) throws(DecodeError) -> OBEXPacket {
        try withByteReader(bytes) { (r: inout ByteReader) throws(DecodeError) -> OBEXPacket in
            try OBEXPacket(parsing: &r, isResponse: response, answering: answering)
        }
    }

    @Test func lengthsAndFieldsAreTsharks() throws {
        #expect(Self.connect.length == 26 && Self.connected.length == 31 && Self.get.length == 83 && Self.size.length == 15)
        let c = try Self.parse(Self.connect.bytes, response: false)
        #expect(c == Self.connect && c.opcode == .connect && c.final && c.version == 0x10 && c.maxPacketLength == 3956)
        #expect(c.target == "PBAP" && c.summary == "Connect - PBAP max packet 3956")
        // A Connect response carries Connect's fields only when read as the answer to a Connect.
        let r = try Self.parse(Self.connected.bytes, response: true, answering: .connect)
        #expect(r == Self.connected && r.response == .success && r.connectionID == 1 && r.target == "PBAP")
        #expect(r.summary == "Success (200) - PBAP max packet 3956 connection 1")
        let g = try Self.parse(Self.get.bytes, response: false)
        #expect(g.opcode == .get && g.final && g.name == "telecom/pb.vcf" && g.type == "x-bt/phonebook" && g.connectionID == 1)
        #expect(g.headers.map(\.id.rawValue) == [0xCB, 0x01, 0x42, 0x4C])
        #expect(g.header(.applicationParameters)?.parameters?.map(\.tag) == [6, 7, 4, 5] && g.parameter(0x04) == 0)
        #expect(g.summary == "Get final \"telecom/pb.vcf\" (x-bt/phonebook) connection 1")
        let s = try Self.parse(Self.size.bytes, response: true, answering: .get)
        #expect(s.parameter(0x08) == 2 && s.bodyBytes == 0)
    }

    @Test func responseCodesReadAsHTTP() {
        #expect(OBEXResponseCode(rawValue: 0xA0).description == "Success (200)")
        #expect(OBEXResponseCode(rawValue: 0x90) == .continue && OBEXResponseCode.continue.description == "Continue (100)")
        #expect(OBEXResponseCode(rawValue: 0xC4) == .notFound && OBEXResponseCode.notFound.description == "Not Found (404)")
        #expect(OBEXResponseCode(rawValue: 0xD3).description == "Service Unavailable (503)")
        #expect(OBEXResponseCode(rawValue: 0xE0).description == "Database Full" && !OBEXResponseCode(rawValue: 0xE0).isSuccess)
        #expect(OBEXResponseCode(rawValue: 0x7E).description == "OBEXResponseCode(0x7e)")
    }

    /// Body and End Of Body count; a Put without the Final bit; Set Path's two bytes; an empty Name (back to the root).
    @Test func bodiesPutAndSetPath() throws {
        let put = OBEXPacket(
            code: 0x02, isResponse: false,
            headers: [
                .text(.name, "test.txt"), OBEXHeader(id: .type, bytes: Array("text/plain".utf8) + [0]), OBEXHeader(id: .length, number: 30),
            ])
        let p = try Self.parse(put.bytes, response: false)
        #expect(!p.final && p.opcode == .put && p.name == "test.txt" && p.type == "text/plain" && p.header(.length)?.number == 30)
        let body = OBEXPacket(
            code: 0x82, isResponse: false, headers: [OBEXHeader(id: .body, bytes: [1, 2, 3]), OBEXHeader(id: .endOfBody, bytes: [4, 5])])
        #expect(try Self.parse(body.bytes, response: false).bodyBytes == 5)
        let setPath = OBEXPacket(code: 0x85, isResponse: false, setPathFlags: 0x02, headers: [OBEXHeader(id: .name)])
        let sp = try Self.parse(setPath.bytes, response: false)
        #expect(sp.opcode == .setPath && sp.setPathFlags == 0x02 && sp.name == "" && sp.length == 8)
        #expect(sp.summary == "Set Path \"\"")
    }

    /// A header whose length is under 3, a packet whose length disagrees with its bytes, a header running past the
    /// end: each an error with the offset in the packet.
    @Test func malformedPacketsSayWhere() {
        // Get, length 8, Connection Id 1, then a Name header claiming 2 bytes.
        #expect(throws: DecodeError.invalidValue(field: "OBEX Name header length", value: 2, offset: 9)) {
            try Self.parse([0x83, 0x00, 0x0B, 0xCB, 0, 0, 0, 1, 0x01, 0x00, 0x02], response: false)
        }
        #expect(throws: DecodeError.invalidValue(field: "OBEX packet length (5 bytes)", value: 9, offset: 1)) {
            try Self.parse([0x83, 0x00, 0x09, 0xCB, 0], response: false)
        }
        #expect(throws: DecodeError.self) { try Self.parse([0x83, 0x00, 0x08, 0x01, 0x00, 0x09, 0x00, 0x41], response: false) }
    }

    @Test func targetsByName() {
        #expect(OBEXTarget.name(Self.pbap) == "PBAP")
        let cover: [UInt8] = [0x71, 0x63, 0xDD, 0x54, 0x4A, 0x7E, 0x11, 0xE2, 0xB4, 0x7C, 0x00, 0x50, 0xC2, 0x49, 0x00, 0x48]
        #expect(OBEXTarget.name(cover) == "cover art (BIP)")
        #expect(OBEXTarget.name(Array(repeating: 0xAB, count: 16)) == String(repeating: "ab", count: 16))
        #expect(OBEXTarget.name(Array("IRMC-SYNC".utf8)) == "IRMC-SYNC")
    }
}
