import BLEAnalysis
import BLEAnalysisTestSupport
import BLECodecs
import BLECore
import Testing

@Suite struct ChunkedTransferTrackerTests {
    /// A message with "EOM" inside it (it must not split the message).
    static func message(_ n: Int, seed: Int = 3) -> [UInt8] {
        var m = (0..<n).map { UInt8(truncatingIfNeeded: ($0 &* 31 &+ seed) % 251) }
        if n > 10 { m.replaceSubrange(5..<8, with: Array("EOM".utf8)) }
        return m
    }

    static func eomEvents(
        _ msg: [UInt8], chunk: Int, from frame: Int, conn: Int = 1, uuid: BluetoothUUID? = appleUUID,
        eom: Bool = true
    ) -> [TestEvent] {
        var events = chunked(msg, chunk).enumerated().map { i, c in
            TestEvent.notify(frame + i, uuid: uuid, c, conn: conn)
        }
        if eom { events.append(.notify(frame + events.count, uuid: uuid, Array("EOM".utf8), conn: conn)) }
        return events
    }

    @Test(arguments: [20, 100, 182, 244])
    func rebuildsMessagesOfAnyChunkSize(_ size: Int) {
        let a = Self.message(999), b = Self.message(304, seed: 7)
        var t = ChunkedTransferTracker()
        let first = Self.eomEvents(a, chunk: size, from: 10)
        let second = Self.eomEvents(b, chunk: size, from: 10 + first.count)
        feed(&t, first + second)
        #expect(t.transfers.count == 2)
        #expect(t.transfers[0].data == a)
        #expect(t.transfers[1].data == b)
        #expect(t.transfers[0].chunks == (999 + size - 1) / size)
        #expect(t.transfers[0].firstFrame == 10)
        #expect(t.transfers[0].lastFrame == 10 + first.count - 1)
        #expect(t.transfers[0].terminatorFrame == 10 + first.count - 1)
        #expect(t.transfers.allSatisfy { $0.complete })
        #expect(t.allFindings.isEmpty)
    }

    @Test func chunkContainingEOMDoesNotSplit() {
        var t = ChunkedTransferTracker()
        feed(
            &t,
            [
                .notify(1, uuid: appleUUID, Array("abcEOM".utf8)), .notify(2, uuid: appleUUID, Array("EOMx".utf8)),
                .notify(3, uuid: appleUUID, Array("EOM".utf8)),
            ])
        #expect(t.transfers.count == 1)
        #expect(t.transfers[0].data == Array("abcEOMEOMx".utf8))
        #expect(t.transfers[0].textPreview() == "abcEOMEOMx")
    }

    @Test func interleavedConnections() {
        let a = Self.message(500), b = Self.message(400, seed: 9)
        let ea = Self.eomEvents(a, chunk: 20, from: 1, conn: 1)
        let eb = Self.eomEvents(b, chunk: 20, from: 1000, conn: 2)
        var merged: [TestEvent] = []
        for i in 0..<max(ea.count, eb.count) {
            if i < ea.count { merged.append(ea[i]) }
            if i < eb.count { merged.append(eb[i]) }
        }
        var t = ChunkedTransferTracker()
        feed(&t, merged)
        #expect(t.transfers.count == 2)
        #expect(t.transfers.first { $0.connectionNumber == 1 }?.data == a)
        #expect(t.transfers.first { $0.connectionNumber == 2 }?.data == b)
    }

    @Test func cutByDisconnection() {
        var t = ChunkedTransferTracker()
        let whole = Self.eomEvents(Self.message(100), chunk: 20, from: 1)
        let cut = Self.eomEvents(Self.message(60), chunk: 20, from: 10, eom: false)
        feed(&t, whole + cut, end: [.disconnect(connectionNumber: 1), .finish])
        #expect(t.transfers.count == 2)
        #expect(t.transfers[0].complete)
        #expect(!t.transfers[1].complete)
        #expect(t.transfers[1].data == Self.message(60))
        #expect(t.transfers[1].findings.map(\.kind.code.id) == ["transfer.incomplete"])
        #expect(t.transfers[1].findings[0].message.contains("disconnection"))
    }

    @Test func cutByEndOfCapture() {
        var t = ChunkedTransferTracker()
        feed(&t, Self.eomEvents(Self.message(10), chunk: 20, from: 1) + Self.eomEvents(Self.message(30), chunk: 20, from: 5, eom: false))
        #expect(t.transfers.map(\.complete) == [true, false])
        #expect(t.transfers[1].findings.first?.message.contains("end of the capture") == true)
    }

    @Test func eomWithoutData() {
        var t = ChunkedTransferTracker()
        feed(
            &t,
            [.notify(1, uuid: appleUUID, Array("EOM".utf8))] + Self.eomEvents([1, 2, 3], chunk: 20, from: 2)
                + [.notify(9, uuid: appleUUID, Array("EOM".utf8))])
        #expect(t.transfers.count == 1)
        #expect(t.findings.map(\.kind.code.id) == ["transfer.empty", "transfer.empty"])
        #expect(t.findings.map(\.frame) == [1, 9])
    }

