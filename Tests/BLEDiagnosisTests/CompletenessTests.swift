import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// The completeness verdict on captures whose truth is built here: which records are cut, dropped, out of
/// order or missing is decided below, then read back through the ordinary readers.
@Suite struct CompletenessTests {
    /// Android filtered snoop mode keeps the ACL header and 14 bytes of ACL payload (L2CAP header + 10 bytes).
    static let keptACLPayload = 14

    /// A connection with 12 notifications of 100 bytes and a write, each ACL record cut as the filtered log cuts it.
    static func filtered() -> (records: [OwnedRecord], cutFrames: [Int]) {
        var full = CaptureBuilder().command([0x03, 0x0C, 0x00]).event([0x0E, 4, 1, 0x03, 0x0C, 0x00]).connect(handle: 0x40)
        for i in 0..<12 { full = full.notify(handle: 0x2A, Array(repeating: UInt8(i), count: 100), connection: 0x40) }
        full = full.att(.writeRequest(handle: 0x2C, value: [1, 2, 3]), handle: 0x40, .tx).disconnect(handle: 0x40)
        var cut: [Int] = []
        let records = full.records.map { r -> OwnedRecord in
            guard r.kind == .acl, r.bytes.count > 4 + keptACLPayload else { return r }
            cut.append(r.frame)
            var c = r
            c.bytes = Array(r.bytes.prefix(4 + keptACLPayload))
            c.originalLength = r.bytes.count
            return c
        }
        return (records, cut)
    }

    static func completeness(_ file: CaptureFile) -> CaptureCompleteness { CaptureInfo(reading: file).completeness }

    @Test func filteredSnoopLogSaysWhatCannotBeChecked() throws {
        let (records, cut) = Self.filtered()
        #expect(cut.count == 12)  // the 3-byte write fits in 14 bytes and stays whole
        let info = CaptureInfo(reading: try CaptureFile.open(bytes: CaptureWriter.btsnoop(records), name: "filtered.btsnoop"))
        let c = info.completeness
        #expect(c.verdict == "incomplete")
        let item = try #require(c.items.first { $0.code.id == "acl-payload-cut" })
        #expect(item.count == 12 && item.frame == cut.first && item.severity == .warning)
        #expect(item.message.hasPrefix("ACL payloads cut to at most 14 bytes in 12 of 13 ACL records (Android filtered snoop log)"))
        #expect(item.message.contains("ATT values") && item.message.contains("transfers"))
        // The reset at frame 1 is the controller's bring-up, not a loss; the connection opens and closes inside.
        #expect(c.items.count == 1)
        #expect(info.json.contains("\"completeness\":{\"verdict\":\"incomplete\""))
        #expect(info.text(terminal: Terminal(colors: false)).contains("Completeness:       incomplete (1 item below)"))
    }

    /// A PDU the capturer cut ends where its ACL header says it would have: counted as cut by the capturer, and the
    /// next PDU (whole) decodes. Before, each cut PDU waited for bytes that never came and the next start counted
    /// it "lost in reassembly", blaming missing packets (found on the corpus's btsnooz-cut Android log
    /// `android-btsnooz-cut_mi-watch-lite-qcom-ble-acl-10b.btsnoop`).
    @Test func cutPDUsAreCountedAsCutAndTheNextOneDecodes() throws {
        let (records, cut) = Self.filtered()
        var events: [TimelineEvent] = []
        let file = try CaptureFile.open(bytes: CaptureWriter.btsnoop(records), name: "filtered.btsnoop")
        let analyzer = Analyzer.analyze(file, configure: { a in a.onEvent = { events.append($0) } })
        let totals = analyzer.decodeHealth.totals
        #expect(totals.cutByCapturer == cut.count && totals.reassemblyDropped == 0)
        // The 3-byte write that fits in 14 bytes is whole and decodes right after the last cut notification.
        #expect(events.contains { $0.layer == .att && $0.frame == cut.last! + 1 && $0.code == 0x12 })
        let warning = try #require(analyzer.decodeHealth.connections.first?.warning)
        #expect(warning.contains("likely cause: the capturer truncated ACL packets"))
    }

