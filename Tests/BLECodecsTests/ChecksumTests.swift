import Testing

@testable import BLECodecs

/// Check values of "123456789" from the CRC RevEng catalogue.
struct ChecksumTests {
    @Test(arguments: [
        (ChecksumAlgorithm.crc8, UInt32(0xF4)),
        (.crc16CCITTFalse, 0x29B1),
        (.crc16Modbus, 0x4B37),
        (.crc16XModem, 0x31C3),
        (.crc32, 0xCBF4_3926),
        (.sum8, 0xDD),  // 0x31+…+0x39 = 477 = 0x1DD
        (.xor8, 0x31),  // 0x31^0x32^…^0x39
    ])
    func checkValues(_ algorithm: ChecksumAlgorithm, _ expected: UInt32) {
        #expect(algorithm.compute(Array("123456789".utf8)) == expected)
    }
}
