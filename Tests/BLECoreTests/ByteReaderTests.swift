import BLECore
import Testing

@Suite struct ByteReaderTests {
    @Test func readsIntegersInBothByteOrders() throws {
        let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07]
        try withByteReader(bytes) { (input: inout ByteReader) throws(DecodeError) in
            #expect(try UInt8(parsing: &input) == 0x01)
            #expect(try UInt16(parsingLittleEndian: &input) == 0x0302)
            #expect(try UInt32(parsingBigEndian: &input) == 0x0405_0607)
            #expect(input.isAtEnd)
        }
    }

    @Test(arguments: [0, 1, 3])
    func truncatedReadThrowsWithOffset(_ available: Int) {
        let bytes = [UInt8](repeating: 0xAA, count: available)
        #expect(throws: DecodeError.truncated(needed: 4, available: available, offset: 0)) {
            try withByteReader(bytes) { (input: inout ByteReader) throws(DecodeError) in try UInt32(parsingLittleEndian: &input) }
        }
    }

    @Test func sliceCannotReadPastItsEnd() throws {
        let bytes: [UInt8] = [0x02, 0xAA, 0xBB, 0xCC]
        try withByteReader(bytes) { (input: inout ByteReader) throws(DecodeError) in
            let n = Int(try input.readUInt8())
            var child = try input.slice(n)
            #expect(try child.readArray(2) == [0xAA, 0xBB])
            #expect(throws: DecodeError.truncated(needed: 1, available: 0, offset: 3)) { try child.readUInt8() }
            #expect(try input.readUInt8() == 0xCC)
        }
    }

    @Test func negativeOrHugeLengthsNeverTrap() throws {
        try withByteReader([1, 2, 3]) { (input: inout ByteReader) throws(DecodeError) in
            #expect(throws: DecodeError.self) { try input.readBytes(-1) }
            #expect(throws: DecodeError.self) { try input.readBytes(Int.max) }
            #expect(input.offset == 0)
        }
    }
}

@Suite struct CoreValueTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01 00:00:00.000000"),
        (Int64(1_773_950_641_695_475), "2026-03-19 20:04:01.695475"),
        (Int64(951_782_400_000_001), "2000-02-29 00:00:00.000001"),
        (Int64(-1), "1969-12-31 23:59:59.999999"),
    ])
    func timestampsFormatInUTC(_ micros: Int64, _ text: String) {
        #expect(Timestamp(microseconds: micros).description == text)
    }

    @Test func sigUUIDWrittenIn128BitFormEqualsShortForm() throws {
        let long = try #require(BluetoothUUID("00002A37-0000-1000-8000-00805F9B34FB"))
        #expect(long == BluetoothUUID(uuid16: 0x2A37))
        #expect(long.uuid16 == 0x2A37)
        #expect(long.description == "0x2A37")
        let vendor = try #require(BluetoothUUID("8EC90001-F315-4F60-9FB8-838830DAEA50"))
        #expect(vendor.uuid16 == nil)
        #expect(vendor.uuidString == "8EC90001-F315-4F60-9FB8-838830DAEA50")
        // Wire order is little-endian: the last byte on the wire is the first of the text.
        #expect(vendor.littleEndianBytes.last == 0x8E && vendor.littleEndianBytes.first == 0x50)
        let reparsed = try withByteReader(vendor.littleEndianBytes) { (r: inout ByteReader) throws(DecodeError) in
            try BluetoothUUID(parsingLittleEndian: &r, width: 16)
        }
        #expect(reparsed == vendor)
        #expect(BluetoothUUID("not-a-uuid") == nil)
        #expect(BluetoothUUID("180f") == BluetoothUUID(uuid16: 0x180F))
    }

    @Test func crc32MatchesTheStandardCheckValue() {
        // The CRC-32/ISO-HDLC check value for "123456789" is 0xCBF43926.
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        var split = CRC32()
        split.update(Array("12345".utf8))
        split.update(Array("6789".utf8))
        #expect(split.value == 0xCBF4_3926)
    }

    @Test func hexRoundTrips() {
        #expect(hexString([0xA5, 0x06, 0x03]) == "a50603")
        #expect(bytes(fromHex: "A5 06:03") == [0xA5, 0x06, 0x03])
        #expect(bytes(fromHex: "0xabc") == nil)
        #expect(bytes(fromHex: "zz") == nil)
    }

    @Test func durationsReadWell() {
        #expect(formatDuration(microseconds: 812) == "812 µs")
        #expect(formatDuration(microseconds: 12_400) == "12.4 ms")
        #expect(formatDuration(microseconds: 3_207_000) == "3.207 s")
        #expect(String(fractionDigits: 2, 3.14159) == "3.14")
        #expect(String(fractionDigits: 1, -0.04) == "0.0")
    }
}
