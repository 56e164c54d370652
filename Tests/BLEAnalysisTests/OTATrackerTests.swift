import BLEAnalysis
import BLEAnalysisTestSupport
import BLECodecs
import BLECore
import Testing

let dfuControl = BluetoothUUID("8EC90001-F315-4F60-9FB8-838830DAEA50")!
let dfuPacket = BluetoothUUID("8EC90002-F315-4F60-9FB8-838830DAEA50")!

func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

/// A Nordic Secure DFU exchange built from a simple model of the bootloader (CRC-32 cumulative per object type).
struct DFUBuilder {
    var conn = 1
    var frame = 1
    var time: Int64 = 0
    var events: [TestEvent] = []
    var step: Int64 = 2000

    mutating func write(_ v: [UInt8]) {
        events.append(.write(frame, handle: 16, uuid: dfuControl, v, conn: conn, time: time)); frame += 1; time += step
    }
    mutating func notify(_ v: [UInt8]) {
        events.append(.notify(frame, handle: 16, uuid: dfuControl, v, conn: conn, time: time)); frame += 1; time += step
    }
    mutating func packet(_ v: [UInt8]) {
        events.append(.write(frame, handle: 19, uuid: dfuPacket, v, command: true, conn: conn, time: time)); frame += 1; time += step
    }

    /// A whole update; `corruptAt` flips one byte sent (the device CRC is over the true image).
    mutating func update(
        initPacket: [UInt8], image: [UInt8], packetSize: Int, objectSize: Int = 4096, prn: Int = 0,
        corruptAt: Int? = nil, stopAfterObjects: Int? = nil, resumeFrom: Int = 0
    ) {
        write([0x06, 0x01]); notify([0x60, 0x06, 0x01] + le32(512) + le32(0) + le32(0))
        write([0x01, 0x01] + le32(initPacket.count)); notify([0x60, 0x01, 0x01])
        for p in chunked(initPacket, packetSize) { packet(p) }
        write([0x03]); notify([0x60, 0x03, 0x01] + le32(initPacket.count) + le32(Int(CRC32.checksum(initPacket))))
        write([0x04]); notify([0x60, 0x04, 0x01])
        write([0x02] + [UInt8(prn & 0xFF), UInt8(prn >> 8)]); notify([0x60, 0x02, 0x01])
        write([0x06, 0x02])
        notify([0x60, 0x06, 0x01] + le32(objectSize) + le32(resumeFrom) + le32(Int(CRC32.checksum(image[0..<resumeFrom]))))
        var offset = resumeFrom
        var objects = 0
        while offset < image.count {
            if let stop = stopAfterObjects, objects == stop { return }
            let end = min(offset + objectSize, image.count)
            write([0x01, 0x02] + le32(end - offset)); notify([0x60, 0x01, 0x01])
            time += 50_000  // flash erase
            var sent = 0
            for p in chunked(Array(image[offset..<end]), packetSize) {
                var q = p
                if let c = corruptAt, c >= offset + sent, c < offset + sent + p.count { q[c - offset - sent] ^= 0xFF }
                packet(q)
                sent += p.count
                if prn > 0, (events.filter { $0.handle == 19 }.count) % prn == 0, offset + sent < end {
                    let o = offset + sent
                    notify([0x60, 0x03, 0x01] + le32(o) + le32(Int(CRC32.checksum(image[0..<o]))))
                }
            }
            write([0x03]); notify([0x60, 0x03, 0x01] + le32(end) + le32(Int(CRC32.checksum(image[0..<end]))))
            write([0x04]); notify([0x60, 0x04, 0x01])
            offset = end
            objects += 1
        }
    }
}

@Suite struct OTATrackerTests {
    static let image = xorshiftImage(seed: 0x1234_5678, count: 10_000)
    static let initPacket = OTATrackerTests.makeInitPacket(appSize: 10_000)

    /// An nrfutil-like init packet: Packet { command { op_code 1, init { fw_version 1, type 1 (application), app_size } } }.
    static func makeInitPacket(appSize: Int) -> [UInt8] {
        func varint(_ v: Int) -> [UInt8] {
            var v = v, out: [UInt8] = []
            repeat { out.append(UInt8(v & 0x7F) | (v > 0x7F ? 0x80 : 0)); v >>= 7 } while v > 0
            return out
        }
        let initCommand: [UInt8] =
            [0x08, 0x01, 0x20, 0x01, 0x28, 0x00, 0x30, 0x00, 0x38] + varint(appSize)
            + [0x42, 0x04, 0xDE, 0xAD, 0xBE, 0xEF]
        let command: [UInt8] = [0x08, 0x01, 0x12] + varint(initCommand.count) + initCommand
        return [0x0A] + varint(command.count) + command
    }

