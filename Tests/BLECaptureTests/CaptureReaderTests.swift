import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLECapture

@Suite("Real captures agree with tshark")
struct RealCaptureTests {
    @Test(arguments: realCaptures)
    func countAndTimestampsMatchTshark(_ name: String) throws {
        let file = try CaptureFile.open(path: capturePath(name))
        var stats = CaptureStatistics()
        var frames: [Int] = []
        // Notes and headers are not records in time (CaptureStatistics.firstTimestamp): the records that are.
        var timed: [Int] = []
        while let r = file.next() {
            stats.add(r)
            if frames.count < 3 { frames.append(r.frame) }
            if r.kind != .text { timed.append(r.frame - 1) }
        }
        let expected: (Int, Int64, Int64)
        if let times = tsharkTimestamps(capturePath(name)), !times.isEmpty {
            let first = timed.first.map { times[$0] } ?? times.first!, last = timed.last.map { times[$0] } ?? times.last!
            expected = (times.count, first, last)
        } else {
            expected = try #require(provenance[name])
        }
        #expect(stats.records == expected.0)
        #expect(stats.firstTimestamp?.microseconds == expected.1)
        // A sniffer's clock wrap the host software added is taken back (SnifferClock): the last record is earlier than
        // tshark's by at least a wrap of the Ubertooth's clock (429.5 s).
        if file.findings.contains(where: { $0.kind.code == .captureSnifferClockWrap }) {
            #expect(expected.2 - (stats.lastTimestamp?.microseconds ?? 0) > 429_000_000)
        } else {
            #expect(stats.lastTimestamp?.microseconds == expected.2)
        }
        #expect(frames == Array(1...min(3, stats.records)))
        #expect(file.findings.allSatisfy { $0.severity == .info }, "\(file.findings)")
        #expect(file.bytesConsumed == file.fileSize)
    }