    /// A PDU in several fragments, every one cut: it ends at the fragment that completes what the headers announced,
    /// whatever the fragment size.
    @Test(arguments: [27, 40, 100]) func cutFragmentsEndWhereTheHeadersSay(_ fragmentSize: Int) throws {
        let full = CaptureBuilder().connect(handle: 0x40)
            .notify(handle: 0x2A, Array(repeating: 7, count: 300), connection: 0x40, fragmentSize: fragmentSize)
            .notify(handle: 0x2A, [1, 2], connection: 0x40)
        let records = full.records.map { r -> OwnedRecord in
            guard r.kind == .acl, r.bytes.count > 4 + Self.keptACLPayload else { return r }
            var c = r
            c.bytes = Array(r.bytes.prefix(4 + Self.keptACLPayload))
            c.originalLength = r.bytes.count
            return c
        }
        var events: [TimelineEvent] = []
        let file = try CaptureFile.open(bytes: CaptureWriter.btsnoop(records), name: "cut.btsnoop")
        let analyzer = Analyzer.analyze(file, configure: { a in a.onEvent = { events.append($0) } })
        #expect(analyzer.decodeHealth.totals.cutByCapturer == 1 && analyzer.decodeHealth.totals.reassemblyDropped == 0)
        #expect(events.filter { $0.layer == .att }.map(\.frame) == [records.count])
    }

    @Test func btsnoozLogIsNamedAsSuch() throws {
        let (records, cut) = Self.filtered()
        let text = RecordFixtures.btsnoozBugReport(records)
        let file = try CaptureFile.open(bytes: text, name: "bugreport.txt")
        #expect(file.format.name == "btsnooz")
        let c = Self.completeness(file)
        let item = try #require(c.items.first { $0.code.id == "acl-payload-cut" })
        #expect(item.count == cut.count)
        #expect(item.message.contains("(btsnooz log from a bug report)"))
    }

    @Test func wholeCaptureIsComplete() throws {
        var b = CaptureBuilder().connect(handle: 0x40)
        for i in 0..<5 { b = b.notify(handle: 0x2A, Array(repeating: UInt8(i), count: 100), connection: 0x40) }
        b = b.disconnect(handle: 0x40)
        let c = Self.completeness(try b.captureFile())
        #expect(c.items.isEmpty)
        #expect(c.verdict == "complete")
    }

    /// Every other item at a frame chosen here: time going backwards, a long gap, a reset after data, a hardware
    /// error, a connection started before the capture, one still open at the end, drops counted by the capturer.
    @Test func everyItemAtItsFrame() throws {
        let b = CaptureBuilder(step: 1_000)
            .notify(handle: 0x2A, [1], connection: 0x41)  // 1: traffic on 0x0041 without Connection Complete
            .connect(handle: 0x40)  // 2
            .notify(handle: 0x2A, [2], connection: 0x40)  // 3
            .at(microsecondsFromStart: 500)  // back in time
            .notify(handle: 0x2A, [3], connection: 0x40)  // 4: backwards
            .at(microsecondsFromStart: 200_000_000)  // 200 s later
            .notify(handle: 0x2A, [4], connection: 0x40)  // 5: after the gap
            .event([0x10, 1, 0x00])  // 6: hardware error
            .command([0x03, 0x0C, 0x00])  // 7: reset after data
            .event([0x0E, 4, 1, 0x03, 0x0C, 0x00])  // 8: the reset completed (a connection before this is stale)
            .connect(handle: 0x42)  // 9: never closed
        var bytes = b.btsnoopBytes()
        // Cumulative drops from frame 5 on: 3 packets lost (btsnoop record header: orig, incl, flags, drops, time).
        var offset = 16, frame = 1
        while offset + 24 <= bytes.count {
            let incl = Int(bytes[offset + 4]) << 24 | Int(bytes[offset + 5]) << 16 | Int(bytes[offset + 6]) << 8 | Int(bytes[offset + 7])
            if frame >= 5 { bytes[offset + 15] = 3 }
            offset += 24 + incl
            frame += 1
        }
        let c = Self.completeness(try CaptureFile.open(bytes: bytes, name: "items.btsnoop"))
        func item(_ code: String) -> CaptureCompleteness.Item? { c.items.first { $0.code.id == code } }
        #expect(item("time-backwards")?.frame == 4)
        #expect(item("time-gap")?.frame == 5)
        #expect(item("time-gap")?.message.contains("3 min 19 s") == true)
        #expect(item("hardware-error")?.frame == 6)
        #expect(item("controller-reset")?.frame == 7 && item("controller-reset")?.severity == .warning)
        #expect(item("drops")?.frame == 5 && item("drops")?.count == 3)
        #expect(item("started-before-capture")?.frame == 1 && item("started-before-capture")?.message.contains("0x0041") == true)
        #expect(item("open-at-end")?.frame == 9 && item("open-at-end")?.count == 1)  // 0x0040 was dropped by the reset
        #expect(c.verdict == "incomplete")
        #expect(c.items.count == 7)
    }

