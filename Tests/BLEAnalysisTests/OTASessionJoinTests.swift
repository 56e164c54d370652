import BLEAnalysisTestSupport
import BLECodecs
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// Vendor roles from several codecs on one connection and service make one update session.
@Suite struct OTASessionJoinTests {
    static let service = BluetoothUUID("7E5A0001-6F1C-4B8A-9D2E-3C4B5A6F7081")!
    static let other = BluetoothUUID("5A4E0001-8C3B-4F2E-9A1D-0C7F2B6E4D10")!

    static func control(
        _ frame: Int, _ message: String, _ roles: [Role: RoleValue], rx: Bool = false,
        service: BluetoothUUID = service, success: Bool? = nil
    ) -> TestEvent {
        var d = DecodedValue(codec: "ctl", message: message, roles: roles)
        d.otaSuccess = success
        var e =
            rx
            ? TestEvent.notify(frame, handle: 16, uuid: nil, [0x00], decoded: d)
            : TestEvent.write(frame, handle: 16, uuid: nil, [0x00], decoded: d)
        e.service = service
        return e
    }

    static func packet(_ frame: Int, _ index: Int, _ bytes: [UInt8], service: BluetoothUUID = service) -> TestEvent {
        var e = TestEvent.write(
            frame, handle: 19, uuid: nil, [0x00] + bytes, command: true,
            decoded: DecodedValue(
                codec: "data", message: "packet",
                roles: [.sequence: .int(Int64(index)), .otaData: .bytes(bytes)]))
        e.service = service
        return e
    }

    @Test func twoCodecsOneServiceOneSession() throws {
        let events: [TestEvent] = [
            Self.control(1, "start", [.otaStart: .present, .totalSize: .int(6)]),
            Self.packet(2, 0, [1, 2]),
            Self.packet(3, 1, [3, 4]),
            Self.control(4, "resend", [.resendRequest: .int(1)], rx: true),
            Self.packet(5, 2, [5, 6]),
            Self.packet(6, 1, [3, 4]),
            Self.control(7, "end", [.messageTerminator: .present]),
            Self.control(8, "result", [.otaResult: .int(0)], rx: true, success: true),
        ]
        var t = OTATracker()
        feed(&t, events)
        #expect(t.sessions.count == 1)
        let s = try #require(t.sessions.first)
        #expect(s.codec == "ctl+data")
        #expect(s.result == .success)
        #expect(s.image == [1, 2, 3, 4, 5, 6])
        #expect(s.expectedSize == 6)
        #expect(s.retransmittedPackets == [1])
        #expect(s.resends == [OTAResend(index: 1, requestFrame: 4, resentFrame: 6)])
        #expect((s.startFrame, s.endFrame) == (1, 8))
        #expect(s.findings.isEmpty)
    }

    /// A resend the phone never answers, a size that does not match, and a second service on the
    /// same connection that stays its own session.
    @Test func unansweredResendWrongSizeAndAnotherService() throws {
        let events: [TestEvent] = [
            Self.control(1, "start", [.otaStart: .present, .totalSize: .int(5)]),
            Self.packet(2, 0, [1, 2]),
            Self.packet(3, 0, [9], service: Self.other),
            Self.control(4, "resend", [.resendRequest: .int(0)], rx: true),
            Self.packet(5, 1, [3, 4]),
            Self.control(6, "result", [.otaResult: .int(0)], rx: true, success: true),
        ]
        var t = OTATracker()
        feed(&t, events)
        #expect(t.sessions.count == 2)
        let s = try #require(t.sessions.first { $0.startFrame == 1 })
        #expect(s.image == [1, 2, 3, 4])
        #expect(s.resends == [OTAResend(index: 0, requestFrame: 4, resentFrame: nil)])
        #expect(s.findings.map(\.message).contains("resend requested but never sent: 0"))
        #expect(s.findings.map(\.message).contains("image has 4 bytes, 5 announced"))
        let o = try #require(t.sessions.first { $0.startFrame == 3 })
        #expect(o.image == [9])
        #expect(o.result.label == "incomplete")
    }
}

/// A buttonless DFU and the Secure DFU after it are one update only on the bootloader's address.
@Suite struct OTAUpdateStoryTests {
    static let buttonless = BluetoothUUID("8EC90003-F315-4F60-9FB8-838830DAEA50")!

    func connection(_ number: Int, _ address: String, start: Int, end: Int?) -> Connection {
        var c = Connection(
            number: number, handle: 1, controller: 0, inferred: false, startFrame: start,
            startTime: Timestamp(microseconds: Int64(start) * 1000))
        c.peerAddress = address
        // The end as the link's machine takes it: a Disconnection Complete (Remote User Terminated Connection).
        if let end {
            let time = Timestamp(microseconds: Int64(end) * 1000)
            _ = c.machine.feed(
                .lifecycle(.disconnected(status: .success, reason: .remoteUserTerminatedConnection, frame: end, timestamp: time)),
                frame: end, timestamp: time)
        }
        return c
    }

