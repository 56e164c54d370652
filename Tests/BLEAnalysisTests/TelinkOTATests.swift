import BLEAnalysis
import BLEAnalysisTestSupport
import BLECodecs
import BLECore
import Testing

/// Telink OTA built from typed packets: commands and data on one characteristic.
@Suite struct TelinkOTATests {
    static let handle: UInt16 = 18

    static func command(_ c: TelinkOTACommand, _ rest: [UInt8] = []) -> [UInt8] {
        [UInt8(truncatingIfNeeded: c.rawValue), UInt8(c.rawValue >> 8)] + rest
    }

    /// An update of `image`; `result` nil leaves CMD_OTA_RESULT out (a legacy server), `skip` an index never sent.
    static func update(_ image: [UInt8], result: UInt8? = 0, skip: Int? = nil, resend: Int? = nil) -> [TestEvent] {
        var ev: [TestEvent] = []
        var f = 1
        func write(_ v: [UInt8]) { ev.append(.write(f, handle: handle, uuid: TelinkOTA.otaData, v, command: true)); f += 1 }
        write(command(.version))
        write(command(.start))
        let chunks = chunked(image, 16)
        for (i, c) in chunks.enumerated() where i != skip {
            write(TelinkOTAPacket(index: i, data: c).bytes)
            if i == resend { write(TelinkOTAPacket(index: i, data: c).bytes) }
        }
        let last = UInt16(chunks.count - 1)
        write(command(.end, [UInt8(last & 0xFF), UInt8(last >> 8), UInt8(~last & 0xFF), UInt8(~last >> 8)]))
        if let result { ev.append(.notify(f, handle: handle, uuid: TelinkOTA.otaData, command(.result, [result]))) }
        return ev
    }

    @Test(arguments: [1_600, 1_601, 4_000])
    func rebuildsTheImageWithItsPadding(_ size: Int) throws {
        let image = xorshiftImage(seed: 0x7E11_0001, count: size)
        var t = OTATracker()
        feed(&t, Self.update(image))
        let s = try #require(t.sessions.first)
        #expect(t.sessions.count == 1)
        #expect(s.protocolName == .telinkOTA)
        #expect(s.result == .success)
        // The last packet is padded with 0xFF to 16 bytes; the size itself is never sent.
        let padded = image + [UInt8](repeating: 0xFF, count: (16 - size % 16) % 16)
        #expect(s.image == padded)
        #expect(s.packets == (size + 15) / 16)
        #expect(s.expectedPackets == (size + 15) / 16)
        #expect(s.findings.isEmpty)
    }

    @Test func failureResultIsNamed() {
        var t = OTATracker()
        feed(&t, Self.update(xorshiftImage(seed: 1, count: 320), result: 0x03))
        #expect(t.sessions.first?.result == .failure(code: 3, name: "OTA_DATA_CRC_ERR"))
    }

    @Test func legacyServerWithoutResultAndAMissingPacket() {
        let image = xorshiftImage(seed: 2, count: 320)
        var ok = OTATracker()
        feed(&ok, Self.update(image, result: nil), end: [.disconnect(connectionNumber: 1)])
        #expect(ok.sessions.first?.result == .success)
        #expect(ok.sessions.first?.findings.contains { $0.message.hasPrefix("no CMD_OTA_RESULT") } == true)
        var gap = OTATracker()
        feed(&gap, Self.update(image, result: nil, skip: 7), end: [.disconnect(connectionNumber: 1)])
        #expect(gap.sessions.first?.result.label == "incomplete")
        #expect(gap.sessions.first?.findings.contains { $0.kind == .otaMissingPackets([7]) } == true)
    }

    @Test func packetWrittenTwiceIsAResend() {
        var t = OTATracker()
        feed(&t, Self.update(xorshiftImage(seed: 3, count: 320), resend: 4))
        #expect(t.sessions.first?.retransmittedPackets == [4])
        #expect(t.sessions.first?.retransmittedBytes == 16)
    }

    @Test func packetRoundTripAndCRC() throws {
        let p = TelinkOTAPacket(index: 0x0102, data: Array(0..<16))
        #expect(p.bytes.count == 20)
        // CRC-16/MODBUS over index + data, as Telink's crc16 (poly 0xA001 reflected, init 0xFFFF).
        #expect(UInt32(p.crc) == ChecksumAlgorithm.crc16Modbus.compute(Array(p.bytes[0..<18])))
        #expect(try withByteReader(p.bytes) { (r: inout ByteReader) throws(DecodeError) in try TelinkOTAPacket(parsing: &r) } == p)
        var damaged = p.bytes
        damaged[5] ^= 1
        #expect(
            try withByteReader(damaged) { (r: inout ByteReader) throws(DecodeError) in try TelinkOTAPacket(parsing: &r) }.crcOK == false)
        #expect(throws: DecodeError.self) {
            try withByteReader([0, 0, 1, 2, 3]) { (r: inout ByteReader) throws(DecodeError) in try TelinkOTAPacket(parsing: &r) }
        }
    }
}
