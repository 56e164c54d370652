import BLEAnalysis
import BLEAnalysisTestSupport
import BLECore
import Testing

/// A key found, the sniffer then misses more of one side's PDUs than the counter window (8) spans: each moved the
/// sender's packet counter on (Core Spec Vol 6, Part E, 2.1), so the next PDU it heard sits past the window. The key
/// still opens it, at the counter a wider search finds, and the link goes on from there (issue 49, 1d: a long link with
/// missed packets stayed "MIC failed" to its end).
@Suite struct CounterResyncTests {
    static let key = EncryptedLinkBuilder.ltkText

    @Test func aKeyOpensTheLinkAfterMorePDUsMissedThanTheWindowSpans() throws {
        var link = EncryptedLinkBuilder()
        link.startEncryption()
        link.notify([1])
        for _ in 0..<40 { link.missed(central: false) }
        link.notify([2])
        link.notify([3])
        #expect(link.counters.1 == 44)  // the LL_START_ENC_RSP, [1], 40 unheard, [2], [3]
        let r = LinkEncryptionRun.run(try link.capture(), keys: try LinkKeyMaterial(ltkOption: Self.key))
        #expect(r.notifications.map(\.value) == [[1], [2], [3]])
        let ll = try #require(r.analyzer.connections.first?.linkLayer)
        #expect(ll.decryptedHere == 5 && ll.micFailures == 0)
        #expect(r.analyzer.connections.first?.linkEncryption?.missedPDUs == 40)
        #expect(!r.analyzer.findings.contains { $0.kind.code.id == "ll.mic-failed" })
    }

    @Test func nearMissAPDUNoCounterOpensStaysAMICFailureAndTheCounterGoesOnPastIt() throws {
        // After the gap, one PDU with a broken MIC: the wider search opens nothing there, and the next PDU opens at the
        // counter after it (the broken one took a counter too).
        var link = EncryptedLinkBuilder()
        link.startEncryption()
        link.notify([1])
        for _ in 0..<40 { link.missed(central: false) }
        let broken = link.b.records.count + 1
        link.encrypted(.start, [7, 0, 0x04, 0x00, 0x1B, 0x2A, 0x00, 1, 2, 3, 4], central: false, tamper: true)
        link.notify([3])
        let r = LinkEncryptionRun.run(try link.capture(), keys: try LinkKeyMaterial(ltkOption: Self.key))
        #expect(r.notifications.map(\.value) == [[1], [3]])
        #expect(r.analyzer.connections.first?.linkLayer?.micFailures == 1)
        #expect(r.analyzer.connections.first?.linkEncryption?.missedPDUs == 41)
        #expect(r.analyzer.findings.filter { $0.kind.code.id == "ll.mic-failed" }.map(\.frame) == [broken])
        // A wrong key opens nothing, before the gap or after it.
        let wrong = LinkEncryptionRun.run(try link.capture(), keys: try LinkKeyMaterial(ltkOption: "00112233445566778899AABBCCDDEEFF"))
        #expect(wrong.notifications.isEmpty && wrong.analyzer.connections.first?.linkLayer?.decryptedHere == 0)
    }
}
