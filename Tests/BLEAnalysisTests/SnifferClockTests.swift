import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// Issue 49, point 2: a sniffer's clock wrap, and a log's header notes, are not gaps; a real pause still is.
@Suite struct SnifferClockTests {
    /// An nRF Sniffer (header version 3) data packet whose firmware clock reads `firmware` µs, written at `file` µs.
    static func nordic(file: Int64, firmware: UInt32, counter: UInt16) -> OwnedRecord {
        let ll = LLPacket(
            accessAddress: LLAccessAddress(0x5065_4A27), pdu: LLDataPDU(llid: .continuation, payload: []).bytes, crcInit: 0x12_3456
        ).bytes
        let h = NordicBLEHeader(
            boardID: 0, protocolVersion: 3, packetCounter: counter, packetID: .eventPacketData,
            flags: NordicBLEFlags(crcOK: true, centralToPeripheral: counter % 2 == 0), channel: 5, time: firmware,
            linkLayerLength: ll.count)
        return OwnedRecord(
            timestamp: Timestamp(microseconds: file), direction: .unknown, kind: .linkLayer, linkType: 272, bytes: h.bytes + ll)
    }

    /// An Ubertooth PPI record (PPI-BTLE field 30006) whose 40-bit clock reads `ticks` × 100 ns, written at `file` µs.
    static func ubertooth(file: Int64, ticks: UInt64) -> OwnedRecord {
        var w = ByteWriter()
        w.write(0); w.write(0); w.write(littleEndian: UInt16(24)); w.write(littleEndian: UInt32(147))
        w.write(littleEndian: UInt16(30006)); w.write(littleEndian: UInt16(12))
        w.write(0); w.write(littleEndian: UInt16(2402)); w.write(UInt8(ticks >> 32));
        w.write(littleEndian: UInt32(truncatingIfNeeded: ticks))
        for _ in 0..<4 { w.write(0) }
        let ll = LLPacket(
            accessAddress: LLAccessAddress(0x5065_4A27), pdu: LLDataPDU(llid: .continuation, payload: []).bytes, crcInit: 0x12_3456
        ).bytes
        return OwnedRecord(
            timestamp: Timestamp(microseconds: file), direction: .unknown, kind: .linkLayer, linkType: 192, bytes: w.bytes + ll)
    }

    static func read(_ records: [OwnedRecord], linkType: UInt32) throws -> (
        times: [Int64], findings: [Finding], completeness: CaptureCompleteness
    ) {
        let file = try CaptureFile.open(bytes: CaptureWriter.pcap(records, linkType: linkType), name: "air.pcap")
        var times: [Int64] = []
        var tracker = CompletenessTracker()
        while let r = file.next() {
            times.append(r.timestamp.microseconds)
            tracker.add(r)
        }
        return (times, file.findings, tracker.result(format: "pcap", readerFindings: file.findings))
    }

    static let start: Int64 = 1_782_547_437_000_000
    static let wrap: Int64 = 1 << 32

