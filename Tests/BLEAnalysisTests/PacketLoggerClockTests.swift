import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// Issue 49, the log's clock: a PacketLogger file whose seconds field counts milliseconds (BTstack's Windows port,
/// 2022-04 to 2023-09) is read as milliseconds and says so; a right clock, even one of whole seconds, is not.
@Suite struct PacketLoggerClockTests {
    // Commands the shared table does not name (Core Vol 4, Part E, 7.3).
    static let readLocalName = HCICommand(ogf: 0x03, ocf: 0x0014)
    static let writeScanEnable = HCICommand(ogf: 0x03, ocf: 0x001A)
    static let writeSimplePairingMode = HCICommand(ogf: 0x03, ocf: 0x0056)

    /// One record: the raw seconds field `tick`, the microseconds field `micros`.
    typealias Step = (tick: UInt32, micros: Int64, kind: RecordKind, direction: Direction, bytes: [UInt8])

    static func command(_ tick: UInt32, _ opcode: HCICommand, micros: Int64 = 0) -> Step {
        (tick, micros, .command, .tx, HCIBuild.command(opcode))
    }
    static func complete(_ tick: UInt32, _ opcode: HCICommand, micros: Int64 = 0) -> Step {
        (tick, micros, .event, .rx, HCIBuild.commandComplete(opcode))
    }
    static func status(_ tick: UInt32, _ opcode: HCICommand, micros: Int64 = 0) -> Step {
        (tick, micros, .event, .rx, HCIBuild.commandStatus(opcode))
    }
    static func note(_ tick: UInt32, _ text: String, micros: Int64 = 0) -> Step {
        (tick, micros, .text, .unknown, Array(text.utf8))
    }

    /// Writes the steps as a big-endian PacketLogger file (as BTstack's `hci_dump` does) and reads it back.
    static func read(_ steps: [Step]) throws -> (times: [Int64], findings: [Finding], completeness: CaptureCompleteness) {
        let records = steps.map {
            OwnedRecord(
                timestamp: Timestamp(seconds: Int64($0.tick), microseconds: $0.micros), direction: $0.direction, kind: $0.kind,
                bytes: $0.bytes)
        }
        let file = try CaptureFile.open(bytes: CaptureWriter.packetLogger(records, bigEndian: true), name: "hci_dump.pklg")
        var times: [Int64] = []
        var tracker = CompletenessTracker()
        while let r = file.next() {
            times.append(r.timestamp.microseconds)
            tracker.add(r)
        }
        return (times, file.findings, tracker.result(format: "pklg", readerFindings: file.findings))
    }

    /// The BTstack Windows log's first tick (frame 1 of the Thewbi BT400 log, tshark: 2055-04-13 18:55:33).
    static let start: UInt32 = 2_691_255_333

    /// Start-up as the Windows log has it: a note, then commands answered 2–65 ticks later (Read Local Name 17, Write
    /// Simple Pairing Mode 65), a 12,194-tick wait for the phone (before frame 252), then a Command Status.
    static var windowsStart: [Step] {
        let s = start
        return [
            note(s, "hci_transport_h2_winusb.c.406: registering packet handler"),
            command(s + 1100, .reset), complete(s + 1104, .reset),
            command(s + 1106, Self.readLocalName), complete(s + 1123, Self.readLocalName),
            command(s + 1125, .readLocalVersionInformation), complete(s + 1127, .readLocalVersionInformation),
            command(s + 1130, Self.writeSimplePairingMode), complete(s + 1195, Self.writeSimplePairingMode),
            command(s + 13_389, .acceptConnectionRequest), status(s + 13_391, .acceptConnectionRequest),
        ]
    }

    @Test func millisecondCounterIsReadAsMilliseconds() throws {
        let (times, findings, completeness) = try Self.read(Self.windowsStart)
        let origin = Int64(Self.start) * 1_000_000
        // Frame 1 keeps the file's time (tshark's); each later one is the ticks since, in ms.
        #expect(times.map { $0 - origin } == [0, 1100, 1104, 1106, 1123, 1125, 1127, 1130, 1195, 13_389, 13_391].map { $0 * 1000 })
        let note = try #require(findings.first { $0.kind.code == .captureMillisecondClock })
        #expect(note.severity == .info && note.frame == 9)
        #expect(note.message.hasPrefix("times read as milliseconds (inferred)"))
        #expect(note.message.contains("All 11 records read ahead have microseconds 0"))
        #expect(note.message.contains("5 of 5 HCI commands there are answered 2–65 units later (median 4; the slowest, frame 8 → 9)"))
        #expect(completeness.items.contains { $0.code == .millisecondClock && $0.severity == .info && $0.frame == 9 })
        // A 12.2 s wait, not 3 h 23 min: no gap.
        #expect(!completeness.items.contains { $0.code == .timeGap || $0.code == .timeBackwards })
    }

