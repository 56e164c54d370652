import BLEAnalysis
import BLECore
import BLEProtocols
import Testing

@Suite struct CBORTests {
    /// RFC 8949 Appendix A examples.
    @Test func rfcExamples() throws {
        #expect(try CBORValue(bytes: [0x00]) == .int(0))
        #expect(try CBORValue(bytes: [0x18, 0x64]) == .int(100))
        #expect(try CBORValue(bytes: [0x1A, 0x00, 0x0F, 0x42, 0x40]) == .int(1_000_000))
        #expect(try CBORValue(bytes: [0x38, 0x63]) == .int(-100))
        #expect(try CBORValue(bytes: [0x44, 0x01, 0x02, 0x03, 0x04]) == .bytes([1, 2, 3, 4]))
        #expect(try CBORValue(bytes: [0x64, 0x49, 0x45, 0x54, 0x46]) == .text("IETF"))
        #expect(try CBORValue(bytes: [0xF5]) == .bool(true))
        #expect(try CBORValue(bytes: [0xF9, 0x3C, 0x00]) == .float(1.0))
        #expect(try CBORValue(bytes: [0x83, 0x01, 0x02, 0x03]) == .array([.int(1), .int(2), .int(3)]))
        // {"a": 1, "b": [2, 3]}
        let m = try CBORValue(bytes: [0xA2, 0x61, 0x61, 0x01, 0x61, 0x62, 0x82, 0x02, 0x03])
        #expect(m["a"] == .int(1))
        #expect(m["b"] == .array([.int(2), .int(3)]))
        // Indefinite map {_ "a": 1, "b": [_ 2, 3]}
        let i = try CBORValue(bytes: [0xBF, 0x61, 0x61, 0x01, 0x61, 0x62, 0x9F, 0x02, 0x03, 0xFF, 0xFF])
        #expect(i["b"] == .array([.int(2), .int(3)]))
        // (_ h'0102', h'030405')
        #expect(try CBORValue(bytes: [0x5F, 0x42, 0x01, 0x02, 0x43, 0x03, 0x04, 0x05, 0xFF]) == .bytes([1, 2, 3, 4, 5]))
    }

    @Test func badInputThrows() {
        #expect(throws: DecodeError.self) { try CBORValue(bytes: [0x44, 0x01]) }
        #expect(throws: DecodeError.self) { try CBORValue(bytes: [0x1C]) }
        #expect(throws: DecodeError.self) { try CBORValue(bytes: [0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(throws: DecodeError.self) { try CBORValue(bytes: [UInt8](repeating: 0x81, count: 40) + [0x00]) }
    }

    @Test func roundTrip() throws {
        let v = CBORValue.map([
            CBORPair(key: .text("off"), value: .int(4096)), CBORPair(key: .text("data"), value: .bytes([1, 2, 3])),
            CBORPair(key: .text("rc"), value: .int(-3)),
        ])
        #expect(try CBORValue(bytes: v.encoded) == v)
    }
}

@Suite struct CeilingTests {
    /// DESIGN.md §4: ~237 kbps at 1M/27/23, ~791 at 1M/251/247, ~1402 at 2M/251/247 (within 1 %).
    @Test(arguments: [
        (ThroughputCeiling.PHY.le1M, 27, 23, 237_000.0),
        (.le1M, 251, 247, 791_000),
        (.le2M, 251, 247, 1_402_000),
    ])
    func designFigures(_ phy: ThroughputCeiling.PHY, _ dl: Int, _ mtu: Int, _ expected: Double) throws {
        let c = try #require(ThroughputCeiling.notificationCeiling(mtu: mtu, dataLength: dl, phy: phy))
        #expect(abs(c - expected) / expected < 0.01)
    }

    @Test func packetTimes() {
        // Core Spec Vol 6, Part B, 2.1: max packet times 328 µs (1M, 27 octets), 2120 µs (1M, 251+4 MIC), 17040 µs (S8, 255).
        #expect(ThroughputCeiling.packetTime(octets: 27, phy: .le1M) == 296)
        #expect(ThroughputCeiling.packetTime(octets: 255, phy: .le1M) == 2120)
        #expect(ThroughputCeiling.packetTime(octets: 255, phy: .codedS8) == 17040)
        #expect(ThroughputCeiling.packetTime(octets: 255, phy: .codedS2) == 4542)
        #expect(ThroughputCeiling.packetTime(octets: 255, phy: .le2M) == 1064)
    }

    @Test func fragmentsAndEncryption() throws {
        #expect(ThroughputCeiling.fragments(octets: 251, dataLength: 27) == [27, 27, 27, 27, 27, 27, 27, 27, 27, 8])
        let plain = try #require(ThroughputCeiling.notificationCeiling(mtu: 247, dataLength: 27, phy: .le1M))
        let enc = try #require(ThroughputCeiling.notificationCeiling(mtu: 247, dataLength: 27, phy: .le1M, encrypted: true))
        #expect(enc < plain)
        #expect(ThroughputCeiling.notificationCeiling(mtu: 22, dataLength: 27, phy: .le1M) == nil)
    }

    @Test func perEventCap() throws {
        let cap = try #require(ThroughputCeiling.perEventCap(packetsPerEvent: 4, payloadBytes: 244, intervalMicroseconds: 15_000))
        #expect(abs(cap - 520_533) < 1)
        let link = LinkSnapshot(
            parameters: nil, phy: PHYPair(tx: .le2M, rx: .le2M),
            dataLength: DataLength(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120),
            mtu: 247, encrypted: false)
        let c = try #require(ThroughputCeiling.ceiling(for: link, direction: .rx))
        #expect(abs(c - 1_402_298) < 1_000)
    }
}