    @Test(arguments: [20, 100, 182, 244])
    func secureDFUAnyPacketSize(_ size: Int) {
        var b = DFUBuilder()
        b.update(initPacket: Self.initPacket, image: Self.image, packetSize: size, prn: 10)
        var t = OTATracker()
        feed(&t, b.events)
        #expect(t.sessions.count == 1)
        let s = t.sessions[0]
        #expect(s.protocolName == .nordicSecureDFU)
        #expect(s.result == .success)
        #expect(s.image == Self.image)
        #expect(s.initPacket == Self.initPacket)
        #expect(s.expectedSize == Self.image.count)
        #expect(s.imageCRC32 == CRC32.checksum(Self.image))
        #expect(s.objects.count == 1 + 3)
        #expect(s.objects.allSatisfy { $0.crcMatches == true && $0.executed })
        #expect(
            s.packets == (Self.initPacket.count + size - 1) / size
                + (0..<3).map { o in (min(4096, 10_000 - o * 4096) + size - 1) / size }.reduce(0, +))
        #expect(s.retransmittedPackets.isEmpty)
        #expect(s.findings.isEmpty)
        #expect(s.phases.map(\.name) == ["init packet", "data"])
        #expect(s.objects.dropFirst().allSatisfy { ($0.createPauseMicroseconds ?? 0) >= 50_000 })
        // Pauses after each Create exceed 200 ms? No: 50 ms, so no stall.
        #expect(s.stalls.isEmpty)
    }

    @Test func corruptedPacketIsCaughtByTheDeviceCRC() {
        var b = DFUBuilder()
        b.update(initPacket: Self.initPacket, image: Self.image, packetSize: 244, corruptAt: 5000)
        var t = OTATracker()
        feed(&t, b.events)
        let s = t.sessions[0]
        #expect(s.findings.contains { $0.kind.code.id == "ota.crc-mismatch" })
        #expect(s.objects[2].crcMatches == false)
        #expect(s.compare(expected: Self.image).firstDifference == 5000)
    }

    @Test func twoUpdatesAtOnceAndOneCut() {
        var a = DFUBuilder(conn: 1), c = DFUBuilder(conn: 2)
        a.update(initPacket: Self.initPacket, image: Self.image, packetSize: 244)
        c.frame = 1; c.time = 1000
        let other = xorshiftImage(seed: 7, count: 9000)
        c.update(initPacket: Self.makeInitPacket(appSize: other.count), image: other, packetSize: 100, stopAfterObjects: 1)
        var merged: [TestEvent] = []
        for i in 0..<max(a.events.count, c.events.count) {
            if i < a.events.count { merged.append(a.events[i]) }
            if i < c.events.count { merged.append(c.events[i]) }
        }
        var t = OTATracker()
        feed(&t, merged, end: [.disconnect(connectionNumber: 2), .finish])
        #expect(t.sessions.count == 2)
        let s1 = t.sessions.first { $0.connectionNumber == 1 }!
        let s2 = t.sessions.first { $0.connectionNumber == 2 }!
        #expect(s1.result == .success)
        #expect(s1.image == Self.image)
        #expect(s2.result.label == "incomplete")
        #expect(s2.image == Array(other[0..<4096]))
        #expect(s2.findings.contains { $0.kind.code.id == "ota.incomplete" })
    }

    @Test func resumedUpdate() {
        var b = DFUBuilder()
        b.update(initPacket: Self.initPacket, image: Self.image, packetSize: 244, resumeFrom: 4096)
        var t = OTATracker()
        feed(&t, b.events)
        let s = t.sessions[0]
        #expect(s.resumedFromOffset == 4096)
        #expect(s.imageOffset == 4096)
        #expect(s.image == Array(Self.image[4096...]))
        #expect(s.result == .success)
        #expect(!s.findings.contains { $0.severity == .error })
    }

    @Test func rollbackByCreateCountsRetransmission() {
        var b = DFUBuilder()
        b.write([0x06, 0x02]); b.notify([0x60, 0x06, 0x01] + le32(4096) + le32(0) + le32(0))
        b.write([0x01, 0x02] + le32(4096)); b.notify([0x60, 0x01, 0x01])
        for p in chunked(Array(Self.image[0..<1000]), 244) { b.packet(p) }
        // Link trouble: the phone creates the object again and resends from 0.
        b.time += 300_000
        b.write([0x01, 0x02] + le32(4096)); b.notify([0x60, 0x01, 0x01])
        for p in chunked(Array(Self.image[0..<4096]), 244) { b.packet(p) }
        b.write([0x03]); b.notify([0x60, 0x03, 0x01] + le32(4096) + le32(Int(CRC32.checksum(Self.image[0..<4096]))))
        b.write([0x04]); b.notify([0x60, 0x04, 0x01])
        var t = OTATracker()
        feed(&t, b.events)
        let s = t.sessions[0]
        #expect(s.image == Array(Self.image[0..<4096]))
        #expect(s.retransmittedPackets == [0, 244, 488, 732, 976])
        #expect(s.retransmittedBytes == 1000)
        #expect(s.objects[1].crcMatches == true)
        #expect(s.stalls.count == 1)
        #expect(s.stalls.first?.preceding == "packet")
    }

    @Test func extendedErrorAndAbort() {
        var b = DFUBuilder()
        b.write([0x06, 0x01]); b.notify([0x60, 0x06, 0x01] + le32(512) + le32(0) + le32(0))
        b.write([0x01, 0x01] + le32(10)); b.notify([0x60, 0x01, 0x01])
        b.packet(Array(repeating: 1, count: 10))
        b.write([0x04]); b.notify([0x60, 0x04, 0x0B, 0x05])
        var t = OTATracker()
        feed(&t, b.events)
        #expect(t.sessions[0].result == .failure(code: 5, name: "Extended error: Firmware version failure"))
        var a = DFUBuilder()
        a.write([0x06, 0x01]); a.notify([0x60, 0x06, 0x01] + le32(512) + le32(0) + le32(0)); a.write([0x0C])
        var t2 = OTATracker()
        feed(&t2, a.events)
        #expect(t2.sessions[0].result.label == "aborted")
    }

    @Test(arguments: [20, 100, 182, 244])
    func legacyDFU(_ size: Int) {
        let control = BluetoothUUID("00001531-1212-EFDE-1523-785FEABCD123")!
        let packet = BluetoothUUID("00001532-1212-EFDE-1523-785FEABCD123")!
        var ev: [TestEvent] = []
        var f = 1
        func w(_ v: [UInt8]) { ev.append(.write(f, handle: 12, uuid: control, v)); f += 1 }
        func p(_ v: [UInt8]) { ev.append(.write(f, handle: 14, uuid: packet, v, command: true)); f += 1 }
        func n(_ v: [UInt8]) { ev.append(.notify(f, handle: 12, uuid: control, v)); f += 1 }
        w([0x08, 0x0A, 0x00])
        w([0x01, 0x04]); p(le32(0) + le32(0) + le32(Self.image.count)); n([0x10, 0x01, 0x01])
        w([0x02, 0x00]); p(Array(Self.initPacket[0..<14])); w([0x02, 0x01]); n([0x10, 0x02, 0x01])
        w([0x03])
        var sent = 0
        for c in chunked(Self.image, size) {
            p(c); sent += c.count; if ev.filter({ $0.handle == 14 }).count % 10 == 0 { n([0x11] + le32(sent)) }
        }
        n([0x10, 0x03, 0x01])
        w([0x04]); n([0x10, 0x04, 0x01]); w([0x05])
        var t = OTATracker()
        feed(&t, ev)
        let s = t.sessions[0]
        #expect(s.protocolName == .nordicLegacyDFU)
        #expect(s.result == .success)
        #expect(s.image == Self.image)
        #expect(s.expectedSize == Self.image.count)
        #expect(s.initPacket == Array(Self.initPacket[0..<14]))
        #expect(s.packets == (Self.image.count + size - 1) / size)
        #expect(s.packetReceiptInterval == 10)
        #expect(s.findings.isEmpty)
        #expect(s.phases.map(\.name) == ["start", "init packet", "image", "validate", "activate"])
    }

    @Test func legacyCRCError() {
        let control = BluetoothUUID("00001531-1212-EFDE-1523-785FEABCD123")!
        var t = OTATracker()
        feed(
            &t,
            [
                .write(1, handle: 12, uuid: control, [0x01, 0x04]), .write(2, handle: 12, uuid: control, [0x04]),
                .notify(3, handle: 12, uuid: control, [0x10, 0x04, 0x05]),
            ])
        #expect(t.sessions[0].result == .failure(code: 5, name: "CRC error"))
    }

    static func smpUpload(_ off: Int, _ data: [UInt8], len: Int?, seq: UInt8) -> [UInt8] {
        var pairs = [CBORPair(key: .text("off"), value: .int(Int64(off))), CBORPair(key: .text("data"), value: .bytes(data))]
        if let len {
            pairs += [CBORPair(key: .text("len"), value: .int(Int64(len))), CBORPair(key: .text("sha"), value: .bytes([1, 2, 3]))]
        }
        let body = CBORValue.map(pairs).encoded
        return SMPHeader(op: 2, flags: 0, length: UInt16(body.count), group: 1, sequence: seq, id: 1).bytes + body
    }

    static func smpResponse(_ off: Int, rc: Int = 0, seq: UInt8) -> [UInt8] {
        // Zephyr answers with an indefinite-length map.
        let body: [UInt8] =
            [0xBF] + CBORValue.text("rc").encoded + CBORValue.int(Int64(rc)).encoded
            + CBORValue.text("off").encoded + CBORValue.int(Int64(off)).encoded + [0xFF]
        return SMPHeader(op: 3, flags: 0, length: UInt16(body.count), group: 1, sequence: seq, id: 1).bytes + body
    }

    @Test(arguments: [20, 100, 182, 244])
    func mcumgrUpload(_ mtuPayload: Int) {
        let smp = TransferOptions.smpCharacteristic
        var ev: [TestEvent] = []
        var f = 1
        var off = 0
        var seq: UInt8 = 0
        let step = 400
        var resent = false
        while off < Self.image.count {
            let end = min(off + step, Self.image.count)
            let req = Self.smpUpload(off, Array(Self.image[off..<end]), len: off == 0 ? Self.image.count : nil, seq: seq)
            for c in chunked(req, mtuPayload) { ev.append(.write(f, handle: 20, uuid: smp, c, command: true)); f += 1 }
            if off == 800 && !resent {
                // No response: the phone sends the same chunk again.
                resent = true
                continue
            }
            for c in chunked(Self.smpResponse(end, seq: seq), mtuPayload) { ev.append(.notify(f, handle: 20, uuid: smp, c)); f += 1 }
            off = end
            seq &+= 1
        }
        var t = OTATracker()
        feed(&t, ev)
        #expect(t.sessions.count == 1)
        let s = t.sessions[0]
        #expect(s.protocolName == .mcumgr)
        #expect(s.result == .success)
        #expect(s.image == Self.image)
        #expect(s.expectedSize == Self.image.count)
        #expect(s.retransmittedPackets == [800])
        #expect(s.retransmittedBytes == 400)
        #expect(s.packets == 26)
    }

    @Test func mcumgrError() {
        let smp = TransferOptions.smpCharacteristic
        var t = OTATracker()
        feed(
            &t,
            [
                .write(1, handle: 20, uuid: smp, Self.smpUpload(0, [1, 2, 3], len: 100, seq: 0)),
                .notify(2, handle: 20, uuid: smp, Self.smpResponse(0, rc: 3, seq: 0)),
            ])
        #expect(t.sessions[0].result == .failure(code: 3, name: "EINVAL"))
    }

    @Test func siliconLabsOTA() {
        let control = BluetoothUUID("F7BF3564-FB6D-4E53-88A4-5E37E0326063")!
        let data = BluetoothUUID("984227F3-34FC-4045-A5D0-2C581F81A153")!
        var ev: [TestEvent] = [.write(1, handle: 30, uuid: control, [0x00])]
        for (i, c) in chunked(Self.image, 244).enumerated() { ev.append(.write(2 + i, handle: 32, uuid: data, c, command: true)) }
        ev.append(.write(1000, handle: 30, uuid: control, [0x03]))
        var t = OTATracker()
        feed(&t, ev)
        #expect(t.sessions[0].protocolName == .siliconLabs)
        #expect(t.sessions[0].result == .success)
        #expect(t.sessions[0].image == Self.image)
        var cut = OTATracker()
        feed(&cut, Array(ev.dropLast()), end: [.disconnect(connectionNumber: 1)])
        #expect(cut.sessions[0].result.label == "incomplete")
    }

    static func vendorEvents(
        image: [UInt8], size: Int, resend: [Int], result: Int64, conn: Int = 1, frame: Int = 1,
        timeStep: Int64 = 1000
    ) -> [TestEvent] {
        var ev: [TestEvent] = []
        var f = frame
        let packets = chunked(image, size)
        func t() -> Int64 { Int64(f) * timeStep }
        ev.append(
            .write(
                f, handle: 16, uuid: nil, [0x80], conn: conn, time: t(),
                decoded: DecodedValue(
                    codec: "hs", message: "startOta", roles: [.otaStart: .present, .totalCount: .int(Int64(packets.count))])))
        f += 1
        func data(_ i: Int) {
            ev.append(
                .write(
                    f, handle: 21, uuid: nil, [0x81, UInt8(i >> 8), UInt8(i & 0xFF)] + packets[i], command: true, conn: conn, time: t(),
                    decoded: DecodedValue(
                        codec: "hs", message: "otaData", roles: [.sequence: .int(Int64(i)), .otaData: .bytes(packets[i])])))
            f += 1
        }
        for i in packets.indices {
            data(i)
            if resend.contains(i - 3) {
                ev.append(
                    .notify(
                        f, handle: 18, uuid: nil, [0x11, UInt8((i - 3) >> 8), UInt8((i - 3) & 0xFF)], conn: conn, time: t(),
                        decoded: DecodedValue(codec: "hs", message: "resendRequest", roles: [.resendRequest: .int(Int64(i - 3))])))
                f += 1
                data(i - 3)
            }
        }
        ev.append(
            .write(
                f, handle: 16, uuid: nil, [0x82], conn: conn, time: t(),
                decoded: DecodedValue(codec: "hs", message: "endOta", roles: [.messageTerminator: .present])))
        f += 1
        let names = [0: "success", 1: "crc-failure"]
        ev.append(
            .notify(
                f, handle: 18, uuid: nil, [0x12, UInt8(result)], conn: conn, time: t(),
                decoded: DecodedValue(
                    codec: "hs", message: "otaResult", fields: [DecodedField("result", .named(result, names[Int(result)]))],
                    roles: [.otaResult: .int(result)], otaSuccess: result == 0)))
        return ev
    }

    @Test(arguments: [20, 100, 182, 244])
    func vendorOTAWithResend(_ size: Int) {
        var t = OTATracker()
        feed(&t, Self.vendorEvents(image: Self.image, size: size, resend: [5, 9], result: 0))
        #expect(t.sessions.count == 1)
        let s = t.sessions[0]
        #expect(s.protocolName == .vendor)
        #expect(s.codec == "hs")
        #expect(s.result == .success)
        #expect(s.image == Self.image)
        #expect(s.retransmittedPackets == [5, 9])
        #expect(s.resendRequests == [5, 9])
        #expect(s.expectedPackets == (Self.image.count + size - 1) / size)
        #expect(s.phases.map(\.name) == ["start", "transfer", "finish"])
        #expect(s.findings.isEmpty)
    }

    @Test func vendorFailureAndInterleaved() {
        let a = Self.vendorEvents(image: Self.image, size: 240, resend: [], result: 1, conn: 1)
        let b = Self.vendorEvents(image: Array(Self.image.prefix(3000)), size: 100, resend: [2], result: 0, conn: 2, frame: 1)
        var merged: [TestEvent] = []
        for i in 0..<max(a.count, b.count) {
            if i < a.count { merged.append(a[i]) }
            if i < b.count { merged.append(b[i]) }
        }
        var t = OTATracker()
        feed(&t, merged)
        #expect(t.sessions.count == 2)
        let s1 = t.sessions.first { $0.connectionNumber == 1 }!
        let s2 = t.sessions.first { $0.connectionNumber == 2 }!
        #expect(s1.result == .failure(code: 1, name: "crc-failure"))
        #expect(s2.result == .success)
        #expect(s2.image == Array(Self.image.prefix(3000)))
        #expect(s2.retransmittedPackets == [2])
    }

    @Test func vendorStallsAndCut() {
        var ev = Self.vendorEvents(image: Self.image, size: 240, resend: [], result: 0)
        ev = Array(ev.dropLast(2))
        // A 1.5 s pause after packet 20.
        for i in ev.indices where ev[i].frame > 22 { ev[i].time += 1_500_000 }
        var t = OTATracker()
        feed(&t, ev, end: [.disconnect(connectionNumber: 1)])
        let s = t.sessions[0]
        #expect(s.result.label == "incomplete")
        #expect(s.stalls.count == 1)
        #expect(s.stalls[0].preceding == "otaData 20")
        #expect(s.stalls[0].gapMicroseconds == 1_501_000)
        #expect(s.image == Self.image)
    }

    @Test func unrelatedValuesAreIgnored() {
        var t = OTATracker()
        feed(&t, (1...100).map { TestEvent.notify($0, handle: 40, uuid: BluetoothUUID(uuid16: 0x2A37), [0, 72]) })
        #expect(t.sessions.isEmpty)
    }

    @Test func compareImages() {
        let a: [UInt8] = [1, 2, 3, 4]
        #expect(OTASession.compare(image: a, expected: a).matches)
        #expect(OTASession.compare(image: [1, 2, 9, 4], expected: a).firstDifference == 2)
        #expect(OTASession.compare(image: [1, 2], expected: a).firstDifference == 2)
        #expect(OTASession.compare(image: a, expected: a).crc32 == CRC32.checksum(a))
    }
}
