import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

@testable import BLEAnalysis

/// LMP PDUs (Core Spec Vol 2, Part C, 5, Tables 5.1–5.2; BlueZ's `monitor/lmp.c` names and fixed sizes) and the LMP
/// records an iPhone's Broadcom controller writes into PacketLogger (``BroadcomLMPTrace``). The record bytes are the
/// audiostream iOS 12.2 log's (`tshark -Y 'packetlogger.type==0x0a || packetlogger.type==0x0b' -e data.data`): in all
/// 96 of its sent records the payload header's LENGTH is the length Table 5.1/5.2 gives the opcode that follows.
@Suite struct LMPTests {
    static func bytes(_ hex: String) -> [UInt8] { BLECore.bytes(fromHex: hex)! }

    /// Frame 837 (sent): payload header 0x4b (LENGTH 9, LLID 3), LMP_features_req TID 0 and the 8 feature bytes; 1002
    /// (received): LMP_encryption_key_size_req of 16 bytes; 1003: LMP_accepted of opcode 16; 1073: LMP_detach 0x13;
    /// 855: LMP_not_accepted_ext of the escaped packet_type_table_req (127/11), 0x23 LMP Error Transaction Collision.
    @Test func theAudiostreamRecordsDecode() throws {
        let features = try #require(LMPPDU(Self.bytes("0000000000ebc6db914b4ebffecffedbff7b87")[10...], length: 9))
        #expect(features.name == "LMP_features_req" && !features.peripheralTransaction)
        #expect(features.parameters == Self.bytes("bffecffedbff7b87"))
        let size = try #require(LMPPDU(Self.bytes("010000008febc6db910000028f2010ffffff")[13...]))
        #expect(size.proposedKeySize == 16 && size.summary == "16 bytes")
        let accepted = try #require(LMPPDU(Self.bytes("0000000000ebc6db911306100000")[10...], length: 2))
        #expect(accepted.name == "LMP_accepted" && accepted.answers == "LMP_encryption_key_size_req")
        let detach = try #require(LMPPDU(Self.bytes("0000000000ebc6db91130e13")[10...], length: 2))
        #expect(detach.summary == "0x13 Remote User Terminated Connection")
        let refused = try #require(LMPPDU(Self.bytes("010000008febc6db910000028fff027f0b2300869a")[13...]))
        #expect(refused.name == "LMP_not_accepted_ext" && refused.peripheralTransaction)
        #expect(refused.answers == "LMP_packet_type_table_req" && refused.refusal == HCIStatus(rawValue: 0x23))
        // A stated length that is not the opcode's own is no LMP PDU: LMP_accepted said to be 3 bytes.
        #expect(LMPPDU(Self.bytes("0610ff")[...], length: 3) == nil)
    }

    static let peer = BDAddress(0xB8_27_EB_C6_DB_91)
    static let handle: UInt16 = 0x000B

    static func lmp(_ hex: String, sent: Bool, at time: Timestamp) -> OwnedRecord {
        OwnedRecord(
            timestamp: time, direction: sent ? .tx : .rx, kind: .other,
            rawType: sent ? 0x0A : 0x0B, bytes: Self.bytes(hex))
    }

    /// A BR/EDR link (frame 1), the link managers agree a 7-byte key: the peer proposes 7 (3), this side accepts (4), after
    /// this side's LMP_encryption_mode_req (2); Encryption Change on (5). The session's key size is 7, observed at 4,
    /// and SEC-08 names it. The near miss: the same records in another controller's layout (the payload header's LLID
    /// is not 3, as in the iPhone 18 log's 0x0A records) are not read: no LMP line, and the key size is not in the log.
    @Test(arguments: [true, false]) func aKeySizeTheLinkManagersAgreedIsTheSessions(_ broadcomLayout: Bool) throws {
        let b = CaptureBuilder().connectBREDR(handle: Self.handle, peer: Self.peer).encryptionChange(handle: Self.handle)
        var records = b.records
        let header = broadcomLayout ? "13" : "12"
        let t = records[0].timestamp
        records.insert(
            contentsOf: [
                Self.lmp("0000000000ebc6db91\(header)1e01", sent: true, at: t),
                Self.lmp("010000008febc6db910000028f2107ffffff", sent: false, at: t),
                Self.lmp("0000000000ebc6db91\(header)0710", sent: true, at: t),
            ], at: 1)
        let bytes = try CaptureWriter.packetLogger(records, bigEndian: false)
        let file = try CaptureFile.open(bytes: bytes, name: "phone.pklg")
        var events: [TimelineEvent] = []
        let analysis = Analyzer.analyze(file, options: AnalyzerOptions(), configure: { $0.onEvent = { events.append($0) } })
        let c = try #require(analysis.connections.first)
        let session = try #require(c.machine.securityRecord.sessions.first)
        let lmpLines = events.filter { $0.layer == .lmp }
        if broadcomLayout {
            #expect(session.keySize == 7 && session.keySizeSource == FactSource.observed(frame: 4))
            #expect(lmpLines.map(\.name) == ["LMP_encryption_mode_req", "LMP_encryption_key_size_req", "LMP_accepted"])
            #expect(lmpLines.map(\.connectionNumber) == [1, 1, 1] && lmpLines[1].summary == "7 bytes")
            let r = DiagnosisReport.analyze(try CaptureFile.open(bytes: bytes, name: "phone.pklg")).result
            #expect(r.findings.contains { $0.rule == "SEC-08" && $0.message.contains("7") }, "\(r.findings.map { $0.message })")
        } else {
            #expect(session.keySize == nil && lmpLines.isEmpty)
        }
    }

