import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// A sniffer without encryption flags (Ubertooth PPI, LT 251/256) that misses the peripheral's one-byte
/// LL_START_ENC_REQ: the PDUs after LL_ENC_RSP are ciphertext all the same (Core Spec Vol 6, Part B, 5.1.3.1), not
/// plaintext. The corpus's Ubertooth capture of an iPhone and a shaver (connection 4, LL_ENC_RSP at 26487, ciphertext
/// from 26489) was read as 121 broken L2CAP PDUs and phantom ATT.
@Suite struct EncryptionStartUnseenTests {
    /// The link's records as a flagless sniffer writes them (LT 251: access address, PDU, CRC), each placed in its
    /// connection event by time (30 ms apart, the central first, the peripheral 400 µs later, an empty central PDU
    /// where the central sent nothing), so directions come from the place in the event as on a real Ubertooth capture.
    static func flagless(_ link: EncryptedLinkBuilder, dropping dropped: Set<Int> = []) throws -> CaptureFile {
        var placed: [(event: UInt16, bytes: [UInt8])] = []
        for r in link.b.records where !dropped.contains(r.frame) {
            let air = try #require(Self.air(r.bytes))
            if placed.last?.event != air.event && !air.central && air.event > 0 {
                let empty = LLDataPDU(llid: .continuation, sn: false, payload: []).bytes
                placed.append((air.event, LLPacket(accessAddress: NordicBuilder.aa, pdu: empty, crcInit: NordicBuilder.crcInit).bytes))
            }
            placed.append((air.event, air.ll))
        }
        var out: [OwnedRecord] = []
        var place = 0
        for (i, p) in placed.enumerated() {
            place = i > 0 && placed[i - 1].event == p.event ? place + 1 : 0
            let micros = 1_000_000 + Int64(p.event) * 30_000 + Int64(place) * 400
            out.append(
                OwnedRecord(
                    frame: i + 1, timestamp: Timestamp(microseconds: micros), direction: .unknown, kind: .linkLayer,
                    originalLength: p.bytes.count, linkType: 251, bytes: p.bytes))
        }
        return try CaptureFile.open(bytes: CaptureWriter.pcap(out, linkType: 251), name: "flagless.pcap")
    }

    /// An nRF Sniffer record's event counter, direction and link-layer bytes (access address, PDU, CRC).
    static func air(_ bytes: [UInt8]) -> (event: UInt16, central: Bool, ll: [UInt8])? {
        bytes.withUnsafeBytes { raw in
            guard let air = try? LLAirPacket(linkType: 272, bytes: raw) else { return nil }
            return (air.eventCounter ?? 0, air.direction != .rx, Array(raw[air.packet.offset...]))
        }
    }

    /// The link of the tests: the encryption start (records 2–6: LL_ENC_REQ, LL_ENC_RSP, LL_START_ENC_REQ, the two
    /// LL_START_ENC_RSPs), then two notifications of 30 and 10 bytes in one fragment each.
    static let values: [[UInt8]] = [Array(0..<30), Array(200..<210)]
    static func encryptedLink() -> EncryptedLinkBuilder {
        var link = EncryptedLinkBuilder()
        link.startEncryption()
        for v in values { link.notify(v, fragment: 251) }
        return link
    }
    static let startEncReqFrame = 4

    @Test func withTheKeyTheLinkDecryptsAsIfTheStartHadBeenSeen() throws {
        let keys = try LinkKeyMaterial(ltkOption: EncryptedLinkBuilder.ltkText)
        let r = LinkEncryptionRun.run(try Self.flagless(Self.encryptedLink(), dropping: [Self.startEncReqFrame]), keys: keys)
        #expect(r.notifications.map(\.value) == Self.values)
        let ll = try #require(r.analyzer.connections.first?.linkLayer)
        // Both LL_START_ENC_RSPs and both notifications.
        #expect(ll.decryptedHere == 4 && ll.micFailures == 0 && ll.encryptedUndecrypted == 0)
        // The dropped LL_START_ENC_REQ is a packet the sniffer missed, and said so (ll.sniffer-missed, info); nothing else.
        let said = r.analyzer.findings.filter { $0.kind.code.id.hasPrefix("ll.") || $0.kind.code.id.hasPrefix("l2cap.") }
        #expect(said.map(\.kind.code) == [.llSnifferMissed])
    }

