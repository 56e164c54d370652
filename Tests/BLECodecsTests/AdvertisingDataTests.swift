import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLECodecs

/// AD data examples: bytes copied from real reports (frames named; checked against tshark's
/// `btcommon.eir_ad.*` fields) or laid out by hand from Core Spec Supplement Part A, Apple's
/// Proximity Beacon spec and the Eddystone frame specs; expected values computed by hand.
struct AdvertisingDataTests {
    func ad(_ hex: String) throws -> AdvertisingData {
        AdvertisingData(bytes: try #require(bytes(fromHex: hex)))
    }

    /// horizon74 capture, frame 133 (ADV_IND): complete name, 16-bit list, flags 0x05, manufacturer 0xEC88.
    @Test func realGoveeReport() throws {
        let d = try ad("0d 09 47 56 48 35 30 37 32 5f 36 46 41 42 03 03 88 ec 02 01 05 09 ff 88 ec 00 02 d0 17 42 00")
        #expect(d.problems.isEmpty)
        #expect(d.structures.map(\.type.rawValue) == [0x09, 0x03, 0x01, 0xFF])
        #expect(d.localName == "GVH5072_6FAB")
        #expect(d.serviceUUIDs == [BluetoothUUID(uuid16: 0xEC88)])
        #expect(d.flags == [.leLimitedDiscoverable, .brEDRNotSupported])
        #expect(d.flags?.names == ["LE Limited Discoverable", "BR/EDR Not Supported"])
        #expect(d.manufacturerData == [ManufacturerData(companyID: 0xEC88, data: [0x00, 0x02, 0xD0, 0x17, 0x42, 0x00])])
        #expect(d.iBeacon == nil)
    }

    /// horizon74 capture, frame 184 (ADV_IND): flags 0x02, incomplete 16-bit list 0xFEE7, Texas Instruments data.
    @Test func realTreadmillAdvertisement() throws {
        let d = try ad("02 01 02 03 02 e7 fe 09 ff 0d 00 fa e4 e3 24 20 09")
        #expect(
            d.elements == [
                .flags(.leGeneralDiscoverable),
                .serviceUUIDs(ServiceUUIDList(kind: .incomplete, width: 2, uuids: [BluetoothUUID(uuid16: 0xFEE7)])),
                .manufacturerData(ManufacturerData(companyID: 0x000D, data: [0xFA, 0xE4, 0xE3, 0x24, 0x20, 0x09])),
            ])
        #expect(d.manufacturerData.first?.companyName == "Texas Instruments Inc.")
        #expect(d.localName == nil)
    }

    /// horizon74 capture, frame 185 (SCAN_RSP): complete name and Fitness Machine service.
    @Test func realTreadmillScanResponse() throws {
        let d = try ad("13 09 48 4f 52 49 5a 4f 4e 20 37 2e 34 41 54 20 35 35 46 44 03 03 26 18")
        #expect(d.localName == "HORIZON 7.4AT 55FD")
        #expect(d.serviceUUIDs == [BluetoothUUID(uuid16: 0x1826)])
        #expect(AssignedNumbers.name(for: d.serviceUUIDs[0]) == "Fitness Machine")
    }

    /// Apple's iBeacon example layout: UUID E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major 0, minor 0, −59 dBm.
    @Test func iBeacon() throws {
        let d = try ad("02 01 06 1a ff 4c 00 02 15 e2 c5 6d b5 df fb 48 d2 b0 60 d0 f5 a7 10 96 e0 00 01 00 02 c5")
        let beacon = try #require(d.iBeacon)
        #expect(beacon.proximityUUID.uuidString == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        #expect(beacon.major == 1)
        #expect(beacon.minor == 2)
        #expect(beacon.measuredPower == -59)
        #expect(d.manufacturerData.first?.companyName == "Apple, Inc.")
        #expect(beacon.manufacturerData == d.manufacturerData.first)
        // Other Apple data (e.g. Find My, type 0x12) is not an iBeacon.
        #expect(ManufacturerData(companyID: 0x004C, data: [0x12, 0x02, 0x00, 0x01]).iBeacon == nil)
    }

    /// Eddystone-URL for https://www.google.com/ : scheme 0x01, "google", expansion 0x00 (".com/").
    @Test func eddystoneURL() throws {
        let d = try ad("03 03 aa fe 0d 16 aa fe 10 eb 01 67 6f 6f 67 6c 65 00")
        #expect(d.problems.isEmpty)
        let frame = try #require(d.eddystone.first)
        #expect(frame == .url(txPower: -21, scheme: 0x01, encoded: Array("google".utf8) + [0x00]))
        guard case let .url(_, scheme, encoded) = frame else { return }
        #expect(EddystoneFrame.decodeURL(scheme: scheme, encoded: encoded) == "https://www.google.com/")
        #expect(EddystoneFrame.encodeURL("https://www.google.com/")! == (0x01, Array("google".utf8) + [0x00]))
        #expect(EddystoneFrame.encodeURL("http://example.org")! == (0x02, Array("example".utf8) + [0x08]))
    }