    /// The real captures blescope refuses are refused with the words ``TestEnvironment/refusedByDesign`` gives.
    @Test func refusedCapturesSayWhy() throws {
        for (name, words) in TestEnvironment.refusedByDesign {
            guard
                let dir = [TestEnvironment.sharedCaptures, TestEnvironment.corpusDirectory].compactMap({ $0 }).first(where: {
                    FileManager.default.fileExists(atPath: $0 + "/" + name)
                })
            else { continue }
            #expect(throws: (any Error).self) { try CaptureFile.open(path: dir + "/" + name) }
            do { _ = try CaptureFile.open(path: dir + "/" + name) } catch { #expect("\(error)".contains(words), "\(error)") }
        }
    }

    @Test func formatsAreSniffedFromContent() throws {
        guard capturesDirectory != nil else { return }
        let expected: [String: (CaptureFormat, UInt32, String)] = [
            "android-btsnoop_pixel8-pongbot-14conn-prepwrite-indicate.log.last": (.btsnoop, 1002, "H4"),
            "btmon-w-dl2001_batteread-rpi-notes-only.btsnoop": (.btsnoop, 2001, "Linux monitor"),
            "lell-rf-lt256-pcapng-named-pcap_whad-gatt-discovery.pcap": (.pcapng, 256, "LE LL with RF header"),
            "nrfsniffer-lt272_sweyntooth-atsamb11-invalid-l2cap-fragment.pcap": (.pcap, 272, "Nordic BLE sniffer"),
            "pcapng-lt201-h4phdr_airbily-smartwatch.pcapng": (.pcapng, 201, "H4 with direction pseudo-header"),
            "pklg-ios-le_even-g2-glasses-discovery-indicate.pklg": (.packetLogger, 0, "PacketLogger (little-endian)"),
            "pklg-macos-be_isap-sim-access-classic.pklg": (.packetLogger, 0, "PacketLogger (big-endian)"),
        ]
        for (name, (format, datalink, datalinkName)) in expected {
            let file = try CaptureFile.open(path: capturePath(name))
            #expect(file.format == format, "\(name)")
            #expect(file.datalink == datalink, "\(name)")
            #expect(file.datalinkName == datalinkName, "\(name)")
            #expect(!file.compressed)
        }
    }

    /// Kind counts against tshark's protocol hierarchy in PROVENANCE.md.
    @Test func kindCountsMatchProvenance() throws {
        guard capturesDirectory != nil else { return }
        var s = CaptureStatistics()
        let android = try CaptureFile.open(path: capturePath("android-btsnoop_pixel8-pongbot-14conn-prepwrite-indicate.log.last"))
        while let r = android.next() { s.add(r) }
        #expect((s.commands, s.events, s.acl) == (2077, 3960, 1981))

        s = CaptureStatistics()
        let ios = try CaptureFile.open(path: capturePath("pklg-ios-le_even-g2-glasses-discovery-indicate.pklg"))
        while let r = ios.next() { s.add(r) }
        #expect((s.commands, s.events, s.aclTx, s.aclRx, s.text, s.other) == (90, 449, 191, 303, 48, 53))

        s = CaptureStatistics()
        let airbily = try CaptureFile.open(path: capturePath("pcapng-lt201-h4phdr_airbily-smartwatch.pcapng"))
        while let r = airbily.next() { s.add(r) }
        #expect((s.commands, s.events, s.acl) == (173, 244, 393))
        #expect(s.unknownDirection == 0)

        s = CaptureStatistics()
        var texts: [String] = []
        let btmon = try CaptureFile.open(path: capturePath("btmon-w-dl2001_batteread-rpi-notes-only.btsnoop"))
        while let r = btmon.next() { s.add(r); if r.kind == .text { texts.append(r.text) } }
        #expect((s.text, s.monitor, s.records) == (2, 4, 6))
        #expect(texts == ["Linux version 6.6.31+rpt-rpi-2712 (aarch64)", "Bluetooth subsystem version 2.22"])
        // btmon's own notes come under index 0xFFFF (HCI_DEV_NONE, tshark "Adapter ID: 65535" on frames 1, 2 and 6): no controller.
        // Its New Index and Open Index records (monitor, index 0) name the one controller there is.
        #expect(s.controllers == [0])

        s = CaptureStatistics()
        let nordic = try CaptureFile.open(path: capturePath("nrfsniffer-lt272_sweyntooth-atsamb11-invalid-l2cap-fragment.pcap"))
        while let r = nordic.next() { s.add(r); #expect(r.linkType == 272) }
        #expect(s.linkLayer == 937)
    }

    @Test func gzipReadsIdentically() throws {
        for name in [
            "android-btsnoop_horizon74-treadmill-writereq-notify.log", "pklg-macos-be_isap-sim-access-classic.pklg",
            "pcapng-lt201-h4phdr_airbily-smartwatch.pcapng", "nrfsniffer-lt272_sweyntooth-atsamb11-invalid-l2cap-fragment.pcap",
        ]
        where capturesDirectory != nil {
            let plain = RecordFixtures.readAll(try CaptureFile.open(path: capturePath(name)))
            let gz = zlibDeflate(captureBytes(name), gzip: true)
            let fromBytes = try CaptureFile.open(bytes: gz, name: name + ".gz")
            #expect(fromBytes.compressed)
            #expect(RecordFixtures.readAll(fromBytes) == plain, "\(name) (bytes)")
            let path = writeTemporary(gz, name: "gz-" + name)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let fromPath = try CaptureFile.open(path: path)
            #expect(fromPath.compressed)
            #expect(RecordFixtures.readAll(fromPath) == plain, "\(name) (path)")
            #expect(fromPath.findings.isEmpty, "\(fromPath.findings)")
        }
    }
}

@Suite("Writers round-trip through the readers")
struct RoundTripTests {
    static let sameFormat: [(String, CaptureOutputFormat)] = [
        ("android-btsnoop_horizon74-treadmill-writereq-notify.log", .btsnoop(datalink: 1002)),
        ("android-btsnoop_pixel8-pongbot-14conn-prepwrite-indicate.log.last", .btsnoop(datalink: 1002)),
        ("btmon-w-dl2001_batteread-rpi-notes-only.btsnoop", .btsnoop(datalink: 2001)),
        ("pklg-ios-le_even-g2-glasses-discovery-indicate.pklg", .packetLogger(bigEndian: false)),
        ("pklg-macos-be_isap-sim-access-classic.pklg", .packetLogger(bigEndian: true)),
        ("pklg-btstack-be_esp32-classic-sniffer-host.pklg", .packetLogger(bigEndian: true)),
        ("nrfsniffer-lt272_sweyntooth-atsamb11-invalid-l2cap-fragment.pcap", .pcap(linkType: 272)),
        ("lell-rf-lt256_crackle-lesc-pairing.pcapng", .pcap(linkType: 256)),
    ]

    @Test(arguments: 0..<sameFormat.count)
    func realFileRewrittenReadsEqual(_ index: Int) throws {
        guard capturesDirectory != nil else { return }
        let (name, format) = Self.sameFormat[index]
        let original = RecordFixtures.readAll(try CaptureFile.open(path: capturePath(name)))
        let bytes = CaptureWriter.write(original, as: format)
        let back = RecordFixtures.readAll(try CaptureFile.open(bytes: bytes, name: "rewritten"))
        #expect(back.count == original.count)
        for (a, b) in zip(original, back) where a != b {
            Issue.record("\(name): frame \(a.frame) differs: \(a) vs \(b)")
            break
        }
    }

    @Test func pcapngH4BecomesPcap201() throws {
        guard capturesDirectory != nil else { return }
        let original = RecordFixtures.readAll(try CaptureFile.open(path: capturePath("pcapng-lt201-h4phdr_airbily-smartwatch.pcapng")))
        let file = try CaptureFile.open(bytes: CaptureWriter.pcap(original), name: "x.pcap")
        #expect(file.format == .pcap && file.datalink == 201)
        #expect(RecordFixtures.readAll(file) == original)
    }

    static let formats: [CaptureOutputFormat] = [
        .btsnoop(datalink: 1002), .btsnoop(datalink: 2001), .pcap(linkType: 201), .pcap(linkType: 254),
        .packetLogger(bigEndian: true), .packetLogger(bigEndian: false),
    ]

    @Test(arguments: formats)
    func everyHCIKindRoundTrips(_ format: CaptureOutputFormat) throws {
        let records = RecordFixtures.hciConversation()
        let file = try CaptureFile.open(bytes: CaptureWriter.write(records, as: format), name: "synthetic")
        let back = RecordFixtures.readAll(file)
        #expect(back.map(Essentials.init) == records.map(Essentials.init))
        #expect(back.map(\.frame) == Array(1...records.count))
    }

    @Test func h1KeepsCommandsEventsAndACL() throws {
        let records = RecordFixtures.hciConversation().filter { [.command, .event, .acl].contains($0.kind) }
        let bytes = CaptureWriter.btsnoop(RecordFixtures.hciConversation(), datalink: 1001)
        let file = try CaptureFile.open(bytes: bytes, name: "h1")
        #expect(file.datalink == 1001 && file.datalinkName == "H1")
        #expect(RecordFixtures.readAll(file).map(Essentials.init) == records.map(Essentials.init))
    }

    @Test func streamingWriterMatchesArrayWriter() throws {
        let records = RecordFixtures.hciConversation()
        let path = NSTemporaryDirectory() + "blecapture-\(getpid())-stream.pklg"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try CaptureFileWriter(path: path, format: .packetLogger(bigEndian: true))
        let source = try CaptureFile.open(bytes: CaptureWriter.btsnoop(records), name: "src")
        while let r = source.next() { try writer.write(r) }
        try writer.close()
        #expect(writer.recordsWritten == records.count)
        #expect(Array(FileManager.default.contents(atPath: path)!) == CaptureWriter.packetLogger(records, bigEndian: true))
    }

    @Test(arguments: [UInt8(1), 2])
    func btsnoozBugReportReadsBackWithMicroseconds(_ version: UInt8) throws {
        var records = RecordFixtures.hciConversation(start: 1_700_000_000_123_456)
        // btsnooz keeps milliseconds: make the deltas whole ms apart from the first record's sub-ms part.
        for i in 3..<records.count { records[i].timestamp = Timestamp(microseconds: records[i].timestamp.microseconds + 250_000) }
        let text = RecordFixtures.btsnoozBugReport(records, version: version)
        let file = try CaptureFile.open(bytes: text, name: "bugreport.txt")
        #expect(file.format == .btsnooz)
        let back = RecordFixtures.readAll(file)
        #expect(back.count == records.count)
        for (a, b) in zip(records, back) {
            #expect(b.timestamp.microseconds == a.timestamp.microseconds / 1000 * 1000)
            #expect((b.kind, b.direction, b.bytes) == (a.kind, a.direction, a.bytes))
        }
        // And from a gzip-compressed file on disk.
        let path = writeTemporary(zlibDeflate(text, gzip: true), name: "bugreport-v\(version).txt.gz")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gz = try CaptureFile.open(path: path)
        #expect(gz.format == .btsnooz && gz.compressed)
        #expect(RecordFixtures.readAll(gz) == back)
    }

    @Test func btsnoozOfRealCapture() throws {
        guard capturesDirectory != nil else { return }
        let original = Array(
            RecordFixtures.readAll(
                try CaptureFile.open(
                    path: capturePath(
                        "android-btsnoop_horizon74-treadmill-writereq-notify.log"))
            ).prefix(500))
        let back = RecordFixtures.readAll(try CaptureFile.open(bytes: RecordFixtures.btsnoozBugReport(original), name: "br"))
        #expect(back.map(\.bytes) == original.map(\.bytes))
        #expect(back.map(\.timestamp.microseconds) == original.map { $0.timestamp.microseconds / 1000 * 1000 })
    }

    @Test func pcapNanosecondAndSwappedByteOrder() throws {
        let records = RecordFixtures.hciConversation(start: 1_600_000_000_999_999)
        for bigEndian in [true, false] {
            var out: [UInt8] = []
            func u32(_ v: UInt32) { withUnsafeBytes(of: bigEndian ? v.bigEndian : v.littleEndian) { out += $0 } }
            func u16(_ v: UInt16) { withUnsafeBytes(of: bigEndian ? v.bigEndian : v.littleEndian) { out += $0 } }
            u32(0xA1B2_3C4D); u16(2); u16(4); u32(0); u32(0); u32(65535); u32(201)
            for r in records {
                let packet: [UInt8] = [0, 0, 0, r.direction == .rx ? 1 : 0, r.kind.rawValue] + r.bytes
                u32(UInt32(r.timestamp.microseconds / 1_000_000))
                u32(UInt32(r.timestamp.microseconds % 1_000_000) * 1000 + 789)  // ns, truncated to µs on reading
                u32(UInt32(packet.count)); u32(UInt32(packet.count))
                out += packet
            }
            let file = try CaptureFile.open(bytes: out, name: "ns.pcap")
            #expect(file.format == .pcap)
            #expect(RecordFixtures.readAll(file).map(Essentials.init) == records.map(Essentials.init), "bigEndian \(bigEndian)")
        }
    }

    @Test func linuxMonitorUserLoggingIsReadable() throws {
        var out = ByteWriter()
        out.write(contentsOf: Array("btsnoop\0".utf8)); out.write(bigEndian: UInt32(1)); out.write(bigEndian: UInt32(2001))
        let payload: [UInt8] = [6, 6] + Array("btmon\0".utf8) + Array("hello there\0".utf8)
        out.write(bigEndian: UInt32(payload.count)); out.write(bigEndian: UInt32(payload.count))
        out.write(bigEndian: UInt32(0x0001_000D)); out.write(bigEndian: UInt32(0))
        out.write(bigEndian: UInt64(bitPattern: 1_700_000_000_000_000 + BTSnoop.epochOffset))
        out.write(contentsOf: payload)
        let file = try CaptureFile.open(bytes: out.bytes, name: "mon")
        let r = try #require(file.next())
        #expect(r.kind == .text && r.text == "btmon: hello there" && r.controllerIndex == 1 && r.rawType == 13)
        #expect(r.timestamp.microseconds == 1_700_000_000_000_000)
    }
}

@Suite("Bad input: findings and open errors, never a trap")
struct BadInputTests {
    static let android = "android-btsnoop_horizon74-treadmill-writereq-notify.log"

    @Test(arguments: [0, 10, 23, 24, 30])
    func btsnoopCutInsideRecord(_ into: Int) throws {
        guard capturesDirectory != nil else { return }
        let bytes = captureBytes(Self.android)
        let offsets = btsnoopRecordOffsets(bytes)
        let cut = offsets[99] + into
        let file = try CaptureFile.open(bytes: Array(bytes[..<cut]), name: "cut")
        let records = RecordFixtures.readAll(file)
        let incl = Int(bytes[offsets[99] + 7]) | Int(bytes[offsets[99] + 6]) << 8
        if into == 0 {
            #expect(records.count == 99 && file.findings.isEmpty)
        } else {
            #expect(records.count == 99)
            let f = try #require(file.findings.first)
            #expect(f.frame == 100 && f.offset == Int64(offsets[99]) && f.kind.code.id == "capture.truncated-file")
            let needed = into < 24 ? 24 : 24 + incl
            #expect(f.message == "file ends inside record 100: header at offset \(offsets[99]) needs \(needed) bytes, \(into) available")
        }
    }

    @Test func btsnoopAbsurdLengthStops() throws {
        guard capturesDirectory != nil else { return }
        var bytes = captureBytes(Self.android)
        let offsets = btsnoopRecordOffsets(bytes)
        // Record 50: incl_len 0x7FFFFFFF.
        bytes.replaceSubrange(offsets[49] + 4..<offsets[49] + 8, with: [0x7F, 0xFF, 0xFF, 0xFF])
        let file = try CaptureFile.open(bytes: bytes, name: "bad")
        #expect(RecordFixtures.readAll(file).count == 49)
        let f = try #require(file.findings.first)
        #expect((f.frame, f.offset, f.kind.code.id) == (50, Int64(offsets[49]), "capture.invalid-record-length"))
    }

    @Test func btsnoopIncludedLongerThanOriginalStops() throws {
        guard capturesDirectory != nil else { return }
        var bytes = captureBytes(Self.android)
        let offsets = btsnoopRecordOffsets(bytes)
        bytes.replaceSubrange(offsets[9]..<offsets[9] + 4, with: [0, 0, 0, 1])  // orig_len 1 < incl_len
        let file = try CaptureFile.open(bytes: bytes, name: "bad")
        #expect(RecordFixtures.readAll(file).count == 9)
        #expect(file.findings.first?.frame == 10)
        #expect(file.findings.first?.message.contains("exceeds original length 1") == true)
    }

    @Test func capturerCutRecordsAreKeptAndFlagged() throws {
        guard capturesDirectory != nil else { return }
        var bytes = captureBytes(Self.android)
        let offsets = btsnoopRecordOffsets(bytes)
        for i in [4, 19] { bytes.replaceSubrange(offsets[i]..<offsets[i] + 4, with: [0, 0, 0x10, 0]) }
        let file = try CaptureFile.open(bytes: bytes, name: "cut-records")
        var stats = CaptureStatistics()
        var truncatedFrames: [Int] = []
        while let r = file.next() { stats.add(r); if r.isTruncated { truncatedFrames.append(r.frame) } }
        #expect(stats.records == 2572 && stats.truncatedRecords == 2 && truncatedFrames == [5, 20])
        #expect(file.findings.map(\.kind.code.id) == ["capture.truncated-records"])
        #expect(file.findings.first?.frame == 5)
    }

    @Test func packetLoggerCutAndCorrupted() throws {
        guard capturesDirectory != nil else { return }
        let bytes = captureBytes("pklg-macos-be_isap-sim-access-classic.pklg")
        var offsets: [Int] = []
        var o = 0
        while o + 4 <= bytes.count {
            offsets.append(o)
            o += 4 + (Int(bytes[o]) << 24 | Int(bytes[o + 1]) << 16 | Int(bytes[o + 2]) << 8 | Int(bytes[o + 3]))
        }
        #expect(offsets.count == 161)
        let cut = try CaptureFile.open(bytes: Array(bytes[..<(offsets[60] + 5)]), name: "cut.pklg")
        #expect(RecordFixtures.readAll(cut).count == 60)
        #expect(cut.findings.first?.message == "file ends inside record 61: header at offset \(offsets[60]) needs 13 bytes, 5 available")

        var bad = bytes
        bad.replaceSubrange(offsets[30]..<offsets[30] + 4, with: [0, 0, 0, 3])  // length 3 < 9
        let corrupted = try CaptureFile.open(bytes: bad, name: "bad.pklg")
        #expect(RecordFixtures.readAll(corrupted).count == 30)
        #expect(corrupted.findings.first.map { ($0.frame, $0.offset) } ?? (0, 0) == (31, Int64(offsets[30])))
    }

    @Test func pcapCutInsideRecord() throws {
        guard capturesDirectory != nil else { return }
        let name = "nrfsniffer-lt272_sweyntooth-atsamb11-invalid-l2cap-fragment.pcap"
        let bytes = captureBytes(name)
        var offsets: [Int] = []
        var o = 24
        while o + 16 <= bytes.count {
            offsets.append(o)
            o += 16 + (Int(bytes[o + 8]) | Int(bytes[o + 9]) << 8 | Int(bytes[o + 10]) << 16)
        }
        for (into, needed) in [(7, 16), (20, 16 + Int(bytes[offsets[500] + 8]))] {
            let path = writeTemporary(Array(bytes[..<(offsets[500] + into)]), name: "cut\(into).pcap")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let file = try CaptureFile.open(path: path)
            #expect(RecordFixtures.readAll(file).count == 500)
            #expect(
                file.findings.first?.message
                    == "file ends inside record 501: header at offset \(offsets[500]) needs \(needed) bytes, \(into) available")
        }
    }

    @Test func pcapngCutInsideBlock() throws {
        guard capturesDirectory != nil else { return }
        let name = "pcapng-lt201-h4phdr_airbily-smartwatch.pcapng"
        let bytes = captureBytes(name)
        let all = RecordFixtures.readAll(try CaptureFile.open(path: capturePath(name)))
        let file = try CaptureFile.open(bytes: Array(bytes[..<(bytes.count / 2)]), name: "cut.pcapng")
        let read = RecordFixtures.readAll(file)
        #expect(read.count > 300 && read.count < 810)
        #expect(read == Array(all.prefix(read.count)))
        let f = try #require(file.findings.first)
        #expect(f.kind.code.id == "capture.truncated-file" && f.frame == read.count + 1, "\(f)")
    }

    @Test func cutGzipReportsBoth() throws {
        guard capturesDirectory != nil else { return }
        let gz = zlibDeflate(captureBytes(Self.android), gzip: true)
        let path = writeTemporary(Array(gz[..<(gz.count / 2)]), name: "cut.log.gz")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = try CaptureFile.open(path: path)
        let n = RecordFixtures.readAll(file).count
        #expect(n > 500 && n < 2572)
        #expect(file.findings.map(\.kind.code.id) == ["capture.truncated-file", "capture.read-error"])
        #expect(file.findings.last?.message == "gzip: unexpected end of file")
    }

    @Test func openErrors() throws {
        func message(_ body: () throws(CaptureOpenError) -> CaptureFile) -> String {
            do { _ = try body(); return "opened" } catch { return error.description }
        }
        #expect(message { () throws(CaptureOpenError) in try CaptureFile.open(bytes: [], name: "e") } == "e: empty file")
        let empty = writeTemporary([], name: "empty")
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(message { () throws(CaptureOpenError) in try CaptureFile.open(path: empty) } == "\(empty): empty file")
        #expect(message { () throws(CaptureOpenError) in try CaptureFile.open(path: "/tmp") } == "/tmp: is a directory")
        #expect(
            message { () throws(CaptureOpenError) in try CaptureFile.open(path: "/nonexistent/x") }
                == "/nonexistent/x: No such file or directory")
        let html = Array("<html><body>not a capture</body></html>\n".utf8)
        #expect(
            message { () throws(CaptureOpenError) in try CaptureFile.open(bytes: html, name: "F") }
                == "F: not a capture (expected btsnoop, pcap, pcapng, PacketLogger, hcidump or a bug report with btsnooz); starts with 3c 68 74 6d"
        )
        var bcsp = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEB]
        #expect(
            message { () throws(CaptureOpenError) in try CaptureFile.open(bytes: bcsp, name: "F") }
                == "F: btsnoop datalink 1003 (BCSP) is not supported")
        bcsp[15] = 0xEC
        #expect(
            message { () throws(CaptureOpenError) in try CaptureFile.open(bytes: bcsp, name: "F") }
                == "F: btsnoop datalink 1004 (H5) is not supported")
        var ethernet = CaptureWriter.pcap([], linkType: 1)
        #expect(
            message { () throws(CaptureOpenError) in try CaptureFile.open(bytes: ethernet, name: "F") }.contains(
                "link type 1 is not a Bluetooth link type"))
        ethernet = zlibDeflate(Array(repeating: 0, count: 100), gzip: true)
        #expect(message { () throws(CaptureOpenError) in try CaptureFile.open(bytes: ethernet, name: "F") }.contains("not a capture"))
    }

    /// The corpus's two-interface pcapng (Ethernet, then Ubertooth PPI), which libpcap refused for its first
    /// interface's link type, reads whole: capinfos counts interface 0 Ethernet, 6 packets; interface 1 PPI, 6,802.
    @Test func twoInterfacePcapngReadsEveryInterface() throws {
        guard let corpus = TestEnvironment.corpusDirectory else {
            print("skipped: BLESCOPE_CORPUS not set")
            return
        }
        let path = corpus + "/ppi-btle-lt192-pcapng-2if_hackenbt-ubertooth-plus-ethernet-att-05.pcapng"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let file = try CaptureFile.open(path: path)
        #expect(file.datalink == 192)
        var byInterface: [UInt16: (linkType: UInt32, count: Int)] = [:]
        while let r = file.next() { byInterface[r.controllerIndex, default: (r.linkType, 0)].count += 1 }
        #expect(byInterface[0]?.linkType == 1 && byInterface[0]?.count == 6)
        #expect(byInterface[1]?.linkType == 192 && byInterface[1]?.count == 6802)
    }

    /// Random corruption never traps and never reads past the data.
    @Test func randomCorruptionNeverTraps() throws {
        guard capturesDirectory != nil else { return }
        var seed: UInt64 = 0x5EED_1234
        print("randomCorruptionNeverTraps seed \(seed)")
        func random() -> Int { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Int(truncatingIfNeeded: seed >> 33) }
        for name in [Self.android, "pklg-ios-le_even-g2-glasses-discovery-indicate.pklg", "pcapng-lt201-h4phdr_airbily-smartwatch.pcapng"] {
            let original = captureBytes(name)
            for _ in 0..<20 {
                var bytes = original
                for _ in 0..<8 { bytes[16 + random() % (bytes.count - 16)] = UInt8(truncatingIfNeeded: random()) }
                bytes.removeLast(random() % 100)
                guard let file = try? CaptureFile.open(bytes: bytes, name: "fuzz") else { continue }
                var stats = CaptureStatistics()
                while let r = file.next() { stats.add(r); _ = r.bytes.reduce(0, &+) }
            }
        }
    }
}

