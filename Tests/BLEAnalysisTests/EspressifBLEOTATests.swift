import BLEAnalysis
import BLEAnalysisTestSupport
import BLECodecs
import BLECore
import Testing

/// Espressif BLE OTA built from typed packets (the device model: 4096-byte sectors, CRC-16/XMODEM).
@Suite struct EspressifBLEOTATests {
    static let image = xorshiftImage(seed: 0xE5B1_0001, count: 10_000)
    static let fwHandle: UInt16 = 16, commandHandle: UInt16 = 22

    /// A whole update; `damage` flips one byte of the first sending of that sector (after its CRC
    /// was computed), which the device refuses with a CRC error; `resend: false` leaves it there.
    static func update(step: Int, damage: Int? = nil, resend: Bool = true, startStatus: UInt16 = 0) -> (
        events: [TestEvent], resentFrame: Int?
    ) {
        var ev: [TestEvent] = []
        var f = 1
        var resentFrame: Int?
        func command(_ p: EspressifOTAControlPacket) {
            ev.append(.write(f, handle: commandHandle, uuid: EspressifBLEOTA.command, p.bytes)); f += 1
        }
        func ack(_ handle: UInt16, _ p: EspressifOTAControlPacket) {
            ev.append(
                .notify(f, handle: handle, uuid: handle == fwHandle ? EspressifBLEOTA.receiveFirmware : EspressifBLEOTA.command, p.bytes));
            f += 1
        }
        command(EspressifOTAControlPacket(1, UInt16(image.count & 0xFFFF), UInt16(image.count >> 16)))
        ack(commandHandle, EspressifOTAControlPacket(3, 1, startStatus))
        if startStatus != 0 { return (ev, nil) }
        let sectors = chunked(image, EspressifBLEOTA.sectorSize)
        var i = 0
        var damaged = false
        while i < sectors.count {
            var packets = EspressifOTAFirmwarePacket.packets(sector: i, data: sectors[i], step: step)
            let bad = i == damage && !damaged
            if bad { damaged = true; packets[0].data[0] ^= 0x10 }
            if i == damage && !bad { resentFrame = f }
            for p in packets { ev.append(.write(f, handle: fwHandle, uuid: EspressifBLEOTA.receiveFirmware, p.bytes)); f += 1 }
            if bad {
                ack(fwHandle, EspressifOTAControlPacket(UInt16(i), 1, UInt16(i)))
                if !resend { return (ev, nil) }
                continue
            }
            ack(fwHandle, EspressifOTAControlPacket(UInt16(i), 0, UInt16(i + 1)))
            i += 1
        }
        command(EspressifOTAControlPacket(2))
        ack(commandHandle, EspressifOTAControlPacket(3, 2, 0))
        return (ev, resentFrame)
    }

    @Test(arguments: [20, 100, 237, 460])
    func rebuildsTheImageAtAnyPacketSize(_ step: Int) {
        var t = OTATracker()
        feed(&t, Self.update(step: step).events)
        #expect(t.sessions.count == 1)
        let s = t.sessions[0]
        #expect(s.protocolName == .espressifBLEOTA)
        #expect(s.result == .success)
        #expect(s.image == Self.image)
        #expect(s.expectedSize == Self.image.count)
        let perSector = (EspressifBLEOTA.sectorSize + step - 1) / step
        let lastSector = Self.image.count % EspressifBLEOTA.sectorSize
        #expect(s.packets == 2 * perSector + (lastSector + step - 1) / step)
        #expect(s.retransmittedPackets.isEmpty && s.resends.isEmpty && s.findings.isEmpty)
    }

    @Test func refusedSectorIsMatchedToItsResend() throws {
        let (events, resentFrame) = Self.update(step: 237, damage: 1)
        var t = OTATracker()
        feed(&t, events)
        let s = try #require(t.sessions.first)
        #expect(s.result == .success)
        #expect(s.image == Self.image)
        #expect(s.retransmittedPackets == [1])
        #expect(s.retransmittedBytes == EspressifBLEOTA.sectorSize)
        #expect(s.resends.map(\.index) == [1])
        #expect(s.resends.first?.resentFrame == resentFrame)
        #expect(s.findings.contains { "\($0.kind.message)".hasPrefix("sector 1: CRC-16") })
    }

    @Test func refusedSectorNeverSentAgainIsAFailure() throws {
        var t = OTATracker()
        feed(&t, Self.update(step: 237, damage: 1, resend: false).events, end: [.disconnect(connectionNumber: 1)])
        let s = try #require(t.sessions.first)
        #expect(s.result == .failure(code: 1, name: "CRC error (sector 1)"))
        #expect(s.findings.contains { "\($0.kind.message)".contains("never sent: 1") })
    }

    @Test func rejectedStartIsAFailure() throws {
        var t = OTATracker()
        feed(&t, Self.update(step: 237, startStatus: 1).events)
        #expect(t.sessions.first?.result == .failure(code: 1, name: "Start OTA: Reject"))
    }

    @Test func packetsRoundTripAndCheckTheirCRC() throws {
        let command = EspressifOTAControlPacket(1, 0x7530, 0)
        #expect(command.bytes.count == 20)
        // CRC-16/XMODEM of the 18 bytes, as the component's crc16_ccitt computes it.
        #expect(UInt32(command.crc) == ChecksumAlgorithm.crc16XModem.compute(Array(command.bytes[0..<18])))
        #expect(
            try withByteReader(command.bytes) { (r: inout ByteReader) throws(DecodeError) in try EspressifOTAControlPacket(parsing: &r) }
                == command)
        #expect(command.firmwareLength == 30_000)
        let wrong = EspressifOTAControlPacket(2, correctCRC: false)
        #expect(
            try withByteReader(wrong.bytes) { (r: inout ByteReader) throws(DecodeError) in try EspressifOTAControlPacket(parsing: &r) }
                .crcOK == false)
        #expect(throws: DecodeError.self) {
            try withByteReader([1, 0, 0]) { (r: inout ByteReader) throws(DecodeError) in try EspressifOTAControlPacket(parsing: &r) }
        }
        for p in EspressifOTAFirmwarePacket.packets(sector: 7, data: Array(Self.image[0..<600]), step: 237) {
            #expect(
                try withByteReader(p.bytes) { (r: inout ByteReader) throws(DecodeError) in try EspressifOTAFirmwarePacket(parsing: &r) }
                    == p)
        }
    }
}