    /// Issue 35 point 4: "incomplete" is for what is missing. A step back under 10 ms is clock jitter (a note); a reset
    /// with no link open drops nothing (a note); a reset with a link open, or a step back of seconds, stays a warning.
    @Test func jitterAndAnIdleResetAreNotes() throws {
        let b = CaptureBuilder(step: 1_000)
            .connect(handle: 0x40)  // 1
            .notify(handle: 0x2A, [1], connection: 0x40)  // 2 at 1 ms
            .at(microsecondsFromStart: 1_000 - 906)  // 906 µs back, as the sweyntooth capture's frame 168 (tshark: -0.000906)
            .notify(handle: 0x2A, [2], connection: 0x40)  // 3
            .disconnect(handle: 0x40)  // 4
            .command([0x03, 0x0C, 0x00])  // 5: reset, no link open
        let c = Self.completeness(try CaptureFile.open(bytes: b.btsnoopBytes(), name: "jitter.btsnoop"))
        let back = try #require(c.items.first { $0.code.id == "time-backwards" })
        #expect(back.severity == .info && back.frame == 3 && back.message.contains("by at most 906 µs"))
        let reset = try #require(c.items.first { $0.code.id == "controller-reset" })
        #expect(reset.severity == .info && reset.frame == 5 && reset.message.contains("with no link open"))
        #expect(c.verdict == "complete with notes")
        // The same reset with the link still open dropped it.
        let open = CaptureBuilder(step: 1_000).connect(handle: 0x40).notify(handle: 0x2A, [1], connection: 0x40).command([0x03, 0x0C, 0x00])
        let d = Self.completeness(try CaptureFile.open(bytes: open.btsnoopBytes(), name: "reset.btsnoop"))
        #expect(d.items.first { $0.code.id == "controller-reset" }?.severity == .warning && d.verdict == "incomplete")
    }