/// Classic pcap files are read by blescope's own reader (fast, exact offsets for cut files); libpcap reads
/// pcapng. These tests hold the own reader to libpcap's reading of the same files, record by record,
/// and check that every format of a Sample yields the same records.
@Suite struct ReaderAgreementTests {
    static var classicPcaps: [String] {
        let samples = TestEnvironment.sampleNames
            .map { TestEnvironment.sample("\($0).pcap") }
        let real = TestEnvironment.realCaptures.filter { path in
            (try? CaptureFile.open(path: path))?.format == .pcap
        }
        return samples + real
    }

    @Test(arguments: classicPcaps)
    func ownPcapReaderAgreesWithLibpcap(_ path: String) throws {
        let ours = RecordFixtures.readAll(try CaptureFile.open(path: path))
        let libpcap = try CaptureFile.open(path: path, classicPcapThroughLibpcap: true)
        var theirs = RecordFixtures.readAll(libpcap)
        #expect(ours.count == theirs.count)
        // Out-of-range microseconds (238 records in each of the two crackle "numeric-pin" files, e.g. 4,292,882,157):
        // libpcap reads the field as signed (struct pcap_timeval's bpf_int32), blescope as the unsigned fraction the
        // format defines (ClassicPcapHeaders.outOfRangeFractions). Each reading checked against the header, then set aside.
        if let file = ClassicPcapHeaders.read(path), !file.nanoseconds, file.times.count == ours.count, ours.count == theirs.count {
            var differing = 0
            for (i, t) in file.times.enumerated() where t.fraction >= 1_000_000 {
                let seconds = Int64(t.seconds) * 1_000_000
                #expect(ours[i].timestamp.microseconds == seconds + Int64(t.fraction), "frame \(i + 1)")
                #expect(theirs[i].timestamp.microseconds == seconds + Int64(Int32(bitPattern: t.fraction)), "frame \(i + 1)")
                theirs[i].timestamp = ours[i].timestamp
                differing += 1
            }
            #expect(differing == ClassicPcapHeaders.outOfRangeFractions(path))
        }
        #expect(ours == theirs)
        #expect(!ours.isEmpty)
    }

