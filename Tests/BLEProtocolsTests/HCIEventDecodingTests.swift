import BLECore
import Testing

@testable import BLEProtocols

/// Events longer than the fixed size the spec gives them are read by their first bytes (Android's
/// hci_evt_length.h takes the sizes as minimums; tshark decodes the known fields), the rest counted; shorter ones
/// stay raw with the error.
@Suite struct HCIEventDecodingTests {
    /// Frame 299 of the corpus's ix7 tracker log: `04 0f 05 02 01 5b fc 02`, a Command Status of 5 bytes (the spec:
    /// 4, Core Vol 4, Part E, 7.7.15) answering vendor command 0xFC5B with 0x02 (Unknown Connection Identifier).
    @Test func aCommandStatusWithOneByteMoreDecodes() throws {
        let packet = HCIEventPacket(code: HCIEventCode(0x0F), parameters: [0x02, 0x01, 0x5B, 0xFC, 0x02])
        let d = packet.decoding
        #expect(d.ignoredBytes == 1 && d.error == nil)
        guard case let .commandStatus(cs) = d.parameters else {
            Issue.record("not a Command Status: \(d.parameters)")
            return
        }
        #expect(cs.status.rawValue == 0x02 && cs.numHCICommandPackets == 1 && cs.opcode.rawValue == 0xFC5B)
        #expect(throws: DecodeError.self) { try packet.decodeParameters() }  // the strict decode still says it
    }

    /// An LE subevent too: LE Data Length Change (7.7.65.7, 10 bytes after the subevent code) with 2 more.
    @Test func anLESubeventWithTwoBytesMoreDecodes() {
        let fields: [UInt8] = [0x40, 0x00, 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08]
        let packet = HCIEventPacket(code: .leMeta, parameters: [0x07] + fields + [0xAA, 0xBB])
        let d = packet.decoding
        #expect(d.ignoredBytes == 2 && d.error == nil)
        guard case let .declared(declared) = d.parameters, let c = declared.as(LEDataLengthChange.self) else {
            Issue.record("not LE Data Length Change: \(d.parameters)")
            return
        }
        #expect(c.handle == 0x0040 && c.maxTxOctets == 251 && c.maxRxTime == 2120)
    }

    /// Shorter than the spec: raw, with the size error, nothing ignored.
    @Test func aShortCommandStatusStaysRawWithItsError() {
        let packet = HCIEventPacket(code: HCIEventCode(0x0F), parameters: [0x00, 0x01, 0x05])
        let d = packet.decoding
        #expect(d.ignoredBytes == 0)
        #expect(d.error == .invalidSize(expected: 4, got: 3))
        if case .raw = d.parameters {} else { Issue.record("decoded a short Command Status: \(d.parameters)") }
    }

    /// Frame 163 of the corpus's CUBOT log: `04 13 0b 01 01 02 01 00` then 6 zeros, a Number Of Completed Packets
    /// (7.7.19) of 11 bytes whose count says one entry (5 bytes); tshark reads the entry, handle 0x0201, 1 packet.
    @Test func aCompletedPacketsEventWithTrailingZerosKeepsItsEntry() {
        let packet = HCIEventPacket(
            code: HCIEventCode(0x13), parameters: [0x01, 0x01, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        let d = packet.decoding
        #expect(d.ignoredBytes == 6 && d.error == nil)
        guard case let .numberOfCompletedPackets(n) = d.parameters else {
            Issue.record("not Number Of Completed Packets: \(d.parameters)")
            return
        }
        #expect(n.entries == [.init(handle: 0x0201, completedPackets: 1)])
    }

    /// The near miss: a count of two with one entry's bytes is short, so it stays raw with its error.
    @Test func aCompletedPacketsEventShortOfItsCountStaysRaw() {
        let packet = HCIEventPacket(code: HCIEventCode(0x13), parameters: [0x02, 0x01, 0x02, 0x01, 0x00])
        let d = packet.decoding
        #expect(d.ignoredBytes == 0)
        #expect(d.error == .invalidSize(expected: 9, got: 5))
        if case .raw = d.parameters {} else { Issue.record("decoded a short event: \(d.parameters)") }
    }
}
