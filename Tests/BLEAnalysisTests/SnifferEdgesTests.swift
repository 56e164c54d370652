import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// Issue 49, point 2, at a capture's edges: an nRF Sniffer's packet counter that skips says packets the file does not
/// hold (the LED capture: 4145 → 12970 at frame 4121, the sniffer's clock 23.87 s on, the file's 0.19 ms), and an
/// interface dated by another clock than the sniffer's beside it is an offset between clocks, not time going backwards
/// (the HackenBluetooth two-interface capture).
@Suite struct SnifferEdgesTests {
    static let start = SnifferClockTests.start

    static func read(_ records: [OwnedRecord]) throws -> (items: [CaptureCompleteness.Item], stats: CaptureStatistics) {
        let file = try CaptureFile.open(bytes: CaptureWriter.pcap(records, linkType: 272), name: "air.pcap")
        var tracker = CompletenessTracker()
        var stats = CaptureStatistics()
        while let r = file.next() {
            tracker.add(r)
            stats.add(r)
        }
        return (tracker.result(format: "pcap", readerFindings: file.findings).items, stats)
    }

    @Test func aSkippingPacketCounterIsPacketsTheFileDoesNotHold() throws {
        // The LED capture's 4119–4122: counters 4135, 4145 (9 skipped), 12970 (8824 skipped), 12971.
        let (items, stats) = try Self.read([
            SnifferClockTests.nordic(file: Self.start, firmware: 120_823_767, counter: 4135),
            SnifferClockTests.nordic(file: Self.start + 240, firmware: 120_842_125, counter: 4145),
            SnifferClockTests.nordic(file: Self.start + 430, firmware: 144_714_012, counter: 12970),
            SnifferClockTests.nordic(file: Self.start + 584, firmware: 144_715_353, counter: 12971),
        ])
        #expect(stats.nordicSkips.skipped == 8833 && stats.nordicSkips.places == 2 && stats.nordicSkips.firstFrame == 2)
        #expect(stats.droppedText == "up to 8833 (the nRF Sniffer's packet counter skipped 8833 values in 2 places, first at frame 2)")
        let drops = try #require(items.first { $0.code == .drops })
        #expect(drops.severity == .info && drops.frame == 2 && drops.count == 8833)
        #expect(
            drops.message
                == "the nRF Sniffer's packet counter skipped 8833 values in 2 places (first at frame 2): up to 8833 packets it sent its host are not in the file (lost on the way or left out by the host; the firmware's own events take values too); the largest skip, 8824 at frame 3, where the sniffer's clock moved 23.871887 s and the file's time 190 µs"
        )
        let cq04 = CQ04TimelineBreak.evaluate(
            Evidence(events: [], connections: [], completeness: CaptureCompleteness(items: items), isAirCapture: true))
        #expect(cq04.first?.severity == .info && cq04.first?.causes.first?.hasPrefix("packets the sniffer's host did not write") == true)
    }

    @Test func nearMissACounterThatIncrementsByOneOrStartsAgainStaysQuiet() throws {
        let (items, stats) = try Self.read([
            SnifferClockTests.nordic(file: Self.start, firmware: 1_000_000, counter: 65534),
            SnifferClockTests.nordic(file: Self.start + 1250, firmware: 1_001_250, counter: 65535),
            SnifferClockTests.nordic(file: Self.start + 2500, firmware: 1_002_500, counter: 0),
            SnifferClockTests.nordic(file: Self.start + 3750, firmware: 1_003_750, counter: 1),
            // The sniffer started again: its counter from 0, no skip of 65,535.
            SnifferClockTests.nordic(file: Self.start + 5000, firmware: 5000, counter: 0),
        ])
        #expect(stats.nordicSkips.skipped == 0 && stats.droppedText == "0")
        #expect(!items.contains { $0.code == .drops })
    }
}

/// CQ-04 on a two-interface capture: the Ubertooth's 82 µs steps back are jitter, and the Ethernet interface on the
/// host's time, 55 ms behind the sniffer's, is an offset between clocks; a step back of seconds on one interface is
/// still time going backwards.
@Suite struct InterfaceClockTests {
    static let start = SnifferClockTests.start
    static let ethernet = [UInt8](repeating: 0xFF, count: 12) + [0x08, 0x00] + [UInt8](repeating: 0, count: 20)

    static func items(_ records: [(interface: UInt32, file: Int64, data: [UInt8])]) throws -> [CaptureCompleteness.Item] {
        var b = PcapngBuilder()
        b.section(bigEndian: false)
        b.interface(linkType: 192)
        b.interface(linkType: 1)
        for r in records { b.enhancedPacket(interface: r.interface, units: UInt64(r.file), data: r.data) }
        let file = try CaptureFile.open(bytes: b.bytes, name: "two.pcapng")
        var tracker = CompletenessTracker()
        while let r = file.next() { tracker.add(r) }
        return tracker.result(format: "pcapng", readerFindings: file.findings).items
    }

    static func ubertooth(_ file: Int64) -> (interface: UInt32, file: Int64, data: [UInt8]) {
        (0, Self.start + file, SnifferClockTests.ubertooth(file: 0, ticks: 1_318_691_448 + UInt64(file) * 10).bytes)
    }

    @Test func anotherInterfaceOnTheHostsClockIsAnOffsetAndTheSniffersStepsBackJitter() throws {
        let items = try Self.items([
            Self.ubertooth(0), Self.ubertooth(1000),
            Self.ubertooth(918),  // 82 µs back on the sniffer's own clock
            (1, Self.start + 918 - 55_000, Self.ethernet),  // the host's clock, 55 ms behind
            Self.ubertooth(2000),
            (1, Self.start + 2010 - 55_000, Self.ethernet),
        ])
        let back = items.filter { $0.code == .timeBackwards }
        #expect(back.allSatisfy { $0.severity == .info } && back.count == 2)
        let jitter = "timestamps step back 1 time by at most 82 µs (first at frame 3)"
        #expect(back.first { $0.frame == 3 }?.message.hasPrefix(jitter) == true)
        let offset = try #require(back.first { $0.frame == 4 })
        #expect(offset.count == 2 && offset.message.hasPrefix("2 records are dated up to 55 ms before another interface's record"))
        let cq04 = CQ04TimelineBreak.evaluate(
            Evidence(events: [], connections: [], completeness: CaptureCompleteness(items: items), isAirCapture: true))
        #expect(cq04.count == 2 && cq04.allSatisfy { $0.severity == .info && !$0.causes.contains("a wall-clock (NTP) jump") })
    }

    @Test func nearMissASecondsLongStepBackOnOneInterfaceIsStillAWarning() throws {
        let items = try Self.items([
            Self.ubertooth(0), (1, Self.start + 5_000_000, Self.ethernet), Self.ubertooth(5_001_000),
            (1, Self.start + 2_000_000, Self.ethernet),  // 3 s back on the Ethernet interface's own clock
            Self.ubertooth(5_002_000),
        ])
        let back = try #require(items.first { $0.code == .timeBackwards && $0.severity == .warning })
        #expect(back.frame == 4 && back.message.hasPrefix("timestamps go backwards 1 time (first at frame 4)"))
    }
}
