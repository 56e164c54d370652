import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// The tracker fed with btsnoop captures built from typed reports; expected values worked out by hand.
@Suite struct AdvertsTrackerTests {
    static let beaconUUID = BluetoothUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let tag = BDAddress(0xC0_11_22_33_44_55)
    static let phone = BDAddress(0x00_1A_7D_DA_71_13)

    /// btsnoop (H4) bytes of these event packets, 1 ms apart, opened as a capture.
    static func capture(_ events: [[UInt8]]) throws -> CaptureFile {
        let records = events.enumerated().map { i, e in
            OwnedRecord(
                frame: i + 1, timestamp: Timestamp(microseconds: 1_700_000_000_000_000 + Int64(i) * 1000),
                direction: .rx, kind: .event, bytes: e)
        }
        return try CaptureFile.open(bytes: CaptureWriter.btsnoop(records), name: "adverts.btsnoop")
    }

    static func legacy(_ type: UInt8, _ address: BDAddress, _ addressType: LEAddressType = .random, rssi: Int8, _ elements: [ADElement])
        -> [UInt8]
    {
        HCIBuild.event(
            .leAdvertisingReport(
                LEAdvertisingReport(reports: [
                    .init(eventType: type, addressType: addressType, address: address, data: AdvertisingData(elements).bytes, rssi: rssi)
                ])))
    }

    @Test func legacyReports() throws {
        let beacon = IBeacon(proximityUUID: Self.beaconUUID, major: 1, minor: 2, measuredPower: -59)
        let events = [
            HCIBuild.commandComplete(.reset),  // ignored
            Self.legacy(
                0, Self.tag, rssi: -60,
                [
                    .flags([.leGeneralDiscoverable, .brEDRNotSupported]),
                    .serviceUUIDs(.init(kind: .complete, width: 2, uuids: [BluetoothUUID(uuid16: 0x180D)])),
                    .appearance(0x0341), .txPowerLevel(4),
                ]),
            Self.legacy(4, Self.tag, rssi: -70, [.localName("HRM", complete: true)]),
            Self.legacy(3, Self.phone, .public, rssi: -40, [.manufacturerData(beacon.manufacturerData)]),
            Self.legacy(0, Self.tag, rssi: 127, [.localName("HRM", complete: true)]),  // RSSI not available
            Self.legacy(0, Self.tag, rssi: -50, [.localName("HRM-2", complete: false)]),
        ]
        let tracker = AdvertisingTracker.track(try Self.capture(events))
        #expect(tracker.reportCount == 5)
        #expect(tracker.advertisingEvents == 5)
        #expect(tracker.devices.map(\.address) == [Self.tag, Self.phone])
        let tag = try #require(tracker.device(Self.tag, addressType: .random))
        #expect(tag.reports == 4)
        #expect(tag.firstFrame == 2)
        #expect(tag.lastFrame == 6)
        #expect(tag.lastTime.microseconds - tag.firstTime.microseconds == 4000)
        #expect(tag.rssiMin == -70)
        #expect(tag.rssiMax == -50)
        #expect(tag.rssiCount == 3)
        #expect(tag.rssiAverage == -60)
        #expect(tag.names == ["HRM", "HRM-2"])
        #expect(tag.eventTypes == [.advInd: 3, .scanRsp: 1])
        #expect(tag.flags == [.leGeneralDiscoverable, .brEDRNotSupported])
        #expect(tag.services == [BluetoothUUID(uuid16: 0x180D)])
        #expect(tag.appearances == [0x0341])
        #expect(tag.txPowerLevels == [4])
        #expect(tag.advertisesSummary == "services 0x180D Heart Rate; appearance Heart rate belt; tx 4 dBm")
        #expect(tracker.device(Self.tag, addressType: .public) == nil)

        let phone = try #require(tracker.device(Self.phone, addressType: .public))
        #expect(phone.iBeacons == [beacon])
        #expect(phone.manufacturers == [0x004C])
        #expect(phone.eventTypes == [.advNonconnInd: 1])
        #expect(phone.advertisesSummary == "iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 1/2; Apple, Inc. (0x004c)")
        #expect(tracker.findings.isEmpty)
    }

