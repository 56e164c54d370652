import BLECore
import Testing

@testable import BLECodecs

/// Values computed by hand from the field layouts in the GATT Specification Supplement.
struct SIGCodecTests {
    func decode(_ uuid16: UInt16, _ hex: String) throws -> DecodedValue {
        let raw = try #require(bytes(fromHex: hex))
        let registry = CodecRegistry()
        return try #require(registry.decode(raw, context: CodecContext(characteristic: BluetoothUUID(uuid16: uuid16))))
    }

    func double(_ v: DecodedValue, _ name: String) -> Double? {
        if case let .double(d)? = v.field(name)?.value { return d }
        return nil
    }

    @Test func heartRate8BitWithContact() throws {
        let v = try decode(0x2A37, "06 48")
        #expect(v.valid)
        #expect(v.field("heartRate")?.value == .int(72))
        #expect(v.field("sensorContact")?.value == .bool(true))
        #expect(v.codec == "sig.heart-rate-measurement")
    }

    @Test func heartRate16BitEnergyRR() throws {
        let v = try decode(0x2A37, "19 2C 01 10 00 00 04")
        #expect(v.field("heartRate")?.value == .int(300))
        #expect(v.field("energyExpended")?.value == .int(16))
        #expect(v.field("rrIntervals")?.value == .list([DecodedField("rr", .double(1000), unit: "ms")]))
        #expect(v.valid)
    }

    @Test func heartRateTruncated() throws {
        let v = try decode(0x2A37, "01 48")
        #expect(!v.valid)
        #expect(v.problems.first?.contains("truncated") == true)
    }

    @Test func temperature() throws {
        let v = try decode(0x2A1C, "00 6C 01 00 FF")
        #expect(abs((double(v, "temperature") ?? 0) - 36.4) < 1e-9)
        #expect(v.field("temperature")?.unit == "°C")
        let t = try decode(0x2A1C, "07 6C 01 00 FF E6 07 03 0E 0A 1E 00 02")
        #expect(t.field("temperature")?.unit == "°F")
        #expect(t.field("timeStamp")?.value == .string("2022-03-14 10:30:00"))
        #expect(t.field("temperatureType")?.value == .named(2, "Body (general)"))
        #expect(t.valid)
    }

    @Test func ieee11073SpecialValues() {
        #expect(IEEE11073.sfloat(0x07FF).isNaN)
        #expect(IEEE11073.sfloat(0x07FE) == .infinity)
        #expect(IEEE11073.float(0x007F_FFFF).isNaN)
        #expect(IEEE11073.sfloat(IEEE11073.sfloatBits(mantissa: 160, exponent: -1)) == 16.0)
        #expect(IEEE11073.float(IEEE11073.floatBits(mantissa: -364, exponent: -1)) == -36.4)
    }

    @Test func bloodPressure() throws {
        let v = try decode(0x2A35, "04 78 00 50 00 5D 00 3C 00")
        #expect(double(v, "systolic") == 120)
        #expect(double(v, "diastolic") == 80)
        #expect(double(v, "meanArterialPressure") == 93)
        #expect(double(v, "pulseRate") == 60)
        #expect(v.field("systolic")?.unit == "mmHg")
        let k = try decode(0x2A35, "01 A0 F0 A0 F0 A0 F0")
        #expect(double(k, "systolic") == 16.0)
        #expect(k.field("systolic")?.unit == "kPa")
    }

    @Test func glucose() throws {
        let v = try decode(0x2A18, "03 01 00 E6 07 03 0E 0A 1E 00 FB FF 5F A0 11")
        #expect(v.valid)
        #expect(v.field("sequenceNumber")?.value == .int(1))
        #expect(v.field("timeOffset")?.value == .int(-5))
        #expect(abs((double(v, "concentration") ?? 0) - 0.000095) < 1e-12)
        #expect(v.field("type")?.value == .named(1, "Capillary Whole blood"))
        #expect(v.field("sampleLocation")?.value == .named(1, "Finger"))
    }