    @Test func withoutTheKeyTheCiphertextIsSaidNotReadAsL2CAP() throws {
        let r = LinkEncryptionRun.run(try Self.flagless(Self.encryptedLink(), dropping: [Self.startEncReqFrame]))
        #expect(r.notifications.isEmpty)
        let found = r.analyzer.findings.filter { $0.kind.code == .llEncryptedNoKey }
        // Records after the drop: 1 CONNECT_IND, 2 LL_ENC_REQ, 3 LL_ENC_RSP, 4 the central's encrypted LL_START_ENC_RSP
        // (an event later): the first ciphertext. 4 PDUs: 2 × (1 + 4) + (4 + 3 + 30 + 4) + (4 + 3 + 10 + 4) bytes.
        #expect(found.count == 1 && found.first?.frame == 4)
        #expect(found.first?.kind.message.contains("encrypted, no key: 4 PDUs, 72 bytes") == true)
        #expect(
            found.first?.kind.message.contains(
                "link encrypted from frame 4 (LL_START_ENC_REQ not captured, inferred from the first ciphertext)") == true)
        #expect(!r.analyzer.findings.contains { $0.kind.code.id.hasPrefix("l2cap.") || $0.kind.code.id == "ll.control-malformed" })
    }

    /// Near miss: the start seen, nothing is inferred and the finding says no more than before.
    @Test func theStartSeenIsNotCalledInferred() throws {
        let r = LinkEncryptionRun.run(try Self.flagless(Self.encryptedLink()))
        let found = r.analyzer.findings.filter { $0.kind.code == .llEncryptedNoKey }
        #expect(found.count == 1 && found.first?.kind.message.contains("not captured") == false)
    }

    /// Near miss: the peripheral refuses the encryption (LL_REJECT_EXT_IND, 3 bytes, PIN or Key Missing 0x06) and the
    /// link goes on in the clear: its notification is plaintext and is read.
    @Test func aRefusedStartLeavesTheLinkInTheClear() throws {
        var link = EncryptedLinkBuilder()
        link.clear(.encReq(rand: 0, ediv: 0, skdCentral: 1, ivCentral: 2), central: true)
        link.clear(.encRsp(skdPeripheral: 3, ivPeripheral: 4), central: false)
        link.clear(.rejectExtInd(rejectOpcode: .encReq, errorCode: 0x06), central: false)
        let att: [UInt8] = [0x1B, 0x2A, 0x00] + Self.values[0]
        link.b.data(.start, [UInt8(att.count), 0, 0x04, 0x00] + att, central: false, sn: link.sn.1, event: link.event)
        let r = LinkEncryptionRun.run(try Self.flagless(link))
        #expect(r.notifications.map(\.value) == [Self.values[0]])
        #expect(!r.analyzer.findings.contains { $0.kind.code.id.hasPrefix("ll.") || $0.kind.code.id.hasPrefix("l2cap.") })
    }
    /// A sniffer that flags PDUs encrypted with a bad MIC, then stops flagging with no pause (nRF Sniffer on the NimBLE
    /// door lock: 10 flagged 4120–4129, none from 4130): the unflagged PDUs are ciphertext, counted with the others and
    /// not read (they made six `l2cap.incomplete-sdu` of 9,556 to 64,739 bytes), and the flags' stop is said. The near miss: a sniffer that
    /// decrypted the start (MIC good) and then sends an unflagged PDU is believed, as before: plaintext, read.
    @Test(arguments: [false, true]) func aSnifferThatStopsFlaggingAfterBadMICsStillCarriesCiphertext(_ sniffed: Bool) throws {
        var link = EncryptedLinkBuilder()
        link.clear(.encReq(rand: 0, ediv: 0, skdCentral: 1, ivCentral: 2), central: true)
        link.clear(.encRsp(skdPeripheral: 3, ivPeripheral: 4), central: false)
        link.clear(.startEncReq, central: false)
        for central in [true, false] {
            // LL_START_ENC_RSP both ways, flagged encrypted: decrypted by the sniffer (MIC good, plaintext) or not.
            let rsp = LLControlPacket(.startEncRsp).bytes
            link.b.data(
                .control, sniffed ? rsp : rsp + [0xA1, 0xB2, 0xC3, 0xD4], central: central, sn: central ? link.sn.0 : link.sn.1,
                event: link.event, encrypted: true, micOK: sniffed)
            if central { link.sn.0.toggle() } else { link.sn.1.toggle(); link.event += 1 }
        }
        let att: [UInt8] = [0x1B, 0x2A, 0x00] + Self.values[0]
        link.b.data(.start, [UInt8(att.count), 0, 0x04, 0x00] + att, central: false, sn: link.sn.1, event: link.event)
        let r = LinkEncryptionRun.run(try link.capture())
        #expect(r.notifications.map(\.value) == (sniffed ? [Self.values[0]] : []))
        #expect(r.analyzer.connections.first?.linkLayer?.encryptedUndecrypted == (sniffed ? 0 : 3))
        // Said once where the ciphertext is told, with the frame the flags stopped at (the notification's).
        let unflagged = try #require(link.b.records.last?.frame)
        let told = r.analyzer.findings.filter {
            $0.kind.message.contains(
                "the sniffer stopped flagging the link as encrypted at \(unflagged) after 2 bad MICs; its 1 later PDU is counted as ciphertext"
            )
        }
        #expect(told.count == (sniffed ? 0 : 1))
    }
}
