import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLESecurity
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// The TK searches of an LE legacy pairing try what its association model allows (Core Spec Vol 3, Part H, 2.3.5.1,
/// Tables 2.6 and 2.8): TK 0 for Just Works, no search for out-of-band data, the passkeys otherwise; and c1 has a
/// budget per capture, as the MIC search has. The confirm values and STKs are made by the spec's c1 and s1
/// (`SecurityFunction`, checked against the spec's sample data in BLESecurityTests).
@Suite struct LegacyTKSpaceTests {
    /// Pairing Request and Response: NoInputNoOutput, no MITM (Just Works); both with OOB data; KeyboardOnly against
    /// DisplayOnly with MITM (Passkey Entry).
    static let justWorks: ([UInt8], [UInt8]) = ([0x01, 0x03, 0x00, 0x01, 0x10, 0x00, 0x01], [0x02, 0x03, 0x00, 0x01, 0x10, 0x00, 0x01])
    static let outOfBand: ([UInt8], [UInt8]) = ([0x01, 0x03, 0x01, 0x01, 0x10, 0x00, 0x01], [0x02, 0x03, 0x01, 0x01, 0x10, 0x00, 0x01])
    static let passkeyEntry: ([UInt8], [UInt8]) = ([0x01, 0x02, 0x00, 0x05, 0x10, 0x00, 0x01], [0x02, 0x00, 0x00, 0x05, 0x10, 0x00, 0x01])

    @Test func theModelGivesTheSpace() {
        #expect(LegacyTKSpace(request: Self.justWorks.0, response: Self.justWorks.1) == .justWorks)
        #expect(LegacyTKSpace(request: Self.outOfBand.0, response: Self.outOfBand.1) == .outOfBand)
        #expect(LegacyTKSpace(request: Self.passkeyEntry.0, response: Self.passkeyEntry.1) == .passkeys)
        // Near misses: OOB data on one side only is not OOB in legacy pairing (Table 2.6), and MITM on one side with
        // NoInputNoOutput on the other is Just Works (Table 2.8); a missing PDU leaves every passkey.
        #expect(LegacyTKSpace(request: Self.outOfBand.0, response: Self.justWorks.1) == .justWorks)
        #expect(LegacyTKSpace(request: [0x01, 0x03, 0x00, 0x05, 0x10, 0x00, 0x01], response: Self.passkeyEntry.1) == .justWorks)
        #expect(LegacyTKSpace(request: nil, response: Self.justWorks.1) == .passkeys)
    }

    /// A link with its CONNECT_IND (c1 decides), paired with `tk` under `pdus`, encrypted with that pairing's STK.
    static func pairedLink(tk: UInt64, pdus: ([UInt8], [UInt8])) -> MidConnectionPairingBuilder {
        var b = MidConnectionPairingBuilder(format: .nordic, tk: tk)
        b.pairingPDUs = pdus
        b.reconnect()
        b.send()
        b.pair()
        b.startEncryption(key: b.stk)
        b.notify(PairingMICSearchTests.values[0])
        return b
    }

    @Test func justWorksTriesTKZeroOnly() throws {
        let found = Self.pairedLink(tk: 0, pdus: Self.justWorks)
        #expect(LinkEncryptionRun.run(try found.capture()).notifications.map(\.1) == [PairingMICSearchTests.values[0]])
        // Near miss: the PDUs say Just Works, the confirm values were made with passkey 5: not searched, and said so.
        let passkey = Self.pairedLink(tk: 5, pdus: Self.justWorks)
        let r = LinkEncryptionRun.run(try passkey.capture())
        #expect(r.notifications.isEmpty)
        #expect(
            r.analyzer.connections.first?.linkEncryption?.keySearch
                == .justWorksTKFails(pairingFrame: passkey.srandFrame, checkedFrame: nil))
        // The same passkey under Passkey Entry PDUs is found.
        #expect(LinkEncryptionRun.run(try Self.pairedLink(tk: 5, pdus: Self.passkeyEntry).capture()).notifications.count == 1)
    }

    @Test func outOfBandIsNotSearched() throws {
        let b = Self.pairedLink(tk: 0, pdus: Self.outOfBand)
        let r = LinkEncryptionRun.run(try b.capture())
        #expect(r.notifications.isEmpty)
        #expect(r.analyzer.connections.first?.linkEncryption?.keySearch == .outOfBand(pairingFrame: b.srandFrame))
        let finding = try #require(r.analyzer.findings.first { $0.kind.code.id == "ll.encrypted-no-key" })
        #expect(finding.kind.message.contains("used out-of-band data (both Pairing Request and Response say so)"))
    }

    /// Without the CONNECT_IND the MIC search stops at TK 0 for a Just Works pairing too.
    @Test func theMICSearchKeepsToTheSpace() throws {
        var b = MidConnectionPairingBuilder(format: .nordic, tk: 7)
        b.pairingPDUs = Self.justWorks
        b.send()
        b.pair()
        b.startEncryption(key: b.stk)
        b.notify(PairingMICSearchTests.values[0])
        let r = LinkEncryptionRun.run(try b.capture())
        #expect(r.notifications.isEmpty)
        #expect(
            r.analyzer.connections.first?.linkEncryption?.keySearch
                == .justWorksTKFails(pairingFrame: b.srandFrame, checkedFrame: b.firstEncryptedFrame))
    }

    /// c1's budget: passkey 5 (6 TKs), then passkey 123456 on a second link, with room for 100 TKs.
    @Test func c1HasABudget() throws {
        var b = Self.pairedLink(tk: 5, pdus: Self.passkeyEntry)
        let first = b.stk
        var second = MidConnectionPairingBuilder(format: .nordic, tk: 123_456)
        second.pairingPDUs = Self.passkeyEntry
        (second.records, second.time, second.aa) = (b.records, b.time, b.aa)
        second.reconnect()
        second.send()
        second.pair()
        second.startEncryption(key: second.stk)
        b = second
        let a = Analyzer.analyze(try b.capture(), options: AnalyzerOptions(timeline: false, maxKeySearchCandidates: 100))
        let links = a.connections.compactMap(\.linkEncryption)
        try #require(links.count == 2)
        #expect(links[0].key?.ltk == first.bytes && links[1].key == nil)
        #expect(links[1].keySearch == .c1BudgetSpent(pairingFrame: second.srandFrame, tried: 94, budget: 100))
        let enough = Analyzer.analyze(try b.capture(), options: AnalyzerOptions(timeline: false, maxKeySearchCandidates: 6 + 123_457))
        #expect(enough.connections.compactMap(\.linkEncryption).map { $0.key?.ltk } == [first.bytes, second.stk.bytes])
    }
}