    @Test func cscAndRsc() throws {
        let c = try decode(0x2A5B, "03 02 01 00 00 00 04 05 00 00 02")
        #expect(c.field("cumulativeWheelRevolutions")?.value == .int(258))
        #expect(double(c, "lastWheelEventTime") == 1.0)
        #expect(c.field("cumulativeCrankRevolutions")?.value == .int(5))
        #expect(double(c, "lastCrankEventTime") == 0.5)
        let r = try decode(0x2A53, "03 80 02 50 64 00 E8 03 00 00")
        #expect(double(r, "speed") == 2.5)
        #expect(r.field("cadence")?.value == .int(80))
        #expect(double(r, "strideLength") == 1.0)
        #expect(double(r, "totalDistance") == 100.0)
    }

    @Test func currentTimeAndDeviceInfo() throws {
        let t = try decode(0x2A2B, "E6 07 03 0E 0A 1E 00 01 80 01")
        #expect(t.field("dateTime")?.value == .string("2022-03-14 10:30:00"))
        #expect(t.field("dayOfWeek")?.value == .named(1, "Monday"))
        #expect(t.field("fractions256")?.value == .int(128))
        #expect(t.field("adjustReason")?.value == .flags(1, ["manualTimeUpdate"]))
        #expect(try decode(0x2A29, "4E 6F 72 64 69 63 00").field("manufacturer")?.value == .string("Nordic"))
        #expect(try decode(0x2A00, "42 72 61 63 65").field("name")?.value == .string("Brace"))
        #expect(try decode(0x2A19, "5A").field("level")?.value == .int(90))
        #expect(try decode(0x2A19, "65").valid == false)
        let pnp = try decode(0x2A50, "01 59 00 34 12 00 01")
        #expect(pnp.field("vendorId")?.value == .named(0x59, "Nordic Semiconductor ASA"))
        #expect(pnp.field("productId")?.value == .int(0x1234))
        #expect(pnp.field("productVersion")?.value == .int(0x0100))
        let sys = try decode(0x2A23, "01 02 03 04 05 06 07 08")
        #expect(sys.field("manufacturerIdentifier")?.value == .int(0x05_0403_0201))
        #expect(sys.field("oui")?.value == .int(0x080706))
        #expect(try decode(0x2A38, "01").field("location")?.value == .named(1, "Chest"))
        #expect(try decode(0x2A01, "41 03").field("appearance")?.value == .named(0x0341, "Heart rate belt"))
    }

    @Test func gapGattAndDescriptors() throws {
        let p = try decode(0x2A04, "06 00 0C 00 00 00 90 01")
        #expect(double(p, "minInterval") == 7.5)
        #expect(double(p, "maxInterval") == 15)
        #expect(p.field("timeout")?.value == .int(4000))
        let sc = try decode(0x2A05, "01 00 FF FF")
        #expect(sc.field("startHandle")?.value == .int(1))
        #expect(sc.field("endHandle")?.value == .int(0xFFFF))
        let n = try decode(0x2902, "01 00")
        #expect(n.field("notifications")?.value == .bool(true))
        #expect(n.field("indications")?.value == .bool(false))
        #expect(try decode(0x2902, "02 00").field("indications")?.value == .bool(true))
        #expect(try decode(0x2902, "01").valid == false)
        #expect(try decode(0x2901, "52 50 4D").field("description")?.value == .string("RPM"))
        let pf = try decode(0x2904, "04 00 AD 27 01 00 00")
        #expect(pf.field("format")?.value == .named(4, "uint8"))
        #expect(pf.field("unit")?.value.intValue == 0x27AD)
        let d = try decode(0x2803, "12 03 00 37 2A")
        #expect(d.field("properties")?.value == .flags(0x12, ["read", "notify"]))
        #expect(d.field("valueHandle")?.value == .int(3))
        #expect(d.field("uuid")?.value == .string("0x2A37 (Heart Rate Measurement)"))
        let d128 = try decode(0x2803, "0C 10 00 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 02 00 40 6E")
        #expect(d128.field("uuid")?.value == .string("6E400002-B5A3-F393-E0A9-E50E24DCCA9E (Nordic UART RX)"))
        #expect(try decode(0x2803, "12 03 00 37").valid == false)
    }

    @Test func noCodecForUnknownUUID() {
        #expect(CodecRegistry().decode([1, 2], context: CodecContext(characteristic: BluetoothUUID(uuid16: 0x2AFF))) == nil)
        #expect(CodecRegistry().decode([1, 2], context: CodecContext()) == nil)
    }
}