    /// Names padded with NULs end at the first NUL, as in the public corpus ("SX70" sent as `SX70 00 00 00 00`, a
    /// shortened name of one NUL, tshark shows "SX70" and ""); data whose AD length runs past the report keeps the
    /// report's RSSI (the octet after the data, Core Spec Vol 4, Part E, 7.7.65.2) and adds one info finding.
    @Test func paddedNamesAndDataPastItsEnd() throws {
        let padded = [ADElement.localName("SX70\0\0\0\0", complete: true)]
        #expect(AdvertisingData(padded).bytes == [0x09, 0x09, 0x53, 0x58, 0x37, 0x30, 0, 0, 0, 0])
        #expect(AdvertisingData(bytes: AdvertisingData(padded).bytes).localName == "SX70")
        let overrun: [UInt8] = [0x20, 0x02, 0x85, 0x34, 0xDC, 0xAB]  // length 32, 5 octets follow
        let events = [
            Self.legacy(0, Self.tag, rssi: -60, padded),
            Self.legacy(0, Self.phone, .public, rssi: -70, [.localName("\0", complete: false)]),
            HCIBuild.event(
                .leAdvertisingReport(
                    LEAdvertisingReport(reports: [
                        .init(eventType: 0, addressType: .random, address: Self.tag, data: overrun, rssi: -93)
                    ]))),
        ]
        let tracker = AdvertisingTracker.track(try Self.capture(events))
        let tag = try #require(tracker.device(Self.tag, addressType: .random))
        #expect(tag.names == ["SX70"])
        #expect(tag.reports == 2)
        #expect(tag.rssiMin == -93)
        #expect(tag.rssiMax == -60)
        #expect(try #require(tracker.device(Self.phone, addressType: .public)).names.isEmpty)
        #expect(tracker.findings.map(\.kind.code.id) == ["adverts.malformed-data"])
        #expect(tracker.findings.first?.frame == 3)
    }

    @Test func extendedReportsAndFragments() throws {
        let url = EddystoneFrame.encodeURL("https://example.com/")!
        let eddystone = AdvertisingData([
            .serviceUUIDs(.init(kind: .complete, width: 2, uuids: [EddystoneFrame.serviceUUID])),
            .serviceData(
                ServiceData(
                    uuid: EddystoneFrame.serviceUUID,
                    data: EddystoneFrame.url(txPower: -20, scheme: url.scheme, encoded: url.encoded).serviceData)),
            .localName("Beacon with a long name", complete: true),
        ]).bytes
        let split = eddystone.count / 2
        func ext(_ type: UInt16, data: [UInt8], rssi: Int8, tx: Int8 = 127) -> [UInt8] {
            HCIBuild.event(
                .leExtendedAdvertisingReport(
                    LEExtendedAdvertisingReport(reports: [
                        .init(
                            eventType: type, addressType: .random, address: Self.tag, secondaryPHY: .le2M, advertisingSID: 3,
                            txPower: tx, rssi: rssi, data: data)
                    ])))
        }
        let events = [
            ext(0x0001 | 0x20, data: Array(eddystone[..<split]), rssi: -61, tx: 7),  // connectable, incomplete: more to come
            ext(0x0001, data: Array(eddystone[split...]), rssi: -63, tx: 7),  // the rest
            ext(0x0013, data: AdvertisingData([.localName("Legacy", complete: true)]).bytes, rssi: -62),  // legacy ADV_IND
        ]
        let tracker = AdvertisingTracker.track(try Self.capture(events))
        #expect(tracker.reportCount == 3)
        let d = try #require(tracker.device(Self.tag, addressType: .random))
        #expect(d.reports == 3)
        #expect(d.names == ["Beacon with a long name", "Legacy"])
        #expect(d.eddystone == [.url(txPower: -20, scheme: 0x03, encoded: Array("example".utf8) + [0x00])])
        #expect(d.reportedTxPowers == [7])
        #expect(d.eventTypes == [AdvertisingEventType(rawValue: 0x01): 2, .advInd: 1])
        #expect(d.eventTypes.keys.map(\.description).sorted() == ["ADV_EXT(connectable)", "ADV_IND"])
        #expect(d.malformedReports == 0)
        #expect(d.advertisesSummary == "Eddystone-URL https://example.com/; services 0xFEAA Eddystone")
        #expect(tracker.findings.isEmpty)
    }