    /// The counter wraps at 2^32 ms (49.7 days): a log across the wrap goes on forward. Its first ticks are within
    /// 10 days' worth of 2^32, where the format's sniffing once overflowed and refused the file.
    @Test func counterWrapIsNoStepBack() throws {
        let s = UInt32.max - 30
        let steps = [
            Self.command(s, .reset), Self.complete(s &+ 2, .reset), Self.command(s &+ 3, Self.readLocalName),
            Self.complete(s &+ 20, Self.readLocalName), Self.command(s &+ 21, .readBDADDR), Self.complete(s &+ 23, .readBDADDR),
            Self.command(s &+ 24, Self.writeScanEnable), Self.complete(s &+ 26, Self.writeScanEnable),
            Self.command(s &+ 30, .readBufferSize), Self.complete(s &+ 33, .readBufferSize),
        ]
        let (times, findings, completeness) = try Self.read(steps)
        #expect(times.map { $0 - times[0] } == [0, 2, 3, 20, 21, 23, 24, 26, 30, 33].map { $0 * 1000 })
        #expect(findings.contains { $0.kind.code == .captureMillisecondClock })
        #expect(!completeness.items.contains { $0.code == .timeBackwards })
    }

    /// The near miss: a right clock of whole seconds (every microseconds field 0), whose commands are answered within
    /// the second as HCI round trips are, but one that crosses a second: its times stay the file's.
    @Test func wholeSecondClockKeepsItsTimes() throws {
        let s: UInt32 = 1_667_170_000
        let steps = [
            Self.command(s, .reset), Self.complete(s, .reset), Self.command(s, Self.readLocalName),
            Self.complete(s + 1, Self.readLocalName),
            Self.command(s + 1, .readBDADDR), Self.complete(s + 1, .readBDADDR), Self.command(s + 2, Self.writeScanEnable),
            Self.complete(s + 2, Self.writeScanEnable), Self.command(s + 2, Self.writeSimplePairingMode),
            Self.complete(s + 2, Self.writeSimplePairingMode),
        ]
        let (times, findings, completeness) = try Self.read(steps)
        #expect(times.map { $0 / 1_000_000 - Int64(s) } == [0, 0, 0, 1, 1, 1, 2, 2, 2, 2])
        #expect(!findings.contains { $0.kind.code == .captureMillisecondClock })
        #expect(!completeness.items.contains { $0.code == .millisecondClock })
    }

    /// The near miss: a right clock whose microseconds are 0 only now and then, and a controller truly slow to answer
    /// (1–3 s): the times are the file's, so HH-01 still sees seconds.
    @Test func microsecondsZeroNowAndThenKeepTheirTimes() throws {
        let s: UInt32 = 1_667_170_000
        let steps = [
            Self.command(s, .reset, micros: 0), Self.complete(s + 2, .reset, micros: 0),
            Self.command(s + 2, Self.readLocalName, micros: 500), Self.complete(s + 4, Self.readLocalName, micros: 0),
            Self.command(s + 4, .readBDADDR, micros: 0), Self.complete(s + 5, .readBDADDR, micros: 0),
            Self.command(s + 5, Self.writeScanEnable, micros: 0), Self.complete(s + 8, Self.writeScanEnable, micros: 0),
        ]
        let (times, findings, _) = try Self.read(steps)
        #expect(
            times.map { $0 - Int64(s) * 1_000_000 } == [0, 2_000_000, 2_000_500, 4_000_000, 4_000_000, 5_000_000, 5_000_000, 8_000_000])
        #expect(!findings.contains { $0.kind.code == .captureMillisecondClock })
    }

    /// The near miss: every time stamp 0 (the Thewbi home-made host's log): no counter moves, nothing is inferred.
    @Test func allZeroTimesStayZero() throws {
        let steps = (0..<4).flatMap { _ in [Self.command(0, .reset), Self.complete(0, .reset)] }
        let (times, findings, _) = try Self.read(steps)
        #expect(times.allSatisfy { $0 == 0 })
        #expect(!findings.contains { $0.kind.code == .captureMillisecondClock })
    }

    /// The real logs, timed from their first to their last record in time (notes are none): the BTstack Windows port's
    /// (tshark: frames 42–681, 32,991 s of ticks) spans 32.991 s; the same dongle under BTstack's libusb port, with a
    /// right clock, keeps tshark's 78.600825 s (frames 29–470) and says nothing.
    @Test func btstackWindowsLogAndItsControl() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        for (name, span, fires) in [
            ("pklg-btstack-be-ms-clock_thewbi-windows-bt400-spp-ssp-numcomp-accept-timeout-10.pklg", Int64(32_991_000), true),
            ("pklg-btstack-be_thewbi-libusb-bt400-spp-ssp-bond-no-enc-then-stored-key-reconnect.pklg", 78_600_825, false),
        ] {
            let path = dir + "/" + name
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let file = try CaptureFile.open(path: path)
            var stats = CaptureStatistics()
            while let r = file.next() { stats.add(r) }
            let first = try #require(stats.firstTimestamp), last = try #require(stats.lastTimestamp)
            #expect(last.microseconds(since: first) == span, "\(name)")
            #expect(file.findings.contains { $0.kind.code == .captureMillisecondClock } == fires, "\(name)")
        }
    }
}