    /// Eddystone-TLM v0: 3000 mV, 23.5 °C (0x1780), 256 advertisements, 1000.0 s.
    @Test func eddystoneTLM() throws {
        let d = try ad("11 16 aa fe 20 00 0b b8 17 80 00 00 01 00 00 00 27 10")
        guard case let .tlm(t)? = d.eddystone.first else { Issue.record("not TLM: \(d)"); return }
        #expect(t.batteryMillivolts == 3000)
        #expect(t.temperatureCelsius == 23.5)
        #expect(t.advertisingCount == 256)
        #expect(t.uptimeDeciseconds == 10_000)
        #expect(
            EddystoneTLM(batteryMillivolts: 0, temperatureRaw: Int16.min, advertisingCount: 0, uptimeDeciseconds: 0)
                .temperatureCelsius == nil)
    }

    /// Eddystone-UID with the 2 reserved bytes, and EID.
    @Test func eddystoneUIDAndEID() throws {
        let d = try ad(
            "17 16 aa fe 00 e7 00 01 02 03 04 05 06 07 08 09 a0 a1 a2 a3 a4 a5 00 00"
                + " 0d 16 aa fe 30 f0 11 22 33 44 55 66 77 88")
        #expect(
            d.eddystone == [
                .uid(txPower: -25, namespace: Array(0...9), instance: [0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5], reserved: [0, 0]),
                .eid(txPower: -16, identifier: [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]),
            ])
        #expect(d.eddystone.map(\.kind) == ["UID", "EID"])
    }

    /// URI 0x24: scheme code 0x17 is "https:" (Assigned Numbers 2.7), 0x16 "http:", 0x01 none.
    @Test func uri() throws {
        let d = try ad("10 24 17 2f 2f 65 78 61 6d 70 6c 65 2e 63 6f 6d 2f")
        #expect(d.uris.map(\.description) == ["https://example.com/"])
        #expect(URIValue.schemeName(0x16) == "http:")
        #expect(URIValue.schemeName(0x02) == "aaa:")
        #expect(URIValue.schemeName(0x51) == "wss:")
        #expect(URIValue.schemeName(0x01) == "")
        #expect(URIValue.schemeName(0xFFFF) == nil)
        #expect(URIValue(uri: "https://example.com/").scheme == 0x17)
        #expect(URIValue(uri: "wss://x").scheme == 0x51)  // not "ws:"
        #expect(URIValue(uri: "no-scheme").bytes == [0x01] + Array("no-scheme".utf8))
        // A two-byte UTF-8 scheme code (0x80 = "itms:") round-trips.
        let itms = URIValue(scheme: 0x80, rest: "//a")
        #expect(itms.bytes == [0xC2, 0x80, 0x2F, 0x2F, 0x61])
        #expect(URIValue(bytes: itms.bytes) == itms)
        #expect(itms.description == "itms://a")
    }

    /// TX power, appearance, connection interval range, interval, role, target address, 32/128-bit lists and data.
    @Test func otherTypedElements() throws {
        let d = try ad(
            "02 0a f4 03 19 41 03 05 12 06 00 80 0c 03 1a 40 06 02 1c 02 07 17 55 44 33 22 11 c0"
                + " 05 05 78 56 34 12 11 07 fb 34 9b 5f 80 00 00 80 00 10 00 00 0d 18 00 00"
                + " 07 20 78 56 34 12 aa bb")
        #expect(d.problems.isEmpty)
        #expect(d.txPowerLevel == -12)
        #expect(d.appearance == 0x0341)
        #expect(AssignedNumbers.appearanceName(0x0341) == "Heart rate belt")
        #expect(d.elements[2] == .peripheralConnectionIntervalRange(min: 6, max: 0x0C80))
        #expect(d.elements[3] == .advertisingInterval(0x0640))
        #expect(d.elements[3].description == "Advertising interval: 1000.000 ms")
        #expect(d.elements[4] == .leRole(.bothPeripheralPreferred))
        #expect(d.elements[5] == .targetAddresses([BDAddress(0xC0_11_22_33_44_55)], random: false))
        #expect(d.serviceUUIDs == [BluetoothUUID(uuid32: 0x1234_5678), BluetoothUUID(uuid16: 0x180D)])
        #expect(d.serviceData == [ServiceData(uuid: BluetoothUUID(uuid32: 0x1234_5678), data: [0xAA, 0xBB])])
    }

    /// A zero length ends the data early (Core Spec Vol 3, Part C, 11); the padding after it is ignored.
    @Test func zeroLengthEndsTheData() throws {
        let d = try ad("02 01 06 00 00 00 05 09 41 42 43 44")
        #expect(d.structures == [ADStructure(type: .flags, data: [0x06])])
        #expect(d.problems.isEmpty)
    }

    /// A length past the end is a problem; what parsed before it is kept.
    @Test func lengthOverrun() throws {
        let d = try ad("02 01 06 09 09 41 42 43")
        #expect(d.structures == [ADStructure(type: .flags, data: [0x06])])
        #expect(d.problems.count == 1)
        #expect(d.problems[0].contains("runs past the end"))
        let lone = try ad("02 01 06 05")
        #expect(lone.structures.count == 1)
        #expect(lone.problems.count == 1)
    }

    /// Wrong sizes for a type keep the bytes under `.other` with a problem; unknown types are kept by value.
    @Test func wrongSizesAndUnknownTypes() throws {
        let d = try ad("03 0a 01 02 04 03 0d 18 0a 02 ff 01 04 3e 01 02 03")
        #expect(
            d.elements == [
                .other(.txPowerLevel, [0x01, 0x02]),
                .other(.completeServiceUUIDs16, [0x0D, 0x18, 0x0A]),
                .other(.manufacturerSpecificData, [0x01]),
                .other(ADType(0x3E), [0x01, 0x02, 0x03]),
            ])
        #expect(d.problems.count == 3)
        #expect(ADType(0x3E).description == "ADType(0x3e)")
        #expect(ADType.flags.description == "Flags")
    }

    /// Invalid UTF-8 in a name is repaired and flagged.
    @Test func invalidUTF8Name() throws {
        let d = try ad("04 08 41 c3 28")
        #expect(d.localName == "A\u{FFFD}(")
        #expect(d.problems.count == 1)
    }

    static let elements: [[ADElement]] = [
        [.flags([.leGeneralDiscoverable, .brEDRNotSupported]), .localName("Tag", complete: true), .txPowerLevel(-4)],
        [
            .serviceUUIDs(ServiceUUIDList(kind: .complete, width: 16, uuids: [BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!])),
            .serviceUUIDs(ServiceUUIDList(kind: .solicitation, width: 2, uuids: [BluetoothUUID(uuid16: 0x1812)])),
        ],
        [
            IBeacon(proximityUUID: BluetoothUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 7, minor: 9, measuredPower: -59)
                .manufacturerData
        ].map(ADElement.manufacturerData),
        [
            .serviceData(
                ServiceData(
                    uuid: EddystoneFrame.serviceUUID,
                    data: EddystoneFrame.tlm(
                        EddystoneTLM(
                            batteryMillivolts: 2900, temperatureRaw: -256,
                            advertisingCount: 9, uptimeDeciseconds: 77)
                    ).serviceData))
        ],
        [
            .uri(URIValue(uri: "https://example.com")), .appearance(0x00C2), .leRole(.centralOnly),
            .targetAddresses([BDAddress(0xC0_11_22_33_44_55), BDAddress(0x01)], random: true), .localName("Sh", complete: false),
            .other(ADType(0x3D), [1, 2]),
        ],
    ]

    /// Encoders and the decoder agree: decode(encode(x)) == x.
    @Test(arguments: elements)
    func roundTrip(_ elements: [ADElement]) {
        let data = AdvertisingData(elements)
        let decoded = AdvertisingData(bytes: data.bytes)
        #expect(decoded.elements == elements)
        #expect(decoded.problems.isEmpty)
        #expect(decoded.bytes == data.bytes)
    }

    @Test func eddystoneTLMRoundTripBytes() {
        let frame = EddystoneFrame.tlm(
            EddystoneTLM(
                batteryMillivolts: 3000, temperatureRaw: 0x1780, advertisingCount: 256,
                uptimeDeciseconds: 10_000))
        #expect(frame.serviceData == bytes(fromHex: "20 00 0b b8 17 80 00 00 01 00 00 00 27 10"))
        #expect(EddystoneFrame(serviceData: frame.serviceData) == frame)
    }

    /// Parsing any bytes never traps and always accounts for every structure.
    @Test func randomBytesNeverTrap() {
        var g = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &g)
        var rng = FuzzRandom(seed: seed)
        for _ in 0..<2000 {
            let n = Int(rng.next() % 64)
            let raw = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let d = AdvertisingData(bytes: raw)
            #expect(d.structures.count == d.elements.count, "seed \(seed)")
            #expect(d.bytes.count <= raw.count, "seed \(seed)")
            _ = d.description
        }
    }
}
