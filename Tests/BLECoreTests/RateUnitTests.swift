import BLECore
import Testing

/// One unit for every rate a run prints (`--units`): the conversions are the SI and byte definitions, checked by hand.
@Suite struct RateUnitTests {
    @Test func everyUnitIsItsDefinition() {
        // 1 kbps = 1,000 bit/s; 1 kB/s = 1,000 bytes/s = 8,000 bit/s (decimal prefixes, as --min-rate reads them).
        #expect(RateUnit.kbps.format(184_512) == "184.5 kbps")
        #expect(RateUnit.bps.format(184_512) == "184,512 bps")
        #expect(RateUnit.megabitsPerSecond.format(1_376_300) == "1.4 Mbps")
        #expect(RateUnit.kilobytesPerSecond.format(240_000) == "30.0 kB/s")
        #expect(RateUnit.bytesPerSecond.format(240_000) == "30,000 B/s")
        #expect(RateUnit.megabytesPerSecond.format(8_000_000) == "1.0 MB/s")
    }

    @Test func smallRatesKeepTwoSignificantDigits() {
        #expect(RateUnit.kbps.format(379) == "0.38 kbps")
        #expect(RateUnit.kbps.format(45) == "0.045 kbps")
        #expect(RateUnit.kbps.format(0) == "0 kbps")
        #expect(RateUnit.kbps.number(790.9e3) == "790.9")
        #expect(RateUnit.kbps.number(1_376_312) == "1,376")
    }

    @Test func parsesEveryUnitWithItsValue() throws {
        let cases: [(String, Double, RateUnit)] = [
            ("30kB/s", 240_000, .kilobytesPerSecond), ("160kbps", 160_000, .kbps), ("2000B/s", 16_000, .bytesPerSecond),
            ("1.2 Mbps", 1_200_000, .megabitsPerSecond), ("500bps", 500, .bps), ("2MB/s", 16_000_000, .megabytesPerSecond),
        ]
        for (text, bps, unit) in cases {
            let parsed = try #require(RateUnit.parse(text), "\(text)")
            #expect(parsed.bitsPerSecond == bps && parsed.unit == unit, "\(text)")
        }
        #expect(RateUnit.parse("fast") == nil)
        #expect(RateUnit.parse("-3kbps") == nil)
        #expect(RateUnit.parse("kbps") == nil)
    }
}
