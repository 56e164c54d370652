import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEReports

/// The `diff` engine on captures built from typed packets: a firmware N and N+1 of one peripheral (a characteristic
/// added, one property changed, a slower connection interval) must give exactly those differences, with the frames
/// that show them; a capture against itself none.
@Suite struct CaptureDifferTests {
    static let peer = BDAddress(0xC0_11_22_33_44_55)

    /// One characteristic declaration as a Read By Type response carries it: properties, value handle, UUID.
    struct Char {
        var declaration: UInt16
        var properties: UInt8
        var uuid: UInt16
        var value: [UInt8] {
            [properties, UInt8((declaration + 1) & 0xFF), UInt8((declaration + 1) >> 8), UInt8(uuid & 0xFF), UInt8(uuid >> 8)]
        }
    }

    /// A connection at `interval` (1.25 ms units) to the peer, then the discovery of service 0x180D at
    /// 0x0010–0x0030 holding `characteristics`, each discovery ending with Attribute Not Found.
    static func capture(interval: UInt16, characteristics: [Char]) -> CaptureBuilder {
        let notFound = { (op: ATTOpcode, h: UInt16) in
            ATTPDU.errorResponse(ATTErrorResponse(requestOpcode: op, handle: h, error: .attributeNotFound))
        }
        var b = CaptureBuilder().connect(handle: 0x40, peer: peer, interval: interval)
            .att(
                .readByGroupTypeRequest(
                    ATTTypeRequest(range: ATTHandleRange(start: 0x0001, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))),
                handle: 0x40, .tx
            )
            .att(.readByGroupTypeResponse([ATTGroupValue(start: 0x0010, end: 0x0030, value: [0x0D, 0x18])]), handle: 0x40, .rx)
            .att(
                .readByGroupTypeRequest(
                    ATTTypeRequest(range: ATTHandleRange(start: 0x0031, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))),
                handle: 0x40, .tx
            )
            .att(notFound(.readByGroupTypeRequest, 0x0031), handle: 0x40, .rx)
            .att(
                .readByTypeRequest(
                    ATTTypeRequest(range: ATTHandleRange(start: 0x0010, end: 0x0030), type: BluetoothUUID(uuid16: 0x2803))),
                handle: 0x40, .tx)
        b = b.att(.readByTypeResponse(characteristics.map { ATTHandleValue(handle: $0.declaration, value: $0.value) }), handle: 0x40, .rx)
        return b.att(
            .readByTypeRequest(
                ATTTypeRequest(range: ATTHandleRange(start: 0x0029, end: 0x0030), type: BluetoothUUID(uuid16: 0x2803))),
            handle: 0x40, .tx
        )
        .att(notFound(.readByTypeRequest, 0x0029), handle: 0x40, .rx)
        .completed(handle: 0x40, count: 8)
    }

    static let firmwareN = [
        Char(declaration: 0x0011, properties: 0x10, uuid: 0x2A37), Char(declaration: 0x0014, properties: 0x08, uuid: 0x2A39),
    ]
    /// N+1: 0x2A37 readable too (0x12), and 0x2A38 added after the others (no handle moves).
    static let firmwareN1 = [
        Char(declaration: 0x0011, properties: 0x12, uuid: 0x2A37), Char(declaration: 0x0014, properties: 0x08, uuid: 0x2A39),
        Char(declaration: 0x0016, properties: 0x02, uuid: 0x2A38),
    ]

    static func analysed(_ b: CaptureBuilder) throws -> FileAnalysis {
        Report.analyze(capture: try b.captureFile(), options: ReportOptions(backgroundTrackers: false))
    }

    @Test func aCaptureAgainstItselfHasNoDifferences() throws {
        let a = try Self.analysed(Self.capture(interval: 24, characteristics: Self.firmwareN))
        let d = CaptureDiffer.compare(a, a)
        #expect(d.isEmpty, "\(d.differences.map(\.sentence))")
        #expect(DiffWriter.headline(d) == "no differences")
        #expect(d.pairs == [ConnectionPair(a: 1, b: 1, peer: "C0:11:22:33:44:55", matchedBy: "address")])
    }

