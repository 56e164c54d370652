import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLESecurity
import BLETestSupport
import Foundation
import Testing

/// An air capture that joins a connection after its CONNECT_IND and holds a whole LE legacy pairing: SMP in the clear
/// (Core Spec Vol 3, Part H, 3.5), the encryption start with EDIV/Rand 0 and the STK (Vol 6, Part B, 5.1.3.1), then
/// the peripheral's keys and ATT traffic encrypted (Vol 6, Part E). The confirm values are c1 over addresses the
/// capture never shows. Each call writes one connection event: the central's PDU, then the peripheral's (an empty
/// PDU for the side with nothing to say), as nRF Sniffer records (LT 272, direction in its header) or bare (LT 251:
/// no pseudo-header, the direction only in the timing).
struct MidConnectionPairingBuilder {
    enum Format { case nordic, bare }
    static let aa = LLAccessAddress(0x5065_4A27), crcInit: UInt32 = 0x12_3456
    static let initiator = PairingAddress(text: "04:EE:03:4A:8A:2F", isRandom: false)!
    static let responder = PairingAddress(text: "F6:77:3C:47:6D:50", isRandom: true)!
    static let mrand = Key128(hex: "5783D52156AD6F0E6388274EC6702EE0")!
    static let srand = Key128(hex: "A6E8E7CC25A75F6E216583F7FF3DC4CF")!
    static let skdCentral: UInt64 = 0x1122_3344_5566_7788, skdPeripheral: UInt64 = 0x99AA_BBCC_DDEE_FF00
    static let ivCentral: UInt32 = 0x0403_0201, ivPeripheral: UInt32 = 0x0807_0605
    /// The LTK, EDIV and Rand the peripheral distributes (Encryption Information, Central Identification).
    static let ltk = Key128(hex: "0F241772AC270CAFEE654186F0A65D5F")!
    static let ediv: UInt16 = 0x2E7A, rand: UInt64 = 0x238D_24C7_250D_E29C

    let format: Format
    let tk: UInt64
    /// The Pairing Request and Response (opcode first) when not those `pair()` picks for the TK.
    var pairingPDUs: (request: [UInt8], response: [UInt8])?
    var records: [TinyPcap.Rec] = []
    var time: Int64 = 1_000_000
    var event: UInt16 = 100
    var sn: (Bool, Bool) = (false, false)
    var counters: (UInt64, UInt64) = (0, 0)
    var cipher: LLCipher?
    var aa = MidConnectionPairingBuilder.aa
    /// Frames worth naming in assertions: the last Pairing Random, Encryption Information, and per encryption start
    /// the two LL_START_ENC_RSPs (the central's first).
    var srandFrame = 0, encryptionInformationFrame = 0
    var encryptionStarts: [(first: Int, second: Int)] = []
    var firstEncryptedFrame: Int { encryptionStarts[0].first }
    var secondEncryptedFrame: Int { encryptionStarts[0].second }

    /// `passkey` nil: Just Works (both sides NoInputNoOutput, TK 0); otherwise the central types it (KeyboardOnly
    /// against DisplayOnly, MITM), TK = passkey (Vol 3, Part H, 2.3.5.3).
    init(format: Format, passkey: UInt32? = nil) {
        self.format = format
        tk = UInt64(passkey ?? 0)
    }

    /// Any TK: above 999,999 it is an out-of-band one (Vol 3, Part H, 2.3.5.4), which no search finds.
    init(format: Format, tk: UInt64) {
        self.format = format
        self.tk = tk
    }