    func sessions(bootloaderAt address: String, answer: UInt8 = 0x01) -> [OTASession] {
        var t = OTATracker()
        let cp = BluetoothUUID("8EC90001-F315-4F60-9FB8-838830DAEA50")!, pk = BluetoothUUID("8EC90002-F315-4F60-9FB8-838830DAEA50")!
        feed(
            &t,
            [
                .write(10, handle: 16, uuid: Self.buttonless, [0x01]),
                .notify(11, handle: 16, uuid: Self.buttonless, [0x20, 0x01, answer]),
            ], end: [.disconnect(connectionNumber: 1)])
        let second: [TestEvent] = [
            .write(30, handle: 16, uuid: cp, [0x01, 0x02, 0x04, 0x00, 0x00, 0x00], conn: 2),
            .notify(31, handle: 16, uuid: cp, [0x60, 0x01, 0x01], conn: 2),
            .write(32, handle: 19, uuid: pk, [1, 2, 3, 4], command: true, conn: 2),
            .write(33, handle: 16, uuid: cp, [0x04], conn: 2),
            .notify(34, handle: 16, uuid: cp, [0x60, 0x04, 0x01], conn: 2),
        ]
        feed(&t, second)
        let connections = [connection(1, "C4:7D:2A:10:5E:80", start: 5, end: 12), connection(2, address, start: 20, end: nil)]
        return OTAUpdateStory.link(t.sessions, connections: connections)
    }

    @Test func addressPlusOneJoins() throws {
        let s = sessions(bootloaderAt: "C4:7D:2A:10:5E:81")
        #expect(s.count == 1)
        let u = try #require(s.first)
        #expect(u.protocolName == .nordicSecureDFU)
        #expect(u.result == .success)
        #expect(u.startFrame == 10)
        #expect(u.connections.map(\.role) == ["application", "bootloader"])
        #expect(u.connections.map(\.endReason) == ["Remote User Terminated Connection", nil])
        #expect(u.connections.last?.gapMicroseconds == 8_000)
        #expect(u.image == [1, 2, 3, 4])
    }

    @Test func anotherAddressOrAFailedRequestStaysApart() {
        let other = sessions(bootloaderAt: "C4:7D:2A:10:5E:90")
        #expect(other.map(\.protocolName) == [.nordicButtonlessDFU, .nordicSecureDFU])
        #expect(other.allSatisfy { $0.connections.count == 1 })
        let failed = sessions(bootloaderAt: "C4:7D:2A:10:5E:81", answer: 0x04)
        #expect(failed.map(\.protocolName) == [.nordicButtonlessDFU, .nordicSecureDFU])
        #expect(failed.first?.result == .failure(code: 4, name: "Operation failed"))
    }
}

/// MCUmgr: an upload ending with test + reset, and the confirm sent on the next connection.
@Suite struct McuMgrConfirmStoryTests {
    static func smp(_ op: UInt8, group: UInt16, id: UInt8, seq: UInt8, _ pairs: [CBORPair]) -> [UInt8] {
        let body = CBORValue.map(pairs).encoded
        return SMPHeader(op: op, flags: 0, length: UInt16(body.count), group: group, sequence: seq, id: id).bytes + body
    }

    static func state(confirm: Bool, seq: UInt8) -> [UInt8] {
        smp(
            2, group: 1, id: 0, seq: seq,
            [
                CBORPair(key: .text("hash"), value: .bytes([UInt8](repeating: 7, count: 32))),
                CBORPair(key: .text("confirm"), value: .bool(confirm)),
            ])
    }