    /// Event type names for the legacy codes, the extended bits and link-layer PDU types.
    @Test func eventTypes() {
        #expect(
            (0...5).map { AdvertisingEventType(legacyReportEventType: $0).description }
                == ["ADV_IND", "ADV_DIRECT_IND", "ADV_SCAN_IND", "ADV_NONCONN_IND", "SCAN_RSP", "legacy(0x05)"])
        #expect(AdvertisingEventType(extendedReportEventType: 0x1B).description == "SCAN_RSP")
        #expect(AdvertisingEventType(extendedReportEventType: 0x0000).description == "ADV_EXT(non-connectable)")
        #expect(AdvertisingEventType(extendedReportEventType: 0x0006).description == "ADV_EXT(scannable, directed)")
        #expect(AdvertisingEventType(linkLayerPDUType: 2) == .advNonconnInd)
        #expect(AdvertisingEventType(linkLayerPDUType: 6) == .advScanInd)
        #expect(AdvertisingEventType(linkLayerPDUType: 5) == nil)  // CONNECT_IND
        #expect(AdvertisingEventType.advInd.isConnectable && AdvertisingEventType.advInd.isScannable)
        #expect(!AdvertisingEventType(legacyReportEventType: 9).isConnectable)
    }

    /// The device cap: later devices are counted, with one finding; distinct values are capped too.
    @Test func boundedMemory() {
        var tracker = AdvertisingTracker(options: .init(maxDevices: 3, maxDistinctValues: 2))
        for i in 0..<10 {
            tracker.observe(
                address: BDAddress(UInt64(i % 5)), addressType: .random, eventType: .advInd, rssi: -50,
                data: AdvertisingData([.localName("n\(i)", complete: true)]).bytes, frame: i + 1,
                timestamp: Timestamp(microseconds: Int64(i)))
        }
        #expect(tracker.devices.count == 3)
        #expect(tracker.reportCount == 10)
        #expect(tracker.untrackedReports == 4)
        #expect(tracker.findings.map(\.kind.code.id) == ["adverts.too-many-devices"])
        #expect(tracker.devices[0].names == ["n0", "n5"])  // the first two distinct names
        #expect(tracker.devices[0].droppedValues == 0)
        tracker.observe(
            address: BDAddress(0), addressType: .random, eventType: .advInd, rssi: nil,
            data: AdvertisingData([.localName("third", complete: true)]).bytes, frame: 11, timestamp: Timestamp(microseconds: 11))
        #expect(tracker.devices[0].names == ["n0", "n5"])
        #expect(tracker.devices[0].droppedValues == 1)
    }

    /// Malformed AD data gives one finding per device; a malformed event gives a finding and no reports.
    @Test func malformedInput() throws {
        let overrun = HCIBuild.event(
            .leAdvertisingReport(
                LEAdvertisingReport(reports: [
                    .init(eventType: 0, addressType: .public, address: Self.tag, data: [0x02, 0x01, 0x06, 0x09, 0x09, 0x41], rssi: -70)
                ])))
        let broken = HCIBuild.leMeta(LESubevent(rawValue: 0x02), parameters: [0x01, 0x00, 0x00, 0x11, 0x22])
        let tracker = AdvertisingTracker.track(try Self.capture([overrun, overrun, broken]))
        #expect(tracker.reportCount == 2)
        #expect(tracker.advertisingEvents == 3)
        let d = try #require(tracker.device(Self.tag, addressType: .public))
        #expect(d.malformedReports == 2)
        #expect(d.flags == [.leGeneralDiscoverable, .brEDRNotSupported])
        #expect(tracker.findings.map(\.kind.code.id) == ["adverts.malformed-data", "decode.malformed"])
        #expect(tracker.findings.map(\.frame) == [1, 3])
    }

    /// One LE Advertising Report event may carry several reports (Num_Reports, Core Spec Vol 4, Part E, 7.7.65.2): the
    /// HappyLeaf Fire OS log's frame 72157, an advertisement (Flags, Apple data) and its empty scan response from
    /// 48:48:6A:27:6A:9C, both at -72 dBm (tshark: Num Reports 2, each with its BD_ADDR, Data Length and RSSI). Two
    /// reports of one device, one event; the near miss, the same two reports in two events, is two events.
    @Test func twoReportsInOneEvent() throws {
        let device = BDAddress(0x48_48_6A_27_6A_9C)
        let advertisement = LEAdvertisingReport.Report(
            eventType: 0, addressType: .random, address: device, data: [0x02, 0x01, 0x1A, 0x07, 0xFF, 0x4C, 0x00, 0x10, 0x02, 0x0B, 0x00],
            rssi: -72)
        let scanResponse = LEAdvertisingReport.Report(eventType: 4, addressType: .random, address: device, data: [], rssi: -72)
        let both = HCIBuild.event(.leAdvertisingReport(LEAdvertisingReport(reports: [advertisement, scanResponse])))
        // The event's bytes as the log holds them (tshark -x of frame 72157, after the H4 type).
        #expect(
            both == [
                0x3E, 0x21, 0x02, 0x02, 0x00, 0x01, 0x9C, 0x6A, 0x27, 0x6A, 0x48, 0x48, 0x0B, 0x02, 0x01, 0x1A, 0x07, 0xFF, 0x4C,
                0x00, 0x10, 0x02, 0x0B, 0x00, 0xB8, 0x04, 0x01, 0x9C, 0x6A, 0x27, 0x6A, 0x48, 0x48, 0x00, 0xB8,
            ])
        let tracker = AdvertisingTracker.track(try Self.capture([both]))
        #expect(tracker.reportCount == 2)
        #expect(tracker.advertisingEvents == 1)
        let d = try #require(tracker.device(device, addressType: .random))
        #expect(d.reports == 2)
        #expect(d.rssiMin == -72 && d.rssiMax == -72)

        let apart = [
            HCIBuild.event(.leAdvertisingReport(LEAdvertisingReport(reports: [advertisement]))),
            HCIBuild.event(.leAdvertisingReport(LEAdvertisingReport(reports: [scanResponse]))),
        ]
        let nearMiss = AdvertisingTracker.track(try Self.capture(apart))
        #expect(nearMiss.reportCount == 2)
        #expect(nearMiss.advertisingEvents == 2)
    }
}