    /// A reset after the controller was put to work restarts it, whether or not a link carried data yet: the audiostream
    /// iPhone log inquires and scans (LE Set Scan Enable at 151), then resets at 161 with nothing connected. A reset
    /// after bring-up commands only, or after a scan being disabled, is the bring-up: no note.
    @Test(arguments: [
        ([UInt8]([0x0C, 0x20, 0x02, 0x01, 0x00]), true), ([0x0C, 0x20, 0x02, 0x00, 0x00], false), ([0x01, 0x10, 0x00], false),
    ])
    func aResetAfterTheControllerWorkedIsANoteEvenWithoutData(_ before: [UInt8], _ noted: Bool) throws {
        let b = CaptureBuilder(step: 1_000).command([0x03, 0x0C, 0x00]).command(before).command([0x03, 0x0C, 0x00])
        let c = Self.completeness(try CaptureFile.open(bytes: b.btsnoopBytes(), name: "work.btsnoop"))
        let reset = c.items.first { $0.code.id == "controller-reset" }
        #expect((reset != nil) == noted)
        if noted { #expect(reset?.frame == 3 && reset?.severity == .info && reset?.message.contains("with no link open") == true) }
    }

    /// A step back of exactly 10 ms (the Bafang iOS PacketLogger log's largest, frame 22941: tshark's
    /// frame.time_delta −0.010000; its clock ticks in milliseconds) is jitter, a note; 11 ms is a jump, a warning whose
    /// verdict is "out of time order": every record is there, only durations across it are wrong.
    @Test(arguments: [(Int64(10_000), "complete with notes"), (Int64(11_000), "out of time order")])
    func aStepBackIsOutOfTimeOrderNotIncomplete(_ back: Int64, _ verdict: String) throws {
        let b = CaptureBuilder(step: 1_000).connect(handle: 0x40)
            .at(microsecondsFromStart: 20_000).notify(handle: 0x2A, [1], connection: 0x40)  // 2
            .at(microsecondsFromStart: 20_000 - back).notify(handle: 0x2A, [2], connection: 0x40)  // 3
        let c = Self.completeness(try CaptureFile.open(bytes: b.btsnoopBytes(), name: "step.btsnoop"))
        let item = try #require(c.items.first { $0.code.id == "time-backwards" })
        #expect(item.frame == 3 && (item.severity == .warning) == (back > 10_000))
        #expect(c.verdict == verdict && c.headline.hasPrefix(verdict + ": ") && c.hasWarnings == (back > 10_000))
    }

    /// The words say what the log shows: a link encrypted without its key is "not decrypted" (its records are all
    /// there), a clock that jumped back "out of time order"; a record missing makes it "incomplete" whatever else, and
    /// the headline leads with the item that gives the verdict.
    @Test func theVerdictIsTheGravestOfWhatIsMissingUnreadableOrMistimed() {
        let back = CaptureCompleteness.Item(code: .timeBackwards, severity: .warning, message: "timestamps go backwards", frame: 5)
        let key = CaptureCompleteness.Item(code: .encryptedNoKey, severity: .warning, message: "link encrypted from frame 18", frame: 18)
        let drops = CaptureCompleteness.Item(code: .drops, severity: .warning, message: "the capturer dropped 3 packets", frame: 40)
        #expect(CaptureCompleteness(items: [back]).verdict == "out of time order")
        let unreadable = CaptureCompleteness(items: [back, key])
        #expect(unreadable.verdict == "not decrypted" && unreadable.headline == "not decrypted: link encrypted from frame 18 (+1 more)")
        let missing = CaptureCompleteness(items: [back, key, drops])
        #expect(missing.verdict == "incomplete" && missing.headline == "incomplete: the capturer dropped 3 packets (+2 more)")
        var fromFindings = CaptureCompleteness()
        fromFindings.add(analysisFindings: [Finding(.warning, FindingKind(.llEncryptedNoKey, message: "no key"), frame: 18)])
        #expect(fromFindings.verdict == "not decrypted")
    }

    /// Connections started before the capture, counted once each however their records interleave. The handles
    /// are chosen to share the tracker's direct-mapped cache slots (0x0001, 0x0041, 0x0081, 0x00C1 all have the
    /// same low six bits), so the cache is evicted between records of one connection; 0x0041 opens inside the
    /// capture, 0x0081 closes and sends one late record, 0x0F00 is no connection handle (above 0x0EFF: a vendor trace).
    @Test func startedBeforeCountedOnceWhenHandlesShareCacheSlots() throws {
        var b = CaptureBuilder(step: 1_000).connect(handle: 0x41)  // 1
        for round in 0..<3 {
            for h: UInt16 in [0x01, 0x41, 0x81, 0xC1, 0x01] {
                b = b.notify(handle: 0x2A, [UInt8(round)], connection: h)
            }
        }
        b = b.disconnect(handle: 0x81).notify(handle: 0x2A, [9], connection: 0x81).notify(handle: 0x2A, [9], connection: 0xF00)
        let c = Self.completeness(try CaptureFile.open(bytes: b.btsnoopBytes(), name: "slots.btsnoop"))
        let item = try #require(c.items.first { $0.code.id == "started-before-capture" })
        // 0x0001, 0x0081, 0x00C1: traffic without a Connection Complete; frame 2 is the first notification.
        #expect(item.count == 3 && item.frame == 2)
        #expect(item.message.contains("traffic on 0x0001, 0x0081, 0x00c1 from frame 2") && !item.message.contains("0x0041"))
        #expect(!item.message.contains("0x0f00"))
    }
    /// Records shorter than their own header says, where the capturer cut nothing: damaged where the header does not hold
    /// together (the Thewbi home-made host's PacketLogger log: ACL records of 0xCC filler, handle 0x0CCC stating 52,428
    /// bytes in 16; tshark marks each malformed), cut by the logger where it does (the same log's Change Local Name
    /// stating 248 parameter bytes in 29; Windows BTVS's notifications keeping ACL length 15, L2CAP length 11, the
    /// opcode and the handle, and nothing of the value). The damaged are counted with their frames and the filler's
    /// handle makes no connection; the logger's cuts count as cut records. The same records cut by the capturer
    /// (original length kept) are "truncated".
    @Test func recordsShorterThanTheirHeaderAreDamagedOrCutByTheLogger() throws {
        let built = CaptureBuilder(step: 1_000).connect(handle: 0x0B).notify(handle: 0x2A, [1, 2], connection: 0x0B)
        var records = built.records
        #expect(records.count == 2)  // the Connection Complete and the notification: the records below are 3 to 7
        let t = records.last!.timestamp
        func add(_ kind: RecordKind, _ bytes: [UInt8], original: Int? = nil) {
            records.append(
                OwnedRecord(frame: records.count + 1, timestamp: t, direction: .rx, kind: kind, originalLength: original, bytes: bytes))
        }
        add(.acl, [0xCC, 0x0C, 0xCC, 0xCC] + Array(repeating: 0xCC, count: 12))  // 3: 52,428 stated, 12 held: damaged
        add(.command, [0x13, 0x0C, 248] + Array(repeating: 0x41, count: 26))  // 4: Change Local Name, 248 stated, 26 held
        add(.event, [0x0E, 10, 1, 0x03, 0x0C])  // 5: Command Complete stating 10, holding 3
        add(.acl, [0x0B, 0x20, 0x20, 0x00, 1, 2], original: 36)  // 6: cut by the capturer: truncated
        add(.acl, [0x0B, 0x20, 0x0F, 0x00, 0x0B, 0x00, 0x04, 0x00, 0x1B, 0x2B, 0x00])  // 7: BTVS's notification, value left out
        let c = Self.completeness(try CaptureFile.open(bytes: CaptureWriter.btsnoop(records), name: "damaged.btsnoop"))
        let damaged = try #require(c.items.first { $0.code.id == "damaged-records" })
        #expect(damaged.count == 1 && damaged.frame == 3 && damaged.severity == .warning)
        #expect(damaged.message.hasPrefix("1 record is shorter than its own header says, with nothing cut by the capturer (frame 3)"))
        #expect(c.verdict == "incomplete")
        let others = try #require(c.items.first { $0.code.id == "truncated-records" })
        #expect(others.count == 2 && others.frame == 4)
        #expect(
            others.message
                == "2 non-ACL records (frame 4, …) cut before the log was written: headers whole, payloads left out, nothing marked cut in the file"
        )
        // 0x0CCC named no connection; the cut records on 0x000B are the capturer's and the logger's (acl-payload-cut).
        #expect(!c.items.contains { $0.code.id == "started-before-capture" })
        #expect(c.items.contains { $0.code.id == "acl-payload-cut" && $0.frame == 6 && $0.count == 2 })
        #expect(!c.payloadsCutByLogger)
    }

