import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// The connection table: lookup by (controller, handle) through its caches, handles reused after a close, the database
/// a discovered connection leaves for the peer's next one.
@Suite struct ConnectionTableTests {
    static func connection(_ number: Int, handle: UInt16, controller: UInt16 = 0, peer: String? = nil) -> Connection {
        var c = Connection(
            number: number, handle: handle, controller: controller, inferred: false, startFrame: number,
            startTime: Timestamp(microseconds: 0))
        c.peerAddress = peer
        return c
    }

    /// A table with a sink and a capture context of its own (nothing decoded here).
    static func table() -> ConnectionTable {
        ConnectionTable(
            sink: AnalysisSink(timeline: false, evidence: false, queueCapacity: 16),
            capture: CaptureContext(codecs: nil, keyStore: LinkKeyStore(LinkKeyMaterial())))
    }

    @Test func looksUpOpenConnectionsAndForgetsClosedOnes() {
        let table = Self.table()
        let a = ConnectionTable.Key(controller: 0, handle: 0x40)
        let b = ConnectionTable.Key(controller: 1, handle: 0x40)
        let first = table.open(Self.connection(1, handle: 0x40), key: a)
        let second = table.open(Self.connection(2, handle: 0x40, controller: 1), key: b)
        #expect(first == 0 && second == 1 && table.openCount == 2)
        // The same handle on two controllers names two connections, asked in turns (the last-lookup cache must not mix them).
        for _ in 0..<3 {
            #expect(table.lookup(a) == 0)
            #expect(table.lookup(b) == 1)
        }
        #expect(table.latest(onHandle: 0x40) == 1)
        table.close(0)
        #expect(table.lookup(a) == nil && table.machines[0] == nil && table.machines[1] != nil && table.openCount == 1)
        // Handle 0x0040 of controller 0 reused: a new connection, a new index; the old one stays in the list.
        let third = table.open(Self.connection(3, handle: 0x40), key: a)
        #expect(third == 2 && table.lookup(a) == 2 && table.connections.map(\.number) == [1, 2, 3])
        #expect(table.latest(onHandle: 0x40) == 2 && table.latest(onHandle: 0x41) == nil)
        #expect(table.noteInferred(a) && !table.noteInferred(a) && table.noteInferred(b))
    }

    @Test func keepsADiscoveredDatabaseForThePeersNextConnection() {
        let table = Self.table()
        let key = ConnectionTable.Key(controller: 0, handle: 0x40)
        var c = Self.connection(1, handle: 0x40, peer: "C0:11:22:33:44:55")
        c.gatt.addService(.init(startHandle: 1, endHandle: 5, uuid: BluetoothUUID(uuid16: 0x180D), isPrimary: true, discoveredAt: 7))
        let i = table.open(c, key: key)
        table.close(i)
        #expect(table.earlierDatabase(peer: "C0:11:22:33:44:55")?.services.map(\.startHandle) == [1])
        // A database from the user's map (not discovered) is not handed on.
        var mapped = Self.connection(2, handle: 0x41, peer: "C0:11:22:33:44:66")
        mapped.gatt.addService(.init(startHandle: 1, endHandle: 5, uuid: BluetoothUUID(uuid16: 0x180D), isPrimary: true, discoveredAt: 0))
        mapped.gatt.source = .userMap
        table.close(table.open(mapped, key: .init(controller: 0, handle: 0x41)))
        #expect(table.earlierDatabase(peer: "C0:11:22:33:44:66") == nil)
    }

    /// From typed packets: two connections on handle 0x0040 one after the other, and traffic on 0x0041 that no
    /// Connection Complete announced, before and after its handle's connection is closed.
    @Test func aCaptureReusingAHandle() throws {
        let b = CaptureBuilder()
            .connect(handle: 0x40)  // frame 1
            .notify(handle: 0x2A, [1], connection: 0x40)  // 2
            .disconnect(handle: 0x40)  // 3
            .connect(handle: 0x40, peer: BDAddress(0xC0_11_22_33_44_66))  // 4
            .notify(handle: 0x2A, [2], connection: 0x40)  // 5
            .notify(handle: 0x2B, [3], connection: 0x41)  // 6: inferred
            .disconnect(handle: 0x41)  // 7
            .notify(handle: 0x2B, [4], connection: 0x41)  // 8: inferred again, no second finding
        let (analyzer, _) = try AnalyzerRun.analyze(b)
        let c = analyzer.connections
        #expect(c.map(\.number) == [1, 2, 3, 4])
        #expect(c.map(\.handle) == [0x40, 0x40, 0x41, 0x41])
        #expect(c.map(\.startFrame) == [1, 4, 6, 8])
        #expect(c.map(\.endFrame) == [3, nil, 7, nil])
        #expect(c.map(\.inferred) == [false, false, true, true])
        #expect(c.map(\.attPDUs) == [1, 1, 1, 1])
        #expect(analyzer.findings.filter { $0.kind.code.id == "hci.connection-inferred" }.map(\.frame) == [6])
    }
}