    @Test(arguments: TestEnvironment.sampleNames)
    func everyFormatOfASampleYieldsTheSameRecords(_ sample: String) throws {
        let btsnoop = RecordFixtures.readAll(try CaptureFile.open(path: TestEnvironment.sample("\(sample).btsnoop")))
        for format in ["pcap", "pklg"] {
            let other = RecordFixtures.readAll(try CaptureFile.open(path: TestEnvironment.sample("\(sample).\(format)")))
            #expect(other.count == btsnoop.count)
            for (a, b) in zip(btsnoop, other) {
                #expect(
                    a.frame == b.frame && a.timestamp == b.timestamp && a.direction == b.direction
                        && a.kind == b.kind && a.bytes == b.bytes, "\(sample).\(format) frame \(a.frame)")
            }
        }
    }
}

/// Classic pcap records whose ts_usec/ts_nsec field is one second or more: read as the format defines it, and said.
@Suite struct PcapSubsecondRangeTests {
    /// A little-endian classic pcap (link type 201, H4 with a 4-byte direction header) of one-byte-payload records
    /// with the given fraction fields, built here byte by byte.
    static func pcap(fractions: [UInt32], nanoseconds: Bool = false) -> [UInt8] {
        func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }
        var b = le32(nanoseconds ? 0xA1B2_3C4D : 0xA1B2_C3D4) + [2, 0, 4, 0] + le32(0) + le32(0) + le32(65535) + le32(201)
        for (i, fraction) in fractions.enumerated() {
            let payload: [UInt8] = [0, 0, 0, 1, 0x04]
            b += le32(1_000 + UInt32(i)) + le32(fraction) + le32(UInt32(payload.count)) + le32(UInt32(payload.count))
            b += payload
        }
        return b
    }

    @Test func outOfRangeMicrosecondsAreCountedOnceWithTheFirstPlace() throws {
        // Records 2 and 4 break the rule; 999,999 is the largest valid value. Each record is 16 + 5 bytes after the
        // 24-byte file header, so record 2's header is at offset 24 + 21 = 45.
        let bytes = Self.pcap(fractions: [999_999, 1_500_000, 0, 4_292_882_157])
        let file = try CaptureFile.open(bytes: bytes, name: "usec-range")
        var times: [Int64] = []
        while let r = file.next() { times.append(r.timestamp.microseconds) }
        #expect(times == [1_000_999_999, 1_002_500_000, 1_002_000_000, 1_003_000_000 + 4_292_882_157])
        let findings = file.findings.filter { $0.kind.code.id == "capture.timestamp-out-of-range" }
        #expect(findings.count == 1)
        #expect(findings.first?.frame == 2 && findings.first?.offset == 45)
        #expect(findings.first?.message.hasPrefix("2 records with a ts_usec field of one second or more") == true)
        #expect(findings.first?.message.contains("ts_usec 1500000") == true)
    }

    @Test func nanosecondFilesUseTheirOwnLimit() throws {
        let valid = try CaptureFile.open(bytes: Self.pcap(fractions: [999_999_999, 1_500_000], nanoseconds: true), name: "ns")
        while valid.next() != nil {}
        #expect(!valid.findings.contains { $0.kind.code.id == "capture.timestamp-out-of-range" })
        let invalid = try CaptureFile.open(bytes: Self.pcap(fractions: [0, 1_000_000_000], nanoseconds: true), name: "ns2")
        while invalid.next() != nil {}
        #expect(invalid.findings.filter { $0.kind.code.id == "capture.timestamp-out-of-range" }.map(\.frame) == [2])
    }

    /// The corpus's crackle numeric-PIN capture: its writer stored 238 of 307 ts_usec fields out of range (counted by
    /// an independent header reader, ``ClassicPcapHeaders``).
    @Test func realCaptureWithOutOfRangeFields() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let path = dir + "/ppi-btle-lt192_crackle-numeric-pin-pairing.pcap"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let expected = ClassicPcapHeaders.outOfRangeFractions(path)
        #expect(expected == 238)
        let file = try CaptureFile.open(path: path)
        while file.next() != nil {}
        let finding = file.findings.first { $0.kind.code.id == "capture.timestamp-out-of-range" }
        #expect(finding?.message.hasPrefix("\(expected) records with a ts_usec field") == true)
    }
}
