import BLEAnalysis
import BLEAnalysisTestSupport
import BLECore
import Testing

/// The Cypress/Infineon bootloader built from typed packets.
@Suite struct CypressBootloaderTests {
    static let handle: UInt16 = 16

    static func update(_ image: [UInt8], row: Int, split: Int?, status: UInt8 = 0, valid: UInt8 = 1, again: Int? = nil) -> [TestEvent] {
        var ev: [TestEvent] = []
        var f = 1
        func write(_ code: CypressBootloaderCommand, _ data: [UInt8]) {
            ev.append(
                .write(
                    f, handle: handle, uuid: CypressBootloader.characteristic,
                    CypressBootloaderPacket(code: code.rawValue, data: data).bytes));
            f += 1
        }
        func answer(_ status: UInt8 = 0, _ data: [UInt8] = []) {
            ev.append(
                .notify(f, handle: handle, uuid: CypressBootloader.characteristic, CypressBootloaderPacket(code: status, data: data).bytes));
            f += 1
        }
        write(.enterBootloader, [])
        answer(0, [0x69, 0x10, 0x2A, 0x0E, 0, 0x1E, 1, 1])
        var rows = Array(chunked(image, row).enumerated())
        if let again { rows.append((offset: again, element: Array(image[again * row..<min(image.count, (again + 1) * row)]))) }
        for (i, data) in rows {
            let cut = split.map { min($0, data.count) } ?? 0
            if cut > 0 { write(.sendData, Array(data[..<cut])); answer() }
            write(.programRow, [0, UInt8(truncatingIfNeeded: 0x40 + i), UInt8((0x40 + i) >> 8)] + data[cut...])
            answer(i == 2 ? status : 0)
            if i == 2 && status != 0 { return ev }
        }
        write(.verifyChecksum, [])
        answer(0, [valid])
        write(.exitBootloader, [0])
        return ev
    }

    @Test(arguments: [nil, 1, 64, 127] as [Int?])
    func rebuildsTheRowsInOrder(_ split: Int?) throws {
        let image = xorshiftImage(seed: 0xC7, count: 128 * 5)
        var t = OTATracker()
        feed(&t, Self.update(image, row: 128, split: split), end: [.disconnect(connectionNumber: 1)])
        let s = try #require(t.sessions.first)
        #expect(t.sessions.count == 1)
        #expect(s.protocolName == .cypressBootloader)
        #expect(s.result == .success)
        #expect(s.image == image)
        #expect(s.packets == 5 * (split == nil ? 1 : 2))
        #expect(s.findings.isEmpty)
    }

    @Test func failedRowInvalidChecksumAndRowAgain() {
        let image = xorshiftImage(seed: 0xC8, count: 128 * 4)
        var failed = OTATracker()
        feed(&failed, Self.update(image, row: 128, split: 64, status: 0x08), end: [.disconnect(connectionNumber: 1)])
        #expect(failed.sessions.first?.result == .failure(code: 8, name: "ERR_CHECKSUM"))
        var invalid = OTATracker()
        feed(&invalid, Self.update(image, row: 128, split: nil, valid: 0))
        #expect(invalid.sessions.first?.result == .failure(code: nil, name: "application checksum not valid"))
        var again = OTATracker()
        feed(&again, Self.update(image, row: 128, split: nil, again: 1))
        #expect(again.sessions.first?.retransmittedPackets == [0x41])
        #expect(again.sessions.first?.image == image)
    }

    @Test func packetsRoundTripWithEitherChecksum() throws {
        let p = CypressBootloaderPacket(code: 0x39, data: [0, 0x40, 0, 1, 2, 3])
        #expect(p.bytes.first == 0x01 && p.bytes.last == 0x17)
        let parsed = try withByteReader(p.bytes) { (r: inout ByteReader) throws(DecodeError) in try CypressBootloaderPacket(parsing: &r) }
        #expect(parsed == p)
        #expect(parsed.checksumKind == .sum)
        // The 16-bit sum of every byte before the checksum, plus the checksum, is 0.
        #expect(p.bytes[0..<(p.bytes.count - 3)].reduce(UInt16(0)) { $0 &+ UInt16($1) } &+ p.checksum == 0)
        // Bootloaders built with a CRC packet checksum: CRC-16/CCITT reflected (0x8408, init 0xFFFF), inverted,
        // bytes swapped; for "123456789" the reflected CCITT with inversion is 0x906E.
        var crcPacket = p.bytes
        let x25: UInt16 = Array("123456789".utf8).withUnsafeBytes { b in
            var c: UInt16 = 0xFFFF
            for byte in b { var t = UInt16(byte); for _ in 0..<8 { c = (c ^ t) & 1 != 0 ? (c >> 1) ^ 0x8408 : c >> 1; t >>= 1 } }
            return ~c
        }
        #expect(x25 == 0x906E)
        var c: UInt16 = 0xFFFF
        for byte in crcPacket[0..<(crcPacket.count - 3)] {
            var t = UInt16(byte); for _ in 0..<8 { c = (c ^ t) & 1 != 0 ? (c >> 1) ^ 0x8408 : c >> 1; t >>= 1 }
        }
        c = ~c
        let swapped = c << 8 | c >> 8
        crcPacket[crcPacket.count - 3] = UInt8(truncatingIfNeeded: swapped)
        crcPacket[crcPacket.count - 2] = UInt8(swapped >> 8)
        #expect(
            try withByteReader(crcPacket) { (r: inout ByteReader) throws(DecodeError) in try CypressBootloaderPacket(parsing: &r) }
                .checksumKind == .crc)
        #expect(throws: DecodeError.self) {
            try withByteReader([0x01, 0x39, 0x05, 0x00, 1, 2]) { (r: inout ByteReader) throws(DecodeError) in
                try CypressBootloaderPacket(parsing: &r)
            }
        }
    }
}