    /// Every cut ACL record the logger's (BTVS): the item says so; a cut record's handle names its link as a whole one's
    /// does (0x000C, no Connection Complete: a link from before the capture), and nothing is damaged.
    @Test func payloadsLeftOutByTheLogger() throws {
        let built = CaptureBuilder(step: 1_000).connect(handle: 0x0B)
        var records = built.records
        for handle: UInt8 in [0x0B, 0x0C] {
            records.append(
                OwnedRecord(
                    frame: records.count + 1, timestamp: records.last!.timestamp, direction: .rx, kind: .acl,
                    bytes: [handle, 0x20, 0x0F, 0x00, 0x0B, 0x00, 0x04, 0x00, 0x1B, 0x2B, 0x00]))
        }
        let c = Self.completeness(try CaptureFile.open(bytes: CaptureWriter.btsnoop(records), name: "btvs.btsnoop"))
        let cut = try #require(c.items.first { $0.code.id == "acl-payload-cut" })
        #expect(
            cut.count == 2 && cut.frame == 2
                && cut.message.contains(
                    "(cut before the log was written: headers whole, payloads left out, nothing marked cut in the file)")
        )
        #expect(c.payloadsCutByLogger)
        #expect(!c.items.contains { $0.code.id == "damaged-records" })
        let before = try #require(c.items.first { $0.code.id == "started-before-capture" })
        #expect(before.frame == 3 && before.count == 1 && before.message.contains("traffic on 0x000c from frame 3"))
    }

    /// A log whose time stamps never move (the same home-made host writes 0 in every record: tshark's capture span
    /// 0.000000 s over 69 records) keeps order but no timing; one record apart by 1 µs is a clock that moves.
    @Test(arguments: [(Int64(0), true), (Int64(1), false)])
    func aClockThatNeverMovesIsNoTiming(_ step: Int64, _ frozen: Bool) throws {
        let b = CaptureBuilder(step: 0).connect(handle: 0x40).notify(handle: 0x2A, [1], connection: 0x40)
            .at(microsecondsFromStart: step).disconnect(handle: 0x40)
        #expect(b.records.count == 3)
        let c = Self.completeness(try b.captureFile())
        let item = c.items.first { $0.code.id == "no-timing" }
        #expect((item != nil) == frozen)
        if frozen {
            #expect(item?.severity == .info && item?.count == 3)
            #expect(item?.message.hasPrefix("all 3 records carry the same time stamp") == true && c.verdict == "complete with notes")
        } else {
            #expect(c.items.isEmpty && c.verdict == "complete")
        }
    }
}