    @Test func autoDetectsAnyCharacteristicEndingInEOM() {
        let other = BluetoothUUID("12345678-0000-1000-8000-00805F9B34FB")!
        var t = ChunkedTransferTracker()
        // A heart-rate-like stream that never ends in EOM, and a custom one that does.
        let noise = (1...600).map { TestEvent.notify($0, handle: 40, uuid: nil, [0x00, UInt8($0 & 0xFF)]) }
        let msg = Self.eomEvents(Self.message(300), chunk: 20, from: 700, uuid: other)
        feed(&t, noise + msg)
        #expect(t.transfers.count == 1)
        #expect(t.transfers[0].handle == 16)
        #expect(t.transfers[0].data == Self.message(300))
    }

    @Test func autoDetectOffFollowsOnlyConfigured() {
        var options = TransferOptions()
        options.autoDetect = false
        options.handles = [30]
        options.terminator = TransferOptions.terminator(parsing: "0x0d0a")!
        var t = ChunkedTransferTracker(options: options)
        feed(
            &t,
            Self.eomEvents(Self.message(50), chunk: 20, from: 1, uuid: nil)
                + [.notify(10, handle: 30, uuid: nil, [1, 2]), .notify(11, handle: 30, uuid: nil, [0x0D, 0x0A])])
        #expect(t.transfers.count == 1)
        #expect(t.transfers[0].data == [1, 2])
    }

    @Test func terminatorParsing() {
        #expect(TransferOptions.terminator(parsing: "EOM") == [0x45, 0x4F, 0x4D])
        #expect(TransferOptions.terminator(parsing: "0x454f4d") == [0x45, 0x4F, 0x4D])
        #expect(TransferOptions.terminator(parsing: "hex:45 4f") == [0x45, 0x4F])
        #expect(TransferOptions.terminator(parsing: "") == nil)
        #expect(TransferOptions.terminator(parsing: "0xZZ") == nil)
    }

    @Test func capsLongMessages() {
        var options = TransferOptions()
        options.maxMessageBytes = 100
        var t = ChunkedTransferTracker(options: options)
        feed(&t, Self.eomEvents(Self.message(250), chunk: 20, from: 1))
        #expect(t.transfers[0].data.count == 100)
        #expect(t.transfers[0].length == 250)
        #expect(t.transfers[0].findings.map(\.kind.code.id) == ["transfer.too-long"])
    }

    @Test func sequenceRolesInsideEOMMessage() {
        func d(_ i: Int) -> DecodedValue { DecodedValue(codec: "x", message: "chunk", roles: [.sequence: .int(Int64(i))]) }
        var t = ChunkedTransferTracker()
        // sequence-only roles are record framing; here the stream is Apple's, roles are consumed by records.
        feed(
            &t,
            [0, 1, 1, 3].enumerated().map { i, s in .notify(i + 1, uuid: appleUUID, [UInt8(s)], decoded: d(s)) }
                + [
                    .notify(
                        9, uuid: appleUUID, Array("EOM".utf8),
                        decoded: DecodedValue(codec: "x", message: "end", roles: [.messageTerminator: .present]))
                ])
        #expect(t.transfers.count == 1)
        #expect(t.transfers[0].framing == .records)
        #expect(t.transfers[0].duplicateIndices == [1])
        #expect(t.transfers[0].missingIndices == [2])
        #expect(!t.transfers[0].complete)
    }

    @Test(arguments: [20, 100, 182, 244])
    func countedRecords(_ n: Int) {
        // total-count then records; one missing, one duplicated, at any record count.
        let count = max(3, n / 10)
        func rec(_ i: Int) -> DecodedValue { DecodedValue(codec: "band", message: "record", roles: [.sequence: .int(Int64(i))]) }
        var events: [TestEvent] = [
            .notify(1, uuid: nil, [0xA5], decoded: DecodedValue(codec: "band", message: "count", roles: [.totalCount: .int(Int64(count))]))
        ]
        var f = 2
        for i in 0..<count where i != 1 {
            events.append(.notify(f, uuid: nil, [UInt8(i & 0xFF), 0xEE], decoded: rec(i))); f += 1
        }
        events.append(.notify(f, uuid: nil, [2, 0xEE], decoded: rec(2))); f += 1
        var t = ChunkedTransferTracker()
        feed(&t, events)
        #expect(t.transfers.count == 1)
        #expect(t.transfers[0].expectedCount == count)
        #expect(t.transfers[0].missingIndices == [1])
        #expect(t.transfers[0].duplicateIndices == [2])
        #expect(!t.transfers[0].complete)
        #expect(t.transfers[0].findings.contains { $0.kind.code.id == "transfer.incomplete" })
    }

    @Test(arguments: [20, 100, 182, 244])
    func smpMessagesAcrossNotifications(_ size: Int) {
        let body = ChunkedTransferTrackerTests.message(600)
        let header = SMPHeader(op: 3, flags: 0, length: UInt16(body.count), group: 1, sequence: 7, id: 1)
        let m1 = header.bytes + body
        let m2 = SMPHeader(op: 1, flags: 0, length: 2, group: 0, sequence: 8, id: 0).bytes + [0xA0, 0xFF]
        let stream = m1 + m2
        var t = ChunkedTransferTracker()
        feed(
            &t,
            chunked(stream, size).enumerated().map { i, c in
                TestEvent.notify(i + 1, handle: 20, uuid: TransferOptions.smpCharacteristic, c)
            })
        #expect(t.transfers.count == 2)
        #expect(t.transfers[0].data == m1)
        #expect(t.transfers[0].smp == header)
        #expect(t.transfers[1].data == m2)
        #expect(t.transfers[1].smp?.sequence == 8)
    }
}