    /// Two sessions of one BR/EDR link's bond in a btsnoop H4 log whose LMP trace rides as H4 packet type 0x07 (the
    /// BLUFFS Pixel Buds captures' form): this side's LMP_start_encryption_req (0x22 then EN_RAND) before each
    /// Encryption Change. With EN_RAND zeros in the second session SEC-21 names it (BLUFFS 876: `8b 22 00…`); the near
    /// miss, two different random EN_RANDs, raises nothing.
    @Test(arguments: [true, false]) func aFixedEncryptionRandomIsSEC21(_ fixed: Bool) throws {
        let first = String(repeating: "5a", count: 16)
        let second = fixed ? String(repeating: "00", count: 16) : String(repeating: "a5", count: 16)
        func start(_ random: String) -> [UInt8] { [0x07] + Self.bytes("0000000000ebc6db918b22" + random) }
        var b = CaptureBuilder().connectBREDR(handle: Self.handle, peer: Self.peer)
        b = b.record(.other, .tx, start(first)).encryptionChange(handle: Self.handle)
        b = b.encryptionChange(handle: Self.handle, enabled: false)
        b = b.record(.other, .tx, start(second)).encryptionChange(handle: Self.handle)
        let r = try RuleTest.diagnose(b)
        if fixed {
            let d = try #require(r.of("SEC-21").first)
            #expect(d.frame == 5 && d.severity == .error && d.occurrences == [5])
            #expect(d.message.contains("this side's link manager started encryption with an EN_RAND of zeros"))
        } else {
            #expect(r.of("SEC-21").isEmpty)
        }
    }

    /// Anonymizing a capture replaces the LMP trace's 4 address bytes by the peer's pseudonym's (the audiostream log's
    /// 1002 kept "eb c6 db 91" before), so the trace leaks no address and still names the link: the key size the link
    /// managers agreed stays the session's. The near miss: a record that is no trace (`f0 01`) is left as it was.
    @Test func anonymizingReplacesTheTracesAddress() throws {
        var records = CaptureBuilder().connectBREDR(handle: Self.handle, peer: Self.peer).encryptionChange(handle: Self.handle).records
        let t = records[0].timestamp
        records.insert(
            contentsOf: [
                Self.lmp("0000000000ebc6db91131e01", sent: true, at: t),
                Self.lmp("010000008febc6db910000028f2107ffffff", sent: false, at: t),
                Self.lmp("0000000000ebc6db91130710", sent: true, at: t),
                Self.lmp("f001", sent: true, at: t),
            ], at: 1)
        let file = try CaptureFile.open(bytes: CaptureWriter.packetLogger(records, bigEndian: false), name: "phone.pklg")
        var read: [OwnedRecord] = []
        while let r = file.next() { read.append(OwnedRecord(r)) }
        let a = CaptureAnonymizer(salt: Array("lmp".utf8), values: .keep)
        for r in read { a.learn(r) }
        let anonymized = read.map { a.anonymize($0) }
        let pseudonym = a.pseudonym(address: Self.peer.value)
        let low = (0..<4).map { UInt8(truncatingIfNeeded: pseudonym >> (8 * UInt64(3 - $0))) }
        #expect(Array(anonymized[2].bytes[5..<9]) == low && Array(anonymized[3].bytes[5..<9]) == low && low != Self.bytes("ebc6db91"))
        #expect(anonymized[4].bytes == Self.bytes("f001"))
        let again = try CaptureFile.open(bytes: CaptureWriter.packetLogger(anonymized, bigEndian: false), name: "anon.pklg")
        let c = try #require(Analyzer.analyze(again, options: AnalyzerOptions()).connections.first)
        #expect(c.machine.securityRecord.sessions.first?.keySize == 7)
    }

    /// A rewritten (anonymized) H4 record of packet type 0x07 is written back to pcapng as H4 with its type and
    /// direction (the BLUFFS sc capture's 288 trace records were written as user records, and its 286 LMP lines were
    /// gone from the anonymized copy). The near miss: an HCI event beside it keeps its own layout.
    @Test func aRewrittenTraceRecordStaysH4InPcapng() throws {
        let trace = [0x07] + Self.bytes("0000000000ebc6db91131e01")
        let b = CaptureBuilder().connectBREDR(handle: Self.handle, peer: Self.peer).record(.other, .tx, trace)
        let input = try b.captureFile()
        var owned: [OwnedRecord] = []
        while let r = input.next() { owned.append(OwnedRecord(r)) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lmp-\(UInt32.random(in: 0...UInt32.max)).pcapng").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try PcapngFileWriter(path: path, input: try b.captureFile(), sectionComment: nil)
        for r in owned { try writer.write(r) }
        try writer.close()
        var events: [TimelineEvent] = []
        _ = Analyzer.analyze(
            try CaptureFile.open(path: path), options: AnalyzerOptions(), configure: { $0.onEvent = { events.append($0) } })
        let lmp = events.filter { $0.layer == .lmp }
        #expect(lmp.map(\.name) == ["LMP_encryption_mode_req"] && lmp.first?.direction == .tx && lmp.first?.connectionNumber == 1)
        #expect(events.contains { $0.layer == .hci && $0.frame == 1 })
    }
}