    static func wire(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * $0)) } }
    static func smp(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count), 0, 0x06, 0x00] + bytes }

    var stk: Key128 { SecurityFunction.s1(k: Key128(tk), r1: Self.srand, r2: Self.mrand) }

    /// The pairing in the clear; `srand` replaces the peripheral's Pairing Random (a pairing whose STK is not the link's).
    mutating func pair(srand: Key128 = MidConnectionPairingBuilder.srand) {
        let passkey = tk != 0
        let preq: [UInt8] = pairingPDUs?.request ?? [0x01, passkey ? 0x02 : 0x03, 0x00, passkey ? 0x05 : 0x01, 0x10, 0x00, 0x01]
        let pres: [UInt8] = pairingPDUs?.response ?? [0x02, passkey ? 0x00 : 0x03, 0x00, passkey ? 0x05 : 0x01, 0x10, 0x00, 0x01]
        func confirm(_ r: Key128) -> [UInt8] {
            SecurityFunction.c1(
                k: Key128(tk), r: r, preq: preq, pres: pres, initiator: Self.initiator, responder: Self.responder
            ).bytes
        }
        send(central: (.start, Self.smp(preq)))
        send(peripheral: (.start, Self.smp(pres)))
        send(central: (.start, Self.smp([0x03] + confirm(Self.mrand))))
        send(peripheral: (.start, Self.smp([0x03] + confirm(Self.srand))))
        send(central: (.start, Self.smp([0x04] + Self.mrand.bytes)))
        send(peripheral: (.start, Self.smp([0x04] + srand.bytes)))
        srandFrame = records.count
    }

    /// LL_ENC_REQ/RSP and LL_START_ENC_REQ in the clear, then both LL_START_ENC_RSPs encrypted with `key`.
    mutating func startEncryption(key: Key128, ediv: UInt16 = 0, rand: UInt64 = 0, damageFirst: Bool = false, damageSecond: Bool = false) {
        let sk = LinkLayerEncryption.sessionKey(
            ltk: key, skdm: Self.wire(Self.skdCentral, 8), skds: Self.wire(Self.skdPeripheral, 8))
        send(
            central: (
                .control, LLControlPacket(.encReq(rand: rand, ediv: ediv, skdCentral: Self.skdCentral, ivCentral: Self.ivCentral)).bytes
            ))
        send(peripheral: (.control, LLControlPacket(.encRsp(skdPeripheral: Self.skdPeripheral, ivPeripheral: Self.ivPeripheral)).bytes))
        send(peripheral: (.control, LLControlPacket(.startEncReq).bytes))
        cipher = LLCipher(
            sessionKey: sk,
            iv: LinkLayerEncryption.iv(ivm: Self.wire(UInt64(Self.ivCentral), 4), ivs: Self.wire(UInt64(Self.ivPeripheral), 4)))
        counters = (0, 0)
        send(central: (.control, [0x06]), peripheral: (.control, [0x06]), damageCentral: damageFirst, damagePeripheral: damageSecond)
        encryptionStarts.append((records.count - 1, records.count))
    }

    /// The peripheral's keys (encrypted): Encryption Information and Central Identification.
    mutating func distributeKeys() {
        send(peripheral: (.start, Self.smp([0x06] + Self.ltk.bytes)))
        encryptionInformationFrame = records.count
        send(peripheral: (.start, Self.smp([0x07] + Self.wire(UInt64(Self.ediv), 2) + Self.wire(Self.rand, 8))))
    }

    /// ATT Handle Value Notification on 0x002A from the peripheral.
    mutating func notify(_ value: [UInt8]) {
        let att: [UInt8] = [0x1B, 0x2A, 0x00] + value
        send(peripheral: (.start, [UInt8(att.count), 0, 0x04, 0x00] + att))
    }

    /// ATT Write Command on 0x002C from the central.
    mutating func writeCommand(_ value: [UInt8]) {
        let att: [UInt8] = [0x52, 0x2C, 0x00] + value
        send(central: (.start, [UInt8(att.count), 0, 0x04, 0x00] + att))
    }

    /// A later connection on another access address, with its CONNECT_IND (addresses known) or without.
    mutating func reconnect(connectInd: Bool = true) {
        aa = LLAccessAddress(aa.rawValue &+ 0x0101_0101)
        sn = (false, false)
        cipher = nil
        guard connectInd else { return }
        let c = LLConnectInd(
            initiator: LLDeviceAddress(0x04EE_034A_8A2F), advertiser: LLDeviceAddress(0xF677_3C47_6D50, isRandom: true),
            parameters: LLConnectionParameters(accessAddress: aa, crcInit: Self.crcInit, interval: 24, timeout: 72))
        time += 100_000
        emit(aa: .advertising, pdu: LLAdvertisingPacketPDU(.connectInd(c)).bytes, crcInit: 0x55_5555, central: true, encrypted: false)
    }

    /// One connection event: the central's PDU, then the peripheral's (empty where nil; only non-empty PDUs are encrypted).
    mutating func send(
        central: (LLID, [UInt8])? = nil, peripheral: (LLID, [UInt8])? = nil, damageCentral: Bool = false,
        damagePeripheral: Bool = false
    ) {
        time += 30_000
        event &+= 1
        for (isCentral, pdu) in [(true, central), (false, peripheral)] {
            let (llid, plaintext) = pdu ?? (.continuation, [])
            let header0 = LLDataPDU(llid: llid, sn: isCentral ? sn.0 : sn.1, payload: []).bytes[0]
            var payload = plaintext
            if let cipher, !plaintext.isEmpty {
                let counter = isCentral ? counters.0 : counters.1
                payload = cipher.encrypt(header0: header0, plaintext: plaintext, packetCounter: counter, centralToPeripheral: isCentral)
                if isCentral { counters.0 += 1 } else { counters.1 += 1 }
                if isCentral ? damageCentral : damagePeripheral { payload[0] ^= 0x40 }
            }
            let data = LLDataPDU(llid: llid, sn: isCentral ? sn.0 : sn.1, payload: payload).bytes
            emit(aa: aa, pdu: data, crcInit: Self.crcInit, central: isCentral, encrypted: cipher != nil && !plaintext.isEmpty)
            if isCentral { sn.0.toggle() } else { sn.1.toggle() }
            // The peripheral answers T_IFS (150 µs) after the end of the central's packet (1M: 8 µs per octet).
            time += Int64(8 * (1 + 4 + data.count + 3) + 150)
        }
    }

    mutating func emit(aa: LLAccessAddress, pdu: [UInt8], crcInit: UInt32, central: Bool, encrypted: Bool) {
        let ll = LLPacket(accessAddress: aa, pdu: pdu, crcInit: crcInit).bytes
        var bytes = ll
        if format == .nordic {
            let h = NordicBLEHeader(
                packetCounter: UInt16(truncatingIfNeeded: records.count),
                flags: NordicBLEFlags(crcOK: true, centralToPeripheral: central, encrypted: encrypted, micOK: false),
                channel: aa.isAdvertising ? 37 : 5, eventCounter: event, linkLayerLength: ll.count)
            bytes = h.bytes + ll
        }
        records.append(TinyPcap.Rec(frame: records.count + 1, micros: time, linkType: 0, bytes: bytes, origLen: bytes.count))
    }

    func capture() throws -> CaptureFile {
        let linkType: UInt32 = format == .nordic ? 272 : 251
        let owned = records.map {
            OwnedRecord(
                frame: $0.frame, timestamp: Timestamp(microseconds: $0.micros), direction: .unknown, kind: .linkLayer,
                originalLength: $0.origLen, linkType: linkType, bytes: $0.bytes)
        }
        return try CaptureFile.open(bytes: CaptureWriter.pcap(owned, linkType: linkType), name: "mid-connection.pcap")
    }
}