    @Test func firmwareNAgainstNPlusOneGivesExactlyTheThreeChanges() throws {
        let builtB = Self.capture(interval: 48, characteristics: Self.firmwareN1)
        let a = try Self.analysed(Self.capture(interval: 24, characteristics: Self.firmwareN))
        let b = try Self.analysed(builtB)
        let d = CaptureDiffer.compare(a, b)
        // The Read By Type response that declares the characteristics: frame 7 of both (connection, 2 × group
        // request/response, the type request at 6).
        let declared = 7
        #expect(builtB.records[declared - 1].bytes.contains(0x38), "frame 7 is the Read By Type response")
        #expect(d.differences.map(\.kind).sorted() == ["characteristic-added", "interval", "properties-changed"])
        let added = try #require(d.differences.first { $0.kind == "characteristic-added" })
        #expect(added.subject == "characteristic 0x2A38 Body Sensor Location in service 0x180D")
        #expect(added.a == nil && added.b == "0x0017")
        #expect(added.frameA == nil && added.frameB == declared)
        #expect(added.impact == .major)
        let changed = try #require(d.differences.first { $0.kind == "properties-changed" })
        #expect(changed.a == "notify" && changed.b == "read,notify")
        #expect(changed.frameA == declared && changed.frameB == declared)
        // 24 × 1.25 ms = 30 ms, 48 × 1.25 ms = 60 ms, both from the LE Connection Complete at frame 1.
        let interval = try #require(d.differences.first { $0.kind == "interval" })
        #expect(interval.a == "30.00" && interval.b == "60.00")
        #expect(interval.frameA == 1 && interval.frameB == 1)
        #expect(interval.section == .link && interval.impact == .minor)
        // GATT first (major), then the link.
        #expect(d.differences.map(\.section) == [.gatt, .gatt, .link])
    }