    /// The LED controller capture's frames 4124–4125: the file steps 4294.967009 s, the firmware clock 1250 µs.
    @Test func nordicWrapIsNoGap() throws {
        let records = [
            Self.nordic(file: Self.start, firmware: 144_717_650, counter: 1),
            Self.nordic(file: Self.start + 1250, firmware: 144_718_900, counter: 2),
            Self.nordic(file: Self.start + 1250 + Self.wrap - 287, firmware: 144_720_150, counter: 3),
            Self.nordic(file: Self.start + 1250 + Self.wrap - 287 + 1707, firmware: 144_721_857, counter: 4),
        ]
        let (times, findings, completeness) = try Self.read(records, linkType: 272)
        #expect(times.map { $0 - Self.start } == [0, 1250, 2500, 4207])
        let note = findings.first { $0.kind.code == .captureSnifferClockWrap }
        #expect(note?.frame == 3 && note?.severity == .info)
        #expect(
            note?.message.contains("4294.965759 s later than the sniffer's own clock, which moved 1.250 ms: one wrap of 2^32 µs") == true)
        #expect(!completeness.items.contains { $0.code == .timeGap || $0.code == .timeBackwards })
        #expect(completeness.items.contains { $0.code == .snifferClockWrap && $0.severity == .info && $0.frame == 3 })
    }

    /// The near miss: a real pause of 71 minutes, which the sniffer's clock saw too, is still a gap.
    @Test func realSeventyOneMinuteGapIsStillAGap() throws {
        let pause: Int64 = 71 * 60_000_000
        let records = [
            Self.nordic(file: Self.start, firmware: 1_000_000, counter: 1),
            Self.nordic(file: Self.start + pause, firmware: 1_000_000 + UInt32(pause), counter: 2),
            Self.nordic(file: Self.start + pause + 1250, firmware: 1_000_000 + UInt32(pause) + 1250, counter: 3),
        ]
        let (times, findings, completeness) = try Self.read(records, linkType: 272)
        #expect(times.map { $0 - Self.start } == [0, pause, pause + 1250])
        #expect(!findings.contains { $0.kind.code == .captureSnifferClockWrap })
        let gap = completeness.items.first { $0.code == .timeGap }
        #expect(gap?.frame == 2 && gap?.message.contains("the longest 1 h 11 min before frame 2") == true)
    }

    /// A pause across the nRF Sniffer's wrap (its 32-bit clock shows 90 s of the 71 min 35 s + 90 s) is not taken for a
    /// misdated record: its clock moved a minute or more.
    @Test func nordicLongStepOfItsOwnIsKept() throws {
        let records = [
            Self.nordic(file: Self.start, firmware: 1_000_000, counter: 1),
            Self.nordic(file: Self.start + Self.wrap + 90_000_000, firmware: 91_000_000, counter: 2),
        ]
        let (times, findings, _) = try Self.read(records, linkType: 272)
        #expect(times.map { $0 - Self.start } == [0, Self.wrap + 90_000_000])
        #expect(findings.allSatisfy { $0.kind.code != .captureSnifferClockWrap })
    }

    /// The HackenBluetooth Ubertooth capture: at frame 3743 the clock steps back 74.5 µs and the host tool, taking it for
    /// a wrap of clk100ns, dates the rest 429.4967296 s later; at 26037 it dates one record a wrap late after a real
    /// 101.8 s pause and the next one right.
    @Test func ubertoothHostWrapsAreUndoneAndItsRealPauseKept() throws {
        let w: Int64 = 429_496_730  // 2^32 × 100 ns, in µs, rounded
        let records = [
            Self.ubertooth(file: Self.start, ticks: 394_966_371),
            Self.ubertooth(file: Self.start - 75 + w, ticks: 394_965_626),
            Self.ubertooth(file: Self.start - 75 + w + 29_979, ticks: 395_265_417),
            Self.ubertooth(file: Self.start - 75 + w + 29_979 + 101_821_637 + w, ticks: 395_265_417 + 1_018_216_370),
            Self.ubertooth(file: Self.start - 75 + w + 29_979 + 101_821_637 + 3742, ticks: 395_265_417 + 1_018_253_790),
        ]
        let (times, findings, completeness) = try Self.read(records, linkType: 192)
        #expect(times.map { $0 - Self.start } == [0, -75, 29_904, 29_904 + 101_821_637, 29_904 + 101_821_637 + 3742])
        let note = try #require(findings.first { $0.kind.code == .captureSnifferClockWrap })
        #expect(
            note.frame == 2 && note.message.contains("which moved -75 µs: one wrap of 2^32 × 100 ns") && note.message.contains("(+2 more)"))
        #expect(completeness.items.first { $0.code == .timeGap }?.frame == 4)
        #expect(completeness.items.first { $0.code == .timeBackwards }?.severity == .info)
    }

    /// The HackenBluetooth two-interface capture: an Ethernet interface beside the Ubertooth's, its records dated by the
    /// host's clock. The Ubertooth's records go back on the sniffer's clock (the host tool added a wrap at its 82 µs
    /// step back, frame 4776); the Ethernet record keeps its file time (frame 5043, 55 ms before the Ubertooth record
    /// before it once that is corrected), and an Ubertooth record without the clock field moves with its interface.
    @Test func anotherInterfaceKeepsTheHostsTime() throws {
        let w: Int64 = 429_496_730
        var b = PcapngBuilder()
        b.section(bigEndian: false)
        b.interface(linkType: 192)
        b.interface(linkType: 1)
        // A PPI header with no field (8 bytes, DLT 147), then the packet.
        let clockless: [UInt8] = [0, 0, 8, 0, 147, 0, 0, 0] + Self.ubertooth(file: 0, ticks: 0).bytes.dropFirst(24)
        let ethernet = [UInt8](repeating: 0xFF, count: 12) + [0x08, 0x00] + [UInt8](repeating: 0, count: 20)
        for (interface, file, data) in [
            (0, Self.start, Self.ubertooth(file: 0, ticks: 1_318_691_448).bytes),
            (0, Self.start - 82 + w, Self.ubertooth(file: 0, ticks: 1_318_690_626).bytes),
            (1, Self.start + 34_670, ethernet),
            (0, Self.start - 82 + w + 40_000, clockless),
            (0, Self.start - 82 + w + 90_019, Self.ubertooth(file: 0, ticks: 1_319_590_820).bytes),
        ] as [(UInt32, Int64, [UInt8])] {
            b.enhancedPacket(interface: interface, units: UInt64(file), data: data)
        }
        let file = try CaptureFile.open(bytes: b.bytes, name: "two.pcapng")
        var times: [Int64] = []
        while let r = file.next() { times.append(r.timestamp.microseconds - Self.start) }
        #expect(times == [0, -82, 34_670, 39_918, 89_937])
        #expect(file.findings.contains { $0.kind.code == .captureSnifferClockWrap && $0.frame == 2 })
    }

    /// LINKTYPE 256 carries no clock: its times are the file's, a jump of a wrap included.
    @Test func leRFHasNoClockToCompare() throws {
        var records = try [Self.nordic(file: Self.start, firmware: 0, counter: 0)].map { r -> OwnedRecord in
            var o = r
            o.bytes = LERFHeader(rfChannel: 6, flags: LERFFlags(rawValue: 0x0C13)).bytes + Array(r.bytes[17...])
            o.linkType = 256
            return o
        }
        var later = records[0]
        later.timestamp = Timestamp(microseconds: Self.start + Self.wrap)
        records.append(later)
        let (times, _, completeness) = try Self.read(records, linkType: 256)
        #expect(times.map { $0 - Self.start } == [0, Self.wrap])
        #expect(completeness.items.contains { $0.code == .timeGap })
    }

    /// An iOS PacketLogger log opens with header notes dated when the device's details were read (101 h before the
    /// first HCI record in the Even G2 discovery log): no gap, and the log starts at its first HCI record.
    @Test func packetLoggerHeaderNotesAreNotRecordsInTime() throws {
        let hours101: Int64 = 101 * 3_600_000_000
        let b = CaptureBuilder(start: Self.start - hours101)
            .record(.text, .unknown, Array("Product: iPhone17,2".utf8))
            .record(.text, .unknown, Array("Chipset: BCM_4399".utf8))
            .at(microsecondsFromStart: hours101)
            .command(HCIBuild.command(.reset))
            .event(HCIBuild.commandComplete(.reset))
        let file = try CaptureFile.open(bytes: CaptureWriter.packetLogger(b.records, bigEndian: false), name: "ios.pklg")
        var tracker = CompletenessTracker()
        var stats = CaptureStatistics()
        while let r = file.next() {
            tracker.add(r)
            stats.add(r)
        }
        let items = tracker.result(format: "packetlogger").items
        #expect(!items.contains { $0.code == .timeGap || $0.code == .timeBackwards })
        #expect(stats.firstTimestamp?.microseconds == Self.start && stats.durationMicroseconds == 1_000 && stats.text == 2)
    }

    /// The near miss: 101 hours between two HCI records is still a gap.
    @Test func packetLoggerPauseBetweenRecordsIsStillAGap() throws {
        let hours101: Int64 = 101 * 3_600_000_000
        let b = CaptureBuilder(start: Self.start)
            .record(.text, .unknown, Array("Product: iPhone17,2".utf8))
            .command(HCIBuild.command(.reset))
            .at(microsecondsFromStart: hours101)
            .event(HCIBuild.commandComplete(.reset))
        let file = try CaptureFile.open(bytes: CaptureWriter.packetLogger(b.records, bigEndian: false), name: "ios.pklg")
        var tracker = CompletenessTracker()
        while let r = file.next() { tracker.add(r) }
        let gap = tracker.result(format: "packetlogger").items.first { $0.code == .timeGap }
        #expect(gap?.frame == 3 && gap?.message.contains("100 h 59 min") == true)
    }
}