@Suite struct PairingMICSearchTests {
    static let values: [[UInt8]] = [Array(0..<18), [0xCA, 0xFE]]

    /// The pairing, the encryption with its STK, the keys, two notifications and a write; then (`reconnect`) a
    /// connection with its CONNECT_IND encrypted with the distributed LTK, and one notification there.
    static func build(_ format: MidConnectionPairingBuilder.Format, passkey: UInt32?, reconnect: Bool = true) -> MidConnectionPairingBuilder
    {
        var b = MidConnectionPairingBuilder(format: format, passkey: passkey)
        b.send()  // an empty exchange: the capture starts mid-connection
        b.pair()
        b.startEncryption(key: b.stk)
        b.distributeKeys()
        b.notify(values[0])
        b.writeCommand([0xDE, 0xAD])
        b.notify(values[1])
        if reconnect {
            b.reconnect()
            b.send()
            b.startEncryption(
                key: MidConnectionPairingBuilder.ltk, ediv: MidConnectionPairingBuilder.ediv, rand: MidConnectionPairingBuilder.rand)
            b.notify([7, 7, 7])
        }
        return b
    }

    @Test(arguments: [MidConnectionPairingBuilder.Format.nordic, .bare])
    func justWorksFoundAgainstTheMIC(_ format: MidConnectionPairingBuilder.Format) throws {
        let b = Self.build(format, passkey: nil)
        let r = LinkEncryptionRun.run(try b.capture())
        #expect(r.notifications.map(\.value) == Self.values + [[7, 7, 7]])
        let writes = r.timeline.filter { $0.layer == .att && $0.code == 0x52 }
        #expect(writes.map(\.value) == [[0xDE, 0xAD]] && writes.first?.direction == .tx)
        let links = r.analyzer.connections.compactMap(\.linkEncryption)
        try #require(links.count == 2)
        #expect(r.analyzer.connections[0].inferred && !r.analyzer.connections[1].inferred)
        let key = try #require(links[0].key)
        #expect(key.ltk == b.stk.bytes && key.ediv == 0 && key.rand == 0)
        #expect(
            key.source
                == .legacyPairingMIC(
                    passkey: 0, frame: b.srandFrame, checkedFrame: b.firstEncryptedFrame, cause: .noConnectInd,
                    confirmation: .confirmed(frame: b.secondEncryptedFrame)))
        // The LTK the peripheral distributed under the STK decrypts the next connection.
        #expect(
            links[1].key?.displayText == "0F241772AC270CAFEE654186F0A65D5F"
                && links[1].key?.source == .distributed(frame: b.encryptionInformationFrame))
        #expect(r.analyzer.connections.compactMap(\.linkLayer).allSatisfy { $0.encryptedUndecrypted == 0 && $0.micFailures == 0 })
        #expect(!r.analyzer.findings.contains { $0.kind.code.id.hasPrefix("ll.") || $0.kind.code.id.hasPrefix("l2cap.") })
        // What a reader sees: the timeline's encryption start, and info/report's line per decrypted link.
        let how =
            "TK 0 (Just Works) of the LE legacy pairing at frame \(b.srandFrame), checked against the MIC of frame \(b.firstEncryptedFrame) because the capture has no CONNECT_IND"
        let started = r.timeline.filter { $0.name == "Encryption started" }
        #expect(
            started.first?.summary
                == "decrypted by blescope with STK \(b.stk.hex) (\(how); the next encrypted PDU confirms it or sends the search on)")
        #expect(started.first?.frame == b.firstEncryptedFrame)
        let lines = r.analyzer.decodeHealth.decryptions
        #expect(
            lines.first
                == "connection #1 (handle 0x0001): decrypted by blescope with STK \(b.stk.hex) (\(how); confirmed by the MIC of frame \(b.secondEncryptedFrame))"
        )
        #expect(lines.count == 2)
    }

    /// Passkey 123456 (the 123,457th candidate), on a capture without direction (LT 251).
    @Test(arguments: [MidConnectionPairingBuilder.Format.nordic, .bare])
    func passkeyFoundAgainstTheMIC(_ format: MidConnectionPairingBuilder.Format) throws {
        let b = Self.build(format, passkey: 123_456, reconnect: false)
        let r = LinkEncryptionRun.run(try b.capture())
        #expect(r.notifications.map(\.value) == Self.values)
        let key = try #require(r.analyzer.connections.first?.linkEncryption?.key)
        #expect(key.ltk == b.stk.bytes && key.source.kind == "legacy-passkey-mic")
        #expect(
            key.source
                == .legacyPairingMIC(
                    passkey: 123_456, frame: b.srandFrame, checkedFrame: b.firstEncryptedFrame, cause: .noConnectInd,
                    confirmation: .confirmed(frame: b.secondEncryptedFrame)))
        #expect(key.source.description.hasPrefix("passkey 123456 (found by search) of the LE legacy pairing"))
        // The distributed LTK is known, with the EDIV/Rand that select it.
        #expect(
            r.analyzer.knownKeys.linkKeys.contains {
                $0.ltk == MidConnectionPairingBuilder.ltk.bytes && $0.ediv == MidConnectionPairingBuilder.ediv
            })
    }

    /// A pairing whose Srand is not the one the link's STK came from: no TK checks the MIC, nothing is decrypted, and
    /// the finding says why. A damaged first encrypted PDU gives the same verdict. The PDUs say Passkey Entry (TK 0, the
    /// passkey 000000), so every passkey is tried; under Just Works PDUs only TK 0 is (`LegacyTKSpaceTests`).
    @Test(arguments: ["wrong pairing", "damaged first PDU"])
    func noMatchSaysWhy(_ fault: String) throws {
        var b = MidConnectionPairingBuilder(format: .nordic)
        b.pairingPDUs = LegacyTKSpaceTests.passkeyEntry
        b.send()
        b.pair(srand: fault == "wrong pairing" ? Key128(hex: "00112233445566778899AABBCCDDEEFF")! : MidConnectionPairingBuilder.srand)
        b.startEncryption(key: b.stk, damageFirst: fault == "damaged first PDU")
        b.notify(Self.values[0])
        let r = LinkEncryptionRun.run(try b.capture())
        #expect(r.notifications.isEmpty)
        #expect(r.analyzer.connections.first?.linkEncryption?.key == nil)
        #expect(
            r.analyzer.connections.first?.linkEncryption?.keySearch
                == .noTKChecksTheMIC(pairingFrame: b.srandFrame, checkedFrame: b.firstEncryptedFrame, cause: .noConnectInd))
        let found = r.analyzer.findings.filter { $0.kind.code.id == "ll.encrypted-no-key" }
        try #require(found.count == 1)
        #expect(found[0].frame == b.firstEncryptedFrame)
        #expect(
            found[0].kind.message.contains(
                "the capture has no CONNECT_IND, so the TK of the LE legacy pairing at frame \(b.srandFrame) was checked against the MIC of frame \(b.firstEncryptedFrame)"
            ))
        #expect(found[0].kind.message.contains("no TK (0 for Just Works, passkeys 000001-999999) gives an STK whose MIC checks there"))
        #expect(!r.timeline.contains { $0.layer == .att })
    }

    /// The bound: past `maxKeySearchCandidates` TKs in one capture a pairing is left encrypted, and the finding says
    /// how far its search went and which pairings spent the budget. TK 0 is still tried once the budget is spent.
    @Test func theSearchIsBounded() throws {
        // Two connections joined mid-way: passkey 5 (6 TKs tried), then passkey 123456.
        var b = MidConnectionPairingBuilder(format: .nordic, passkey: 5)
        b.send()
        b.pair()
        b.startEncryption(key: b.stk)
        let firstPairing = b.srandFrame
        var second = MidConnectionPairingBuilder(format: .nordic, passkey: 123_456)
        (second.records, second.time) = (b.records, b.time)
        second.reconnect(connectInd: false)
        second.send()
        second.pair()
        second.startEncryption(key: second.stk)
        second.notify(Self.values[0])
        let options = { (n: Int) in AnalyzerOptions(timeline: false, maxKeySearchCandidates: n) }
        let bounded = Analyzer.analyze(try second.capture(), options: options(100_000))
        let links = bounded.connections.compactMap(\.linkEncryption)
        try #require(links.count == 2)
        #expect(links[0].key?.ltk == b.stk.bytes && links[1].key == nil)
        #expect(
            links[1].keySearch
                == .budgetSpent(
                    pairingFrame: second.srandFrame, tried: 100_000 - 6, budget: 100_000, earlierPairings: [firstPairing],
                    cause: .noConnectInd))
        let finding = try #require(bounded.findings.first { $0.kind.code.id == "ll.encrypted-no-key" })
        #expect(finding.frame == second.firstEncryptedFrame)
        #expect(
            finding.kind.message.contains(
                "the TK of the LE legacy pairing at frame \(second.srandFrame) was checked against the MIC for 99994 of the 1000000 TKs only:"
                    + " the MIC search stops after 100000 TKs per capture, spent on the pairings at frames \(firstPairing); pass the STK with --ltk"
            ))
        let enough = Analyzer.analyze(try second.capture(), options: options(6 + 123_457))
        #expect(enough.connections.compactMap(\.linkEncryption).map { $0.key?.ltk } == [b.stk.bytes, second.stk.bytes])
        // A Just Works pairing is found with no budget at all: TK 0 is always tried.
        let justWorks = Self.build(.nordic, passkey: nil, reconnect: false)
        #expect(
            Analyzer.analyze(try justWorks.capture(), options: options(0)).connections.first?.linkEncryption?.key?.ltk
                == justWorks.stk.bytes)
    }

    /// With the CONNECT_IND c1 decides: an out-of-band TK matches no candidate's confirm, the finding says so, and the
    /// MIC search (which would not find it either) is not run.
    @Test func withTheAddressesC1Decides() throws {
        var b = MidConnectionPairingBuilder(format: .nordic, tk: 0x1234_5678_9ABC)
        b.reconnect()
        b.send()
        b.pair()
        b.startEncryption(key: b.stk)
        b.notify(Self.values[0])
        let r = LinkEncryptionRun.run(try b.capture(), keys: LinkKeyMaterial())
        #expect(r.notifications.isEmpty && r.analyzer.connections.first?.inferred == false)
        #expect(r.analyzer.connections.first?.linkEncryption?.keySearch == .noTKMatchesTheConfirm(pairingFrame: b.srandFrame))
        let finding = try #require(r.analyzer.findings.first { $0.kind.code.id == "ll.encrypted-no-key" })
        #expect(
            finding.kind.message.contains(
                "(no TK (0 for Just Works, passkeys 000001-999999) gives the Pairing Confirm values of the LE legacy pairing at frame \(b.srandFrame): an out-of-band TK)"
            ))
    }

    /// The winner fails the next encrypted PDU (here: that PDU is damaged): the search goes on from the next TK for one
    /// that checks both PDUs, finds none within the budget, and keeps the winner marked contradicted; the PDUs after
    /// it decrypt, and the damaged one counts as a MIC failure.
    @Test func aWinnerTheNextPDUContradicts() throws {
        var b = MidConnectionPairingBuilder(format: .nordic)
        b.send()
        b.pair()
        b.startEncryption(key: b.stk, damageSecond: true)
        b.notify(Self.values[0])
        let a = Analyzer.analyze(try b.capture(), options: AnalyzerOptions(timeline: false, maxKeySearchCandidates: 1000))
        let link = try #require(a.connections.first)
        let key = try #require(link.linkEncryption?.key)
        #expect(key.ltk == b.stk.bytes)
        #expect(
            key.source
                == .legacyPairingMIC(
                    passkey: 0, frame: b.srandFrame, checkedFrame: b.firstEncryptedFrame, cause: .noConnectInd,
                    confirmation: .contradicted(frame: b.secondEncryptedFrame)))
        #expect(
            key.source.description.hasSuffix("; frame \(b.secondEncryptedFrame) fails its MIC with this key and no other TK checks both"))
        #expect(link.linkLayer?.micFailures == 1 && link.linkLayer?.decryptedHere == 2)
        #expect(a.findings.filter { $0.kind.code.id == "ll.mic-failed" }.map(\.frame) == [b.secondEncryptedFrame])
    }

    /// A capture that ends after the first encrypted PDU: the key holds on that PDU's MIC alone, and says so.
    @Test func noSecondPDUToConfirm() throws {
        var b = MidConnectionPairingBuilder(format: .nordic)
        b.send()
        b.pair()
        b.startEncryption(key: b.stk)
        b.records.removeLast()  // the peripheral's LL_START_ENC_RSP
        let r = LinkEncryptionRun.run(try b.capture())
        let key = try #require(r.analyzer.connections.first?.linkEncryption?.key)
        #expect(key.ltk == b.stk.bytes)
        #expect(
            key.source
                == .legacyPairingMIC(
                    passkey: 0, frame: b.srandFrame, checkedFrame: b.firstEncryptedFrame, cause: .noConnectInd, confirmation: .noSecondPDU))
        #expect(key.source.description.hasSuffix("; no encrypted PDU followed to confirm it"))
    }
}