    @Test func handlesThatMovedAreSaidOnce() throws {
        // A characteristic inserted before the others: both of theirs move, said in one line.
        let moved = [
            Char(declaration: 0x0011, properties: 0x02, uuid: 0x2A38), Char(declaration: 0x0013, properties: 0x10, uuid: 0x2A37),
            Char(declaration: 0x0016, properties: 0x08, uuid: 0x2A39),
        ]
        let a = try Self.analysed(Self.capture(interval: 24, characteristics: Self.firmwareN))
        let b = try Self.analysed(Self.capture(interval: 24, characteristics: moved))
        let d = CaptureDiffer.compare(a, b)
        #expect(d.differences.map(\.kind).sorted() == ["characteristic-added", "handles-moved"])
        let m = try #require(d.differences.first { $0.kind == "handles-moved" })
        #expect(
            m.subject
                == "2 attributes at other handles (2 characteristics; first: characteristic 0x2A37 Heart Rate Measurement 0x0012 → 0x0014)")
        #expect(m.impact == .info)
    }

    @Test func theGateNamesEachBreachWithBothFrames() throws {
        let a = try Self.analysed(Self.capture(interval: 24, characteristics: Self.firmwareN))
        let b = try Self.analysed(Self.capture(interval: 48, characteristics: Self.firmwareN1))
        let d = CaptureDiffer.compare(a, b)
        let gate = try DiffGate(parsing: "rate-drop=10%,new-error,gatt-changed,mtu-lower")
        // In rank order: a property changed (clients that used it break) before an addition.
        let lines = gate.breaches(d).map(\.line)
        #expect(
            lines == [
                "gatt-changed: characteristic 0x2A37 Heart Rate Measurement in service 0x180D properties: notify → read,notify (A #7, B #7)",
                "gatt-changed: characteristic 0x2A38 Body Sensor Location in service 0x180D: only in B (0x0017) (A -, B #7)",
            ])
        #expect(try DiffGate(parsing: "mtu-lower").breaches(d).isEmpty)
        #expect(throws: DiffGate.ParseError.self) { try DiffGate(parsing: "rate-drop=ten") }
        #expect(throws: DiffGate.ParseError.self) { try DiffGate(parsing: "faster") }
    }

    @Test func peersPairByAddressThenInOrder() throws {
        let a = try Self.analysed(Self.capture(interval: 24, characteristics: Self.firmwareN))
        var other = CaptureBuilder().connect(handle: 0x41, peer: BDAddress(0xD0_00_00_00_00_01))
        other = other.disconnect(handle: 0x41)
        let b = try Self.analysed(other)
        let d = CaptureDiffer.compare(a, b)
        // Different addresses: paired in order, said so; --connection 1:1 picks the same pair.
        #expect(d.pairs.map(\.matchedBy) == ["order"])
        let chosen = CaptureDiffer.compare(a, b, options: DiffOptions(connection: (1, 1)))
        #expect(chosen.pairs.map(\.matchedBy) == ["chosen"])
        // --peer names A's peer: B has no connection to it, so A's is only in A.
        let onlyA = CaptureDiffer.compare(a, b, options: DiffOptions(peer: "c0:11:22:33:44:55"))
        #expect(onlyA.pairs.isEmpty)
        #expect(onlyA.differences.filter { $0.section == .connections }.map(\.kind) == ["connection-only-in-a"])
    }

    /// Core Spec Vol 3, Part H, Appendix D.7: IRK ec0234a357c8ad05341010a60a397d9b resolves 70:81:94:0D:FB:AA. A sees
    /// the device at that private address, B at its identity address C0:FF:EE:00:00:01: one peer with the key.
    @Test func privateAddressesResolveWithTheIRK() throws {
        let a = try Self.analysed(CaptureBuilder().connect(handle: 0x40, peer: BDAddress(0x7081_940D_FBAA)).disconnect(handle: 0x40))
        let b = try Self.analysed(CaptureBuilder().connect(handle: 0x41, peer: BDAddress(0xC0FF_EE00_0001)).disconnect(handle: 0x41))
        let withoutKey = CaptureDiffer.compare(a, b)
        #expect(withoutKey.pairs.map(\.matchedBy) == ["order"])
        #expect(withoutKey.differences.map(\.kind) == ["peer"])
        let keys = try LinkKeyMaterial(keyFile: "- irk: ec0234a357c8ad05341010a60a397d9b\n  address: C0:FF:EE:00:00:01\n").identityKeys
        let resolved = CaptureDiffer.compare(a, b, options: DiffOptions(identityKeys: keys))
        #expect(resolved.pairs == [ConnectionPair(a: 1, b: 1, peer: "C0:FF:EE:00:00:01", matchedBy: "identity")])
        #expect(resolved.isEmpty, "\(resolved.differences.map(\.sentence))")
        // A key without its identity address still makes the private address one peer (`IRK 1`), but not the
        // identity address B shows: in order, with their names said.
        let bare = try LinkKeyMaterial(keyFile: "- irk: ec0234a357c8ad05341010a60a397d9b\n").identityKeys
        let unnamed = CaptureDiffer.compare(a, b, options: DiffOptions(identityKeys: bare))
        #expect(unnamed.pairs.map(\.peer) == ["IRK 1 ↔ C0:FF:EE:00:00:01"])
    }

    @Test func procedureOrderAlignsAndNamesTheFirstDivergence() {
        func steps(_ texts: [String], from frame: Int) -> [DiffBehaviour.Step] {
            texts.enumerated().map { DiffBehaviour.Step(text: $0.element, frame: frame + $0.offset) }
        }
        let a = steps(["discover service 0x180D", "ATT_MTU exchange", "subscribe 0x2A37 notify", "first write-req 0x2A39"], from: 10)
        let b = steps(["ATT_MTU exchange", "discover service 0x180D", "subscribe 0x2A37 notify", "first write-req 0x2A39"], from: 20)
        let aligned = DiffBehaviour.align(a, b)
        // One step moved: the longest common run is three steps; the first line is where they part.
        #expect(aligned.filter { if case .both = $0 { true } else { false } }.count == 3)
        let first = aligned.firstIndex { if case .both = $0 { false } else { true } }
        #expect(first == 0)
        let (x, y) = DiffBehaviour.divergence(aligned, at: 0)
        #expect(x == DiffBehaviour.Step(text: "discover service 0x180D", frame: 10))
        #expect(y == DiffBehaviour.Step(text: "ATT_MTU exchange", frame: 20))
        #expect(DiffBehaviour.align(a, a).allSatisfy { if case .both = $0 { true } else { false } })
    }

    @Test func baselineExpectationsParse() throws {
        let parsed = try Expectation.parse(
            yaml: "expect:\n  - baseline: golden.btsnoop\n  - baseline: {capture: g.pklg, fail_on: mtu-lower}\n", path: "e.yaml")
        #expect(
            parsed == [
                .baseline(path: "golden.btsnoop", failOn: "rate-drop=10%,new-error,gatt-changed,mtu-lower"),
                .baseline(path: "g.pklg", failOn: "mtu-lower"),
            ])
        #expect(parsed[1].title == "no regression against g.pklg (mtu-lower)")
        #expect(Expectation.baselinePaths(parsed + parsed) == ["golden.btsnoop", "g.pklg"])
        #expect(throws: ExpectationFileError.self) {
            try Expectation.parse(yaml: "expect:\n  - baseline: {capture: g.pklg, fail_on: slower}\n", path: "e.yaml")
        }
        do {
            _ = try Expectation.parse(yaml: "expect:\n  - baseline: {capture: g.pklg, fail_on: slower}\n", path: "e.yaml")
        } catch {
            #expect(
                error.description
                    == "e.yaml:2:42: expect[0].baseline.fail_on: --fail-on: unknown threshold 'slower' (known: rate-drop=N%, new-error, gatt-changed, mtu-lower)"
            )
        }
    }
}