    func story(confirmAt address: String, confirmRC: Int64 = 0) -> [OTASession] {
        let smpUUID = TransferOptions.smpCharacteristic
        let image = xorshiftImage(seed: 9, count: 400)
        var t = OTATracker()
        var first: [TestEvent] = []
        for (i, off) in stride(from: 0, to: image.count, by: 200).enumerated() {
            var pairs = [
                CBORPair(key: .text("off"), value: .int(Int64(off))),
                CBORPair(key: .text("data"), value: .bytes(Array(image[off..<off + 200]))),
            ]
            if off == 0 { pairs.append(CBORPair(key: .text("len"), value: .int(Int64(image.count)))) }
            first.append(.write(10 + 2 * i, handle: 16, uuid: smpUUID, Self.smp(2, group: 1, id: 1, seq: UInt8(i), pairs), command: true))
            first.append(
                .notify(
                    11 + 2 * i, handle: 16, uuid: smpUUID,
                    Self.smp(
                        3, group: 1, id: 1, seq: UInt8(i),
                        [CBORPair(key: .text("rc"), value: .int(0)), CBORPair(key: .text("off"), value: .int(Int64(off + 200)))])))
        }
        first += [
            .write(20, handle: 16, uuid: smpUUID, Self.state(confirm: false, seq: 2), command: true),
            .notify(21, handle: 16, uuid: smpUUID, Self.smp(3, group: 1, id: 0, seq: 2, [])),
            .write(22, handle: 16, uuid: smpUUID, Self.smp(2, group: 0, id: 5, seq: 3, []), command: true),
            .notify(23, handle: 16, uuid: smpUUID, Self.smp(3, group: 0, id: 5, seq: 3, [])),
        ]
        feed(&t, first, end: [.disconnect(connectionNumber: 1)])
        feed(
            &t,
            [
                .write(40, handle: 16, uuid: smpUUID, Self.state(confirm: true, seq: 0), command: true, conn: 2),
                .notify(
                    41, handle: 16, uuid: smpUUID,
                    Self.smp(3, group: 1, id: 0, seq: 0, [CBORPair(key: .text("rc"), value: .int(confirmRC))]), conn: 2),
            ])
        let connections = [
            OTAUpdateStoryTests().connection(1, "E6:3A:19:C4:52:10", start: 5, end: 24),
            OTAUpdateStoryTests().connection(2, address, start: 30, end: nil),
        ]
        return OTAUpdateStory.link(t.sessions, connections: connections)
    }

    @Test func sameAddressJoinsUploadAndConfirm() throws {
        let s = story(confirmAt: "E6:3A:19:C4:52:10")
        #expect(s.count == 1)
        let u = try #require(s.first)
        #expect(u.result == .success)
        #expect(u.connections.map(\.role) == ["upload", "confirm"])
        #expect(u.connections.last?.gapMicroseconds == 6_000)
        #expect(u.phases.map(\.name) == ["upload", "test", "reset", "reconnect", "confirm"])
        #expect(u.endFrame == 41)
        #expect(u.image == xorshiftImage(seed: 9, count: 400))
    }

    @Test func anotherAddressStaysApartAndAFailedConfirmFails() {
        let other = story(confirmAt: "E6:3A:19:C4:52:99")
        #expect(other.count == 2)
        #expect(other.map(\.connections.count) == [1, 1])
        #expect(other.last?.result == .success)
        let failed = story(confirmAt: "E6:3A:19:C4:52:10", confirmRC: 6)
        #expect(failed.count == 1)
        #expect(failed.first?.result == .failure(code: 6, name: "EBADSTATE"))
    }
}

/// Bad input on every built-in protocol's characteristics: values of any length and content, in any
/// order and direction, end as sessions with a verdict and findings, never a crash.
@Suite struct OTAProfileBadInputTests {
    @Test(arguments: [1, 2, 3])
    func randomValuesOnEveryEndpoint(_ seed: UInt64) {
        var rng = FuzzRandom(seed: seed)
        let uuids = OTATracker.profiles.flatMap { $0.endpoints.keys }.sorted { $0.description < $1.description }
        // Prefixes that reach deep into each protocol (starts, creates, block requests, statuses).
        let prefixes: [[UInt8]] = [
            [], [0x01], [0x01, 0x02], [0x06, 0x01], [0x60, 0x01], [0x60, 0x03, 0x01], [0x12, 0x00],
            [0x12, 0x0E], [0x04, 0x00], [0x00, 0x00, 0x00, 0x13], [0x00, 0x00, 0x00, 0xFE], [0x02],
            [0x20, 0x01, 0x01], [0x10, 0x04, 0x01], [0x11], [0x03], [0x02, 0x00, 0x00, 0x08, 0x00, 0x01],
        ]
        var events: [TestEvent] = []
        for frame in 1...3000 {
            let uuid = uuids[rng.below(uuids.count)]
            var value = prefixes[rng.below(prefixes.count)]
            for _ in 0..<rng.below(300) { value.append(UInt8(truncatingIfNeeded: rng.next())) }
            let conn = 1 + rng.below(2)
            events.append(
                rng.below(2) == 0
                    ? .write(frame, handle: 16, uuid: uuid, value, command: rng.below(2) == 0, conn: conn)
                    : .notify(frame, handle: 16, uuid: uuid, value, conn: conn))
        }
        var t = OTATracker()
        feed(&t, events, end: [.disconnect(connectionNumber: 1), .finish])
        print("seed \(seed): \(t.sessions.count) sessions")
        #expect(!t.sessions.isEmpty)
        for s in t.sessions {
            #expect(s.startFrame <= s.endFrame)
            #expect(s.packets >= 0 && s.image.count >= 0)
            if s.result != .success { #expect(!s.findings.isEmpty || s.result.label == "aborted" || s.result.label == "failure") }
        }
        let linked = OTAUpdateStory.link(t.sessions, connections: [])
        #expect(linked.count == t.sessions.count)
    }
}
